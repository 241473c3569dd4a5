//! The coordinator's job state machine, free of networking so it can be
//! tested directly: which tasks are pending, leased and done, when a level
//! closes, and what is recorded in the manifest and journals.
//!
//! A task is `(from_level, chunk)`. Repair tasks (recomputing a damaged file
//! of an earlier level) have a smaller `from_level`; while one is
//! outstanding no ordinary task is leased. Ordinary tasks are handed out by
//! **affinity**: each live worker owns a contiguous segment of the level's
//! chunks and takes them in order, so its consecutive tasks read
//! neighbouring shards and, level after level, the shards it wrote itself;
//! a worker whose segment is done takes the last pending chunk of the level.
//!
//! The state machine never reads a chunk's payload: results are validated
//! against the file's header and index (see `completion.rs`), which the
//! service reads outside the state lock.

use crate::manifest::{read_journal, save_manifest, ChunkRecord, IoTotals, Journal, Manifest, RunningLevel};
use cayley_proto::{lease_reply, JobOver};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::format::{verify_chunk, ChunkId};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
    fn level_started(&mut self, _depth: u32, _tasks: u64, _units: u64) {}
    fn progress(&mut self, _units_done: u64, _states: u64) {}
    fn level_finished(&mut self, _depth: u32, _count: u64, _seconds: f64, _io: &IoTotals) {}
    fn warn(&mut self, message: &str) {
        tracing::warn!("{}", message);
    }
}

/// What the coordinator knows about one worker.
pub struct WorkerInfo {
    pub name: String,
    pub cores: u32,
    pub memory_budget: u64,
    pub tasks_done: u64,
    pub evaluations: u64,
    pub busy_secs: f64,
    pub last_seen: Instant,
    pub busy: bool,
    /// Its report stream broke or a lease of it expired, and it has not
    /// been heard from since.
    pub lost: bool,
    /// It has been told that the job is over.
    pub told_over: bool,
}

/// The state of one job.
pub struct JobState {
    pub job: Job,
    pub checkpoint: CheckpointDir,
    /// How the manifest and journals are written (not durable for the
    /// temporary checkpoint of `cayley run`).
    pub write: WriteOptions,
    pub manifest: Manifest,
    pub phase: Phase,
    pub workers: BTreeMap<u64, WorkerInfo>,
    pub started: Instant,
    /// Text of the puzzle's definition file, sent to workers.
    pub puzzle_file: Option<String>,
    pub(super) lease_duration: Duration,
    /// Time of leases and worker liveness (a manual clock in tests).
    pub(super) clock: Clock,
    /// Whether idle workers get backup copies of straggling tasks.
    pub backups: bool,
    pub lease_stats: LeaseStats,
    pub(super) fingerprint: u64,
    pub(super) pending: BTreeSet<(u32, u64)>,
    pub(super) leases: HashMap<u64, Lease>,
    /// Task of every lease issued in the running level (to recognise late duplicates).
    pub(super) issued: HashMap<u64, (u32, u64)>,
    /// Leases ended because another copy of their task was recorded first
    /// (one per backup copy; kept across levels, as the loser may report
    /// after its level closed).
    pub(super) superseded: HashSet<u64>,
    pub(super) failures: HashMap<(u32, u64), u32>,
    /// Completed chunks of the running level.
    pub(super) done: BTreeMap<u64, ChunkRecord>,
    /// Recorded chunks of the running level whose old chunks (the levels
    /// it retires chunk by chunk) wait for the journal sync (`retire.rs`).
    pub(super) retire_waiting: Vec<u64>,
    /// Journal of the running level's completed chunks.
    pub(super) journal: Option<Journal>,
    /// Input statistics of the running level's completed chunks.
    pub(super) level_io: IoTotals,
    /// Threads of each worker that recorded a task of the running level.
    pub(super) level_threads: BTreeMap<u64, u32>,
    /// Units of progress and stored states of the running level's completed
    /// chunks (kept as sums so progress costs the same at any plan size).
    done_units: u64,
    done_stored: u64,
    /// Seconds the running level's completed tasks took (as reported).
    pub(super) done_seconds: f64,
    next_lease: u64,
    next_worker: u64,
    pub(super) level_started: Instant,
    pub(super) reporter: Box<dyn Reporter>,
    /// Batches of empty chunks being written (`empties.rs`).
    pub(super) empties_writing: u32,
}

/// Give up on a task after this many failures.
pub(super) const MAX_TASK_FAILURES: u32 = 5;

