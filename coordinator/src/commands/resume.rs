//! `cayley resume`: continues an interrupted job on this machine from its
//! checkpoint directory.

use crate::cli::ResumeArgs;
use crate::job::{job_of_manifest, kept_or_given};
use crate::local::{run_local, LocalJob};
use crate::lock::OwnerLock;
use crate::manifest::{load_manifest, save_manifest};
use crate::out::{default_out_dir, OutDir};
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
    if !checkpoint.manifest_path().exists() {
        OwnerLock::refuse_if_held(&checkpoint)?;
        return Err(not_a_checkpoint());
    }
    let _owner = OwnerLock::acquire(&checkpoint)?;
    let manifest = load_manifest(&checkpoint)?.ok_or_else(not_a_checkpoint)?;
    let job = job_of_manifest(&manifest)?;
    manifest.check_matches(&job, dir)?;
    if !args.local.quiet {
        let done = manifest.levels.len().saturating_sub(1);
        eprintln!(
            "resuming {} ({}) from {}: {} level(s) done{}",
            manifest.job.puzzle,
            manifest.job.metric,
            dir.display(),
            done,
            if manifest.finished {
                ", job finished: rewriting the results"
            } else {
                ""
            }
        );
    }
    let (mut local, mut manifest) = (args.local, manifest);
    let quiet = local.quiet;
    local.memory = kept_or_given(
        local.memory,
        &mut manifest.memory,
        ("memory budget", "--memory"),
        quiet,
        |m| human_bytes(*m as u128),
    );
    let out = kept_or_given(
        local.out.take(),
        &mut manifest.out,
        ("results go to", "--out"),
        quiet,
        |p| p.display().to_string(),
    )
    .unwrap_or_else(|| default_out_dir(&manifest.job.puzzle, &manifest.job.metric));
    let out = OutDir::prepare(&out)?;
    manifest.out = Some(out.path.clone());
    // Saved now, so that the next resume keeps what this one was given.
    // Durable, whoever made the checkpoint: `run`'s temporary checkpoint
    // that a failed run kept is resumed as a job of its own.
    let write = local.fault.write_options(true);
    save_manifest(&checkpoint, &manifest, write)?;
    run_local(LocalJob {
        job,
        checkpoint,
        fresh: manifest,
        temporary: None,
        out: out.path,
        local,
        write,
    })
    .map(drop)
}
