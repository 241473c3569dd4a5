//! The worker's conversation with the coordinator: register, lease tasks,
//! stream progress and results, exit when the job is over.

use crate::runner::{TaskError, TaskResult, TaskRunner};
use cayley_shared::job::Job;
use cayley_shared::proto::coordinator_client::CoordinatorClient;
use cayley_shared::proto::{
    lease_reply, task_failed, task_update, LeaseRequest, RegisterRequest, Task, TaskDone, TaskFailed, TaskProgress,
    TaskUpdate, PROTOCOL_VERSION,
};
use cayley_shared::puzzle::parse_puzzle_with_file;
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
    /// Directory for this worker's decompressed level files.
    pub scratch: PathBuf,
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
            scratch_free_bytes: fs4::available_space(&config.scratch).unwrap_or(0),
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
    )?;
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
    let scratch = config
        .scratch
        .join(format!("cayley-worker-{}-{}", std::process::id(), worker_id));
    tracing::info!("worker {} joined {} ({} threads)", worker_id, spec.puzzle, threads);
    let runner = tokio::task::spawn_blocking({
        let scratch = scratch.clone();
        move || TaskRunner::new(job, &checkpoint, &scratch, threads)
    })
    .await??;
    let runner = Arc::new(Mutex::new(runner));
    let outcome = lease_loop(&mut client, worker_id, runner).await;
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

async fn lease_loop(
    client: &mut Client,
    worker_id: u64,
    runner: Arc<Mutex<TaskRunner>>,
) -> anyhow::Result<WorkerSummary> {
    let mut tasks = 0u64;
    let mut failures = 0u32;
    // At most one output file is being written while the next task computes.
    let mut writing: Option<tokio::task::JoinHandle<()>> = None;
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
                let next = start_task(client, worker_id, &runner, task).await?;
                if let Some(previous) = writing.take() {
                    previous.await?;
                }
                match next {
                    Started::Writing(handle) => writing = Some(handle),
                    Started::Failed(Some(fatal)) => anyhow::bail!(fatal),
                    Started::Failed(None) => {}
                }
                tasks += 1;
            }
            Some(lease_reply::Reply::WaitMs(ms)) => {
                // The coordinator may be waiting for the file being written.
                if let Some(previous) = writing.take() {
                    previous.await?;
                } else {
                    tokio::time::sleep(Duration::from_millis(ms as u64)).await;
                }
            }
            Some(lease_reply::Reply::Over(over)) => {
                if let Some(previous) = writing.take() {
                    previous.await?;
                }
                return Ok(WorkerSummary {
                    worker_id,
                    tasks,
                    finished: over.finished,
                    reason: over.reason,
                });
            }
            None => anyhow::bail!("empty lease reply"),
        }
    }
}

/// What became of a started task.
enum Started {
    /// Computed; its file is being written and reported by this handle.
    Writing(tokio::task::JoinHandle<()>),
    /// Failed and reported; `Some` when this worker cannot go on.
    Failed(Option<String>),
}

/// Computes one task while streaming progress, then hands the output file
/// to a background write that finishes the report.
async fn start_task(
    client: &mut Client,
    worker_id: u64,
    runner: &Arc<Mutex<TaskRunner>>,
    task: Task,
) -> anyhow::Result<Started> {
    let (tx, rx) = tokio::sync::mpsc::channel::<TaskUpdate>(16);
    let mut report_client = client.clone();
    let report = tokio::spawn(async move {
        report_client
            .report(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
    });
    let blocks = Arc::new(AtomicU64::new(0));
    let found = Arc::new(AtomicU64::new(0));
    let blocks_total = runner.lock().expect("runner lock").blocks_per_task();
    let progress = {
        let (blocks, found) = (blocks.clone(), found.clone());
        move || TaskProgress {
            blocks_done: blocks.load(Ordering::Relaxed),
            blocks_total,
            states_found: found.load(Ordering::Relaxed),
        }
    };
    let compute = tokio::task::spawn_blocking({
        let (runner, blocks, found) = (runner.clone(), blocks.clone(), found.clone());
        move || {
            let mut runner = runner.lock().expect("runner lock");
            runner.compute(task.from_level, task.shard, &|f| {
                blocks.fetch_add(1, Ordering::Relaxed);
                found.fetch_add(f, Ordering::Relaxed);
            })
        }
    });
    let computed = with_heartbeats(&tx, worker_id, &task, &progress, compute).await?;
    let computed = match computed {
        Ok(c) => c,
        Err(e) => {
            let fatal = matches!(e, TaskError::Unreadable(_)).then(|| e.to_string());
            finish_report(&tx, worker_id, &task, Err(e), report).await;
            return Ok(Started::Failed(fatal));
        }
    };
    let handle = tokio::spawn(async move {
        let write = tokio::task::spawn_blocking(move || computed.write());
        let result = match with_heartbeats(&tx, worker_id, &task, &progress, write).await {
            Ok(r) => r,
            Err(e) => Err(TaskError::Other(format!("writing the output panicked: {}", e))),
        };
        finish_report(&tx, worker_id, &task, result, report).await;
    });
    Ok(Started::Writing(handle))
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

type ReportHandle = tokio::task::JoinHandle<Result<tonic::Response<cayley_shared::proto::ReportReply>, tonic::Status>>;

/// Sends the task's result or failure and closes its report stream.
async fn finish_report(
    tx: &tokio::sync::mpsc::Sender<TaskUpdate>,
    worker_id: u64,
    task: &Task,
    result: Result<TaskResult, TaskError>,
    report: ReportHandle,
) {
    let last = match result {
        Ok(r) => task_update::Update::Done(TaskDone {
            count: r.count,
            evaluations: r.evaluations,
            file_bytes: r.file_bytes,
            seconds: r.seconds,
        }),
        Err(e) => {
            tracing::warn!("task ({}, {}) failed: {}", task.from_level, task.shard, e);
            let (kind, level, shard) = match &e {
                TaskError::DiskFull(_) => (task_failed::Kind::DiskFull, 0, 0),
                TaskError::CorruptInput { level, shard, .. } => (task_failed::Kind::CorruptInput, *level, *shard),
                TaskError::Unreadable(_) => (task_failed::Kind::UnreadableCheckpoint, 0, 0),
                TaskError::Other(_) => (task_failed::Kind::Other, 0, 0),
            };
            task_update::Update::Failed(TaskFailed {
                kind: kind as i32,
                message: e.to_string(),
                level,
                shard,
            })
        }
    };
    let _ = tx.send(update(worker_id, task, last)).await;
    let where_ = format!("task ({}, {})", task.from_level, task.shard);
    match report.await {
        Ok(Ok(reply)) if !reply.get_ref().accepted => {
            tracing::warn!("coordinator did not accept {}: {}", where_, reply.get_ref().message)
        }
        Ok(Ok(_)) => {}
        Ok(Err(status)) => tracing::warn!("reporting {} failed: {}", where_, status.message()),
        Err(e) => tracing::warn!("reporting {} failed: {}", where_, e),
    }
}
