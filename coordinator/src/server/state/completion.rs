//! Results and failures of tasks, and closing a level.
//!
//! Accepting a result takes three steps so that no file is read under the
//! state lock: [`JobState::begin_complete`] checks the lease and the reported
//! numbers, [`check_file`] (no lock) reads the chunk file's header and index
//! and compares them with the report, and [`JobState::finish_complete`]
//! records it. The payload itself is verified by whoever reads the file as
//! an input (workers, `resume`), which is where damage is repaired.

use super::{JobState, Phase, MAX_TASK_FAILURES};
use crate::manifest::{read_journal, save_manifest, ChunkRecord, IoTotals, LevelRecord};
use cayley_proto::{task_failed, TaskDone, TaskFailed};
use cayley_shared::files::format::{verify_chunk, ChunkId, ChunkReader};
use std::path::PathBuf;

/// The coordinator's answer to a reported result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    /// A late duplicate of a result already recorded: harmless.
    Ignored(String),
    /// A report on a lease that ended because its chunk was recorded
    /// first (from another copy of the task, or as a chunk that gains
    /// nothing): its worker stops computing it; nothing went wrong.
    Superseded(String),
    Rejected(String),
}

/// A reported result whose file is still to be checked.
#[derive(Clone, Debug)]
pub struct Completion {
    worker: u64,
    lease_id: u64,
    key: (u32, u64),
    path: PathBuf,
    id: ChunkId,
    done: TaskDone,
    /// The task recomputes a chunk of a closed level: decided when the
    /// result arrives, since its level may close while the file is checked.
    repair: bool,
}

/// A reported damaged input whose file is still to be checked.
#[derive(Clone, Debug)]
pub struct RepairCheck {
    key: (u32, u64),
    level: u32,
    chunk: u64,
    message: String,
    path: PathBuf,
    id: ChunkId,
    recorded: Option<ChunkRecord>,
}

/// Step 2 of accepting a result, without the state lock: the chunk file's
/// header and index must be intact and say what the worker reported.
pub fn check_file(c: &Completion) -> Result<(), String> {
    let reader = ChunkReader::open(&c.path, &c.id).map_err(|e| e.to_string())?;
    let h = reader.header();
    if h.popcount != c.done.stored || h.index_checksum != c.done.index_checksum || reader.size() != c.done.file_bytes {
        return Err(format!(
            "{} holds {} states in {} bytes (index checksum {:016x}), the report says {} in {} ({:016x})",
            c.path.display(),
            h.popcount,
            reader.size(),
            h.index_checksum,
            c.done.stored,
            c.done.file_bytes,
            c.done.index_checksum
        ));
    }
    Ok(())
}

/// Step 2 of handling a damaged-input report, without the state lock: does
/// the file really fail to read back as recorded?
pub fn file_is_damaged(r: &RepairCheck) -> bool {
    match (verify_chunk(&r.path, &r.id), &r.recorded) {
        (Ok(h), Some(rec)) => h.popcount != rec.stored || h.index_checksum != rec.checksum,
        (Ok(_), None) => false,
        (Err(_), _) => true,
    }
}

impl JobState {
    /// Step 1 of accepting a result: the lease and the reported numbers.
    pub fn begin_complete(&mut self, worker: u64, lease_id: u64, done: TaskDone) -> Result<Completion, Verdict> {
        self.touch(worker);
        let key = match self.current_lease(worker, lease_id).map(|l| l.key) {
            Ok(key) => key,
            Err(why) if self.superseded.contains(&lease_id) => return Err(Verdict::Ignored(why)),
            Err(why) => {
                // The lease expired or its stream broke (a partition, a
                // silent worker): the task went to someone else.
                self.note_late(worker, lease_id, &why);
                return Err(match self.issued.get(&lease_id).copied().filter(|&k| self.is_done(k)) {
                    Some(_) => Verdict::Ignored("already recorded".into()),
                    None => Verdict::Rejected(why),
                });
            }
        };
        let range = self.job.chunking.shards_of(key.1);
        let capacity = (range.end - range.start) * self.job.space.shard_capacity();
        if done.stored > capacity {
            let why = format!("count {} exceeds the chunk's {} states", done.stored, capacity);
            return Err(self.reject(lease_id, key, worker, why));
        }
        Ok(Completion {
            worker,
            lease_id,
            key,
            path: self.checkpoint.chunk_path(key.0 + 1, key.1),
            id: self.chunk_id(key.0 + 1, key.1),
            done,
            repair: key.0 < self.running_from(),
        })
    }

