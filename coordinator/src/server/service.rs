//! The gRPC face of the coordinator: authentication, version checks, and the
//! translation of calls into [`JobState`] operations.

use super::state::{JobState, Phase, Verdict};
use cayley_shared::proto::coordinator_server::Coordinator;
use cayley_shared::proto::{
    task_update, HeartbeatReply, HeartbeatRequest, JobSpec, LeaseReply, LeaseRequest, RegisterReply, RegisterRequest,
    ReportReply, StatusReply, StatusRequest, TaskUpdate, WorkerStatus, PROTOCOL_VERSION,
};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming};

/// Shared handle on the job.
#[derive(Clone)]
pub struct CoordinatorService {
    pub state: Arc<Mutex<JobState>>,
    /// Set to the final phase when the job ends.
    pub phase_tx: Arc<watch::Sender<Phase>>,
    pub lease_secs: u32,
}

impl CoordinatorService {
    fn with_state<T>(&self, f: impl FnOnce(&mut JobState) -> T) -> T {
        let mut state = self.state.lock().expect("job state lock");
        let out = f(&mut state);
        if state.phase != Phase::Running && *self.phase_tx.borrow() == Phase::Running {
            let _ = self.phase_tx.send(state.phase.clone());
        }
        out
    }
}

/// Checks the cluster token on every call.
pub fn check_token(expected: Option<String>) -> impl Fn(Request<()>) -> Result<Request<()>, Status> + Clone {
    let expected = expected.map(|t| format!("Bearer {}", t));
    move |req: Request<()>| {
        let Some(expected) = &expected else { return Ok(req) };
        match req.metadata().get("authorization").and_then(|v| v.to_str().ok()) {
            Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(req),
            _ => Err(Status::unauthenticated("missing or wrong cluster token")),
        }
    }
}

/// Compares without leaking where the first difference is.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    async fn register(&self, request: Request<RegisterRequest>) -> Result<Response<RegisterReply>, Status> {
        let req = request.into_inner();
        if req.protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker speaks protocol version {}, this coordinator speaks version {}; run matching cayley releases",
                req.protocol_version, PROTOCOL_VERSION
            )));
        }
        let lease_secs = self.lease_secs;
        self.with_state(|s| {
            let id = s.register(req.worker_name.clone(), req.cores);
            tracing::info!("worker {} registered: {} ({} cores)", id, req.worker_name, req.cores);
            let job = JobSpec {
                puzzle: s.job.puzzle.spec.clone(),
                metric: s.job.puzzle.metric.name().into(),
                shard_pieces: s.job.space.shard_pieces() as u32,
                fingerprint: s.job.fingerprint(),
                checkpoint_dir: s.checkpoint.root().to_string_lossy().into_owned(),
                puzzle_file: s.puzzle_file.clone().unwrap_or_default(),
            };
            Ok(Response::new(RegisterReply {
                worker_id: id,
                job: Some(job),
                lease_secs,
            }))
        })
    }

    async fn lease(&self, request: Request<LeaseRequest>) -> Result<Response<LeaseReply>, Status> {
        let worker = request.into_inner().worker_id;
        self.with_state(|s| {
            if !s.touch(worker) {
                return Err(Status::not_found(format!("worker {} is not registered", worker)));
            }
            Ok(Response::new(LeaseReply {
                reply: Some(s.lease(worker)),
            }))
        })
    }

    async fn report(&self, request: Request<Streaming<TaskUpdate>>) -> Result<Response<ReportReply>, Status> {
        let mut stream = request.into_inner();
        let mut lease: Option<(u64, u64)> = None;
        loop {
            let update = match stream.message().await {
                Ok(Some(u)) => u,
                // The stream ended or broke before a result: re-issue the task.
                Ok(None) | Err(_) => {
                    if let Some((worker, lease_id)) = lease {
                        self.with_state(|s| s.abandon(worker, lease_id));
                    }
                    return Err(Status::cancelled("report stream ended without a result"));
                }
            };
            lease = Some((update.worker_id, update.lease_id));
            let verdict = match update.update {
                Some(task_update::Update::Progress(p)) => {
                    match self.with_state(|s| s.progress(update.worker_id, update.lease_id, p)) {
                        Ok(()) => continue,
                        Err(why) => Verdict::Rejected(why),
                    }
                }
                Some(task_update::Update::Done(d)) => {
                    self.with_state(|s| s.complete(update.worker_id, update.lease_id, d))
                }
                Some(task_update::Update::Failed(f)) => {
                    self.with_state(|s| s.fail(update.worker_id, update.lease_id, f))
                }
                None => Verdict::Rejected("empty update".into()),
            };
            let (accepted, message) = match verdict {
                Verdict::Accepted => (true, String::new()),
                Verdict::Ignored(m) => (true, m),
                Verdict::Rejected(m) => {
                    tracing::warn!("rejected report from worker {}: {}", update.worker_id, m);
                    (false, m)
                }
            };
            return Ok(Response::new(ReportReply { accepted, message }));
        }
    }

    async fn heartbeat(&self, request: Request<HeartbeatRequest>) -> Result<Response<HeartbeatReply>, Status> {
        let worker = request.into_inner().worker_id;
        self.with_state(|s| match s.touch(worker) {
            true => Ok(Response::new(HeartbeatReply {})),
            false => Err(Status::not_found(format!("worker {} is not registered", worker))),
        })
    }

    async fn status(&self, _request: Request<StatusRequest>) -> Result<Response<StatusReply>, Status> {
        Ok(Response::new(self.with_state(|s| status_of(s))))
    }
}

/// Snapshot of the job for `cayley status`.
fn status_of(s: &JobState) -> StatusReply {
    let space = &s.job.space;
    let running = s.manifest.running.as_ref();
    let tasks_done = running.map_or(0, |r| r.done.len() as u64);
    let (blocks_done, level_states) = s.level_progress();
    let level_secs = running.map_or(0.0, |r| r.seconds_before) + s.level_elapsed();
    let fraction = blocks_done as f64 / (space.units_per_shard() * space.shards()) as f64;
    let eta = if fraction > 0.0 {
        level_secs * (1.0 - fraction) / fraction
    } else {
        -1.0
    };
    StatusReply {
        puzzle: s.job.puzzle.spec.clone(),
        metric: s.job.puzzle.metric.name().into(),
        level: running.map_or(s.manifest.levels.len() as u32 - 1, |r| r.from_level + 1),
        tasks_done,
        tasks_total: space.shards(),
        states_found: (s.manifest.states() as u64).saturating_add(level_states),
        reachable_states: s.job.reachable_text(),
        workers: s
            .workers
            .iter()
            .map(|(&id, w)| WorkerStatus {
                worker_id: id,
                name: w.name.clone(),
                cores: w.cores,
                tasks_done: w.tasks_done,
                evaluations_per_sec: if w.busy_secs > 0.0 {
                    w.evaluations as f64 / w.busy_secs
                } else {
                    0.0
                },
                busy: w.busy,
                idle_secs: w.last_seen.elapsed().as_secs_f64(),
            })
            .collect(),
        elapsed_secs: s.started.elapsed().as_secs_f64(),
        level_eta_secs: eta,
        finished: s.phase == Phase::Finished,
        depths: s.manifest.levels.iter().map(|l| l.count).collect(),
    }
}
