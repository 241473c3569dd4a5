//! One leased task on this worker: computed on a blocking thread while
//! its report stream carries progress (and, once a level, the chunks that
//! gain nothing), then its result or failure.

use super::link::{status_reason, Client};
use super::windows::WindowHold;
use crate::runner::{ShardsDone, TaskError, TaskResult, TaskRunner};
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

/// A task's units of progress and states found, each pool thread counting
/// on a cache line of its own, summed when a progress message goes out
/// (twice a second). Why: a unit is counted for every shard, and two
/// counts that every thread added to moved their cache lines between the
/// cores at every shard.
struct Counts {
    /// One per pool thread, and the first for any other thread.
    lines: Box<[Line]>,
}

#[derive(Default)]
#[repr(align(128))]
struct Line {
    units: AtomicU64,
    found: AtomicU64,
}

impl Counts {
    /// Lines for a pool of `threads` threads and for the calling thread.
    fn new(threads: usize) -> Counts {
        Counts {
            lines: (0..=threads).map(|_| Line::default()).collect(),
        }
    }

    /// `units` units done that found `found` states, on this thread's line.
    fn add(&self, units: u64, found: u64) {
        let at = rayon::current_thread_index().map_or(0, |i| i + 1);
        let line = &self.lines[at.min(self.lines.len() - 1)];
        line.units.fetch_add(units, Ordering::Relaxed);
        line.found.fetch_add(found, Ordering::Relaxed);
    }

    /// Units done and states found so far.
    fn totals(&self) -> (u64, u64) {
        self.lines.iter().fold((0, 0), |(units, found), line| {
            (
                units + line.units.load(Ordering::Relaxed),
                found + line.found.load(Ordering::Relaxed),
            )
        })
    }
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
    let counts = Arc::new(Counts::new(runner.threads()));
    let stop = Arc::new(AtomicBool::new(false));
    let units_total = runner.units_of_chunk(task.chunk);
    let progress = {
        let counts = counts.clone();
        move || {
            let (units_done, states_found) = counts.totals();
            TaskProgress {
                units_done,
                units_total,
                states_found,
                gaining_nothing: Vec::new(),
            }
        }
    };
    // Progress goes out from the start, also while the task waits for the
    // threads of the one before it: each message renews the lease.
    let _ = tx
        .send(update(ids, &task, task_update::Update::Progress(progress())))
        .await;
    runner.note_lease(task.from_level + 1, task.last_level);
    let mut compute = tokio::task::spawn_blocking({
        let (runner, stop, tx, task) = (runner.clone(), stop.clone(), tx.clone(), task);
        let progress = progress.clone();
        move || {
            runner.compute_chunk_until(
                task.from_level,
                task.chunk,
                &|units, found| counts.add(units, found),
                &|done| match done {
                    ShardsDone::AtMost(shards) => window.shrink_to(shards),
                    ShardsDone::GainsNothing | ShardsDone::Computed => window.release(),
                },
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
                let (why, superseded) = match ended {
                    Ok(Ok(reply)) => {
                        let reply = reply.into_inner();
                        (reply.message, reply.superseded)
                    }
                    Ok(Err(status)) => (status_reason(&status), false),
                    Err(e) => (e.to_string(), false),
                };
                if superseded {
                    tracing::debug!("stopped task ({}, {}): {}", task.from_level, task.chunk, why);
                } else {
                    tracing::warn!("dropped task ({}, {}): {}", task.from_level, task.chunk, why);
                }
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
        // Its chunk was recorded first (another copy of the task, or the
        // coordinator's record of it as gaining nothing): its file, if
        // written, holds the same bytes. Not a warning.
        Ok(Ok(reply)) if reply.get_ref().superseded => {
            tracing::debug!("{} ended: {}", where_, reply.get_ref().message)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_every_thread_of_a_pool_and_from_outside_add_up() {
        let threads = 3;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let counts = Counts::new(threads);
        pool.install(|| {
            use rayon::prelude::*;
            (0..1000u64).into_par_iter().for_each(|i| counts.add(1 + i % 3, i % 7));
        });
        counts.add(1, 5);
        // A thread of a bigger pool counts on the last line.
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads + 2)
            .build()
            .unwrap()
            .broadcast(|_| counts.add(1, 1));
        let units: u64 = (0..1000u64).map(|i| 1 + i % 3).sum::<u64>() + 1 + (threads as u64 + 2);
        let found: u64 = (0..1000u64).map(|i| i % 7).sum::<u64>() + 5 + (threads as u64 + 2);
        assert_eq!(counts.totals(), (units, found));
    }
}