    /// Step 3 of accepting a result: records it, given step 2's verdict on
    /// the file.
    pub fn finish_complete(&mut self, c: Completion, file: Result<(), String>) -> Verdict {
        if let Err(why) = file {
            return self.reject(c.lease_id, c.key, c.worker, why);
        }
        // The lease may have expired meanwhile; the file is good either way.
        let backup = match self.leases.remove(&c.lease_id) {
            Some(lease) => {
                if let Some(w) = self.workers.get_mut(&lease.worker) {
                    w.busy = false;
                }
                lease.backup
            }
            None => false,
        };
        if let Some(w) = self.workers.get_mut(&c.worker) {
            w.tasks_done += 1;
            w.evaluations += c.done.evaluations;
            w.busy_secs += c.done.seconds;
        }
        if c.repair {
            return self.finish_repair(c.key, c.done.stored);
        }
        // Recorded meanwhile by another copy of the task or as a chunk
        // gaining nothing, perhaps with its level closed since: the same
        // file, already counted. (Taken for a repair, it was reported as
        // one, "recomputed and verified", in a run where nothing was.)
        if self.is_done(c.key) || c.key.0 < self.running_from() {
            return Verdict::Ignored("already recorded".into());
        }
        let io = c.done.io.unwrap_or_default();
        self.level_threads.insert(c.worker, io.threads);
        let record = ChunkRecord {
            chunk: c.key.1,
            stored: c.done.stored,
            states: c.done.states,
            classes: c.done.classes,
            bytes: c.done.file_bytes,
            checksum: c.done.index_checksum,
            evaluations: c.done.evaluations,
            seconds: c.done.seconds,
            io: IoTotals {
                bytes_read: io.bytes_read,
                lookups: io.lookups,
                hits: io.hits,
                load_seconds: io.load_seconds,
                compute_seconds: io.compute_seconds,
                write_seconds: io.write_seconds,
                close_seconds: io.close_seconds,
                sources_seconds: io.sources_seconds,
                other_seconds: io.other_seconds,
                wait_seconds: io.wait_seconds,
                task_seconds: c.done.seconds,
                busy_seconds: io.busy_seconds,
                idle_seconds: io.idle_seconds,
                threads: io.threads,
                top_down_units: c.done.top_down_units,
                bottom_up_units: c.done.bottom_up_units,
                cheaper_bound: c.done.cheaper_bound,
            },
        };
        if !self.record_chunk(c.key, record) {
            return Verdict::Rejected("journal not writable".into());
        }
        if backup {
            self.lease_stats.backups_won += 1;
        }
        let (blocks, states) = self.level_progress();
        self.reporter.progress(blocks, states);
        self.maybe_complete_level();
        Verdict::Accepted
    }

    /// Records chunk `key.1` of the running level as done: journal first
    /// (false, and the job stopped, when it cannot be written), then the
    /// level's totals; its old chunks retire, other copies of its task end.
    pub(super) fn record_chunk(&mut self, key: (u32, u64), record: ChunkRecord) -> bool {
        self.pending.remove(&key);
        if let Err(e) = self
            .journal
            .as_mut()
            .expect("a running level has a journal")
            .append(&record)
        {
            self.stop(format!("cannot record progress: {:#}", e));
            return false;
        }
        self.record_done(record);
        self.retire_chunk(key.1);
        self.supersede(key);
        self.failures.remove(&key);
        true
    }

