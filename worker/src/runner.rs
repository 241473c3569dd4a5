//! Runs one task `(from_level d, chunk C)` from files: for each target shard
//! `B` of the chunk, fetches `F_{d-1}(B)`, `F_d(B)` and `F_d` of `B`'s
//! source shards through the [`ShardCache`], runs the kernel, and appends
//! `F_{d+1}(B)` to the chunk's output file, a batch of shards at a time
//! (see the `shard` module). Memory is the budget (the cache, the batch's inputs
//! held outside it, the tables) plus a few shard buffers: never a whole
//! level.

mod readers;
mod shard;

use crate::cache::{Bits, CacheStats, ShardCache};
use crate::slab::{Slab, Slot};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::format::{ChunkId, ChunkReader, ChunkWriter, FormatError};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::kernel::task::TaskStats;
use readers::Readers;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Non-empty shards whose targets are worked out at once in
/// [`TaskRunner::sparse_targets`].
const TARGET_BATCH: usize = 4096;

/// Most bytes of inputs and outputs held for the shards of a batch beyond
/// the first (the 4×4 Loopover's batch of 8 holds 7.8 MiB more).
const BATCH_ROOM: u64 = 64 << 20;

/// Shards per thread in a batch: several, so that threads that finish a
/// sparse shard early find another.
const BATCH_PER_THREAD: usize = 4;

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

/// How a task got its inputs and spent its time. With the cache's
/// `load_seconds`, the phases add up to the task's seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskIo {
    pub cache: CacheStats,
    /// Working out which shards each target reads (and, at the first task
    /// of a sparse level, which shards can gain states).
    pub sources_seconds: f64,
    pub compute_seconds: f64,
    pub write_seconds: f64,
    /// The rest: cache hits, seen sets, counting classes, bookkeeping.
    pub other_seconds: f64,
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

