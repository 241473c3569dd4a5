//! `cayley run` and `cayley resume`: whole jobs on this machine.

use crate::cli::{ResumeArgs, RunArgs};
use crate::info::plan_job;
use crate::local::{run_local, LocalJob};
use cayley_shared::job::Job;
use cayley_shared::manifest::{CheckpointDir, Manifest};
use cayley_shared::puzzle::parse_puzzle;

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    args.keep_levels.check_for(&job)?;
    let scratch = args.local.scratch.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| anyhow::anyhow!("cannot create scratch directory {}: {}", scratch.display(), e))?;
    job.check_fits_here(&scratch)?;
    let (checkpoint, temporary) = match &args.checkpoint_dir {
        Some(dir) => {
            let checkpoint = CheckpointDir::create(dir)?;
            if let Some(m) = checkpoint.load_manifest()? {
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
            let temp = tempfile::Builder::new()
                .prefix("cayley-checkpoint-")
                .tempdir_in(&scratch)?;
            (CheckpointDir::create(temp.path())?, Some(temp))
        }
    };
    if !args.local.quiet {
        eprintln!(
            "{} ({}): {} states, {} generators, {} shards",
            job.puzzle.spec,
            job.puzzle.metric,
            job.reachable_text(),
            job.puzzle.moves.len(),
            job.space.shards()
        );
    }
    let fresh = Manifest::new(&job, args.keep_levels, args.max_depth);
    run_local(LocalJob {
        job,
        checkpoint,
        fresh,
        temporary,
        local: args.local,
    })
}

/// Rebuilds the job a manifest describes.
pub fn job_of_manifest(manifest: &Manifest) -> anyhow::Result<Job> {
    let metric = manifest.job.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    Job::new(
        parse_puzzle(&manifest.job.puzzle, metric)?,
        Some(manifest.job.shard_pieces),
    )
}

pub fn resume(args: ResumeArgs) -> anyhow::Result<()> {
    let dir = &args.checkpoint_dir;
    let checkpoint = CheckpointDir::existing(dir);
    let manifest = checkpoint.load_manifest()?.ok_or_else(|| {
        anyhow::anyhow!(
            "{} has no {}: not a cayley checkpoint directory",
            dir.display(),
            cayley_shared::manifest::MANIFEST_FILE
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
