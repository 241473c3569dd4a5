//! A coordinator plus in-process workers, which call its service directly
//! (no port, no HTTP/2): the engine behind `cayley run` and `cayley
//! resume`. It is the cluster path, on one machine.

use crate::cli::LocalArgs;
use crate::made_dir::MadeDir;
use crate::manifest::Manifest;
use crate::planning::Plan;
use crate::progress::LevelBars;
use crate::result::RunResult;
use crate::server::finish::result_and_antipodes_of;
use crate::server::state::{JobState, Phase};
use crate::server::{self, ServeOptions};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::search::antipodes::Antipode;
use cayley_shared::units::human_bytes;
use cayley_worker::{run_worker, WorkerConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::task::JoinSet;

/// A job to run here.
pub struct LocalJob {
    /// The job as planned, with its workers' budget.
    pub plan: Plan,
    /// Its checkpoint, created and owned.
    pub checkpoint: CheckpointDir,
    /// Manifest to start from when the checkpoint holds none.
    pub fresh: Manifest,
    /// Set when the checkpoint is temporary: removed after success.
    pub temporary: Option<PathBuf>,
    /// The `--scratch` folder of a temporary checkpoint, as made: what
    /// this run created of it goes after success too, when empty.
    pub scratch: Option<MadeDir>,
    /// The result folder, already created and checked.
    pub out: PathBuf,
    /// Workers, threads, memory and what to print.
    pub local: LocalArgs,
    /// How the coordinator and its workers write the checkpoint: not
    /// durable for a temporary one.
    pub write: WriteOptions,
}

/// A job run to the end: what was written to the result folder, and the
/// antipodes as found (states and move indices, which the result holds as
/// text), for callers that check them, such as the table tests.
pub struct Finished {
    /// The job as planned.
    pub job: Job,
    /// The contents of `result.json`.
    pub result: RunResult,
    /// The antipodes of `result`, as states and move indices.
    pub antipodes: Vec<Antipode>,
}

/// Runs the job to the end (or until it stops), writes and prints results.
/// Whenever it ends without results, the checkpoint is kept (a temporary
/// one included) and the command that continues it is printed.
pub fn run_local(mut task: LocalJob) -> anyhow::Result<Finished> {
    // From here on a temporary checkpoint is an ordinary directory, removed
    // only after success: an error, a panic unwinding through here or a
    // signal can never delete computed levels.
    let temporary = task.temporary.take();
    let scratch = task.scratch.take();
    let root = task.checkpoint.root().to_path_buf();
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run_local_async(task)));
    match outcome {
        Ok(finished) => {
            // Success: a temporary checkpoint has served its purpose.
            if let Some(dir) = temporary {
                if let Err(e) = CheckpointDir::existing(&dir).remove_all() {
                    tracing::warn!("cannot remove the temporary checkpoint {}: {}", dir.display(), e);
                }
            }
            if let Some(scratch) = scratch {
                scratch.remove_if_empty();
            }
            Ok(finished)
        }
        Err(e) => {
            let kept = temporary.unwrap_or(root);
            Err(anyhow::anyhow!(
                "{:#}; everything computed so far is in {} - continue with `cayley resume {}`",
                e,
                kept.display(),
                kept.display()
            ))
        }
    }
}

/// A fresh random cluster token.
pub fn random_token() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..32).map(|_| format!("{:x}", rng.random_range(0..16u8))).collect()
}