/// Computes tasks of one job on this machine.
pub struct TaskRunner {
    ctx: SearchContext,
    checkpoint: CheckpointDir,
    /// How output chunk files are written.
    write: WriteOptions,
    fingerprint: u64,
    cache: ShardCache,
    files: Readers,
    /// The shared empty shard.
    zeros: Bits,
    /// Compressed frames are read through this one buffer (see
    /// [`ChunkReader::read_shard_via`]).
    frame: Vec<u8>,
    /// Shards computed together (see [`shard`]): 1 where the room for
    /// more would take a noticeable part of the budget.
    batch: usize,
    /// The batch's output shards, kept across tasks so that their pages
    /// are faulted in once, not once per task.
    outputs: Vec<Slot>,
    /// Level the last task read (older levels are dropped from the cache).
    level: Option<u32>,
    /// `d - 2` while the running level reads from `d` and level `d - 2`
    /// is still on disk (see [`shard`]).
    older: Option<u32>,
    /// While the level read is sparse: one bit per shard that can gain
    /// states (see [`Self::sparse_targets`]); every other shard's task is
    /// written empty without working out its sources.
    targets: Option<Vec<u64>>,
    /// Runs every task (see [`Self::compute_chunk`]).
    pool: Arc<rayon::ThreadPool>,
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
        let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?);
        let fingerprint = job.fingerprint();
        let words = job.space.shard_words();
        let shard_bytes = job.space.shard_bytes();
        // What one shard of a batch holds: its sources (one per move and
        // itself), `F_{d-1}(B)` or the union, `F_{d-2}(B) ∪ F_{d-1}(B)`,
        // its output, and the buffer the older level is read through.
        let batch_item = (job.puzzle.moves.len() as u64 + 5) * shard_bytes;
        let ctx = pool.install(|| SearchContext::new(job));
        // The tables and the buffers outside the cache come out of the same
        // budget as the cached shards.
        let outside = cayley_shared::search::resources::SHARD_BUFFERS_OUTSIDE_CACHE * shard_bytes;
        let shard_memory = memory_budget.saturating_sub(ctx.table_bytes());
        let cache_budget = shard_memory.saturating_sub(outside);
        // The batch's shards beyond the first are held outside the cache.
        let room = BATCH_ROOM.min(cache_budget / 4);
        let batch = (room / batch_item).clamp(1, (BATCH_PER_THREAD * threads.max(1)) as u64);
        let cache_budget = cache_budget - (batch - 1) * batch_item;
        // Every shard-sized buffer is a slot: the cache's, the batch's and
        // its outputs. Compressed frames (part of `outside`) stay on the heap.
        let slab = Slab::new(words, (shard_memory / shard_bytes) as usize)?;
        Ok(TaskRunner {
            ctx,
            checkpoint: CheckpointDir::existing(checkpoint),
            write,
            fingerprint,
            cache: ShardCache::new(cache_budget, shard_bytes, slab),
            files: Readers::new(),
            zeros: Bits::new(Slot::heap(words), 0),
            frame: Vec::new(),
            batch: batch as usize,
            outputs: Vec::new(),
            level: None,
            older: None,
            targets: None,
            pool,
        })
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
        self.cache.slots_touched()
    }

    /// Highest bytes of shards the cache held.
    pub fn cache_peak(&self) -> u64 {
        self.cache.peak
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

    /// The verified reader of `(level, chunk)`, opened once.
    fn reader(&mut self, level: u32, chunk: u64) -> Result<Arc<ChunkReader>, TaskError> {
        if let Some(r) = self.files.get(level, chunk) {
            return Ok(r);
        }
        let path = self.checkpoint.chunk_path(level, chunk);
        let reader = ChunkReader::open(&path, &self.id(level, chunk)).map_err(|e| input_error(level, chunk, e))?;
        Ok(self.files.insert(level, chunk, reader))
    }

    /// `F_level` of `shard`, from the cache or the checkpoint.
    fn shard(&mut self, level: u32, shard: u64) -> Result<Bits, TaskError> {
        if level == 0 {
            // Every shard but the solved state's is the shared empty one.
            if shard != self.ctx.job.solved_shard() {
                return Ok(self.zeros.clone());
            }
            // Through the cache, so that the task's current level and its
            // sources share one buffer (made afresh for each, a one-shard
            // space held four shard buffers at depth 0).
            let ctx = &self.ctx;
            return self.cache.get((0, shard), |mut words| {
                words.fill(0);
                ctx.job.level_zero(shard, &mut words);
                let count = cayley_shared::space::bits::popcount(&words);
                Ok((words, count, 0))
            });
        }
        let chunk = self.ctx.job.chunking.chunk_of(shard);
        let reader = self.reader(level, chunk)?;
        let i = (shard - reader.header().id.first_shard) as usize;
        let count = reader.entries()[i].popcount;
        if count == 0 {
            // Known empty from the index: nothing to read or keep.
            self.cache.stats.lookups += 1;
            self.cache.stats.hits += 1;
            return Ok(self.zeros.clone());
        }
        let frame = &mut self.frame;
        self.cache.get((level, shard), |mut w| {
            let read = reader
                .read_shard_via(i, &mut w, frame)
                .map_err(|e| input_error(level, chunk, e))?;
            Ok((w, count, read))
        })
    }

    /// `F_0(shard) ∪ … ∪ F_{below-1}(shard)`, read level by level (a
    /// directed graph's "seen" set; most of these levels are read only here,
    /// so they bypass the cache).
    fn union_of_levels(&mut self, below: u32, shard: u64) -> Result<Slot, TaskError> {
        let mut union = self.cache.zeroed();
        let mut buffer = self.cache.buffer();
        self.ctx.job.level_zero(shard, &mut union);
        for level in 1..below {
            self.or_level_into(level, shard, &mut union, &mut buffer)?;
        }
        Ok(union)
    }

    /// ORs `F_level(shard)` into `into`, read through `buffer` past the
    /// cache (levels read only once); nothing is read when the chunk index
    /// says the shard is empty.
    pub(super) fn or_level_into(
        &mut self,
        level: u32,
        shard: u64,
        into: &mut [u64],
        buffer: &mut [u64],
    ) -> Result<(), TaskError> {
        let chunk = self.ctx.job.chunking.chunk_of(shard);
        let reader = self.reader(level, chunk)?;
        let i = (shard - reader.header().id.first_shard) as usize;
        if reader.entries()[i].popcount == 0 {
            return Ok(());
        }
        let read = reader
            .read_shard_via(i, buffer, &mut self.frame)
            .map_err(|e| input_error(level, chunk, e))?;
        self.cache.stats.bytes_read += read;
        into.iter_mut().zip(buffer.iter()).for_each(|(u, w)| *u |= w);
        Ok(())
    }

    /// A new level: shards of levels no task reads again leave the cache.
    fn begin_level(&mut self, from_level: u32) -> Result<(), TaskError> {
        if self.level != Some(from_level) {
            self.cache.drop_levels_below(from_level.saturating_sub(1));
            self.cache.drop_covered(from_level);
            self.files.retain_levels_from(from_level.saturating_sub(1));
            // Set first: a failure below leaves the level to the slow path.
            self.level = Some(from_level);
            // F_{d-2} is on disk when the coordinator kept it (it holds
            // more states than remain unseen) or as an early level `last2`
            // keeps; its states then leave the kernel's unseen set.
            self.older = from_level
                .checked_sub(2)
                .filter(|&l| l > 0 && self.checkpoint.level_dir(l).is_dir());
            self.ctx.begin_level();
            self.targets = None;
            self.targets = self.sparse_targets(from_level)?;
        }
        Ok(())
    }

    /// The shards that can hold states of level `level + 1`, as a bitmap,
    /// when level `level` is sparse: the level's non-empty shards (from the
    /// chunk indexes) and the shards that read them. Working out one
    /// shard's sources costs as much as one shard's targets, so this pays
    /// while at most a quarter of the shards hold states; `None` above that,
    /// or where the space has no cheap map from sources to targets. The 4×4
    /// Loopover's first levels (499,961 shards, a few thousand states) took
    /// minutes each, all of it in working out every shard's sources.
    fn sparse_targets(&mut self, level: u32) -> Result<Option<Vec<u64>>, TaskError> {
        let job = &self.ctx.job;
        let shards = job.space.shards();
        if self.ctx.target_shards(job.solved_shard()).is_none() {
            return Ok(None);
        }
        let limit = shards / 4;
        let mut nonempty = Vec::new();
        if level == 0 {
            nonempty.push(job.solved_shard());
        } else {
            for chunk in 0..self.ctx.job.chunking.chunks() {
                let reader = self.reader(level, chunk)?;
                let first = reader.header().id.first_shard;
                for (i, entry) in reader.entries().iter().enumerate() {
                    if entry.popcount > 0 {
                        nonempty.push(first + i as u64);
                    }
                }
                if nonempty.len() as u64 > limit {
                    return Ok(None);
                }
            }
        }
        use rayon::prelude::*;
        let mut bits = vec![0u64; shards.div_ceil(64) as usize];
        let mut set = |shard: u64| bits[(shard / 64) as usize] |= 1 << (shard % 64);
        // In batches: the targets of every source at once would be up to
        // 24 entries per non-empty shard (24 MB on the 4×4).
        for batch in nonempty.chunks(TARGET_BATCH) {
            let targets: Vec<Vec<u64>> = batch
                .par_iter()
                .map(|&a| self.ctx.target_shards(a).expect("checked above"))
                .collect();
            batch
                .iter()
                .chain(targets.iter().flatten())
                .for_each(|&shard| set(shard));
        }
        Ok(Some(bits))
    }

    /// Computes `F_{from_level+1}` of every shard of `chunk` and writes its
    /// chunk file. `on_unit` gets the states each unit of progress found.
    pub fn compute_chunk(
        &mut self,
        from_level: u32,
        chunk: u64,
        on_unit: &(dyn Fn(u64) + Sync),
    ) -> Result<TaskResult, TaskError> {
        self.compute_chunk_until(from_level, chunk, on_unit, &AtomicBool::new(false))
    }

    /// [`Self::compute_chunk`] that gives up, writing nothing, once `stop`
    /// is set (checked between batches of shards): a worker whose lease has
    /// ended (expired behind a partition, or another copy of the task won)
    /// stops computing what nobody will accept.
    pub fn compute_chunk_until(
        &mut self,
        from_level: u32,
        chunk: u64,
        on_unit: &(dyn Fn(u64) + Sync),
        stop: &AtomicBool,
    ) -> Result<TaskResult, TaskError> {
        // The whole task runs on one of the pool's threads: the kernel's and
        // the compressor's parallel loops then start there, instead of
        // waking a pool thread from outside for every shard (on the 4×4's
        // sparse levels, rayon's idle spinning took a fifth of the CPU).
        let pool = self.pool.clone();
        pool.install(|| self.compute_chunk_on_pool(from_level, chunk, on_unit, stop))
    }

    fn compute_chunk_on_pool(
        &mut self,
        from_level: u32,
        chunk: u64,
        on_unit: &(dyn Fn(u64) + Sync),
        stop: &AtomicBool,
    ) -> Result<TaskResult, TaskError> {
        let started = Instant::now();
        self.check_checkpoint_visible()?;
        let mut io = TaskIo::default();
        self.cache.stats = CacheStats::default();
        let sources_started = Instant::now();
        self.begin_level(from_level)?;
        io.sources_seconds += sources_started.elapsed().as_secs_f64();
        let out_level = from_level + 1;
        let level_dir = self.checkpoint.level_dir(out_level);
        // Only the level's own directory: `levels/` must already be there.
        std::fs::create_dir(&level_dir)
            .or_else(|e| if level_dir.is_dir() { Ok(()) } else { Err(e) })
            .map_err(|e| TaskError::Unreadable(format!("cannot create {}: {}", level_dir.display(), e)))?;
        let path = self.checkpoint.chunk_path(out_level, chunk);
        let mut writer = ChunkWriter::create(&path, self.id(out_level, chunk), self.write).map_err(output_error)?;
        // Taken while the task runs (a failed task leaves fresh ones to the
        // next).
        let mut outputs = std::mem::take(&mut self.outputs);
        let mut stats = TaskStats::default();
        let (mut states, mut classes) = (0u64, 0u64);
        let shards: Vec<u64> = self.ctx.job.chunking.shards_of(chunk).collect();
        for group in shards.chunks(self.batch) {
            if stop.load(Ordering::Relaxed) {
                // The writer's drop removes its temporary file.
                return Err(TaskError::Stopped);
            }
            let sources_started = Instant::now();
            let sources = self.sources_of(group);
            io.sources_seconds += sources_started.elapsed().as_secs_f64();
            let mut batch = Vec::with_capacity(group.len());
            for (&shard, sources) in group.iter().zip(sources) {
                batch.push(self.gather(from_level, shard, sources)?);
            }
            // Outputs the cache kept are replaced only now, after the
            // previous batch let go of its inputs, so that a freed slot is
            // reused instead of a fresh one made resident (see `kept`).
            while outputs.len() < group.len() {
                outputs.push(self.cache.buffer());
            }
            let computing = Instant::now();
            let found = shard::expand_batch(&self.ctx, &self.zeros, &batch, &mut outputs, on_unit);
            io.compute_seconds += computing.elapsed().as_secs_f64();
            let preparing = Instant::now();
            let prepared = shard::prepare_batch(&self.ctx, &batch, &outputs, &found)
                .map_err(|e| TaskError::Other(format!("compressing a shard of level {}: {}", out_level, e)))?;
            io.write_seconds += preparing.elapsed().as_secs_f64();
            let each = batch
                .into_iter()
                .zip(outputs.iter_mut())
                .zip(found.into_iter().zip(prepared))
                .enumerate();
            // Outputs the next level reads again, offered to the cache once
            // every shard of the batch has settled: taking a fresh slot for
            // each at once held one more shard buffer than needed while the
            // inputs were still held (a one-shard level held four).
            let mut kept = Vec::new();
            for (i, ((gathered, out), (found, prepared))) in each {
                let shard = gathered.shard;
                self.settle(from_level, gathered);
                let (Some(found), Some((prepared, shard_classes))) = (found, prepared) else {
                    // Not timed: an index entry costs less than reading
                    // the clock twice (a tenth of the 4×4's first levels).
                    writer.push_empty();
                    continue;
                };
                stats = stats.plus(found);
                states += found.found * self.ctx.job.space.weight(shard);
                classes += shard_classes;
                let written = Instant::now();
                writer.push_prepared(out, prepared).map_err(output_error)?;
                io.write_seconds += written.elapsed().as_secs_f64();
                if found.found > 0 {
                    kept.push((i, shard, found.found));
                }
            }
            // The cache keeps an output's slot as is (the next batch takes
            // a fresh one); in descending order, so that each `swap_remove`
            // moves an output that is not kept.
            for &(i, shard, count) in kept.iter().rev() {
                if self.cache.has_room() {
                    let slot = outputs.swap_remove(i);
                    self.cache.offer((out_level, shard), Bits::new(slot, count));
                }
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Err(TaskError::Stopped);
        }
        let written = Instant::now();
        let (header, file_bytes) = writer.finish().map_err(output_error)?;
        io.write_seconds += written.elapsed().as_secs_f64();
        self.outputs = outputs;
        io.cache = self.cache.stats;
        let seconds = started.elapsed().as_secs_f64();
        io.other_seconds =
            (seconds - io.sources_seconds - io.cache.load_seconds - io.compute_seconds - io.write_seconds).max(0.0);
        Ok(TaskResult {
            stored: header.popcount,
            states,
            classes,
            evaluations: stats.evaluations,
            kernel: stats,
            file_bytes,
            index_checksum: header.index_checksum,
            seconds,
            io,
        })
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
