//! `cayley run` and `cayley resume`: whole jobs on this machine.

use crate::cli::{ResumeArgs, RunArgs};
use crate::info::plan_job;
use crate::local::{run_local, LocalJob};
use crate::lock::OwnerLock;
use crate::manifest::{load_manifest, save_manifest, Manifest};
use crate::out::{default_out_dir, OutDir};
use cayley_shared::files::checkpoint::{CheckpointDir, MANIFEST_FILE};
use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle_with_file, spec_file_text};
use cayley_shared::search::resources::check_disk;
use cayley_shared::units::human_bytes;
use std::path::Path;

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    args.keep_levels.check_for(&job)?;
    cayley_shared::search::resources::check_budget(&job, crate::local::local_budget(&args.local))?;
    let out_path = args
        .local
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&job.puzzle.spec, job.puzzle.metric.name()));
    let out = OutDir::prepare(&out_path)?;
    // Refused after the folder was made (the disk, a checkpoint in use):
    // the folder goes again if this made it.
    match start(&args, job, &out.path) {
        Ok((task, _owner)) => run_local(task),
        Err(e) => {
            out.discard();
            Err(e)
        }
    }
}

/// Checks the disk, creates and owns the checkpoint (temporary under
/// `--scratch` unless `--checkpoint-dir` is given) and makes the job's
/// first manifest; `out` is the result folder, already made.
fn start(args: &RunArgs, job: Job, out: &Path) -> anyhow::Result<(LocalJob, OwnerLock)> {
    let scratch = args.local.scratch.clone().unwrap_or_else(std::env::temp_dir);
    // The disk check comes before anything else is created; a temporary
    // checkpoint lives under --scratch.
    let location = args.checkpoint_dir.clone().unwrap_or_else(|| scratch.clone());
    let existed = location.exists();
    std::fs::create_dir_all(&location)
        .map_err(|e| anyhow::anyhow!("cannot create directory {}: {}", location.display(), e))?;
    if let Err(refused) = check_disk(
        &job,
        &location,
        args.keep_levels,
        args.max_depth,
        args.ignore_disk_check,
    ) {
        if !existed {
            // Made only to ask its filesystem; a refused run leaves nothing.
            let _ = std::fs::remove_dir(&location);
        }
        return Err(refused);
    }
    let (checkpoint, temporary, owner) = match &args.checkpoint_dir {
        Some(dir) => {
            let checkpoint = CheckpointDir::create(dir)
                .map_err(|e| anyhow::anyhow!("cannot create checkpoint directory {}: {}", dir.display(), e))?;
            // Owned before the manifest is read: a directory in use is
            // refused as such, whatever it holds.
            let owner = OwnerLock::acquire(&checkpoint)?;
            if let Some(m) = load_manifest(&checkpoint)? {
                anyhow::bail!(
                    "{} already holds a checkpoint of {} ({}); continue it with `cayley resume {}` or choose another directory",
                    dir.display(),
                    m.job.puzzle,
                    m.job.metric,
                    dir.display()
                );
            }
            (checkpoint, None, owner)
        }
        None => {
            // Deleted after success: no fsyncs (see `set_durable`).
            cayley_shared::files::format::set_durable(false);
            let temp = tempfile::Builder::new()
                .prefix("cayley-checkpoint-")
                .tempdir_in(&scratch)
                .map_err(|e| anyhow::anyhow!("cannot create a checkpoint directory in {}: {}", scratch.display(), e))?;
            let checkpoint = CheckpointDir::create(temp.path())
                .map_err(|e| anyhow::anyhow!("cannot create checkpoint directory {}: {}", temp.path().display(), e))?;
            // Kept after an error, it can be resumed while this process
            // still exits: it is owned like any other.
            let owner = OwnerLock::acquire(&checkpoint)?;
            (checkpoint, Some(temp), owner)
        }
    };
    let definition = spec_file_text(&job.puzzle.spec)?;
    let mut fresh = Manifest::new(&job, args.keep_levels, args.max_depth, definition);
    fresh.memory = args.local.memory;
    fresh.out = Some(out.to_path_buf());
    let task = LocalJob {
        job,
        checkpoint,
        fresh,
        temporary,
        out: out.to_path_buf(),
        local: args.local.clone(),
    };
    Ok((task, owner))
}

/// Rebuilds the job a manifest describes, from the manifest alone (a
/// `perm:`/`tws:` definition comes from its recorded text).
pub fn job_of_manifest(manifest: &Manifest) -> anyhow::Result<Job> {
    let metric = manifest.job.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let puzzle = parse_puzzle_with_file(&manifest.job.puzzle, metric, manifest.job.definition.as_deref())?;
    Ok(Job::new(puzzle, Some(manifest.job.shard_pieces))?.with_chunk_shards(Some(manifest.job.chunk_shards)))
}

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
    save_manifest(&checkpoint, &manifest)?;
    run_local(LocalJob {
        job,
        checkpoint,
        fresh: manifest,
        temporary: None,
        out: out.path,
        local,
    })
}

/// A setting `resume` takes from the command line when given (recording it
/// for the next resume), else from the manifest, saying so unless quiet;
/// `(what, option)` name it in that message. `None` when neither has one.
pub fn kept_or_given<T: Clone>(
    given: Option<T>,
    recorded: &mut Option<T>,
    (what, option): (&str, &str),
    quiet: bool,
    show: impl Fn(&T) -> String,
) -> Option<T> {
    match given {
        Some(value) => {
            *recorded = Some(value.clone());
            Some(value)
        }
        None => {
            if let (Some(value), false) = (recorded.as_ref(), quiet) {
                eprintln!(
                    "{} {}, as the job was started ({} changes it)",
                    what,
                    show(value),
                    option
                );
            }
            recorded.clone()
        }
    }
}
