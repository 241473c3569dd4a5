//! The worker's conversation with the coordinator: register, lease tasks,
//! stream progress and results, exit when the job is over.

use crate::runner::{TaskError, TaskResult, TaskRunner};
use cayley_proto::coordinator_client::CoordinatorClient;
use cayley_proto::{
    lease_reply, task_failed, task_update, IoStats, LeaseRequest, RegisterRequest, Task, TaskDone, TaskFailed,
    TaskProgress, TaskUpdate, PROTOCOL_VERSION,
};
use cayley_shared::puzzle::parse_puzzle_with_file;
use cayley_shared::search::job::Job;
use cayley_shared::search::resources::human_bytes;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

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
    /// How long to keep retrying when the coordinator cannot be reached.
    pub patience: Duration,
}

/// How a worker's run ended.
#[derive(Clone, Debug)]
pub struct WorkerSummary {
    pub worker_id: u64,
    pub tasks: u64,
    /// True when the job finished; false when the coordinator stopped it.
    pub finished: bool,
    pub reason: String,
    /// Highest bytes of shards held in the cache.
    pub cache_peak: u64,
}

type Client = CoordinatorClient<InterceptedService<Channel, Auth>>;

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

/// Connects to the coordinator, retrying until `patience` runs out.
pub async fn connect(
    url: &str,
    token: Option<&str>,
    tls_ca: Option<&PathBuf>,
    patience: Duration,
) -> anyhow::Result<Client> {
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| anyhow::anyhow!("bad coordinator URL '{}': {}", url, e))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    if let Some(ca) = tls_ca {
        let pem =
            std::fs::read(ca).map_err(|e| anyhow::anyhow!("cannot read CA certificate {}: {}", ca.display(), e))?;
        endpoint = endpoint.tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))?;
    }
    let deadline = Instant::now() + patience;
    loop {
        match endpoint.connect().await {
            Ok(channel) => return Ok(CoordinatorClient::with_interceptor(channel, Auth::new(token)?)),
            Err(e) if Instant::now() < deadline => {
                tracing::debug!("coordinator {} not reachable yet: {}", url, e);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => anyhow::bail!("cannot reach the coordinator at {}: {}", url, e),
        }
    }
}

/// Runs a worker until the job is over.
pub async fn run_worker(config: WorkerConfig) -> anyhow::Result<WorkerSummary> {
    let mut client = connect(
        &config.coordinator,
        config.token.as_deref(),
        config.tls_ca.as_ref(),
        config.patience,
    )
    .await?;
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let reply = client
        .register(RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            worker_name: config.name.clone(),
            cores: threads as u32,
            memory_budget: config.memory,
        })
        .await
        .map_err(|s| anyhow::anyhow!("the coordinator refused this worker: {}", s.message()))?
        .into_inner();
    let worker_id = reply.worker_id;
    let spec = reply
        .job
        .ok_or_else(|| anyhow::anyhow!("the coordinator sent no job"))?;
    let metric = spec.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let file = (!spec.puzzle_file.is_empty()).then_some(spec.puzzle_file.as_str());
    let job = Job::new(
        parse_puzzle_with_file(&spec.puzzle, metric, file)?,
        Some(spec.shard_pieces as usize),
    )?
    .with_chunk_shards(Some(spec.chunk_shards));
    anyhow::ensure!(
        job.fingerprint() == spec.fingerprint,
        "this worker plans '{}' differently from the coordinator (fingerprint {:016x} vs {:016x}); use the same cayley version on both",
        spec.puzzle,
        job.fingerprint(),
        spec.fingerprint
    );
    let checkpoint = config
        .checkpoint_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&spec.checkpoint_dir));
    tracing::info!(
        "worker {} joined {} ({} threads, memory budget {})",
        worker_id,
        spec.puzzle,
        threads,
        human_bytes(config.memory as u128)
    );
    let memory = config.memory;
    let runner = tokio::task::spawn_blocking(move || TaskRunner::new(job, &checkpoint, memory, threads)).await??;
    let runner = Arc::new(Mutex::new(runner));
    let mut summary = lease_loop(&mut client, worker_id, &runner).await?;
    summary.cache_peak = runner.lock().expect("runner lock").cache_peak();
    Ok(summary)
}

