//! Runs one task `(from_level d, chunk C)` from files: for each target shard
//! `B` of the chunk, fetches `F_{d-1}(B)`, `F_d(B)` and `F_d` of `B`'s
//! source shards through the [`ShardCache`](crate::cache::ShardCache), runs the kernel, and appends
//! `F_{d+1}(B)` to the chunk's output file. Every thread of the pool works
//! a shard of its own from start to end (see the `pipeline` module), and
//! tasks of one level may run side by side. Memory is the budget (the
//! cache, the shards in flight held outside it, the tables) plus a few
//! shard buffers: never a whole level.

mod cpu;
mod frozen;
mod in_flight;
mod level;
mod pipeline;
mod reached;
mod readers;
mod resident;
mod shard;
mod store;

pub use readers::prepare_open_files;

use crate::cache::{Bits, CacheStats};
use crate::slab::{Slab, Slot};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::format::{ChunkId, ChunkWriter, FormatError};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::kernel::task::TaskStats;
use in_flight::InFlight;
use pipeline::{items_of, Task};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Why a task failed.
#[derive(Debug)]
pub enum TaskError {
    /// The output could not be written for lack of space.
    DiskFull(String),
    /// An input file is missing or fails validation.
    CorruptInput { level: u32, chunk: u64, message: String },
    /// The checkpoint directory cannot be read from here.
    Unreadable(String),
    /// Anything else.
    Other(String),
    /// Asked to stop (its lease ended); nothing was written.
    Stopped,
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::DiskFull(m) | TaskError::Unreadable(m) | TaskError::Other(m) => f.write_str(m),
            TaskError::CorruptInput { message, .. } => f.write_str(message),
            TaskError::Stopped => f.write_str("stopped: the task's lease ended"),
        }
    }
}

/// How a task got its inputs and spent its time. Phases are
/// thread-seconds, summed over the threads that worked on the task; with
/// the cache's `load_seconds` they add up to `busy_seconds` plus the
/// task's own start (the level's sparse map). Closing its file is apart
/// (`close_seconds`): it runs off the pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskIo {
    pub cache: CacheStats,
    /// Working out which shards each target reads (and, at the first task
    /// of a sparse level, which shards can gain states).
    pub sources_seconds: f64,
    pub compute_seconds: f64,
    /// Compressing and writing the shards (the pool's threads).
    pub write_seconds: f64,
    /// Seconds closing the file (index, header, fsync, rename), off the
    /// pool: on a journaled disk, the fsyncs of the 4×4 Loopover's 309
    /// files a level were most of what the progress line showed as its
    /// writing, though no pool thread waited for them.
    pub close_seconds: f64,
    /// The rest: cache hits, seen sets, counting classes, bookkeeping.
    pub other_seconds: f64,
    /// Of the rest, seconds threads waited for the worker's shared cache
    /// while another thread held it (since the worker's last task ended:
    /// summed over a level's tasks, the level's total).
    pub wait_seconds: f64,
    /// CPU seconds of the pool's threads since the last task of this
    /// worker ended (tasks may overlap: summed over a level's tasks, it is
    /// the pool's CPU time over the level).
    pub busy_seconds: f64,
    /// Seconds no task of this worker was computing, before this one
    /// started (reports, leases, waiting for a level to close).
    pub idle_seconds: f64,
    /// Threads of the worker's pool.
    pub threads: u32,
}

/// Why a task holds no more shards in flight, said once per task through
/// [`TaskRunner::compute_chunk_until`]'s `on_shards_done`: from then on
/// the client may lease another task in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardsDone {
    /// No shard of the chunk can gain a state (the level's sparse map):
    /// nothing is computed, the task only writes an empty file.
    GainsNothing,
    /// Every shard is in the task's file, which is yet to be finished
    /// (written out, fsynced where durable, renamed) and reported.
    Computed,
    /// The chunk computes only this many shards, fewer than a window
    /// ([`TaskRunner::window`]): the task never holds more in flight. Said
    /// at most once, when the task enters its level, before `Computed`.
    AtMost(usize),
}

/// What a finished task reports.
#[derive(Clone, Copy, Debug)]
pub struct TaskResult {
    /// Set bits written (the chunk file's popcount).
    pub stored: u64,
    /// States the bits stand for.
    pub states: u64,
    /// Classes of states under the job's symmetries.
    pub classes: u64,
    pub evaluations: u64,
    /// The kernel's statistics summed over the task's shards.
    pub kernel: TaskStats,
    pub file_bytes: u64,
    pub index_checksum: u64,
    pub seconds: f64,
    pub io: TaskIo,
}

