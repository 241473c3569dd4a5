//! The coordinator's job state machine, free of networking so it can be
//! tested directly: which tasks are pending, leased and done, when a level
//! closes, and what is written to the manifest.
//!
//! A task is `(from_level, shard)`. Tasks of the running level are handed out
//! in shard order; repair tasks (recomputing a damaged file of an earlier
//! level) have a smaller `from_level`, so they sort first, and while one is
//! outstanding no ordinary task is leased.

use cayley_shared::format::{read_frontier, write_frontier, FrontierId};
use cayley_shared::job::Job;
use cayley_shared::manifest::{CheckpointDir, LevelRecord, Manifest, RunningLevel};
use cayley_shared::proto::{lease_reply, JobOver, Task, TaskProgress};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Where the job stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Running,
    Finished,
    /// Stopped before the end; the reason says why and what to do.
    Stopped(String),
}

/// Progress notifications for a display.
pub trait Reporter: Send {
    fn level_started(&mut self, _depth: u32, _tasks: u64, _blocks: u64) {}
    fn progress(&mut self, _blocks_done: u64, _states: u64) {}
    fn level_finished(&mut self, _depth: u32, _count: u64, _seconds: f64) {}
    fn warn(&mut self, message: &str) {
        eprintln!("warning: {}", message);
    }
}

struct Lease {
    key: (u32, u64),
    worker: u64,
    deadline: Instant,
    progress: TaskProgress,
}

/// What the coordinator knows about one worker.
pub struct WorkerInfo {
    pub name: String,
    pub cores: u32,
    pub tasks_done: u64,
    pub evaluations: u64,
    pub busy_secs: f64,
    pub last_seen: Instant,
    pub busy: bool,
}

/// The state of one job.
pub struct JobState {
    pub job: Job,
    pub checkpoint: CheckpointDir,
    pub manifest: Manifest,
    pub phase: Phase,
    pub workers: BTreeMap<u64, WorkerInfo>,
    pub started: Instant,
    /// Text of the puzzle's definition file, sent to workers.
    pub puzzle_file: Option<String>,
    lease_duration: Duration,
    fingerprint: u64,
    pending: BTreeSet<(u32, u64)>,
    leases: HashMap<u64, Lease>,
    /// Task of every lease issued in the running level (to recognise late duplicates).
    issued: HashMap<u64, (u32, u64)>,
    failures: HashMap<(u32, u64), u32>,
    next_lease: u64,
    next_worker: u64,
    level_started: Instant,
    /// When completed tasks were last written to the manifest.
    last_progress_save: Instant,
    reporter: Box<dyn Reporter>,
}

/// Completed tasks are written to the manifest at most this often (and
/// always when a level closes or the job stops).
pub const PROGRESS_SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// Give up on a task after this many failures.
const MAX_TASK_FAILURES: u32 = 5;

impl JobState {
    /// Starts a new job in `checkpoint`, or continues the one recorded there.
    pub fn open(
        job: Job,
        checkpoint: CheckpointDir,
        fresh: Manifest,
        lease_duration: Duration,
        reporter: Box<dyn Reporter>,
    ) -> anyhow::Result<JobState> {
        let puzzle_file = cayley_shared::puzzle::spec_file_text(&job.puzzle.spec)?;
        let existing = checkpoint.load_manifest()?;
        let resumed = existing.is_some();
        let manifest = match existing {
            Some(m) => {
                m.check_matches(&job, checkpoint.root())?;
                checkpoint.check_files_belong(&m, job.fingerprint())?;
                m
            }
            None => fresh,
        };
        let mut state = JobState {
            fingerprint: job.fingerprint(),
            job,
            checkpoint,
            manifest,
            phase: Phase::Running,
            workers: BTreeMap::new(),
            started: Instant::now(),
            puzzle_file,
            lease_duration,
            pending: BTreeSet::new(),
            leases: HashMap::new(),
            issued: HashMap::new(),
            failures: HashMap::new(),
            next_lease: 1,
            next_worker: 1,
            level_started: Instant::now(),
            last_progress_save: Instant::now(),
            reporter,
        };
        if !resumed {
            state.write_level_zero()?;
        }
        if state.manifest.finished {
            state.phase = Phase::Finished;
        } else {
            state.resume_running_level();
        }
        Ok(state)
    }

    fn id(&self, level: u32, shard: u64) -> FrontierId {
        FrontierId {
            fingerprint: self.fingerprint,
            level,
            shard,
            bits: self.job.space.shard_words() as u64 * 64,
        }
    }

