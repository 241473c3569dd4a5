//! `cayley run` and `cayley resume`: whole jobs on this machine.

use crate::cli::{ResumeArgs, RunArgs};
use crate::info::plan_job;
use crate::local::{run_local, LocalJob};
use crate::manifest::{load_manifest, Manifest};
use cayley_shared::checkpoint::{CheckpointDir, MANIFEST_FILE};
use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle_with_file, spec_file_text};
use cayley_shared::resources::check_disk;

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    args.keep_levels.check_for(&job)?;
    cayley_shared::resources::check_budget(&job, crate::local::local_budget(&args.local))?;
    let scratch = args.local.scratch.clone().unwrap_or_else(std::env::temp_dir);
    // The disk check comes before anything is created; a temporary
    // checkpoint lives under --scratch.
    let location = args.checkpoint_dir.clone().unwrap_or_else(|| scratch.clone());
    std::fs::create_dir_all(&location)
        .map_err(|e| anyhow::anyhow!("cannot create directory {}: {}", location.display(), e))?;
    check_disk(&job, &location, args.keep_levels)?;
    let (checkpoint, temporary) = match &args.checkpoint_dir {
        Some(dir) => {
            let checkpoint = CheckpointDir::create(dir)
                .map_err(|e| anyhow::anyhow!("cannot create checkpoint directory {}: {}", dir.display(), e))?;
            if let Some(m) = load_manifest(&checkpoint)? {
                anyhow::bail!(
                    "{} already holds a checkpoint of {} ({}); continue it with `cayley resume {}` or choose another directory",
                    dir.display(),
                    m.job.puzzle,
                    m.job.metric,
                    dir.display()
                );
            }
            (checkpoint, None)
        }
        None => {
            // Deleted after success: no fsyncs (see `set_durable`).
            cayley_shared::format::set_durable(false);
            let temp = tempfile::Builder::new()
                .prefix("cayley-checkpoint-")
                .tempdir_in(&scratch)?;
            (CheckpointDir::create(temp.path())?, Some(temp))
        }
    };
    let definition = spec_file_text(&job.puzzle.spec)?;
    let fresh = Manifest::new(&job, args.keep_levels, args.max_depth, definition);
    run_local(LocalJob {
        job,
        checkpoint,
        fresh,
        temporary,
        local: args.local,
    })
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
    let manifest = load_manifest(&checkpoint)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{} has no {}: not a cayley checkpoint directory",
            dir.display(),
            MANIFEST_FILE
        )
    })?;
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
    run_local(LocalJob {
        job,
        checkpoint,
        fresh: manifest,
        temporary: None,
        local: args.local,
    })
}
