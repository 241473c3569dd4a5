//! The worker's conversation with the coordinator: register, lease tasks,
//! stream progress and results, exit when the job is over; register again
//! with a coordinator that comes back after a crash or a partition.

use crate::runner::TaskRunner;
use cayley_proto::{lease_reply, JobSpec, LeaseRequest, RegisterRequest, Task, PROTOCOL_VERSION};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::puzzle::parse_puzzle_with_file;
use cayley_shared::units::human_bytes;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod link;
mod task;
mod windows;
use link::{status_reason, CALL_TIMEOUT};
pub use link::{Client, Link};
pub use task::done_message;
use task::{run_task, Ids, Reporter, TaskEnd};
use windows::{WindowHold, Windows};

/// How a worker connects and computes.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Coordinator URL, e.g. `http://127.0.0.1:7070`.
    pub coordinator: String,
    /// Cluster token sent with every call.
    pub token: Option<String>,
    /// Bytes of decompressed shards to keep in memory (with the tables).
    pub memory: u64,
    /// Compute threads (0 = every core).
    pub threads: usize,
    /// Name shown in `cayley status`.
    pub name: String,
    /// Where this machine sees the job's checkpoint directory, when it is
    /// mounted at another path than on the coordinator.
    pub checkpoint_dir: Option<PathBuf>,
    /// CA certificate (PEM) to verify a TLS coordinator.
    pub tls_ca: Option<PathBuf>,
    /// How long to keep retrying when the coordinator cannot be reached,
    /// at start and whenever it is lost mid-run.
    pub patience: Duration,
    /// The job as this process already planned it (the workers `cayley run`
    /// embeds): used when it is the job the coordinator serves, instead of
    /// planning it again (the 4×4 Loopover's 499,961 key classes took 3.5 s
    /// of CPU to enumerate, once per process and once per worker).
    pub job: Option<Job>,
    /// How the worker writes its chunk files: fsynced (not for the
    /// temporary checkpoint of `cayley run`), and the test-only injected
    /// full disk ([`crate::faults`]).
    pub write: WriteOptions,
    /// The coordinator's service in this process (the workers `cayley
    /// run` embeds): calls go to it directly, and `coordinator`, `tls_ca`
    /// and `patience` are not used.
    pub in_process: Option<link::Transport>,
}

/// How a worker's run ended.
#[derive(Clone, Debug)]
pub struct WorkerSummary {
    pub worker_id: u64,
    pub tasks: u64,
    /// True when the job finished; false when the coordinator stopped it.
    pub finished: bool,
    pub reason: String,
    /// Highest bytes of shards held in the cache (its stripes' peaks
    /// summed: an upper bound within the budget).
    pub cache_peak: u64,
}

/// Adds the cluster token to every request.
#[derive(Clone)]
pub struct Auth {
    header: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
}

