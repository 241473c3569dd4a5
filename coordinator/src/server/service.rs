//! The gRPC face of the coordinator: authentication, version checks, and the
//! translation of calls into [`JobState`] operations.

use super::state::completion::{check_file, file_is_damaged};
use super::state::empties::write_empties;
use super::state::{JobState, Phase, Verdict};
use cayley_proto::coordinator_server::Coordinator;
use cayley_proto::{
    lease_reply, task_update, IoStats, JobSpec, LeaseReply, LeaseRequest, RegisterReply, RegisterRequest, ReportReply,
    StatusReply, StatusRequest, TaskUpdate, WorkerStatus, PROTOCOL_VERSION,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tonic::{Request, Response, Status, Streaming};

/// How long a lease request that finds nothing to hand out is held before
/// it is answered "ask again" ([`CoordinatorService::lease_hold`]).
pub const LEASE_HOLD: Duration = Duration::from_millis(100);

/// Shared handle on the job.
#[derive(Clone)]
pub struct CoordinatorService {
    pub state: Arc<Mutex<JobState>>,
    /// Set to the final phase when the job ends.
    pub phase_tx: Arc<watch::Sender<Phase>>,
    pub lease_secs: u32,
    /// Random per process (see `RegisterReply.coordinator_id`).
    pub coordinator_id: u64,
    /// Signalled after every call that may make a task available or end
    /// the job (a result, a failure, a task given back, chunks recorded
    /// empty, a lease expired, the job stopped): lease requests held for
    /// want of a task wake on it.
    pub changed: Arc<Notify>,
    /// How long a lease request with nothing to hand out waits for one
    /// ([`LEASE_HOLD`]). A worker that was answered "wait 100 ms" slept that
    /// long even when the next level's tasks came a millisecond later: the
    /// 2×6 Loopover unreduced on two `cayley-worker` processes of one
    /// thread each (2 cores, three rounds interleaved) took 5.20–5.36 s of
    /// levels answered so, 4.40–4.58 s held.
    pub lease_hold: Duration,
}

impl CoordinatorService {
    /// Worker and lease ids of an earlier coordinator mean nothing here:
    /// NOT_FOUND makes the worker register again.
    fn check_coordinator(&self, id: u64) -> Result<(), Status> {
        if id == self.coordinator_id {
            Ok(())
        } else {
            Err(Status::not_found(
                "this worker registered with an earlier coordinator of the job; register again",
            ))
        }
    }

    /// Runs `f` on the job's state, then wakes the lease requests held
    /// for a task (see [`Self::lease_hold`]).
    pub(super) fn with_state<T>(&self, f: impl FnOnce(&mut JobState) -> T) -> T {
        let out = self.with_state_quietly(f);
        self.changed.notify_waiters();
        out
    }

    /// [`Self::with_state`] without waking anyone: for lease requests, which
    /// only take what is there, so that two held requests do not wake each
    /// other in turn; and for calls that make no task available (progress,
    /// registration, status). A cluster's idle workers are all held at a
    /// level's end while the last tasks send progress twice a second each:
    /// woken by every message, each held request would look for a lease
    /// under the state's lock for nothing.
    fn with_state_quietly<T>(&self, f: impl FnOnce(&mut JobState) -> T) -> T {
        let mut state = self.state.lock().expect("job state lock");
        let out = f(&mut state);
        publish_end(&state, &self.phase_tx);
        out
    }

    /// A lease for `worker`, which computes `running` tasks already: a task,
    /// the end of the job, or, when there is nothing to hand out yet, a
    /// wait. The wait is spent here, up to [`Self::lease_hold`], woken by
    /// any change of the state, so that a task that comes meanwhile (the
    /// next level's, one given back) goes out at once; after the hold the
    /// worker is told to ask again at once.
    async fn lease_when_ready(&self, worker: u64, running: u32) -> Result<lease_reply::Reply, Status> {
        let held_until = tokio::time::Instant::now() + self.lease_hold;
        loop {
            // Registered before the state is looked at: a change between
            // the look and the wait still wakes it.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let reply = self.with_state_quietly(|s| {
                if !s.touch(worker) {
                    return Err(Status::not_found(format!("worker {} is not registered", worker)));
                }
                Ok(s.lease_holding(worker, running))
            })?;
            if !matches!(reply, lease_reply::Reply::WaitMs(_)) {
                return Ok(reply);
            }
            if tokio::time::timeout_at(held_until, changed).await.is_err() {
                return Ok(lease_reply::Reply::WaitMs(0));
            }
        }
    }
}