    /// All three steps at once, for callers that hold no lock to release.
    #[cfg(test)]
    pub fn complete(&mut self, worker: u64, lease_id: u64, done: TaskDone) -> Verdict {
        match self.begin_complete(worker, lease_id, done) {
            Ok(c) => {
                let file = check_file(&c);
                self.finish_complete(c, file)
            }
            Err(verdict) => verdict,
        }
    }

    fn reject(&mut self, lease_id: u64, key: (u32, u64), worker: u64, why: String) -> Verdict {
        self.reporter.warn(&format!(
            "rejected result of task ({}, {}) from worker {}: {}",
            key.0, key.1, worker, why
        ));
        if let Some(lease) = self.leases.remove(&lease_id) {
            self.release(lease);
        }
        self.count_failure(key, &why);
        Verdict::Rejected(why)
    }

    /// The record of a chunk of a closed level, from its journal.
    fn recorded_chunk(&self, level: u32, chunk: u64) -> Option<ChunkRecord> {
        read_journal(&self.checkpoint, level).ok()?.remove(&chunk)
    }

    /// A recomputed file of an earlier level must hold what was recorded.
    fn finish_repair(&mut self, key: (u32, u64), stored: u64) -> Verdict {
        let level = key.0 + 1;
        let recorded = self.recorded_chunk(level, key.1).map(|r| r.stored);
        if recorded != Some(stored) {
            self.stop(format!(
                "recomputing level {} chunk {} gave {} states but {} were recorded; the checkpoint is inconsistent",
                level,
                key.1,
                stored,
                recorded.map_or("none".into(), |r| r.to_string())
            ));
            return Verdict::Rejected("repair mismatch".into());
        }
        self.reporter
            .warn(&format!("level {} chunk {} recomputed and verified", level, key.1));
        Verdict::Accepted
    }

    /// Step 1 of a failure report: releases the task; for a damaged input,
    /// returns the file check to run without the lock (then
    /// [`JobState::finish_repair_check`]).
    pub fn begin_fail(
        &mut self,
        worker: u64,
        lease_id: u64,
        failed: TaskFailed,
    ) -> Result<Option<RepairCheck>, Verdict> {
        self.touch(worker);
        let key = match self.current_lease(worker, lease_id) {
            Ok(l) => l.key,
            Err(why) => return Err(Verdict::Rejected(why)),
        };
        let lease = self.leases.remove(&lease_id).expect("current lease");
        self.release(lease);
        let kind = task_failed::Kind::try_from(failed.kind).unwrap_or(task_failed::Kind::Other);
        self.reporter.warn(&format!(
            "task ({}, {}) failed on worker {}: {}",
            key.0, key.1, worker, failed.message
        ));
        match kind {
            // The caller adds how to continue: `cayley resume` for a local
            // run, `cayley serve --resume` for a cluster.
            task_failed::Kind::DiskFull => self.stop(format!("disk full: {}", failed.message)),
            task_failed::Kind::CorruptInput => return Ok(self.repair_check(key, failed)),
            // The worker leaves: nobody need wait for it to hear the end.
            task_failed::Kind::UnreadableCheckpoint => {
                if let Some(w) = self.workers.get_mut(&worker) {
                    w.lost = true;
                }
            }
            task_failed::Kind::Other => self.count_failure(key, &failed.message),
        }
        Ok(None)
    }

