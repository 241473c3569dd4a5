//! `cayley serve`: a coordinator for workers on other machines.

use crate::cli::ServeArgs;
use crate::local::{print_summary, random_token};
use crate::lock::OwnerLock;
use crate::manifest::{kept_or_given, load_manifest, save_manifest, Manifest};
use crate::out::{refuse_other_results, OutDir};
use crate::planning::{Machine, Options, Plan, Workers};
use crate::progress::LevelBars;
use crate::server::finish::result_of;
use crate::server::state::{JobState, Phase};
use crate::server::{self, ServeOptions};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::puzzle::spec_file_text;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long after it starts serving the coordinator still answers workers
/// it has not heard from, when the job ends sooner: worker containers or
/// tasks started beside it (compose replicas, `srun`) may first call after
/// a small job is over, and would otherwise find no coordinator and retry
/// for their whole `--patience` (300 s). docs/cluster.md's compose
/// command, `loopover:2x5` with two workers: one worker did all 256 tasks
/// and the other first called 60 ms after the coordinator had exited.
const LATE_WORKERS: Duration = Duration::from_secs(5);

/// Serves a new or resumed job to remote workers until it finishes or
/// stops, then writes the results.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // The address first: a port in use is refused before anything is
    // created (it used to fail after the checkpoint was made, and the same
    // command on a free port was then refused as a second job).
    let listener = std::net::TcpListener::bind(&args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| anyhow::anyhow!("cannot listen on {} (--listen): {}", args.listen, e))?;
    // The TLS files too: a missing one used to stop the server after the
    // checkpoint was made.
    let read = |path: &Option<PathBuf>, flag: &str| -> anyhow::Result<Option<Vec<u8>>> {
        path.as_ref()
            .map(|p| std::fs::read(p).map_err(|e| anyhow::anyhow!("cannot read {} {}: {}", flag, p.display(), e)))
            .transpose()
    };
    let tls = read(&args.tls_cert, "--tls-cert")?.zip(read(&args.tls_key, "--tls-key")?);
    if let (Some((cert, key)), Some(cert_path), Some(key_path)) = (&tls, &args.tls_cert, &args.tls_key) {
        crate::server::check_tls_identity(cert, key).map_err(|e| {
            anyhow::anyhow!(
                "--tls-cert {} and --tls-key {} are not a PEM certificate and its private key: {}",
                cert_path.display(),
                key_path.display(),
                e
            )
        })?;
    }
    // A folder given is made and checked before anything else, and removed
    // again (if this made it) when the job is refused; so is a checkpoint
    // directory this made.
    let before = Before::look(&args.checkpoint_dir);
    if let Some(out) = &args.out {
        refuse_other_results(out, &args.puzzle.spec(), args.puzzle.metric.name(), args.max_depth)?;
    }
    let given = args.out.as_deref().map(OutDir::prepare).transpose()?;
    let opened = open(&args, given.as_ref().map(|o| o.path.clone()));
    let Opened {
        checkpoint,
        _owner,
        job,
        fresh,
        out,
    } = match opened {
        Ok(opened) => opened,
        Err(e) => {
            if let Some(given) = given {
                given.discard();
            }
            before.restore(&args.checkpoint_dir);
            return Err(e);
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
            // The job's own checkpoint, on a cluster: durable, and no
            // fault (the coordinator writes no chunk file).
            WriteOptions::DURABLE,
        )?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tracing::info!(
            "serving {} ({}) on {}://{}; checkpoint {}",
            job.puzzle.spec,
            job.puzzle.metric,
            if tls.is_some() { "https" } else { "http" },
            listener.local_addr()?,
            checkpoint.root().display()
        );
        let serving_since = tokio::time::Instant::now();
        let mut running = server::start(
            state,
            ServeOptions {
                listener: Some(listener),
                token: Some(token),
                tls,
                lease_secs: args.lease_secs,
                backups: !args.no_backup_tasks,
            },
        )?;
        let phase = running.wait(server::interrupted()).await;
        let answer_until = serving_since + LATE_WORKERS;
        let state = running.shutdown(Duration::from_secs(10), Some(answer_until)).await?;
        match phase {
            Phase::Finished => {
                let result = result_of(&state.lock().expect("state"), args.antipodes)?;
                result.write(&out.path, &job.puzzle)?;
                print_summary(&job, &result);
                println!("results written to {}", out.path.display());
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

/// What a `serve` that may be refused finds at its checkpoint path: the
/// outermost directory it will create, if any, and whether an existing
/// one is empty.
struct Before {
    created: Option<PathBuf>,
    empty: bool,
}

impl Before {
    fn look(dir: &Path) -> Before {
        let created = std::path::absolute(dir).ok().and_then(|dir| {
            dir.ancestors()
                .take_while(|a| !a.exists())
                .last()
                .map(Path::to_path_buf)
        });
        let empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
        Before { created, empty }
    }

    /// Undoes what a refused `serve` made: the directories it created, or
    /// the lock file and levels folder in one that was empty.
    fn restore(&self, dir: &Path) {
        if let Some(created) = &self.created {
            let _ = std::fs::remove_dir_all(created);
        } else if self.empty {
            let _ = std::fs::remove_file(dir.join("owner.lock"));
            let _ = std::fs::remove_dir(dir.join("levels"));
        }
    }
}

/// A job ready to serve: its checkpoint (owned), plan, manifest to start
/// from, and result folder.
struct Opened {
    checkpoint: CheckpointDir,
    /// Held until the process exits.
    _owner: OwnerLock,
    job: Job,
    fresh: Manifest,
    out: OutDir,
}

/// Creates and owns the checkpoint directory and reads or starts its job;
/// `given` is the result folder on the command line.
fn open(args: &ServeArgs, given: Option<PathBuf>) -> anyhow::Result<Opened> {
    crate::lock::refuse_unrelated_files(&args.checkpoint_dir, given.as_deref())?;
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
    let (job, fresh, out) = match load_manifest(&checkpoint)? {
        Some(m) if !args.resume => anyhow::bail!(
            "{} already holds a checkpoint of {} ({}); pass --resume to continue it",
            args.checkpoint_dir.display(),
            m.job.puzzle,
            m.job.metric
        ),
        None if args.resume => anyhow::bail!("{} holds no checkpoint to resume", args.checkpoint_dir.display()),
        // Resumed from the manifest alone: the definition file may be gone.
        Some(mut m) => {
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
            // `--max-depth` given again takes the job deeper (a cut job goes
            // on); the job's own limit, as the first command line gave it,
            // changes nothing.
            if let Some(depth) = args.max_depth.filter(|&d| Some(d) != m.max_depth) {
                m.check_deeper(depth)?;
                m.deepen(depth);
            }
            let job = Plan::resumed(&m, Workers::Elsewhere, &Machine::here())?.job;
            let out = kept_or_given(given, &mut m.out, ("results go to", "--out"), args.quiet, |p| {
                p.display().to_string()
            })
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not record where the results go (a checkpoint of an earlier release): give --out",
                    args.checkpoint_dir.display()
                )
            })?;
            refuse_other_results(&out, &m.job.puzzle, &m.job.metric, m.max_depth)?;
            let mut out = OutDir::prepare(&out)?;
            out.hold()?;
            m.out = Some(out.path.clone());
            // Saved now, so that the next resume keeps what this one was given.
            save_manifest(&checkpoint, &m, WriteOptions::DURABLE)?;
            (job, m, out)
        }
        None => {
            let options = Options {
                workers: Workers::Elsewhere,
                keep: args.keep_levels,
                max_depth: args.max_depth,
            };
            let plan = Plan::new(&args.puzzle, options, &Machine::here())?;
            plan.refuse()?;
            let out = given.ok_or_else(|| anyhow::anyhow!("--out is required for a new job"))?;
            let mut out = OutDir::prepare(&out)?;
            out.hold()?;
            let location = checkpoint.root();
            plan.check_disk(location, args.fault.free_space().of(location), args.ignore_disk_check)?;
            let definition = spec_file_text(&plan.job.puzzle.spec)?;
            let mut fresh = Manifest::new(&plan.job, args.keep_levels, args.max_depth, definition);
            fresh.out = Some(out.path.clone());
            (plan.job, fresh, out)
        }
    };
    Ok(Opened {
        checkpoint,
        _owner,
        job,
        fresh,
        out,
    })
}
