//! Leases: which worker computes which task until when, which task a
//! worker gets next, backup copies of stragglers, and workers that are
//! gone.
//!
//! A lease lasts `--lease-secs` and is renewed by every progress message.
//! It ends when its result is recorded, when its worker's report stream
//! breaks (re-issued at once), or when it expires (re-issued at the next
//! lease call or the server's one-second clock). A report (progress or
//! result) that arrives after its lease ended is refused (a result is
//! ignored when the task is recorded already) and counted as late: the
//! file a result names may be good, but the task has been given to someone
//! else. The worker stops computing a task whose report is refused.
//!
//! **Backup tasks** (as in MapReduce): once a level's queue is empty, an
//! idle worker gets a second copy of the running task expected to finish
//! last, if that copy would finish sooner than the original: the original
//! has run longer than an average task of the level (and at least
//! `MIN_RUN_BEFORE_BACKUP`) and its progress says what is left takes
//! longer than a whole average task. The first valid
//! result is recorded; the other copy's lease ends there, its worker stops
//! computing at its next progress message. Both copies write the same
//! bytes to the same name (a chunk file holds nothing but the level's bits
//! and their index), so whichever rename lands last leaves the same file.

use super::{over, JobState, Phase};
use cayley_proto::{lease_reply, Task, TaskProgress};
use std::time::{Duration, Instant};

/// How long a task runs before an idle worker may copy it. A copy of a
/// task that has run for less can save at most that little, yet costs a
/// worker a duplicate and the log a warning: the 2x2x2, reduced to 22
/// tasks of milliseconds a level, drew two backup warnings per run with two
/// in-process workers.
const MIN_RUN_BEFORE_BACKUP: Duration = Duration::from_secs(1);

/// One worker's hold on one task.
pub(in crate::server) struct Lease {
    pub(in crate::server) key: (u32, u64),
    pub(in crate::server) worker: u64,
    deadline: Instant,
    started: Instant,
    progress: TaskProgress,
    /// A second copy of a task another worker still holds.
    pub(in crate::server) backup: bool,
}

/// What happened to leases and results since this coordinator started
/// (shown by `cayley status`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaseStats {
    pub expired: u64,
    pub late_reports: u64,
    pub backups_issued: u64,
    pub backups_won: u64,
    /// Chunks recorded empty from a worker's sparse map, never leased
    /// (see `empties.rs`).
    pub empties_recorded: u64,
}

impl JobState {
    /// Notes that a worker is alive (and no longer lost, if it was).
    pub fn touch(&mut self, worker: u64) -> bool {
        match self.workers.get_mut(&worker) {
            Some(w) => {
                w.last_seen = self.clock.now();
                w.lost = false;
                true
            }
            None => false,
        }
    }

    /// Whether a worker counts as gone: its stream broke or a lease of its
    /// expired, and it has not been heard since, or it has been silent for
    /// a whole lease period (a live worker asks for work at least every
    /// 100 ms, a request being held up to that long, and
    /// sends progress every 500 ms).
    pub fn is_lost(&self, worker: u64) -> bool {
        self.workers
            .get(&worker)
            .is_none_or(|w| w.lost || self.clock.since(w.last_seen) > self.lease_duration)
    }

    /// Hands out a task to a worker with nothing running, asks it to wait,
    /// or says the job is over.
    pub fn lease(&mut self, worker: u64) -> lease_reply::Reply {
        self.lease_holding(worker, 0)
    }

