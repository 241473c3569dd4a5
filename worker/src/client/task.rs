//! One leased task on this worker: computed on a blocking thread while
//! its report stream carries progress (and, once a level, the chunks that
//! gain nothing), then its result or failure.

use super::link::{status_reason, Client};
use super::windows::WindowHold;
use crate::runner::{TaskError, TaskResult, TaskRunner};
use cayley_proto::{task_failed, task_update, IoStats, Task, TaskDone, TaskFailed, TaskProgress, TaskUpdate};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How a task ended for this worker.
pub(super) enum TaskEnd {
    /// Its result or failure was sent.
    Reported,
    /// Its lease ended first (expired, or another copy won): computing
    /// stopped, nothing was reported.
    Dropped,
    /// This worker cannot go on.
    Fatal(String),
}

/// What a task reports through: the coordinator's client and who it is.
pub(super) struct Reporter {
    pub client: Client,
    pub ids: Ids,
}

/// Computes one task while streaming progress, then reports its result.
/// When the report stream ends before the task does (the lease expired,
/// another copy of the task won, the connection broke), computing stops:
/// the coordinator has already given the task to someone else.
/// `window` is let go of when the chunk turns out empty or its shards are
/// all in its file, or at the end.
pub(super) async fn run_task(
    reporter: Reporter,
    runner: Arc<TaskRunner>,
    task: Task,
    window: WindowHold,
) -> anyhow::Result<TaskEnd> {
    let Reporter { client, ids } = reporter;
    let (tx, rx) = tokio::sync::mpsc::channel::<TaskUpdate>(16);
    let mut report_client = client;
    let mut report = tokio::spawn(async move {
        report_client
            .report(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
    });
    let units = Arc::new(AtomicU64::new(0));
    let found = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let units_total = runner.units_of_chunk(task.chunk);
    let progress = {
        let (units, found) = (units.clone(), found.clone());
        move || TaskProgress {
            units_done: units.load(Ordering::Relaxed),
            units_total,
            states_found: found.load(Ordering::Relaxed),
            gaining_nothing: Vec::new(),
        }
    };
    // Progress goes out from the start, also while the task waits for the
    // threads of the one before it: each message renews the lease.
    let _ = tx
        .send(update(ids, &task, task_update::Update::Progress(progress())))
        .await;
    let mut compute = tokio::task::spawn_blocking({
        let (runner, stop, tx, task) = (runner.clone(), stop.clone(), tx.clone(), task);
        let progress = progress.clone();
        move || {
            runner.compute_chunk_until(
                task.from_level,
                task.chunk,
                &|f| {
                    units.fetch_add(1, Ordering::Relaxed);
                    found.fetch_add(f, Ordering::Relaxed);
                },
                &|_| window.release(),
                // At once, not with the task's result: the coordinator
                // leases chunks meanwhile, and each it records first is a
                // task saved.
                &|others| {
                    let others = TaskProgress {
                        gaining_nothing: others,
                        ..progress()
                    };
                    let _ = tx.blocking_send(update(ids, &task, task_update::Update::Progress(others)));
                },
                &stop,
            )
        }
    });
    // The first tick after a period, not at once: the message above has
    // just said the same (an immediate tick was a third of the messages of
    // a sparse level's tasks, most of which end within a millisecond).
    let every = Duration::from_millis(500);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let result = loop {
        tokio::select! {
            r = &mut compute => break r?,
            ended = &mut report => {
                stop.store(true, Ordering::Relaxed);
                let _ = compute.await;
                let why = match ended {
                    Ok(Ok(reply)) => reply.into_inner().message,
                    Ok(Err(status)) => status_reason(&status),
                    Err(e) => e.to_string(),
                };
                tracing::warn!("dropped task ({}, {}): {}", task.from_level, task.chunk, why);
                return Ok(TaskEnd::Dropped);
            }
            _ = ticker.tick() => {
                let _ = tx.send(update(ids, &task, task_update::Update::Progress(progress()))).await;
            }
        }
    };
    let fatal = match &result {
        Err(e @ TaskError::Unreadable(_)) => Some(e.to_string()),
        _ => None,
    };
    finish_report(&tx, ids, &task, result, report).await;
    Ok(fatal.map_or(TaskEnd::Reported, TaskEnd::Fatal))
}

/// Who is reporting, to which coordinator.
#[derive(Clone, Copy)]
pub(super) struct Ids {
    pub worker: u64,
    pub coordinator: u64,
}

fn update(ids: Ids, task: &Task, u: task_update::Update) -> TaskUpdate {
    TaskUpdate {
        worker_id: ids.worker,
        lease_id: task.lease_id,
        update: Some(u),
        coordinator_id: ids.coordinator,
    }
}

type ReportHandle = tokio::task::JoinHandle<Result<tonic::Response<cayley_proto::ReportReply>, tonic::Status>>;

/// Sends the task's result or failure and closes its report stream.
async fn finish_report(
    tx: &tokio::sync::mpsc::Sender<TaskUpdate>,
    ids: Ids,
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
                TaskError::Other(_) | TaskError::Stopped => (task_failed::Kind::Other, 0, 0),
            };
            task_update::Update::Failed(TaskFailed {
                kind: kind as i32,
                message: e.to_string(),
                level,
                chunk,
            })
        }
    };
    let _ = tx.send(update(ids, task, last)).await;
    let where_ = format!("task ({}, {})", task.from_level, task.chunk);
    match report.await {
        Ok(Ok(reply)) if !reply.get_ref().accepted => {
            tracing::warn!("coordinator did not accept {}: {}", where_, reply.get_ref().message)
        }
        Ok(Ok(_)) => {}
        Ok(Err(status)) => tracing::warn!("reporting {} failed: {}", where_, status_reason(&status)),
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
            close_seconds: r.io.close_seconds,
            sources_seconds: r.io.sources_seconds,
            other_seconds: r.io.other_seconds,
            wait_seconds: r.io.wait_seconds,
            busy_seconds: r.io.busy_seconds,
            idle_seconds: r.io.idle_seconds,
            threads: r.io.threads,
        }),
    }
}