    /// Writes `F_0`: the solved state alone.
    fn write_level_zero(&mut self) -> anyhow::Result<()> {
        let space = &self.job.space;
        let (solved_shard, _, _) = space.locate(&self.job.puzzle.solved);
        std::fs::create_dir_all(self.checkpoint.level_dir(0))?;
        let mut bytes = 0;
        let mut counts = vec![0u64; space.shards() as usize];
        for shard in 0..space.shards() {
            bytes += self.write_level_zero_shard(shard)?;
            counts[shard as usize] = u64::from(shard == solved_shard);
        }
        self.manifest.levels = vec![LevelRecord {
            count: 1,
            seconds: 0.0,
            bytes,
            shard_counts: counts,
            evaluations: 0,
        }];
        self.manifest.running = Some(RunningLevel {
            from_level: 0,
            done: BTreeMap::new(),
            seconds_before: 0.0,
        });
        self.checkpoint.save_manifest(&self.manifest)
    }

    fn write_level_zero_shard(&self, shard: u64) -> anyhow::Result<u64> {
        let space = &self.job.space;
        let (solved_shard, word, bit) = space.locate(&self.job.puzzle.solved);
        let mut words = vec![0u64; space.shard_words()];
        if shard == solved_shard {
            words[word] |= 1u64 << bit;
        }
        let (_, size) = write_frontier(&self.checkpoint.frontier_path(0, shard), self.id(0, shard), &words)?;
        Ok(size)
    }

    /// Queues the tasks of the running level that are not recorded as done
    /// (dropping records whose output file no longer checks out).
    fn resume_running_level(&mut self) {
        let Some(running) = self.manifest.running.clone() else {
            let from = self.manifest.levels.len() as u32 - 1;
            self.start_level(from);
            return;
        };
        let mut done = running.done.clone();
        // Every recorded output is read and verified in full, not just its
        // header: a damaged payload would otherwise only be noticed by the
        // next level, and with `--keep-levels last2` that level no longer
        // has the inputs to recompute it. Now is the last time it can be.
        let mut words = vec![0u64; self.job.space.shard_words()];
        done.retain(|&shard, rec| {
            let level = running.from_level + 1;
            let path = self.checkpoint.frontier_path(level, shard);
            let problem = match read_frontier(&path, &self.id(level, shard), &mut words) {
                Ok(h) if h.popcount == rec.count => return true,
                Ok(h) => format!(
                    "{} holds {} states, the manifest says {}",
                    path.display(),
                    h.popcount,
                    rec.count
                ),
                Err(e) => e.to_string(),
            };
            self.reporter.warn(&format!("{}; recomputing it", problem));
            false
        });
        self.pending = (0..self.job.space.shards())
            .filter(|s| !done.contains_key(s))
            .map(|s| (running.from_level, s))
            .collect();
        self.manifest.running = Some(RunningLevel { done, ..running });
        self.level_started = Instant::now();
        self.announce_level();
        self.maybe_complete_level();
    }

    fn start_level(&mut self, from_level: u32) {
        self.manifest.running = Some(RunningLevel {
            from_level,
            done: BTreeMap::new(),
            seconds_before: 0.0,
        });
        self.pending = (0..self.job.space.shards()).map(|s| (from_level, s)).collect();
        self.issued.clear();
        self.level_started = Instant::now();
        self.announce_level();
    }

    fn announce_level(&mut self) {
        if let Some(r) = &self.manifest.running {
            let space = &self.job.space;
            self.reporter.level_started(
                r.from_level + 1,
                space.shards(),
                space.units_per_shard() * space.shards(),
            );
        }
    }

    /// Seconds since the running level (re)started in this process.
    pub fn level_elapsed(&self) -> f64 {
        self.level_started.elapsed().as_secs_f64()
    }

    /// Registers a worker.
    pub fn register(&mut self, name: String, cores: u32) -> u64 {
        let id = self.next_worker;
        self.next_worker += 1;
        self.workers.insert(
            id,
            WorkerInfo {
                name,
                cores,
                tasks_done: 0,
                evaluations: 0,
                busy_secs: 0.0,
                last_seen: Instant::now(),
                busy: false,
            },
        );
        id
    }

    /// Notes that a worker is alive.
    pub fn touch(&mut self, worker: u64) -> bool {
        match self.workers.get_mut(&worker) {
            Some(w) => {
                w.last_seen = Instant::now();
                true
            }
            None => false,
        }
    }