/// Computes tasks of one job on this machine; tasks of one level may run
/// side by side (each call on its own thread), sharing the pool.
pub struct TaskRunner {
    ctx: SearchContext,
    checkpoint: CheckpointDir,
    /// How output chunk files are written.
    write: WriteOptions,
    fingerprint: u64,
    /// The cache and the open chunk files.
    store: store::Store,
    /// The empty shard, one per pool thread and one for other threads
    /// (see [`TaskRunner::zeros`]).
    zeros: Box<[Bits]>,
    /// Shards in flight at once in one task (see `pipeline`).
    window: usize,
    /// Tasks the budget and the threads let run side by side (`in_flight`).
    tasks_at_once: usize,
    /// The running level and the worker's idle time (see `level`).
    levels: level::Levels,
    /// States reached per shard in the levels so far (see `reached`).
    reached: reached::Reached,
    /// The budget counted in the process's, and the cache's limit as the
    /// process's resident memory goes (see `resident`).
    resident: resident::Resident,
    /// Runs every task (see [`Self::compute_chunk`]).
    pool: Arc<rayon::ThreadPool>,
    /// CPU time of the pool's threads (see `cpu`).
    clock: Arc<cpu::PoolClock>,
    /// The level the last lease that said so named the job's last
    /// (`u32::MAX`: none): see [`Self::note_lease`].
    last_level: AtomicU32,
}