impl Auth {
    /// An interceptor sending `token` (if any) as a bearer token.
    pub fn new(token: Option<&str>) -> anyhow::Result<Auth> {
        let header = match token {
            Some(t) => Some(
                format!("Bearer {}", t)
                    .parse()
                    .map_err(|_| anyhow::anyhow!("the token must be printable ASCII"))?,
            ),
            None => None,
        };
        Ok(Auth { header })
    }
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// This worker as one coordinator process knows it.
struct Session {
    client: Client,
    worker_id: u64,
    coordinator_id: u64,
    spec: JobSpec,
}

/// Why the lease loop ended.
enum Ended {
    /// The job is over (finished or stopped).
    Over(WorkerSummary),
    /// The coordinator cannot be reached (down, or behind a partition):
    /// connect again.
    Lost(String),
    /// The coordinator no longer knows this worker (it was restarted):
    /// register again.
    Forgotten(String),
}

/// Connects and registers, retrying for `--patience` from `since` while
/// the coordinator cannot be reached. A refusal (token, protocol version)
/// is final.
async fn join(link: &Link, config: &WorkerConfig, threads: usize, since: Instant) -> anyhow::Result<Session> {
    loop {
        let mut client = link.connect(since).await?;
        let request = RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            worker_name: config.name.clone(),
            cores: threads as u32,
            memory_budget: config.memory,
        };
        let why = match tokio::time::timeout(CALL_TIMEOUT, client.register(request)).await {
            Ok(Ok(reply)) => {
                let reply = reply.into_inner();
                let spec = reply
                    .job
                    .ok_or_else(|| anyhow::anyhow!("the coordinator sent no job"))?;
                return Ok(Session {
                    client,
                    worker_id: reply.worker_id,
                    coordinator_id: reply.coordinator_id,
                    spec,
                });
            }
            Ok(Err(status)) if transient(&status) => status_reason(&status),
            Ok(Err(status)) => anyhow::bail!(
                "the coordinator at {} refused this worker: {}",
                link.url,
                status.message()
            ),
            Err(_) => "no answer to register".to_string(),
        };
        if since.elapsed() >= link.patience {
            anyhow::bail!("cannot register with the coordinator at {} ({})", link.url, why);
        }
        tracing::warn!("registering with {} failed ({}); retrying", link.url, why);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Failures of a call that another attempt (after reconnecting, or
/// registering again) can cure: the coordinator is down, unreachable, or
/// has restarted and no longer knows this worker.
fn transient(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::DeadlineExceeded | Code::NotFound | Code::Internal
    )
}

/// The worker's job, rebuilt from the coordinator's spec; refused when this
/// build plans it differently.
pub fn job_of(spec: &JobSpec) -> anyhow::Result<Job> {
    let metric = spec.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let file = (!spec.puzzle_file.is_empty()).then_some(spec.puzzle_file.as_str());
    let job = Job::recorded(
        parse_puzzle_with_file(&spec.puzzle, metric, file)?,
        spec.shard_pieces as usize,
        spec.chunk_shards,
        spec.fingerprint,
    )?;
    anyhow::ensure!(
        job.fingerprint() == spec.fingerprint,
        "this worker plans '{}' differently from the coordinator (fingerprint {:016x} vs {:016x}); use the same cayley version on both",
        spec.puzzle,
        job.fingerprint(),
        spec.fingerprint
    );
    Ok(job)
}

/// Runs a worker until the job is over. A coordinator that goes away
/// mid-run (crash, restart, partition) is retried for `--patience`; the
/// worker then registers again and goes on, if it still serves the same
/// job.
pub async fn run_worker(config: WorkerConfig) -> anyhow::Result<WorkerSummary> {
    let link = match &config.in_process {
        Some(transport) => Link::in_process(transport.clone(), config.token.as_deref())?,
        None => Link::new(
            &config.coordinator,
            config.token.as_deref(),
            config.tls_ca.as_ref(),
            config.patience,
        )?,
    };
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    tracing::info!("connecting to the coordinator at {}", link.url);
    let mut session = join(&link, &config, threads, Instant::now()).await?;
    let job = match &config.job {
        Some(job)
            if job.fingerprint() == session.spec.fingerprint && job.chunking.per_chunk == session.spec.chunk_shards =>
        {
            job.clone()
        }
        _ => job_of(&session.spec)?,
    };
    let checkpoint = config
        .checkpoint_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&session.spec.checkpoint_dir));
    tracing::info!(
        "worker {} joined {} ({} threads, memory budget {})",
        session.worker_id,
        session.spec.puzzle,
        threads,
        human_bytes(config.memory as u128)
    );
    let (memory, write) = (config.memory, config.write);
    let runner = {
        let job = job.clone();
        tokio::task::spawn_blocking(move || TaskRunner::new(job, &checkpoint, memory, threads, write)).await??
    };
    let runner = FreedAside(Some(Arc::new(runner)));
    let runner = runner.0.as_ref().expect("set above");
    let mut tasks = 0u64;
    loop {
        match lease_loop(&mut session, runner, &mut tasks).await? {
            Ended::Over(mut summary) => {
                summary.cache_peak = runner.cache_peak();
                return Ok(summary);
            }
            Ended::Lost(why) => {
                tracing::warn!(
                    "lost the coordinator at {} ({}); retrying for up to {} s",
                    link.url,
                    why,
                    link.patience.as_secs()
                );
                // Back behind a healed partition, the coordinator still
                // knows this worker; a restarted one says so at the next
                // lease request.
                session.client = link.connect(Instant::now()).await?;
                tracing::info!("reached the coordinator at {} again", link.url);
            }
            Ended::Forgotten(why) => {
                tracing::warn!("the coordinator at {} does not know this worker ({})", link.url, why);
                let again = join(&link, &config, threads, Instant::now()).await?;
                check_same_job(&session.spec, &again.spec, &link.url)?;
                tracing::info!(
                    "joined the coordinator at {} again as worker {} (was {})",
                    link.url,
                    again.worker_id,
                    session.worker_id
                );
                session = again;
            }
        }
    }
}