    /// Hands out a task, asks the worker to wait, or says the job is over.
    pub fn lease(&mut self, worker: u64) -> lease_reply::Reply {
        self.touch(worker);
        match &self.phase {
            Phase::Finished => return over(true, "the job is finished"),
            Phase::Stopped(why) => return over(false, why),
            Phase::Running => {}
        }
        self.expire_leases();
        let running_from = self.manifest.running.as_ref().map_or(u32::MAX, |r| r.from_level);
        let repairing = self
            .pending
            .iter()
            .chain(self.leases.values().map(|l| &l.key))
            .any(|k| k.0 < running_from);
        let next = self.pending.iter().copied().find(|k| !repairing || k.0 < running_from);
        let Some(key) = next else {
            return lease_reply::Reply::WaitMs(100);
        };
        self.pending.remove(&key);
        let lease_id = self.next_lease;
        self.next_lease += 1;
        self.issued.insert(lease_id, key);
        self.leases.insert(
            lease_id,
            Lease {
                key,
                worker,
                deadline: Instant::now() + self.lease_duration,
                progress: TaskProgress::default(),
            },
        );
        if let Some(w) = self.workers.get_mut(&worker) {
            w.busy = true;
        }
        lease_reply::Reply::Task(Task {
            lease_id,
            from_level: key.0,
            shard: key.1,
        })
    }

    /// Returns expired leases to the queue.
    fn expire_leases(&mut self) {
        let now = Instant::now();
        let expired: Vec<u64> = self
            .leases
            .iter()
            .filter(|(_, l)| l.deadline < now)
            .map(|(&id, _)| id)
            .collect();
        for id in expired {
            let lease = self.leases.remove(&id).expect("listed above");
            self.reporter.warn(&format!(
                "lease of task ({}, {}) held by worker {} expired; re-issuing it",
                lease.key.0, lease.key.1, lease.worker
            ));
            self.release(lease);
        }
    }

    fn release(&mut self, lease: Lease) {
        if let Some(w) = self.workers.get_mut(&lease.worker) {
            w.busy = false;
        }
        if !self.is_done(lease.key) {
            self.pending.insert(lease.key);
        }
    }

    fn is_done(&self, key: (u32, u64)) -> bool {
        match &self.manifest.running {
            Some(r) if r.from_level == key.0 => r.done.contains_key(&key.1),
            _ => false,
        }
    }

    /// Records progress of a leased task and renews its lease.
    pub fn progress(&mut self, worker: u64, lease_id: u64, progress: TaskProgress) -> Result<(), String> {
        self.touch(worker);
        let duration = self.lease_duration;
        let lease = self.current_lease(worker, lease_id)?;
        lease.deadline = Instant::now() + duration;
        lease.progress = progress;
        let (blocks, states) = self.level_progress();
        self.reporter.progress(blocks, states);
        Ok(())
    }

    fn current_lease(&mut self, worker: u64, lease_id: u64) -> Result<&mut Lease, String> {
        match self.leases.get_mut(&lease_id) {
            Some(l) if l.worker == worker => Ok(l),
            Some(l) => Err(format!(
                "lease {} is held by worker {}, not {}",
                lease_id, l.worker, worker
            )),
            None => Err(format!("lease {} is unknown or expired", lease_id)),
        }
    }

    /// Blocks done and states found so far in the running level.
    pub fn level_progress(&self) -> (u64, u64) {
        let per_task = self.job.space.units_per_shard();
        let running = self.manifest.running.as_ref();
        let done = running.map_or(0, |r| r.done.len() as u64) * per_task;
        let found: u64 = running.map_or(0, |r| r.done.values().map(|d| d.count).sum());
        let live = self.leases.values().map(|l| l.progress.blocks_done).sum::<u64>();
        let live_found = self.leases.values().map(|l| l.progress.states_found).sum::<u64>();
        (done + live, found + live_found)
    }

    /// A worker dropped its report stream before finishing: re-issue.
    pub fn abandon(&mut self, worker: u64, lease_id: u64) {
        if self.current_lease(worker, lease_id).is_ok() {
            let lease = self.leases.remove(&lease_id).expect("checked");
            self.reporter.warn(&format!(
                "worker {} dropped task ({}, {}); re-issuing it",
                worker, lease.key.0, lease.key.1
            ));
            self.release(lease);
        }
    }
}

fn over(finished: bool, reason: &str) -> lease_reply::Reply {
    lease_reply::Reply::Over(JobOver {
        finished,
        reason: reason.to_string(),
    })
}

mod completion;
pub use completion::Verdict;

#[cfg(test)]
mod tests;