    /// [`Self::lease`] for a worker computing `running` tasks already: it
    /// gets the next task, but no backup copy of a straggler (it is not
    /// idle, and the copy would wait for its threads).
    pub fn lease_holding(&mut self, worker: u64, running: u32) -> lease_reply::Reply {
        self.touch(worker);
        if self.phase != Phase::Running {
            if let Some(w) = self.workers.get_mut(&worker) {
                w.told_over = true;
            }
        }
        match &self.phase {
            Phase::Finished => return over(true, "the job is finished"),
            Phase::Stopped(why) => return over(false, why),
            Phase::Running => {}
        }
        self.expire_leases();
        let (key, backup) = match self.choose(worker) {
            Some(key) => (key, false),
            None => match self.straggler(worker).filter(|_| running == 0) {
                Some(key) => (key, true),
                // Soon again while empty chunks are being recorded: the
                // level may close any moment without a task ending.
                None if self.empties_writing > 0 => return lease_reply::Reply::WaitMs(5),
                None => return lease_reply::Reply::WaitMs(100),
            },
        };
        self.pending.remove(&key);
        let lease_id = self.next_lease;
        self.next_lease += 1;
        self.issued.insert(lease_id, key);
        let now = self.clock.now();
        if backup {
            self.lease_stats.backups_issued += 1;
            self.reporter.warn(&format!(
                "task ({}, {}) is straggling; worker {} computes a backup copy",
                key.0, key.1, worker
            ));
        }
        self.leases.insert(
            lease_id,
            Lease {
                key,
                worker,
                deadline: now + self.lease_duration,
                started: now,
                progress: TaskProgress::default(),
                backup,
            },
        );
        if let Some(w) = self.workers.get_mut(&worker) {
            w.busy = true;
        }
        lease_reply::Reply::Task(Task {
            lease_id,
            from_level: key.0,
            chunk: key.1,
            last_level: self.manifest.max_depth == Some(key.0 + 1),
        })
    }

    /// The next task for `worker`: a repair if one is pending (and nothing
    /// else while one is outstanding), else the first pending chunk of the
    /// worker's own segment, else the last pending chunk of the level.
    fn choose(&self, worker: u64) -> Option<(u32, u64)> {
        let running_from = self.running_from();
        let first = *self.pending.first()?;
        let repairing = first.0 < running_from || self.leases.values().any(|l| l.key.0 < running_from);
        if repairing {
            return (first.0 < running_from).then_some(first);
        }
        let chunks = self.job.chunking.chunks();
        let alive: Vec<u64> = self
            .workers
            .iter()
            .filter(|(&id, w)| id == worker || self.clock.since(w.last_seen) < 2 * self.lease_duration)
            .map(|(&id, _)| id)
            .collect();
        let i = alive.iter().position(|&id| id == worker).unwrap_or(0) as u64;
        let n = alive.len().max(1) as u64;
        let (lo, hi) = (i * chunks / n, (i + 1) * chunks / n);
        self.pending
            .range((running_from, lo)..(running_from, hi))
            .next()
            .or_else(|| self.pending.last())
            .copied()
    }

    /// Level whose tasks are ordinary ones (`u32::MAX` when none runs).
    pub(super) fn running_from(&self) -> u32 {
        self.manifest.running.as_ref().map_or(u32::MAX, |r| r.from_level)
    }

    /// The task to copy for an idle `worker` when nothing is pending: the
    /// running level's longest-running task held by another worker, held
    /// once only, when a fresh copy is expected to finish first (see the
    /// module's documentation).
    fn straggler(&self, worker: u64) -> Option<(u32, u64)> {
        if !self.backups || self.done.is_empty() {
            return None;
        }
        let running_from = self.running_from();
        if self.leases.values().any(|l| l.key.0 < running_from) {
            return None; // a repair comes first
        }
        let average = Duration::from_secs_f64(self.done_seconds / self.done.len() as f64);
        let holders = |key| self.leases.values().filter(|l| l.key == key).count();
        self.leases
            .values()
            .filter(|l| l.key.0 == running_from && l.worker != worker && holders(l.key) == 1)
            .filter(|l| {
                let ran = self.clock.since(l.started);
                let p = &l.progress;
                let left = match (p.units_done, p.units_total) {
                    (0, _) | (_, 0) => ran,
                    (done, total) => ran.mul_f64(total.saturating_sub(done) as f64 / done as f64),
                };
                ran > average.max(MIN_RUN_BEFORE_BACKUP) && left > average
            })
            .min_by_key(|l| l.started)
            .map(|l| l.key)
    }

