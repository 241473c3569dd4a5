//! `cayley resume`: continues an interrupted job on this machine from its
//! checkpoint directory.

use crate::cli::ResumeArgs;
use crate::local::{run_local, LocalJob};
use crate::lock::OwnerLock;
use crate::manifest::{kept_or_given, load_manifest, save_manifest};
use crate::out::{default_out_dir, refuse_other_results, OutDir};
use crate::planning::{Machine, Plan, Workers};
use cayley_shared::files::checkpoint::{CheckpointDir, MANIFEST_FILE};
use cayley_shared::units::human_bytes;

/// Continues the job of `args.checkpoint_dir`, taking the settings it was
/// started with unless given again.
pub fn resume(args: ResumeArgs) -> anyhow::Result<()> {
    let dir = &args.checkpoint_dir;
    let checkpoint = CheckpointDir::existing(dir);
    let not_a_checkpoint = || {
        anyhow::anyhow!(
            "{} has no {}: not a cayley checkpoint directory",
            dir.display(),
            MANIFEST_FILE
        )
    };
    // Checked first so that no lock file is left in a directory that is not
    // a checkpoint; the manifest is read once the directory is ours. A run
    // that owns a directory it has not written a manifest into yet is named
    // as its owner.
    if !dir.is_dir() {
        return Err(not_a_checkpoint());
    }
    if !checkpoint.manifest_path().exists() {
        OwnerLock::refuse_if_held(&checkpoint)?;
        return Err(not_a_checkpoint());
    }
    // A look before anything is written, the lock file included: the
    // budget the job was started with may be more than this machine has (a
    // resume on a smaller node), and the result folder may be unusable.
    let peek = load_manifest(&checkpoint)?.ok_or_else(not_a_checkpoint)?;
    if let Some(depth) = args.max_depth {
        peek.check_deeper(depth)?;
    }
    let max_depth = args.max_depth.or(peek.max_depth);
    let mut local = args.local;
    let given_memory = local.memory;
    local.memory = local.memory.or(peek.memory);
    local.check_here()?;
    let out_path = local
        .out
        .clone()
        .or_else(|| peek.out.clone())
        .unwrap_or_else(|| default_out_dir(&peek.job.puzzle, &peek.job.metric));
    refuse_other_results(&out_path, &peek.job.puzzle, &peek.job.metric, max_depth)?;
    let mut out = OutDir::prepare(&out_path)?;
    if let Err(e) = out.hold() {
        out.discard();
        return Err(e);
    }
    let workers = Workers::Here {
        count: local.workers,
        memory: local.memory,
    };
    let opened = OwnerLock::acquire(&checkpoint).and_then(|owner| {
        let mut manifest = load_manifest(&checkpoint)?.ok_or_else(not_a_checkpoint)?;
        if let Some(depth) = args.max_depth {
            // Set before the plan, whose disk check goes to the new depth.
            manifest.deepen(depth);
        }
        let plan = Plan::resumed(&manifest, workers, &Machine::here())?;
        manifest.check_matches(&plan.job, dir)?;
        plan.refuse()?;
        Ok((owner, manifest, plan))
    });
    let (_owner, mut manifest, plan) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            out.discard();
            return Err(e);
        }
    };
    let quiet = local.quiet;
    if !quiet {
        let done = manifest.levels.len().saturating_sub(1);
        eprintln!(
            "resuming {} ({}) from {}: {} level(s) done{}",
            manifest.job.puzzle,
            manifest.job.metric,
            dir.display(),
            done,
            match (manifest.finished, args.max_depth) {
                (true, Some(depth)) => format!(", job finished at its limit: going on to depth {}", depth),
                (true, None) => ", job finished: rewriting the results".to_string(),
                (false, Some(depth)) => format!(", now to depth {}", depth),
                (false, None) => String::new(),
            }
        );
    }
    local.memory = kept_or_given(
        given_memory,
        &mut manifest.memory,
        ("memory budget", "--memory"),
        quiet,
        |m| human_bytes(*m as u128),
    );
    kept_or_given(
        local.out.take(),
        &mut manifest.out,
        ("results go to", "--out"),
        quiet,
        |p| p.display().to_string(),
    );
    manifest.out = Some(out.path.clone());
    // Saved now, so that the next resume keeps what this one was given.
    // Durable, whoever made the checkpoint: `run`'s temporary checkpoint
    // that a failed run kept is resumed as a job of its own.
    let write = local.fault.write_options(true);
    save_manifest(&checkpoint, &manifest, write)?;
    // `run`'s temporary checkpoint, kept when that run failed: removed once
    // finished, as the run would have.
    let temporary = manifest.temporary.then(|| dir.clone());
    run_local(LocalJob {
        plan,
        checkpoint,
        fresh: manifest,
        temporary: temporary.clone(),
        scratch: None,
        out: out.path,
        local,
        write,
    })?;
    if let Some(dir) = temporary.filter(|dir| !dir.exists()) {
        println!(
            "removed the temporary checkpoint {} (made by `cayley run` without --checkpoint-dir)",
            dir.display()
        );
    }
    Ok(())
}