async fn lease_loop(
    client: &mut Client,
    worker_id: u64,
    runner: &Arc<Mutex<TaskRunner>>,
) -> anyhow::Result<WorkerSummary> {
    let mut tasks = 0u64;
    let mut failures = 0u32;
    loop {
        let reply = match client.lease(LeaseRequest { worker_id }).await {
            Ok(r) => {
                failures = 0;
                r.into_inner()
            }
            Err(status) if status.code() == tonic::Code::Unavailable && failures < 50 => {
                failures += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            Err(status) => anyhow::bail!("lost the coordinator: {}", status.message()),
        };
        match reply.reply {
            Some(lease_reply::Reply::Task(task)) => {
                if let Some(fatal) = run_task(client, worker_id, runner, task).await? {
                    anyhow::bail!(fatal);
                }
                tasks += 1;
            }
            Some(lease_reply::Reply::WaitMs(ms)) => tokio::time::sleep(Duration::from_millis(ms as u64)).await,
            Some(lease_reply::Reply::Over(over)) => {
                return Ok(WorkerSummary {
                    worker_id,
                    tasks,
                    finished: over.finished,
                    reason: over.reason,
                    cache_peak: 0,
                })
            }
            None => anyhow::bail!("empty lease reply"),
        }
    }
}

/// Computes one task while streaming progress, then reports its result.
/// Returns a message when this worker cannot go on.
async fn run_task(
    client: &mut Client,
    worker_id: u64,
    runner: &Arc<Mutex<TaskRunner>>,
    task: Task,
) -> anyhow::Result<Option<String>> {
    let (tx, rx) = tokio::sync::mpsc::channel::<TaskUpdate>(16);
    let mut report_client = client.clone();
    let report = tokio::spawn(async move {
        report_client
            .report(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
    });
    let units = Arc::new(AtomicU64::new(0));
    let found = Arc::new(AtomicU64::new(0));
    let units_total = runner.lock().expect("runner lock").units_of_chunk(task.chunk);
    let progress = {
        let (units, found) = (units.clone(), found.clone());
        move || TaskProgress {
            blocks_done: units.load(Ordering::Relaxed),
            blocks_total: units_total,
            states_found: found.load(Ordering::Relaxed),
        }
    };
    let compute = tokio::task::spawn_blocking({
        let (runner, units, found) = (runner.clone(), units.clone(), found.clone());
        move || {
            let mut runner = runner.lock().expect("runner lock");
            runner.compute_chunk(task.from_level, task.chunk, &|f| {
                units.fetch_add(1, Ordering::Relaxed);
                found.fetch_add(f, Ordering::Relaxed);
            })
        }
    });
    let result = with_heartbeats(&tx, worker_id, &task, &progress, compute).await?;
    let fatal = match &result {
        Err(e @ TaskError::Unreadable(_)) => Some(e.to_string()),
        _ => None,
    };
    finish_report(&tx, worker_id, &task, result, report).await;
    Ok(fatal)
}

/// Awaits `work`, sending a progress message (the lease heartbeat) every
/// half second meanwhile.
async fn with_heartbeats<T>(
    tx: &tokio::sync::mpsc::Sender<TaskUpdate>,
    worker_id: u64,
    task: &Task,
    progress: &impl Fn() -> TaskProgress,
    mut work: tokio::task::JoinHandle<T>,
) -> Result<T, tokio::task::JoinError> {
    let mut ticker = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            r = &mut work => return r,
            _ = ticker.tick() => {
                let _ = tx.send(update(worker_id, task, task_update::Update::Progress(progress()))).await;
            }
        }
    }
}

fn update(worker_id: u64, task: &Task, u: task_update::Update) -> TaskUpdate {
    TaskUpdate {
        worker_id,
        lease_id: task.lease_id,
        update: Some(u),
    }
}

type ReportHandle = tokio::task::JoinHandle<Result<tonic::Response<cayley_proto::ReportReply>, tonic::Status>>;

/// Sends the task's result or failure and closes its report stream.
async fn finish_report(
    tx: &tokio::sync::mpsc::Sender<TaskUpdate>,
    worker_id: u64,
    task: &Task,
    result: Result<TaskResult, TaskError>,
    report: ReportHandle,
) {
    let last = match result {
        Ok(r) => task_update::Update::Done(done_message(&r)),
        Err(e) => {
            tracing::warn!("task ({}, {}) failed: {}", task.from_level, task.chunk, e);
            let (kind, level, chunk) = match &e {
                TaskError::DiskFull(_) => (task_failed::Kind::DiskFull, 0, 0),
                TaskError::CorruptInput { level, chunk, .. } => (task_failed::Kind::CorruptInput, *level, *chunk),
                TaskError::Unreadable(_) => (task_failed::Kind::UnreadableCheckpoint, 0, 0),
                TaskError::Other(_) => (task_failed::Kind::Other, 0, 0),
            };
            task_update::Update::Failed(TaskFailed {
                kind: kind as i32,
                message: e.to_string(),
                level,
                chunk,
            })
        }
    };
    let _ = tx.send(update(worker_id, task, last)).await;
    let where_ = format!("task ({}, {})", task.from_level, task.chunk);
    match report.await {
        Ok(Ok(reply)) if !reply.get_ref().accepted => {
            tracing::warn!("coordinator did not accept {}: {}", where_, reply.get_ref().message)
        }
        Ok(Ok(_)) => {}
        Ok(Err(status)) => tracing::warn!("reporting {} failed: {}", where_, status.message()),
        Err(e) => tracing::warn!("reporting {} failed: {}", where_, e),
    }
}

/// The protocol's form of a finished task.
pub fn done_message(r: &TaskResult) -> TaskDone {
    TaskDone {
        stored: r.stored,
        states: r.states,
        classes: r.classes,
        evaluations: r.evaluations,
        file_bytes: r.file_bytes,
        index_checksum: r.index_checksum,
        seconds: r.seconds,
        top_down_units: r.kernel.top_down_blocks,
        bottom_up_units: r.kernel.bottom_up_blocks,
        cheaper_bound: r.kernel.cheaper_bound,
        io: Some(IoStats {
            bytes_read: r.io.cache.bytes_read,
            lookups: r.io.cache.lookups,
            hits: r.io.cache.hits,
            load_seconds: r.io.cache.load_seconds,
            compute_seconds: r.io.compute_seconds,
            write_seconds: r.io.write_seconds,
            sources_seconds: r.io.sources_seconds,
            other_seconds: r.io.other_seconds,
        }),
    }
}