/// The worker's task runner, freed on a thread of its own when the worker
/// returns: its cache holds up to a level's shards (a million
/// allocations on the 4×4 Loopover at depth 8), and freeing them took
/// 0.2 s that the job's results waited for at the end of every run.
struct FreedAside(Option<Arc<TaskRunner>>);

impl Drop for FreedAside {
    fn drop(&mut self) {
        if let Some(runner) = self.0.take() {
            // A thread that cannot start drops the runner here instead.
            let _ = std::thread::Builder::new()
                .name("cayley-free".into())
                .spawn(move || drop(runner));
        }
    }
}

/// A restarted coordinator must serve the job this worker computes for.
fn check_same_job(before: &JobSpec, now: &JobSpec, url: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        before.fingerprint == now.fingerprint && before.checkpoint_dir == now.checkpoint_dir,
        "the coordinator at {} now serves {} (fingerprint {:016x}, checkpoint {}), not the job this worker joined, {} (fingerprint {:016x}, checkpoint {}); start a new worker for it",
        url,
        now.puzzle,
        now.fingerprint,
        now.checkpoint_dir,
        before.puzzle,
        before.fingerprint,
        before.checkpoint_dir
    );
    Ok(())
}

/// Leases tasks and runs them until the job is over or the coordinator is
/// lost. A worker holds two tasks at once where its memory budget allows,
/// and one more for every 4 threads from 12 up, at most 8
/// ([`TaskRunner::tasks_at_once`]): one computing, and the next, which
/// starts on the threads the first no longer needs. The end of a task (its
/// last shards, the fsync of its file, its report) and the lease of the
/// next then overlap the next task's work instead of idling every thread:
/// with one task at a time, fsyncs alone left the 2×6 Loopover's two
/// threads idle for a third of its time under `--checkpoint-dir`. Tasks
/// whose chunk gains nothing do not count against them (`windows`).
///
/// Lease requests go out without waiting for each other's replies, each
/// holding a window from the moment it is sent: a sparse level is one
/// lease, file and report per chunk, and one request at a time made a
/// worker behind a link of 1 ms round trip take 0.81–0.94 s for each of
/// the 4×4 Loopover's depths 2–4 (0.49–0.60 s with requests in flight,
/// `bench/lease-latency.sh`; on 2 threads the windows allow two).
async fn lease_loop(session: &mut Session, runner: &Arc<TaskRunner>, tasks: &mut u64) -> anyhow::Result<Ended> {
    let mut running: tokio::task::JoinSet<anyhow::Result<TaskEnd>> = tokio::task::JoinSet::new();
    // Lease requests on their way, each holding the window its task will
    // compute in (an empty task lets it go).
    let mut asking: tokio::task::JoinSet<anyhow::Result<(Leased, WindowHold)>> = tokio::task::JoinSet::new();
    let windows = Windows::new(runner.tasks_at_once(), runner.window(), runner.threads());
    let ids = Ids {
        worker: session.worker_id,
        coordinator: session.coordinator_id,
    };
    // Set by a reply asking to wait: no lease is asked for until then.
    let mut wait_until: Option<tokio::time::Instant> = None;
    // A request that found the coordinator gone while others are still on
    // their way: they are waited for, since one of them may bring the end
    // of the job (the coordinator exits once it has told this worker so,
    // which cuts off the requests sent after that one).
    let mut losing: Option<Ended> = None;
    let ended = loop {
        if asking.is_empty() {
            if let Some(lost) = losing.take() {
                break lost;
            }
        }
        while losing.is_none() && windows.room(running.len() + asking.len()) && wait_until.is_none() {
            let (client, hold, holding) = (session.client.clone(), windows.hold(), running.len());
            asking.spawn(async move { lease(client, ids, holding).await.map(|leased| (leased, hold)) });
        }
        tokio::select! {
            Some(asked) = asking.join_next() => {
                let (leased, hold) = asked??;
                match leased {
                    Leased::Task(task) => {
                        let reporter = Reporter {
                            client: session.client.clone(),
                            ids,
                        };
                        running.spawn(run_task(reporter, runner.clone(), task, hold));
                    }
                    Leased::Wait(ms) => {
                        wait_until = Some(tokio::time::Instant::now() + Duration::from_millis(ms));
                    }
                    Leased::Ended(over @ Ended::Over(_)) => break over,
                    Leased::Ended(lost) => {
                        losing.get_or_insert(lost);
                    }
                }
            }
            Some(joined) = running.join_next() => {
                match joined?? {
                    TaskEnd::Reported => *tasks += 1,
                    TaskEnd::Dropped => {}
                    TaskEnd::Fatal(message) => {
                        drain(&mut running).await;
                        anyhow::bail!(message)
                    }
                }
                // A slot is free: ask again at once.
                wait_until = None;
            }
            _ = tokio::time::sleep_until(wait_until.unwrap_or_else(tokio::time::Instant::now)), if wait_until.is_some() => {
                wait_until = None;
            }
            // A task found its chunk empty: its window is free.
            _ = windows.freed() => {}
        }
    };
    // Requests still on their way are dropped: the job is over, or the
    // coordinator is gone or no longer knows this worker, so a lease they
    // brought back would go to nobody either way. The tasks still running
    // belong to a coordinator that is gone or done with them: their report
    // streams end, so they stop.
    asking.abort_all();
    drain(&mut running).await;
    Ok(match ended {
        Ended::Over(mut summary) => {
            summary.tasks = *tasks;
            Ended::Over(summary)
        }
        other => other,
    })
}