impl JobState {
    /// Starts a new job in `checkpoint`, or continues the one recorded there.
    pub fn open(
        job: Job,
        checkpoint: CheckpointDir,
        fresh: Manifest,
        lease_duration: Duration,
        reporter: Box<dyn Reporter>,
        write: WriteOptions,
    ) -> anyhow::Result<JobState> {
        let existing = crate::manifest::load_manifest(&checkpoint)?;
        let manifest = match existing {
            Some(m) => {
                m.check_matches(&job, checkpoint.root())?;
                crate::manifest::check_files_belong(&checkpoint, &m, job.fingerprint())?;
                m
            }
            None => {
                save_manifest(&checkpoint, &fresh, write)?;
                fresh
            }
        };
        let mut state = JobState {
            fingerprint: job.fingerprint(),
            puzzle_file: manifest.job.definition.clone(),
            job,
            checkpoint,
            write,
            manifest,
            phase: Phase::Running,
            workers: BTreeMap::new(),
            started: Instant::now(),
            lease_duration,
            clock: Clock::system(),
            backups: true,
            lease_stats: LeaseStats::default(),
            pending: BTreeSet::new(),
            leases: HashMap::new(),
            issued: HashMap::new(),
            superseded: HashSet::new(),
            failures: HashMap::new(),
            done: BTreeMap::new(),
            retire_waiting: Vec::new(),
            journal: None,
            level_io: IoTotals::default(),
            level_threads: BTreeMap::new(),
            done_units: 0,
            done_stored: 0,
            done_seconds: 0.0,
            next_lease: 1,
            next_worker: 1,
            level_started: Instant::now(),
            reporter,
            empties_writing: 0,
        };
        let deeper = std::mem::take(&mut state.manifest.go_deeper);
        let states_left = state.job.reachable_states.is_none_or(|r| state.manifest.states() < r);
        if state.manifest.finished && deeper && states_left {
            state.go_deeper()?;
        } else if state.manifest.finished {
            state.phase = Phase::Finished;
        } else {
            state.resume_running_level()?;
        }
        Ok(state)
    }

    /// Computing goes on from the last level of a job that finished at its
    /// depth limit, the limit since raised (`cayley resume --max-depth`), as
    /// if it had not stopped there: level `depth - 2` is read again where
    /// it is still on disk and would have been kept (`older_level_pays`).
    fn go_deeper(&mut self) -> anyhow::Result<()> {
        let depth = self.manifest.depth_reached();
        let counts: Vec<u128> = self.manifest.levels.iter().map(|l| l.count as u128).collect();
        let older_kept = depth >= 2
            && self.checkpoint.level_dir(depth - 2).is_dir()
            && completion::older_level_pays(&counts, self.job.reachable_states);
        self.manifest.finished = false;
        self.start_level(depth, older_kept)?;
        save_manifest(&self.checkpoint, &self.manifest, self.write)
    }

    /// The identity of the chunk file of `(level, chunk)`.
    pub fn chunk_id(&self, level: u32, chunk: u64) -> ChunkId {
        self.job
            .chunking
            .id(self.fingerprint, level, chunk, self.job.space.shard_words())
    }

    /// Queues the chunks of the running level that its journal does not
    /// record, after verifying in full every file it does record: a damaged
    /// payload would otherwise only be noticed by the next level, and with
    /// `--keep-levels last2` that level no longer has the inputs to
    /// recompute it. Now is the last time it can be.
    fn resume_running_level(&mut self) -> anyhow::Result<()> {
        let running = self
            .manifest
            .running
            .clone()
            .expect("an unfinished job has a running level");
        let level = running.from_level + 1;
        let recorded = read_journal(&self.checkpoint, level)?;
        let checked: Vec<(ChunkRecord, Result<(), String>)> = {
            use rayon::prelude::*;
            let files: Vec<_> = recorded
                .into_values()
                .map(|r| {
                    (
                        self.checkpoint.chunk_path(level, r.chunk),
                        self.chunk_id(level, r.chunk),
                        r,
                    )
                })
                .collect();
            files
                .into_par_iter()
                .map(|(path, id, r)| {
                    let verdict = verify_record(&path, &id, &r);
                    (r, verdict)
                })
                .collect()
        };
        for (record, verdict) in checked {
            match verdict {
                Ok(()) => self.record_done(record),
                Err(problem) => {
                    self.check_recomputable(record.chunk, &problem)?;
                    self.reporter.warn(&format!("{}; recomputing it", problem))
                }
            }
        }
        self.journal = Some(Journal::open(&self.checkpoint, level, false, self.write)?);
        // Recorded chunks whose old chunks a crash left behind.
        for chunk in self.done.keys().copied().collect::<Vec<_>>() {
            self.retire_chunk(chunk);
        }
        self.pending = (0..self.job.chunking.chunks())
            .filter(|c| !self.done.contains_key(c))
            .map(|c| (running.from_level, c))
            .collect();
        self.level_started = Instant::now();
        self.announce_level();
        self.maybe_complete_level();
        Ok(())
    }
}