    /// What to check before repairing the input a failure names. Names from
    /// the network are only trusted inside the plan: a level that is not an
    /// input of `key` or a chunk out of range is the worker's fault.
    fn repair_check(&mut self, key: (u32, u64), failed: TaskFailed) -> Option<RepairCheck> {
        let (level, chunk) = (failed.level, failed.chunk);
        let inputs = if self.job.directed {
            0..=key.0
        } else {
            key.0.saturating_sub(1)..=key.0
        };
        if level == 0 || !inputs.contains(&level) || chunk >= self.job.chunking.chunks() {
            self.count_failure(key, &format!("bogus damaged input (level {}, chunk {})", level, chunk));
            return None;
        }
        // Several workers can read the same damaged file before it is
        // repaired, each for its own task: one recomputation serves them all.
        if self.is_queued_or_leased((level - 1, chunk)) {
            return None;
        }
        Some(RepairCheck {
            key,
            level,
            chunk,
            message: failed.message,
            path: self.checkpoint.chunk_path(level, chunk),
            id: self.chunk_id(level, chunk),
            recorded: self.recorded_chunk(level, chunk),
        })
    }

    /// Step 3 of a damaged-input report: schedules the recomputation of the
    /// file (or stops the job when its inputs are gone); a file that reads
    /// back as recorded is the reader's own problem.
    pub fn finish_repair_check(&mut self, r: RepairCheck, damaged: bool) {
        if !damaged || self.is_queued_or_leased((r.level - 1, r.chunk)) {
            if !damaged {
                self.count_failure(r.key, &r.message);
            }
            return;
        }
        let keep = self.manifest.keep_levels;
        let inputs_kept = r.level < 2 || (keep.keeps(r.level - 1) && keep.keeps(r.level - 2));
        let attempts = self.failures.entry((r.level - 1, r.chunk)).or_insert(0);
        *attempts += 1;
        if !inputs_kept || *attempts > MAX_TASK_FAILURES {
            self.stop(format!(
                "{} is damaged ({}) and cannot be recomputed (its inputs are not kept with --keep-levels {}, or they are damaged too)",
                r.path.display(),
                r.message,
                keep.name()
            ));
            return;
        }
        // Deleted only now that it will be rewritten: a file that cannot be
        // recomputed stays (the user may be able to restore it).
        let _ = std::fs::remove_file(&r.path);
        self.reporter.warn(&format!("recomputing damaged {}", r.path.display()));
        self.pending.insert((r.level - 1, r.chunk));
    }

    /// All steps of a failure report at once (no lock to release).
    #[cfg(test)]
    pub fn fail(&mut self, worker: u64, lease_id: u64, failed: TaskFailed) -> Verdict {
        match self.begin_fail(worker, lease_id, failed) {
            Ok(Some(check)) => {
                let damaged = file_is_damaged(&check);
                self.finish_repair_check(check, damaged);
                Verdict::Accepted
            }
            Ok(None) => Verdict::Accepted,
            Err(v) => v,
        }
    }

    /// Counts a failure of `key`; stops the job after too many.
    fn count_failure(&mut self, key: (u32, u64), message: &str) {
        let n = self.failures.entry(key).or_insert(0);
        *n += 1;
        if *n >= MAX_TASK_FAILURES {
            let n = *n;
            self.stop(format!(
                "task ({}, {}) failed {} times; last error: {}",
                key.0, key.1, n, message
            ));
        }
    }

    pub(super) fn is_queued_or_leased(&self, key: (u32, u64)) -> bool {
        self.pending.contains(&key) || self.leases.values().any(|l| l.key == key)
    }

    /// Stops handing out work; the records so far are made durable.
    pub fn stop(&mut self, reason: String) {
        if self.phase == Phase::Running {
            self.reporter.warn(&format!("stopping: {}", reason));
            if let Some(r) = self.manifest.running.as_mut() {
                r.seconds_before += self.level_started.elapsed().as_secs_f64();
            }
            if let Some(j) = self.journal.as_mut() {
                let _ = j.sync();
            }
            // Records the sync made durable retire their old chunks now, as
            // after any sync: otherwise whether a recorded chunk's inputs
            // are still there after a stop depended on whether the
            // once-a-second sync had come since it was recorded.
            self.retire_durable();
            let _ = save_manifest(&self.checkpoint, &self.manifest, self.write);
            self.phase = Phase::Stopped(reason);
        }
    }