/// Tells whoever waits for the job's end (once) that it has ended.
pub fn publish_end(state: &JobState, phase_tx: &watch::Sender<Phase>) {
    if state.phase != Phase::Running && *phase_tx.borrow() == Phase::Running {
        let _ = phase_tx.send(state.phase.clone());
    }
}

impl CoordinatorService {
    /// Accepts a result: the file's header and index are read outside the
    /// state lock, on a blocking thread, so the coordinator's cost per task
    /// is a few KB of reading whatever the chunk's size.
    async fn complete(&self, worker: u64, lease_id: u64, done: cayley_proto::TaskDone) -> Verdict {
        let begun = self.with_state(|s| s.begin_complete(worker, lease_id, done));
        let completion = match begun {
            Ok(c) => c,
            Err(verdict) => return verdict,
        };
        let checked = tokio::task::spawn_blocking(move || {
            let file = check_file(&completion);
            (completion, file)
        })
        .await;
        match checked {
            Ok((completion, file)) => self.with_state(|s| s.finish_complete(completion, file)),
            Err(e) => Verdict::Rejected(format!("checking the file failed: {}", e)),
        }
    }

    /// Writes and records the chunks a result reported gaining nothing
    /// (see `state/empties.rs`), the files outside the state lock.
    async fn record_empties(&self, from_level: u32, chunks: &[u64]) {
        let Some(empties) = self.with_state(|s| s.begin_empties(from_level, chunks)) else {
            return;
        };
        let writing = empties.clone();
        let written = tokio::task::spawn_blocking(move || write_empties(&writing))
            .await
            .unwrap_or_else(|e| empties.unwritten(&e.to_string()));
        // Unwritten chunks go back to the queue: never left to nobody.
        self.with_state(|s| s.finish_empties(empties, written));
    }

    /// Handles a failure; a damaged input is checked outside the lock.
    async fn fail(&self, worker: u64, lease_id: u64, failed: cayley_proto::TaskFailed) -> Verdict {
        match self.with_state(|s| s.begin_fail(worker, lease_id, failed)) {
            Ok(Some(check)) => {
                let checked = tokio::task::spawn_blocking(move || {
                    let damaged = file_is_damaged(&check);
                    (check, damaged)
                })
                .await;
                if let Ok((check, damaged)) = checked {
                    self.with_state(|s| s.finish_repair_check(check, damaged));
                }
                Verdict::Accepted
            }
            Ok(None) => Verdict::Accepted,
            Err(v) => v,
        }
    }
}

