//! Results and failures of tasks, and closing a level.

use super::{JobState, Phase};
use cayley_shared::format::read_frontier;
use cayley_shared::manifest::{KeepLevels, LevelRecord, ShardRecord};
use cayley_shared::proto::{task_failed, TaskDone, TaskFailed};

/// The coordinator's answer to a reported result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    /// A late duplicate of a result already recorded: harmless.
    Ignored(String),
    Rejected(String),
}

impl JobState {
    /// A worker reports a finished task.
    pub fn complete(&mut self, worker: u64, lease_id: u64, done: TaskDone) -> Verdict {
        self.touch(worker);
        let lease = match self.current_lease(worker, lease_id) {
            Ok(l) => l,
            Err(why) => {
                return match self.issued.get(&lease_id).copied().filter(|&k| self.is_done(k)) {
                    Some(_) => Verdict::Ignored("already recorded".into()),
                    None => Verdict::Rejected(why),
                }
            }
        };
        let key = lease.key;
        let lease = self.leases.remove(&lease_id).expect("current lease");
        if let Err(why) = self.validate(key, done.count) {
            self.reporter.warn(&format!(
                "rejected result of task ({}, {}) from worker {}: {}",
                key.0, key.1, worker, why
            ));
            self.release(lease);
            return Verdict::Rejected(why);
        }
        if let Some(w) = self.workers.get_mut(&worker) {
            w.busy = false;
            w.tasks_done += 1;
            w.evaluations += done.evaluations;
            w.busy_secs += done.seconds;
        }
        let running_from = self.manifest.running.as_ref().map_or(u32::MAX, |r| r.from_level);
        if key.0 < running_from {
            return self.finish_repair(key, done.count);
        }
        if self.is_done(key) {
            return Verdict::Ignored("already recorded".into());
        }
        let record = ShardRecord {
            count: done.count,
            bytes: done.file_bytes,
            evaluations: done.evaluations,
        };
        self.manifest
            .running
            .as_mut()
            .expect("running level")
            .done
            .insert(key.1, record);
        self.failures.remove(&key);
        // Recording every task would cost an fsynced rewrite per task (9 ms
        // each here); at most one per interval loses at most that much work
        // to a crash, since unrecorded tasks are simply recomputed. The level's
        // last task is recorded by `maybe_complete_level`.
        let level_closes = self
            .manifest
            .running
            .as_ref()
            .is_some_and(|r| r.done.len() as u64 == self.job.space.shards());
        if !level_closes && self.last_progress_save.elapsed() >= super::PROGRESS_SAVE_INTERVAL {
            if let Err(e) = self.checkpoint.save_manifest(&self.manifest) {
                self.stop(format!("cannot record progress: {:#}", e));
                return Verdict::Rejected("manifest not writable".into());
            }
            self.last_progress_save = std::time::Instant::now();
        }
        let (blocks, states) = self.level_progress();
        self.reporter.progress(blocks, states);
        self.maybe_complete_level();
        Verdict::Accepted
    }

    /// Checks a reported count against the shard size and the output file.
    fn validate(&self, key: (u32, u64), count: u64) -> Result<(), String> {
        let space = &self.job.space;
        let capacity = space.shard_capacity();
        if count > capacity {
            return Err(format!("count {} exceeds the shard's {} states", count, capacity));
        }
        let path = self.checkpoint.frontier_path(key.0 + 1, key.1);
        // The whole file, not just its header: a task is recorded only when
        // its output reads back intact, while its inputs are still there to
        // recompute it (with --keep-levels last2 they are gone once the
        // level closes, so damage found later could not be repaired).
        let mut words = vec![0u64; space.shard_words()];
        let header = read_frontier(&path, &self.id(key.0 + 1, key.1), &mut words).map_err(|e| e.to_string())?;
        if header.popcount != count {
            return Err(format!(
                "{} holds {} states, the report says {}",
                path.display(),
                header.popcount,
                count
            ));
        }
        Ok(())
    }

    /// A recomputed file of an earlier level must hold what was recorded.
    fn finish_repair(&mut self, key: (u32, u64), count: u64) -> Verdict {
        let recorded = self.manifest.levels[key.0 as usize + 1].shard_counts[key.1 as usize];
        if recorded != count {
            self.stop(format!(
                "recomputing level {} shard {} gave {} states but {} were recorded; the checkpoint is inconsistent",
                key.0 + 1,
                key.1,
                count,
                recorded
            ));
            return Verdict::Rejected("repair mismatch".into());
        }
        self.reporter
            .warn(&format!("level {} shard {} recomputed and verified", key.0 + 1, key.1));
        Verdict::Accepted
    }

    /// A worker reports a failed task.
    pub fn fail(&mut self, worker: u64, lease_id: u64, failed: TaskFailed) -> Verdict {
        self.touch(worker);
        let key = match self.current_lease(worker, lease_id) {
            Ok(l) => l.key,
            Err(why) => return Verdict::Rejected(why),
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
            task_failed::Kind::CorruptInput => {
                if !self.repair(failed.level, failed.shard, &failed.message) {
                    self.count_failure(key, &failed.message);
                }
            }
            task_failed::Kind::UnreadableCheckpoint => {}
            task_failed::Kind::Other => self.count_failure(key, &failed.message),
        }
        Verdict::Accepted
    }