    /// Closes the running level once every chunk is recorded.
    pub(super) fn maybe_complete_level(&mut self) {
        let Some(running) = self.manifest.running.clone() else {
            return;
        };
        if (self.done.len() as u64) < self.job.chunking.chunks() {
            return;
        }
        if let Err(e) = self.journal.as_mut().expect("a running level has a journal").sync() {
            self.stop(format!("cannot record the finished level: {:#}", e));
            return;
        }
        let sum = |f: fn(&ChunkRecord) -> u64| self.done.values().map(f).sum::<u64>();
        let record = LevelRecord {
            count: sum(|r| r.states),
            stored: sum(|r| r.stored),
            classes: sum(|r| r.classes),
            seconds: running.seconds_before + self.level_started.elapsed().as_secs_f64(),
            bytes: sum(|r| r.bytes),
            evaluations: sum(|r| r.evaluations),
            io: IoTotals {
                threads: self.level_io.threads.max(self.level_threads.values().sum()),
                ..self.level_io
            },
        };
        let depth = running.from_level + 1;
        self.reporter
            .level_finished(depth, record.count, record.seconds, &record.io);
        let mut finished = record.count == 0;
        let mut retired = Vec::new();
        let mut keep_for_next = false;
        if record.count > 0 {
            self.manifest.levels.push(record);
            let raw = self.job.space.level_bytes();
            let counts: Vec<u128> = self.manifest.levels.iter().map(|l| l.count as u128).collect();
            // A level this one retired chunk by chunk is mostly gone.
            let retired_early = depth.checked_sub(2).is_some_and(|l| running.retiring.contains(&l));
            keep_for_next = older_level_pays(&counts, self.job.reachable_states) && !retired_early;
            for level in [depth.checked_sub(3), depth.checked_sub(2)].into_iter().flatten() {
                if self.manifest.keeps_level(level, raw) || (level + 2 == depth && keep_for_next) {
                    continue;
                }
                retired.push(level);
            }
            let reached_all = self.job.reachable_states.is_some_and(|r| self.manifest.states() >= r);
            let reached_limit = self.manifest.max_depth.is_some_and(|m| depth >= m);
            finished = reached_all || reached_limit;
        } else {
            self.checkpoint.remove_level(depth);
        }
        if finished {
            self.manifest.finished = true;
            self.manifest.running = None;
            self.journal = None;
            self.phase = Phase::Finished;
        } else if let Err(e) = self.start_level(depth, keep_for_next) {
            self.stop(format!("cannot start level {}: {:#}", depth + 1, e));
            return;
        }
        if let Err(e) = save_manifest(&self.checkpoint, &self.manifest, self.write) {
            self.stop(format!("cannot record the finished level: {:#}", e));
            return;
        }
        // Only once the manifest records the new level: until then, a crash
        // resumes the old one, which may still need to recompute from it.
        for level in retired.into_iter().filter(|&l| l > 0) {
            self.checkpoint.remove_level(level);
        }
    }
}

/// Whether level `depth - 2` should stay on disk while level `depth + 1` is
/// computed, so that workers leave its states out of their unseen sets (see
/// the worker's `gather`): when it holds more states than remain unseen, and
/// the unseen states without it are few enough (no more than level `depth`,
/// the frontier) for bottom-up to be the likely direction. On the 4×4
/// Loopover that is level 10 for depth 13: 7.6·10¹¹ of the 1.3·10¹² states
/// neither in level 11 nor 12, which bottom-up probed with every move.
/// `counts` are the states of levels 0..=depth.
pub(super) fn older_level_pays(counts: &[u128], reachable: Option<u128>) -> bool {
    let (Some(reachable), Some(depth)) = (reachable, counts.len().checked_sub(1)) else {
        return false;
    };
    if depth < 2 {
        return false;
    }
    let remaining = reachable.saturating_sub(counts.iter().sum());
    let before: u128 = counts[..depth - 2].iter().sum();
    counts[depth - 2] > remaining && remaining + before <= counts[depth]
}