/// Waits for every task still running to end (each stops once its report
/// stream ends); what they report no longer matters.
async fn drain(running: &mut tokio::task::JoinSet<anyhow::Result<TaskEnd>>) {
    while running.join_next().await.is_some() {}
}

/// What a lease request came back with.
enum Leased {
    Task(Task),
    Wait(u64),
    Ended(Ended),
}

/// Asks for a task; `holding` tasks are running here already (a worker
/// that is busy gets no backup copy of another's task).
async fn lease(mut client: Client, ids: Ids, holding: usize) -> anyhow::Result<Leased> {
    let request = LeaseRequest {
        worker_id: ids.worker,
        coordinator_id: ids.coordinator,
        running_tasks: holding as u32,
    };
    let reply = match tokio::time::timeout(CALL_TIMEOUT, client.lease(request)).await {
        Ok(Ok(r)) => r.into_inner(),
        Ok(Err(status)) if status.code() == tonic::Code::NotFound => {
            return Ok(Leased::Ended(Ended::Forgotten(status.message().to_string())))
        }
        Ok(Err(status)) if transient(&status) => return Ok(Leased::Ended(Ended::Lost(status_reason(&status)))),
        Ok(Err(status)) => anyhow::bail!("the coordinator refused a lease: {}", status.message()),
        Err(_) => return Ok(Leased::Ended(Ended::Lost("no answer to a lease request".into()))),
    };
    Ok(match reply.reply {
        Some(lease_reply::Reply::Task(task)) => Leased::Task(task),
        Some(lease_reply::Reply::WaitMs(ms)) => Leased::Wait(ms as u64),
        Some(lease_reply::Reply::Over(over)) => Leased::Ended(Ended::Over(WorkerSummary {
            worker_id: ids.worker,
            tasks: 0,
            finished: over.finished,
            reason: over.reason,
            cache_peak: 0,
        })),
        None => anyhow::bail!("empty lease reply"),
    })
}