async fn run_local_async(task: LocalJob) -> anyhow::Result<Finished> {
    let LocalJob {
        plan,
        checkpoint,
        fresh,
        out,
        local,
        write,
        ..
    } = task;
    let workers = local.workers as usize;
    // Planned for workers here, refused by the command when too small.
    let Some(per_worker) = plan.worker_budget else {
        anyhow::bail!("the job was planned for workers on other machines, not in this process");
    };
    let job = plan.job;
    // Before the job state opens: on a terminal it draws the first
    // level's bar, which the header would otherwise share a line with.
    if !local.quiet && !fresh.finished {
        eprintln!(
            "{} ({}): {} states, {}, {} shards in {} tasks per level; memory budget {} per worker",
            job.puzzle.spec,
            job.puzzle.metric,
            job.reachable_text(),
            job.puzzle.moves_text(),
            job.space.shards(),
            job.chunking.chunks(),
            human_bytes(per_worker as u128)
        );
    }
    let state = JobState::open(
        job.clone(),
        checkpoint.clone(),
        fresh,
        Duration::from_secs(30),
        Box::new(LevelBars::new(local.quiet)),
        write,
    )?;
    if state.phase == Phase::Finished {
        // `resume` of a finished job only rewrites the results. Starting
        // workers here would be worse than useless: the server stops as soon
        // as it sees the job is over, and a worker still building its tables
        // then retried the vanished server for 10 s before giving up.
        return write_results(job, &state, &out, &local, per_worker * workers as u64);
    }
    let token = random_token();
    let mut running = server::start(
        state,
        ServeOptions {
            listener: None,
            token: Some(token.clone()),
            tls: None,
            lease_secs: 30,
            backups: true,
        },
    )?;
    let total_threads = match local.threads {
        None => cayley_shared::search::resources::cores_here(),
        Some(n) => n as usize,
    };
    let mut set = JoinSet::new();
    for i in 0..workers {
        let config = WorkerConfig {
            coordinator: "this process".to_string(),
            token: Some(token.clone()),
            memory: per_worker,
            threads: (total_threads / workers).max(1),
            name: format!("local-{}", i + 1),
            checkpoint_dir: None,
            tls_ca: None,
            patience: Duration::from_secs(10),
            job: Some(job.clone()),
            write,
            in_process: Some(running.in_process()),
        };
        set.spawn(run_worker(config));
    }
    let phase = running
        .wait(async {
            tokio::select! {
                reason = server::interrupted() => reason,
                reason = all_workers_gone(&mut set) => reason,
            }
        })
        .await;
    // Each in-process worker hears that the job is over at its next lease
    // and exits; once all have, nobody is left for the server to wait for
    // (its shutdown otherwise leaves idle workers a poll interval, 0.3 s,
    // about half of a 2×2×2 cube's whole run).
    if phase == Phase::Finished {
        let drained = async { while set.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(Duration::from_secs(5), drained).await;
    }
    let grace = if set.is_empty() {
        Duration::ZERO
    } else {
        Duration::from_secs(5)
    };
    let state = running.shutdown(grace, None).await?;
    // The server is gone: a worker that has not heard the job is over (one
    // still building its tables, say) would only retry it for 10 s. Files
    // it may still be writing are renamed into place whole, unrecorded.
    set.shutdown().await;
    match phase {
        Phase::Finished => {
            let state = state.lock().expect("state");
            write_results(job, &state, &out, &local, per_worker * workers as u64)
        }
        Phase::Stopped(reason) => anyhow::bail!(reason),
        Phase::Running => anyhow::bail!("the coordinator stopped"),
    }
}

/// Writes and prints the results of a finished job. The antipode walk
/// runs on as many threads as the workers had, within their `memory`
/// (theirs is free by then).
fn write_results(job: Job, state: &JobState, out: &Path, local: &LocalArgs, memory: u64) -> anyhow::Result<Finished> {
    let threads = local.threads.map_or(0, |t| t as usize);
    let (result, antipodes) = result_and_antipodes_of(state, local.antipodes, threads, memory)?;
    result.write(out, &job.puzzle)?;
    print_summary(&job, &result);
    println!("results written to {}", out.display());
    Ok(Finished { job, result, antipodes })
}

/// Resolves when every worker has exited, with the first error seen.
async fn all_workers_gone(set: &mut JoinSet<anyhow::Result<cayley_worker::WorkerSummary>>) -> String {
    let mut first_error = None;
    while let Some(joined) = set.join_next().await {
        let message = match joined {
            Ok(Ok(summary)) if summary.finished => continue,
            Ok(Ok(summary)) => summary.reason,
            Ok(Err(e)) => format!("{:#}", e),
            Err(e) => e.to_string(),
        };
        first_error.get_or_insert(message);
    }
    // The job is still running but no worker is left to do the work.
    format!(
        "every worker exited ({})",
        first_error.unwrap_or_else(|| "no error reported".into())
    )
}

/// Prints the table and the antipodes.
pub fn print_summary(job: &Job, result: &RunResult) {
    println!("{} ({} metric)", result.puzzle, result.metric);
    print!("{}", result.table());
    if result.complete {
        println!(
            "complete: {} states = all reachable states; diameter {}",
            result.states, result.depth_reached
        );
    } else {
        println!(
            "PARTIAL table (stopped at depth {}): {} of {} states counted",
            result.depth_reached, result.states, result.reachable_states
        );
    }
    println!("{:.2} s of level computation", result.total_seconds);
    if !result.antipodes.is_empty() {
        println!();
        print!("{}", result.antipodes_text(&job.puzzle));
    }
}