    /// Counts a failure of `key`; stops the job after too many.
    fn count_failure(&mut self, key: (u32, u64), message: &str) {
        let n = self.failures.entry(key).or_insert(0);
        *n += 1;
        if *n >= super::MAX_TASK_FAILURES {
            let n = *n;
            self.stop(format!(
                "task ({}, {}) failed {} times; last error: {}",
                key.0, key.1, n, message
            ));
        }
    }

    /// Schedules the recomputation of a damaged file, or stops the job when
    /// its inputs are gone. False when the file is not damaged after all
    /// (the report is stale or the reader's own problem).
    fn repair(&mut self, level: u32, shard: u64, message: &str) -> bool {
        let path = self.checkpoint.frontier_path(level, shard);
        // Several workers can read the same damaged file before it is
        // repaired, each for its own task: one recomputation serves them
        // all. Counting each report as a failed attempt stopped the job after
        // five of them, and a late report deleted the recomputed file.
        if level > 0 && self.is_queued_or_leased((level - 1, shard)) {
            return true;
        }
        // The coordinator checks for itself before deleting anything: a
        // worker's read error (or a report about a file recomputed since)
        // must not cost a good file.
        if self.file_verifies(level, shard) {
            return false;
        }
        if level == 0 {
            if let Err(e) = self.write_level_zero_shard(shard) {
                self.stop(format!("cannot rewrite {}: {:#}", path.display(), e));
            }
            return true;
        }
        let inputs_kept = self.manifest.keep_levels == KeepLevels::All || level < 2;
        let attempts = self.failures.entry((level - 1, shard)).or_insert(0);
        *attempts += 1;
        if !inputs_kept || *attempts > super::MAX_TASK_FAILURES {
            self.stop(format!(
                "{} is damaged ({}) and cannot be recomputed (its inputs are not kept with --keep-levels last2, or they are damaged too)",
                path.display(),
                message
            ));
            return true;
        }
        // Deleted only now that it will be rewritten: a file that cannot be
        // recomputed stays, since the manifest still lists it (and the user
        // may be able to restore it).
        let _ = std::fs::remove_file(&path);
        self.reporter.warn(&format!("recomputing damaged {}", path.display()));
        self.pending.insert((level - 1, shard));
        true
    }

    pub(super) fn is_queued_or_leased(&self, key: (u32, u64)) -> bool {
        self.pending.contains(&key) || self.leases.values().any(|l| l.key == key)
    }

    /// True when the file of a recorded `(level, shard)` reads back whole
    /// with the recorded number of states.
    pub(super) fn file_verifies(&self, level: u32, shard: u64) -> bool {
        let Some(&recorded) = self
            .manifest
            .levels
            .get(level as usize)
            .and_then(|l| l.shard_counts.get(shard as usize))
        else {
            return false;
        };
        let mut words = vec![0u64; self.job.space.shard_words()];
        let path = self.checkpoint.frontier_path(level, shard);
        read_frontier(&path, &self.id(level, shard), &mut words).is_ok_and(|h| h.popcount == recorded)
    }

    /// Stops handing out work.
    pub fn stop(&mut self, reason: String) {
        if self.phase == Phase::Running {
            self.reporter.warn(&format!("stopping: {}", reason));
            if let Some(r) = self.manifest.running.as_mut() {
                r.seconds_before += self.level_started.elapsed().as_secs_f64();
            }
            let _ = self.checkpoint.save_manifest(&self.manifest);
            self.phase = Phase::Stopped(reason);
        }
    }

    /// Closes the running level once every shard is recorded.
    pub(super) fn maybe_complete_level(&mut self) {
        let shards = self.job.space.shards() as usize;
        let Some(running) = self.manifest.running.as_ref() else {
            return;
        };
        if running.done.len() < shards {
            return;
        }
        let running = self.manifest.running.take().expect("checked");
        let count: u64 = running.done.values().map(|r| r.count).sum();
        let seconds = running.seconds_before + self.level_started.elapsed().as_secs_f64();
        let depth = running.from_level + 1;
        self.reporter.level_finished(depth, count, seconds);
        let mut finished = count == 0;
        let mut retired = None;
        if count > 0 {
            self.manifest.levels.push(LevelRecord {
                count,
                seconds,
                bytes: running.done.values().map(|r| r.bytes).sum(),
                shard_counts: running.done.values().map(|r| r.count).collect(),
                evaluations: running.done.values().map(|r| r.evaluations).sum(),
            });
            if self.manifest.keep_levels == KeepLevels::Last2 && depth >= 2 {
                retired = Some(depth - 2);
            }
            let reached_all = self.job.reachable_states.is_some_and(|r| self.manifest.states() >= r);
            let reached_limit = self.manifest.max_depth.is_some_and(|m| depth >= m);
            finished = reached_all || reached_limit;
        } else {
            self.checkpoint.remove_level(depth);
        }
        if finished {
            self.manifest.finished = true;
            self.phase = Phase::Finished;
        } else {
            self.start_level(depth);
        }
        if let Err(e) = self.checkpoint.save_manifest(&self.manifest) {
            self.stop(format!("cannot record the finished level: {:#}", e));
            return;
        }
        // Only once the manifest records the new level: until then, a crash
        // resumes the old one, which may still need to recompute from it.
        if let Some(level) = retired {
            self.checkpoint.remove_level(level);
        }
    }
}