impl TaskRunner {
    /// Prepares tables for `job`; level files are read from `checkpoint`
    /// and written there as `write` says. Decompressed shards are kept
    /// within `memory_budget` bytes.
    pub fn new(
        job: Job,
        checkpoint: &Path,
        memory_budget: u64,
        threads: usize,
        write: WriteOptions,
    ) -> anyhow::Result<TaskRunner> {
        cayley_shared::search::resources::check_budget(&job, memory_budget)?;
        let clock = Arc::new(cpu::PoolClock::default());
        let pool = {
            let clock = clock.clone();
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("cayley-pool-{i}"))
                .start_handler(move |_| clock.register_this_thread())
                .build()?
        };
        let pool = Arc::new(pool);
        let fingerprint = job.fingerprint();
        let words = job.space.shard_words();
        let shard_bytes = job.space.shard_bytes();
        // What one shard in flight holds: its sources (one per move and
        // itself), `F_{d-1}(B)` or the union, `F_{d-2}(B) ∪ F_{d-1}(B)`,
        // its output, and the buffer the older level is read through.
        let item = (job.puzzle.moves.len() as u64 + 5) * shard_bytes;
        if let cayley_shared::space::Space::Reduced(space) = &job.space {
            space.fit_tables_to(memory_budget, job.space.level_bytes());
        }
        let ctx = pool.install(|| SearchContext::new(job));
        // The tables and the buffers outside the cache come out of the same
        // budget as the cached shards.
        let outside = cayley_shared::search::resources::SHARD_BUFFERS_OUTSIDE_CACHE * shard_bytes;
        let shard_memory = memory_budget.saturating_sub(ctx.table_bytes());
        let cache_budget = shard_memory.saturating_sub(outside);
        // The shards in flight beyond the first are held outside the cache,
        // in a room of at most a quarter of it, sized to the threads
        // (`in_flight`): two tasks side by side below 8 threads, so that the
        // next starts while the last shard of one is written and reported.
        let in_flight = InFlight::plan(threads, item, cache_budget);
        let cache_budget = cache_budget - in_flight.extra_shards() * item;
        // Every shard-sized buffer is a slot: the cache's, the window's and
        // its outputs. Compressed frames (part of `outside`) stay on the heap.
        let slab = Slab::for_pool(words, (shard_memory / shard_bytes) as usize, threads)?;
        // The slots the shards in flight take stay resident when free
        // slots are given back (`resident`).
        let keep = (in_flight.extra_shards() as usize + 1) * (ctx.job.puzzle.moves.len() + 5);
        let resident = resident::Resident::new(memory_budget, cache_budget, slab.clone(), keep);
        Ok(TaskRunner {
            ctx,
            checkpoint: CheckpointDir::existing(checkpoint),
            write,
            fingerprint,
            store: store::Store::new(cache_budget, shard_bytes, slab, threads),
            resident,
            // A shard per thread, outside the budget like the one shared
            // before: large zeroed allocations are the kernel's zero page
            // until written, and these are never written.
            zeros: (0..=threads).map(|_| Bits::new(Slot::heap(words), 0)).collect(),
            window: in_flight.window,
            tasks_at_once: in_flight.tasks,
            levels: Default::default(),
            reached: Default::default(),
            pool,
            clock,
            last_level: AtomicU32::new(u32::MAX),
        })
    }

    /// Notes what a lease for a task writing `level` says: whether it is
    /// the job's last (`--max-depth`), which no task will read. The
    /// outputs of the last level, and the unions of earlier levels its
    /// tasks would have used beside them, are not kept in the cache (a
    /// later lease for that level that does not say so, from a job
    /// resumed deeper, keeps them again). Why: kept, the 4×4
    /// Loopover's depth 8 filled it with 475,000 outputs nobody read: 330
    /// MB of peak RSS, 57,000 page faults, and 20 ms more for the kernel
    /// to end the process (docs/history.md, "The last level's outputs let
    /// go").
    pub fn note_lease(&self, level: u32, last: bool) {
        if last {
            self.last_level.store(level, Ordering::Relaxed);
        } else {
            let _ = self
                .last_level
                .compare_exchange(level, u32::MAX, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// False for the level leases say is the job's last: nothing computed
    /// for it is kept for a next level.
    fn keeps_level(&self, level: u32) -> bool {
        level != self.last_level.load(Ordering::Relaxed)
    }

    /// Units of progress in one shard (blocks).
    pub fn units_per_shard(&self) -> u64 {
        self.ctx.job.space.units_per_shard()
    }

    /// Units of progress in one task.
    pub fn units_of_chunk(&self, chunk: u64) -> u64 {
        let range = self.ctx.job.chunking.shards_of(chunk);
        (range.end - range.start) * self.units_per_shard()
    }

    /// Shard buffers of the worker's slab ever in use at once.
    pub fn slots_touched(&self) -> usize {
        self.store.slots_touched()
    }

    /// Highest bytes of shards the cache held: its stripes' peaks summed,
    /// so at least the peak of the whole, and never above the budget.
    pub fn cache_peak(&self) -> u64 {
        self.store.peak()
    }

    /// Tasks the memory budget lets this runner compute side by side,
    /// each with a full window.
    pub fn tasks_at_once(&self) -> usize {
        self.tasks_at_once
    }

    /// Shards one task holds in flight at most (its window).
    pub fn window(&self) -> usize {
        self.window
    }

    /// The empty shard of the calling thread. Every shard the index shows
    /// empty is one of these, and on sparse levels most inputs are: with
    /// one for all threads, its count of handles went back and forth
    /// between the cores at every lookup.
    fn zeros(&self) -> Bits {
        let last = self.zeros.len() - 1;
        let own = rayon::current_thread_index().filter(|&i| i < last);
        self.zeros[own.unwrap_or(last)].clone()
    }

    /// Threads of the pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn id(&self, level: u32, chunk: u64) -> ChunkId {
        let job = &self.ctx.job;
        job.chunking.id(self.fingerprint, level, chunk, job.space.shard_words())
    }

    /// Fails when the job's checkpoint directory is not there: a worker that
    /// does not see the shared filesystem must not write files nobody reads.
    fn check_checkpoint_visible(&self) -> Result<(), TaskError> {
        if self.checkpoint.root().join("levels").is_dir() {
            return Ok(());
        }
        Err(TaskError::Unreadable(format!(
            "checkpoint directory {} is not readable from this worker (on a cluster it must be a shared filesystem mounted at the same path, or pass --checkpoint-dir)",
            self.checkpoint.root().display()
        )))
    }

    /// Computes `F_{from_level+1}` of every shard of `chunk` and writes its
    /// chunk file. `on_units` gets each run of units of progress done and
    /// the states they found.
    pub fn compute_chunk(
        &self,
        from_level: u32,
        chunk: u64,
        on_units: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<TaskResult, TaskError> {
        self.compute_chunk_until(from_level, chunk, on_units, &|_| {}, &|_| {}, &AtomicBool::new(false))
    }

    /// [`Self::compute_chunk`] that gives up, writing nothing, once `stop`
    /// is set (checked before each shard): a worker whose lease has ended
    /// (expired behind a partition, or another copy of the task won) stops
    /// computing what nobody will accept. `on_shards_done` is called once
    /// the task holds no window of shards in flight, so that the client may
    /// lease another beside it: as soon as the level's sparse map shows
    /// that no shard of the chunk can gain a state, or else once every
    /// shard is in the file, before the file is finished: its fsync and
    /// rename then overlap the next task (the 4×4's depths 1–6 under a
    /// durable checkpoint on a journaled disk: 1.74 → 1.66 s, 2 threads).
    /// `on_others_empty` gets, once a
    /// level and as soon as the map is known, the level's other chunks that
    /// gain nothing, for the coordinator to record without their tasks
    /// (`LevelView::take_gaining_nothing`).
    pub fn compute_chunk_until(
        &self,
        from_level: u32,
        chunk: u64,
        on_units: &(dyn Fn(u64, u64) + Sync),
        on_shards_done: &(dyn Fn(ShardsDone) + Sync),
        on_others_empty: &(dyn Fn(Vec<u64>) + Sync),
        stop: &AtomicBool,
    ) -> Result<TaskResult, TaskError> {
        let started = Instant::now();
        self.check_checkpoint_visible()?;
        let entered = self.enter(from_level)?;
        let others_empty = entered.view.take_gaining_nothing(chunk);
        if !others_empty.is_empty() {
            on_others_empty(others_empty);
        }
        let mut io = TaskIo {
            sources_seconds: started.elapsed().as_secs_f64(),
            idle_seconds: entered.idle_seconds,
            threads: self.threads() as u32,
            ..TaskIo::default()
        };
        let out_level = from_level + 1;
        let level_dir = self.checkpoint.level_dir(out_level);
        // Only the level's own directory: `levels/` must already be there.
        std::fs::create_dir(&level_dir)
            .or_else(|e| if level_dir.is_dir() { Ok(()) } else { Err(e) })
            .map_err(|e| TaskError::Unreadable(format!("cannot create {}: {}", level_dir.display(), e)))?;
        let path = self.checkpoint.chunk_path(out_level, chunk);
        let writer = ChunkWriter::create(&path, self.id(out_level, chunk), self.write).map_err(output_error)?;
        let view = &entered.view;
        let items = items_of(self.ctx.job.chunking.shards_of(chunk), |s| view.gains_nothing(s));
        let computed = items.iter().filter(|item| item.shard.is_some()).count();
        let gains_nothing = computed == 0;
        if gains_nothing {
            on_shards_done(ShardsDone::GainsNothing);
        } else if computed < self.window {
            on_shards_done(ShardsDone::AtMost(computed));
        }
        // The task runs on the pool's threads: the kernel's and the
        // compressor's parallel loops then start there, instead of waking
        // a pool thread from outside for every shard (on the 4×4's sparse
        // levels, rayon's idle spinning took a fifth of the CPU). Its file
        // is closed here, off the pool, so that an fsync holds up no thread
        // another task could use.
        let task = Task::new(self, view, &items, writer, on_units, stop);
        let (writer, totals) = if gains_nothing {
            task.run_gaining_nothing()?
        } else {
            let ran = self.pool.install(|| task.run())?;
            on_shards_done(ShardsDone::Computed);
            ran
        };
        drop(entered);
        self.fit_cache_to_resident();
        let written = Instant::now();
        let (header, file_bytes) = writer.finish().map_err(output_error)?;
        io.write_seconds = totals.write;
        io.close_seconds = written.elapsed().as_secs_f64();
        io.cache = totals.cache;
        io.sources_seconds += totals.sources;
        io.compute_seconds = totals.compute;
        io.other_seconds = totals.other;
        io.wait_seconds = self.store.take_waited();
        io.busy_seconds = self.clock.since_last();
        Ok(TaskResult {
            stored: header.popcount,
            states: totals.states,
            classes: totals.classes,
            evaluations: totals.kernel.evaluations,
            kernel: totals.kernel,
            file_bytes,
            index_checksum: header.index_checksum,
            seconds: started.elapsed().as_secs_f64(),
            io,
        })
    }

    /// Offers computed outputs of level `level` to the cache, for the next
    /// level's tasks, where there is free room.
    fn keep_outputs(&self, level: u32, kept: Vec<(u64, Bits)>) {
        for (shard, bits) in kept {
            self.store.lock(shard).cache.offer((level, shard), bits);
        }
    }
}

/// A chunk file that cannot be read as an input: missing or damaged files
/// are reported as corrupt inputs (the coordinator recomputes them).
fn input_error(level: u32, chunk: u64, e: FormatError) -> TaskError {
    if e.is_missing() {
        let FormatError::Io { path, .. } = &e else {
            unreachable!()
        };
        return TaskError::CorruptInput {
            level,
            chunk,
            message: format!("{}: missing", path.display()),
        };
    }
    match e {
        e if e.is_corruption() || matches!(e, FormatError::Io { .. }) => TaskError::CorruptInput {
            level,
            chunk,
            message: e.to_string(),
        },
        e => TaskError::Other(e.to_string()),
    }
}

/// A failure writing the output file.
fn output_error(e: FormatError) -> TaskError {
    if e.is_disk_full() {
        TaskError::DiskFull(e.to_string())
    } else {
        TaskError::Other(e.to_string())
    }
}

#[cfg(test)]
mod tests;