    /// Returns expired leases to the queue (called on every lease request
    /// and on the server's one-second clock).
    pub fn expire_leases(&mut self) {
        let now = self.clock.now();
        let expired: Vec<u64> = self
            .leases
            .iter()
            .filter(|(_, l)| l.deadline < now)
            .map(|(&id, _)| id)
            .collect();
        for id in expired {
            let lease = self.leases.remove(&id).expect("listed above");
            self.lease_stats.expired += 1;
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.lost = true;
            }
            self.reporter.warn(&format!(
                "lease of task ({}, {}) held by worker {} expired; re-issuing it",
                lease.key.0, lease.key.1, lease.worker
            ));
            self.release(lease);
        }
    }

    /// Ends a lease without a result: its task is queued again unless it is
    /// recorded or another copy of it is still running.
    pub(in crate::server) fn release(&mut self, lease: Lease) {
        if let Some(w) = self.workers.get_mut(&lease.worker) {
            w.busy = false;
        }
        if !self.is_done(lease.key) && !self.leases.values().any(|l| l.key == lease.key) {
            self.pending.insert(lease.key);
        }
    }

    /// Ends the other copies of a task whose result was just recorded;
    /// their workers learn it at their next progress message and stop.
    pub(super) fn supersede(&mut self, key: (u32, u64)) {
        let others: Vec<u64> = self
            .leases
            .iter()
            .filter(|(_, l)| l.key == key)
            .map(|(&id, _)| id)
            .collect();
        for id in others {
            let lease = self.leases.remove(&id).expect("listed above");
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.busy = false;
            }
            self.superseded.insert(id);
        }
    }

    /// Records progress of a leased task and renews its lease.
    pub fn progress(&mut self, worker: u64, lease_id: u64, progress: TaskProgress) -> Result<(), String> {
        self.touch(worker);
        let deadline = self.clock.now() + self.lease_duration;
        let lease = match self.current_lease(worker, lease_id) {
            Ok(lease) => lease,
            Err(why) => {
                self.note_late(worker, lease_id, &why);
                return Err(why);
            }
        };
        lease.deadline = deadline;
        lease.progress = progress;
        let (blocks, states) = self.level_progress();
        self.reporter.progress(blocks, states);
        Ok(())
    }

    /// Counts a report (progress or result) on a lease that has ended,
    /// unless it ended because another copy of the task won.
    pub(super) fn note_late(&mut self, worker: u64, lease_id: u64, why: &str) {
        if !self.superseded.contains(&lease_id) {
            self.lease_stats.late_reports += 1;
            self.reporter
                .warn(&format!("late report from worker {}: {}", worker, why));
        }
    }

    pub(in crate::server) fn current_lease(&mut self, worker: u64, lease_id: u64) -> Result<&mut Lease, String> {
        if self.superseded.contains(&lease_id) {
            return Err(
                "its chunk was recorded first, from another copy of the task or as a chunk that gains nothing".into(),
            );
        }
        match self.leases.get_mut(&lease_id) {
            Some(l) if l.worker == worker => Ok(l),
            Some(l) => Err(format!(
                "lease {} is held by worker {}, not {}",
                lease_id, l.worker, worker
            )),
            None => Err(format!("lease {} is unknown or expired", lease_id)),
        }
    }

    /// Progress units of the leases still running.
    pub(super) fn live_progress(&self) -> (u64, u64) {
        // A task running twice counts once: the copy furthest along.
        let mut best: std::collections::HashMap<(u32, u64), &TaskProgress> = Default::default();
        for l in self.leases.values() {
            let e = best.entry(l.key).or_insert(&l.progress);
            if l.progress.units_done > e.units_done {
                *e = &l.progress;
            }
        }
        best.values()
            .fold((0, 0), |(u, s), p| (u + p.units_done, s + p.states_found))
    }

    /// A worker dropped its report stream before finishing: re-issue.
    pub fn abandon(&mut self, worker: u64, lease_id: u64) {
        if self.current_lease(worker, lease_id).is_ok() {
            let lease = self.leases.remove(&lease_id).expect("checked");
            if let Some(w) = self.workers.get_mut(&worker) {
                w.lost = true;
            }
            self.reporter.warn(&format!(
                "worker {} dropped task ({}, {}); re-issuing it",
                worker, lease.key.0, lease.key.1
            ));
            self.release(lease);
        }
    }
}