/// Checks the cluster token on every call.
pub fn check_token(expected: Option<String>) -> impl Fn(Request<()>) -> Result<Request<()>, Status> + Clone {
    let expected = expected.map(|t| format!("Bearer {}", t));
    move |req: Request<()>| {
        let Some(expected) = &expected else { return Ok(req) };
        match req.metadata().get("authorization").and_then(|v| v.to_str().ok()) {
            Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(req),
            _ => Err(Status::unauthenticated(
                "missing or wrong cluster token (give the one `cayley serve` printed, with --token or CAYLEY_TOKEN)",
            )),
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
        self.with_state_quietly(|s| {
            let id = s.register(req.worker_name.clone(), req.cores, req.memory_budget);
            tracing::info!("worker {} registered: {} ({} cores)", id, req.worker_name, req.cores);
            let job = JobSpec {
                puzzle: s.job.puzzle.spec.clone(),
                metric: s.job.puzzle.metric.name().into(),
                shard_pieces: s.job.space.shard_pieces() as u32,
                fingerprint: s.job.fingerprint(),
                checkpoint_dir: s.checkpoint.root().to_string_lossy().into_owned(),
                puzzle_file: s.puzzle_file.clone().unwrap_or_default(),
                chunk_shards: s.job.chunking.per_chunk,
            };
            Ok(Response::new(RegisterReply {
                worker_id: id,
                job: Some(job),
                lease_secs,
                coordinator_id: self.coordinator_id,
            }))
        })
    }

    async fn lease(&self, request: Request<LeaseRequest>) -> Result<Response<LeaseReply>, Status> {
        let request = request.into_inner();
        self.check_coordinator(request.coordinator_id)?;
        let reply = self.lease_when_ready(request.worker_id, request.running_tasks).await?;
        Ok(Response::new(LeaseReply { reply: Some(reply) }))
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
            self.check_coordinator(update.coordinator_id)?;
            lease = Some((update.worker_id, update.lease_id));
            let verdict = match update.update {
                Some(task_update::Update::Progress(mut p)) => {
                    let others_empty = std::mem::take(&mut p.gaining_nothing);
                    let progressed = self.with_state_quietly(|s| {
                        s.progress(update.worker_id, update.lease_id, p)
                            .map(|()| s.leased_level(update.lease_id))
                            .map_err(|why| (s.superseded.contains(&update.lease_id), why))
                    });
                    match progressed {
                        Ok(level) => {
                            if let (Some(level), false) = (level, others_empty.is_empty()) {
                                // Beside the report, which goes on.
                                let service = self.clone();
                                tokio::spawn(async move { service.record_empties(level, &others_empty).await });
                            }
                            continue;
                        }
                        Err((true, why)) => Verdict::Superseded(why),
                        Err((false, why)) => Verdict::Rejected(why),
                    }
                }
                Some(task_update::Update::Done(d)) => self.complete(update.worker_id, update.lease_id, d).await,
                Some(task_update::Update::Failed(f)) => self.fail(update.worker_id, update.lease_id, f).await,
                None => Verdict::Rejected("empty update".into()),
            };
            let (accepted, message, superseded) = match verdict {
                Verdict::Accepted => (true, String::new(), false),
                Verdict::Ignored(m) => (true, m, false),
                // A race the job is built for (two in-process workers met
                // it in most runs of the 3×3 Loopover): not a warning.
                Verdict::Superseded(m) => {
                    tracing::debug!("ended report from worker {}: {}", update.worker_id, m);
                    (false, m, true)
                }
                Verdict::Rejected(m) => {
                    tracing::warn!("rejected report from worker {}: {}", update.worker_id, m);
                    (false, m, false)
                }
            };
            return Ok(Response::new(ReportReply {
                accepted,
                message,
                superseded,
            }));
        }
    }

    async fn status(&self, _request: Request<StatusRequest>) -> Result<Response<StatusReply>, Status> {
        let lease_secs = self.lease_secs;
        Ok(Response::new(self.with_state_quietly(|s| status_of(s, lease_secs))))
    }
}

/// Snapshot of the job for `cayley status`.
fn status_of(s: &JobState, lease_secs: u32) -> StatusReply {
    let space = &s.job.space;
    let running = s.manifest.running.as_ref();
    let tasks_done = s.chunks_done();
    let (units_done, level_states) = s.level_progress();
    let level_secs = running.map_or(0.0, |r| r.seconds_before) + s.level_elapsed();
    let fraction = units_done as f64 / (space.units_per_shard() * space.shards()).max(1) as f64;
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
        tasks_total: s.job.chunking.chunks(),
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
                busy: s.leases.values().any(|l| l.worker == id),
                idle_secs: s.clock.since(w.last_seen).as_secs_f64(),
                memory_budget: w.memory_budget,
                lost: s.is_lost(id),
            })
            .collect(),
        elapsed_secs: s.started.elapsed().as_secs_f64(),
        level_eta_secs: eta,
        finished: s.phase == Phase::Finished,
        depths: s.manifest.levels.iter().map(|l| l.count).collect(),
        level_io: Some(IoStats {
            bytes_read: s.level_io().bytes_read,
            lookups: s.level_io().lookups,
            hits: s.level_io().hits,
            load_seconds: s.level_io().load_seconds,
            compute_seconds: s.level_io().compute_seconds,
            write_seconds: s.level_io().write_seconds,
            close_seconds: s.level_io().close_seconds,
            sources_seconds: s.level_io().sources_seconds,
            other_seconds: s.level_io().other_seconds,
            wait_seconds: s.level_io().wait_seconds,
            busy_seconds: s.level_io().busy_seconds,
            idle_seconds: s.level_io().idle_seconds,
            threads: s.level_io().threads,
        }),
        expired_leases: s.lease_stats.expired,
        late_reports: s.lease_stats.late_reports,
        backups_issued: s.lease_stats.backups_issued,
        backups_won: s.lease_stats.backups_won,
        lease_secs,
    }
}
