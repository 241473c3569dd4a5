//! `cayley serve`: a coordinator for workers on other machines.

use crate::cli::ServeArgs;
use crate::info::plan_job;
use crate::local::{print_summary, random_token};
use crate::lock::OwnerLock;
use crate::manifest::{load_manifest, Manifest};
use crate::progress::LevelBars;
use crate::run::job_of_manifest;
use crate::server::finish::result_of;
use crate::server::state::{JobState, Phase};
use crate::server::{self, ServeOptions};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::puzzle::spec_file_text;
use cayley_shared::search::resources::check_disk;
use std::time::Duration;

pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let checkpoint = CheckpointDir::create(&args.checkpoint_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create checkpoint directory {}: {}",
            args.checkpoint_dir.display(),
            e
        )
    })?;
    // Held until the process exits; taken before the manifest is read so a
    // directory in use is refused as such.
    let _owner = OwnerLock::acquire(&checkpoint)?;
    let (job, fresh) = match load_manifest(&checkpoint)? {
        Some(m) if !args.resume => anyhow::bail!(
            "{} already holds a checkpoint of {} ({}); pass --resume to continue it",
            args.checkpoint_dir.display(),
            m.job.puzzle,
            m.job.metric
        ),
        None if args.resume => anyhow::bail!("{} holds no checkpoint to resume", args.checkpoint_dir.display()),
        // Resumed from the manifest alone: the definition file may be gone.
        Some(m) => {
            if m.job.puzzle != args.puzzle.spec() || m.job.metric != args.puzzle.metric.name() {
                anyhow::bail!(
                    "{} holds a checkpoint of {} ({}), not of {} ({})",
                    args.checkpoint_dir.display(),
                    m.job.puzzle,
                    m.job.metric,
                    args.puzzle.spec(),
                    args.puzzle.metric
                );
            }
            (job_of_manifest(&m)?, m)
        }
        None => {
            let job = plan_job(&args.puzzle)?;
            args.keep_levels.check_for(&job)?;
            check_disk(
                &job,
                checkpoint.root(),
                args.keep_levels,
                args.max_depth,
                args.ignore_disk_check,
            )?;
            let definition = spec_file_text(&job.puzzle.spec)?;
            let fresh = Manifest::new(&job, args.keep_levels, args.max_depth, definition);
            (job, fresh)
        }
    };
    let token = match args.token.clone() {
        Some(t) => t,
        None => {
            let t = random_token();
            eprintln!("cluster token: {} (give it to workers with --token or CAYLEY_TOKEN)", t);
            t
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let state = JobState::open(
            job.clone(),
            checkpoint.clone(),
            fresh,
            Duration::from_secs(args.lease_secs as u64),
            Box::new(LevelBars::new(args.quiet)),
        )?;
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {}", args.listen, e))?;
        let tls = args.tls_cert.clone().zip(args.tls_key.clone());
        eprintln!(
            "serving {} ({}) on {}://{}; checkpoint {}",
            job.puzzle.spec,
            job.puzzle.metric,
            if tls.is_some() { "https" } else { "http" },
            listener.local_addr()?,
            checkpoint.root().display()
        );
        let mut running = server::start(
            state,
            ServeOptions {
                listener,
                token: Some(token),
                tls,
                lease_secs: args.lease_secs,
                backups: !args.no_backup_tasks,
            },
        )?;
        let phase = running.wait(server::interrupted()).await;
        let state = running.shutdown(Duration::from_secs(10)).await?;
        match phase {
            Phase::Finished => {
                let result = result_of(&state.lock().expect("state"), args.antipodes)?;
                result.write(&args.out, &job.puzzle)?;
                print_summary(&job, &result);
                println!("results written to {}", args.out.display());
                Ok(())
            }
            Phase::Stopped(reason) => anyhow::bail!(
                "{}; the checkpoint is intact - continue with `cayley serve {} --checkpoint-dir {} --resume ...`",
                reason,
                job.puzzle.spec,
                checkpoint.root().display()
            ),
            Phase::Running => anyhow::bail!("the coordinator stopped unexpectedly"),
        }
    })
}