/// Reads the file of a recorded chunk in full and compares it with the record.
fn verify_record(path: &std::path::Path, id: &ChunkId, record: &ChunkRecord) -> Result<(), String> {
    {
        match verify_chunk(path, id) {
            Ok(h) if h.popcount == record.stored && h.index_checksum == record.checksum => Ok(()),
            Ok(h) => Err(format!(
                "{} holds {} states, its record says {}",
                path.display(),
                h.popcount,
                record.stored
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl JobState {
    /// Starts computing level `from_level + 1`; `older_kept` says that level
    /// `from_level - 2` stays on disk for it (`older_level_pays`).
    pub(super) fn start_level(&mut self, from_level: u32, older_kept: bool) -> anyhow::Result<()> {
        self.manifest.running = Some(RunningLevel {
            from_level,
            seconds_before: 0.0,
            retiring: self.retiring_levels(from_level, older_kept),
        });
        self.retire_waiting.clear();
        self.journal = Some(Journal::open(&self.checkpoint, from_level + 1, true, self.write)?);
        self.done.clear();
        self.level_io = IoTotals::default();
        self.level_threads.clear();
        self.done_units = 0;
        self.done_stored = 0;
        self.done_seconds = 0.0;
        self.pending = (0..self.job.chunking.chunks()).map(|c| (from_level, c)).collect();
        self.issued.clear();
        self.level_started = Instant::now();
        self.announce_level();
        Ok(())
    }

    fn announce_level(&mut self) {
        if let Some(r) = &self.manifest.running {
            let space = &self.job.space;
            self.reporter.level_started(
                r.from_level + 1,
                self.job.chunking.chunks(),
                space.units_per_shard() * space.shards(),
            );
        }
    }

    /// Makes the running level's journal durable when records have waited
    /// a second (the server calls this on a clock); a journal that cannot be
    /// synced stops the job like one that cannot be written.
    pub fn sync_journal_if_due(&mut self) {
        if self.phase != Phase::Running {
            return;
        }
        if let Some(Err(e)) = self.journal.as_mut().map(Journal::sync_if_due) {
            self.stop(format!("cannot record progress: {:#}", e));
            return;
        }
        self.retire_durable();
    }

    /// Seconds since the running level (re)started in this process.
    pub fn level_elapsed(&self) -> f64 {
        self.level_started.elapsed().as_secs_f64()
    }

    /// Chunks of the running level recorded as done.
    pub fn chunks_done(&self) -> u64 {
        self.done.len() as u64
    }

    /// Input statistics of the running level so far.
    pub fn level_io(&self) -> &IoTotals {
        &self.level_io
    }

    /// Registers a worker.
    pub fn register(&mut self, name: String, cores: u32, memory_budget: u64) -> u64 {
        let id = self.next_worker;
        self.next_worker += 1;
        self.workers.insert(
            id,
            WorkerInfo {
                name,
                cores,
                memory_budget,
                tasks_done: 0,
                evaluations: 0,
                busy_secs: 0.0,
                last_seen: self.clock.now(),
                busy: false,
                lost: false,
                told_over: false,
            },
        );
        id
    }

    pub(super) fn is_done(&self, key: (u32, u64)) -> bool {
        match &self.manifest.running {
            Some(r) if r.from_level == key.0 => self.done.contains_key(&key.1),
            _ => false,
        }
    }

    /// Records a completed chunk of the running level.
    pub(super) fn record_done(&mut self, record: ChunkRecord) {
        let r = self.job.chunking.shards_of(record.chunk);
        self.done_units += (r.end - r.start) * self.job.space.units_per_shard();
        self.done_stored += record.stored;
        self.done_seconds += record.seconds;
        self.level_io.add(&record.io);
        self.done.insert(record.chunk, record);
    }

    /// Units done and (stored) states found so far in the running level.
    pub fn level_progress(&self) -> (u64, u64) {
        let (live, live_found) = self.live_progress();
        (self.done_units + live, self.done_stored + live_found)
    }
}

fn over(finished: bool, reason: &str) -> lease_reply::Reply {
    lease_reply::Reply::Over(JobOver {
        finished,
        reason: reason.to_string(),
    })
}

mod clock;
pub mod completion;
pub mod empties;
pub mod leases;
mod retire;
pub use clock::Clock;
pub use completion::Verdict;
use leases::{Lease, LeaseStats};

#[cfg(test)]
mod tests;
