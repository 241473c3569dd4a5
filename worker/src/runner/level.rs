//! What every task of the running level shares: the level it reads, whether
//! level `d - 2` is on disk to leave out of the unseen set, and (on sparse
//! levels) which shards can gain states at all. Worked out by the level's
//! first task while the others of that level wait; tasks of another level
//! wait until the running ones are done, since a new level drops what the
//! old one read from the cache.
//!
//! The same lock counts the worker's idle time: how long no task of its
//! was computing, between the end of one and the start of the next (the
//! report, the lease, and the wait for a level to close). Each task
//! reports the idle time that ended when it started.

use super::frozen::{FrozenLevel, KnownEmpty};
use super::reached::only_open;
use super::{TaskError, TaskRunner};
use crate::cache::Bits;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Non-empty shards whose targets are worked out at once in
/// [`TaskRunner::sparse_targets`].
const TARGET_BATCH: usize = 4096;

/// Chunk indexes read at once per thread in
/// [`TaskRunner::sparse_targets`]: a dense level stops the reading after a
/// quarter of its shards, so not every index is read at once.
const INDEXES_PER_THREAD: usize = 4;

/// The running level, as its tasks see it.
pub(super) struct LevelView {
    /// The level tasks read (`d`); they write `d + 1`.
    pub from_level: u32,
    /// `d - 2` while level `d - 2` is still on disk.
    older: Option<u32>,
    /// Set when reading level `d - 2` failed: the level goes on without it.
    older_failed: AtomicBool,
    /// One bit per shard that can gain states, where that is known: while
    /// the level read is sparse (the shards it reaches), and once some
    /// shards have every state reached (the others; see `reached`). Every
    /// other shard's task is written empty without working out its
    /// sources.
    pub targets: Option<Vec<u64>>,
    /// The chunks of which every shard gains nothing (from `targets`),
    /// until a task of the level takes them to report.
    gaining_nothing: Mutex<Vec<u64>>,
    /// The shards of level `d` held when the level began, which its tasks
    /// read without the cache's locks (see [`FrozenLevel`]).
    pub frozen: Option<FrozenLevel>,
}

impl LevelView {
    /// Level `d - 2`, when it is on disk and readable.
    pub fn older(&self) -> Option<u32> {
        self.older.filter(|_| !self.older_failed.load(Ordering::Relaxed))
    }

    /// Level `d - 2` only takes states out of the unseen set that no probe
    /// can hit: after a failure to read it, the level goes on without it
    /// (same table, more probes) rather than failing tasks on an input
    /// the coordinator cannot repair.
    pub fn give_up_older(&self) {
        self.older_failed.store(true, Ordering::Relaxed);
    }

    /// The chunks of the level, other than `own`, that gain nothing, for
    /// the first task to ask (empty for the others): the coordinator then
    /// records them without a task each. On the 4×4 Loopover's depths 1–4
    /// that is 219–307 of 309 tasks a level, each a lease, a report and
    /// half a millisecond of CPU on both sides of the link.
    pub fn take_gaining_nothing(&self, own: u64) -> Vec<u64> {
        let mut chunks = std::mem::take(&mut *self.gaining_nothing.lock().unwrap_or_else(|e| e.into_inner()));
        chunks.retain(|&c| c != own);
        chunks
    }

    /// The shards that may hold states of `level`, when this view wrote
    /// that level and knew its sparse map: every other shard's task was
    /// written empty.
    fn map_of(&self, level: u32) -> Option<Vec<u64>> {
        (self.from_level + 1 == level).then(|| self.targets.clone()).flatten()
    }

    /// True when the sparse map says `shard` gains no state.
    pub fn gains_nothing(&self, shard: u64) -> bool {
        self.targets
            .as_ref()
            .is_some_and(|bits| bits[(shard / 64) as usize] >> (shard % 64) & 1 == 0)
    }
}

/// The running level and the worker's idle time.
#[derive(Default)]
pub(super) struct Levels {
    slot: Mutex<Slot>,
    /// Signalled when a task leaves.
    left: Condvar,
    /// Items claimed and not yet done with, all tasks together.
    working: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    view: Option<Arc<LevelView>>,
    /// Tasks computing now.
    running: usize,
    /// When the last task left, while none is running.
    idle_since: Option<Instant>,
    /// Idle seconds not yet reported.
    idle: f64,
}

/// A task's hold on its level; leaving it (on drop) lets tasks of another
/// level start.
pub(super) struct Entered<'a> {
    levels: &'a Levels,
    pub view: Arc<LevelView>,
    /// Seconds no task of this worker computed before this one started.
    pub idle_seconds: f64,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        let mut slot = self.levels.lock();
        slot.running -= 1;
        if slot.running == 0 {
            slot.idle_since = Some(Instant::now());
        }
        self.levels.left.notify_all();
    }
}

impl Levels {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Items this worker's threads are computing or writing now, all
    /// tasks together (see `pipeline`).
    pub(super) fn working(&self) -> usize {
        self.working.load(Ordering::Relaxed)
    }

    /// Counts an item claimed (`true`) or done with (`false`).
    pub(super) fn note_working(&self, started: bool) {
        if started {
            self.working.fetch_add(1, Ordering::Relaxed);
        } else {
            self.working.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl TaskRunner {
    /// Enters level `from_level` for one task: waits while tasks of another
    /// level run, and begins the level if it is new.
    pub(super) fn enter(&self, from_level: u32) -> Result<Entered<'_>, TaskError> {
        let levels = &self.levels;
        let mut slot = levels.lock();
        let current = |slot: &Slot| slot.view.as_ref().map(|v| v.from_level);
        while slot.running > 0 && current(&slot) != Some(from_level) {
            slot = levels.left.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
        if current(&slot) != Some(from_level) {
            // A failure to work out the sparse map leaves the level to the
            // slow path (every shard's sources worked out).
            let last = slot.view.take().and_then(Arc::into_inner);
            let may_hold = last.as_ref().and_then(|last| last.map_of(from_level));
            let table = match last.and_then(|last| last.frozen) {
                Some(frozen) => self.pool.install(|| frozen.release()),
                None => Vec::new(),
            };
            let (mut view, targets) = self.begin_level(from_level, table, may_hold);
            match targets {
                Ok(targets) => {
                    view.targets = targets;
                    if let Some(targets) = &view.targets {
                        let carrying = Instant::now();
                        let shards = self.ctx.job.space.shards();
                        self.store.carry_seen_past(from_level, targets, shards);
                        tracing::debug!(
                            "level {}: seen sets of the shards gaining nothing carried over in {:.1} ms",
                            from_level,
                            carrying.elapsed().as_secs_f64() * 1e3
                        );
                    }
                    let chunking = &self.ctx.job.chunking;
                    let empty =
                        (0..chunking.chunks()).filter(|&c| chunking.shards_of(c).all(|s| view.gains_nothing(s)));
                    view.gaining_nothing = Mutex::new(empty.collect());
                }
                Err(e) => {
                    slot.view = Some(Arc::new(view));
                    return Err(e);
                }
            }
            slot.view = Some(Arc::new(view));
        }
        slot.running += 1;
        if let Some(since) = slot.idle_since.take() {
            slot.idle += since.elapsed().as_secs_f64();
        }
        let idle_seconds = std::mem::take(&mut slot.idle);
        let view = slot.view.clone().expect("set above");
        Ok(Entered {
            levels,
            view,
            idle_seconds,
        })
    }

    /// A new level: shards of levels no task reads again leave the cache;
    /// returns its view and its sparse map (worked out last).
    /// `table` is the last level's table of shards held still, emptied,
    /// for this level's (see [`FrozenLevel::new`]); `may_hold`, where the
    /// last level's sparse map is known, the shards that may hold states
    /// of `from_level` (see [`Self::freeze`]).
    #[allow(clippy::type_complexity)]
    fn begin_level(
        &self,
        from_level: u32,
        table: Vec<Option<Bits>>,
        may_hold: Option<Vec<u64>>,
    ) -> (LevelView, Result<Option<Vec<u64>>, TaskError>) {
        self.store.each_stripe(|held| {
            held.cache.drop_levels_below(from_level.saturating_sub(1));
            held.cache.drop_covered(from_level);
        });
        self.store.files_mut().retain_levels_from(from_level.saturating_sub(1));
        let freezing = Instant::now();
        let frozen = self
            .pool
            .install(|| self.freeze(from_level, table, may_hold.as_deref()));
        if let Some(frozen) = &frozen {
            tracing::debug!(
                "level {}: {} shards and {} chunk files held still for its tasks in {:.1} ms",
                from_level,
                frozen.len(),
                frozen.readers(),
                freezing.elapsed().as_secs_f64() * 1e3
            );
        }
        // F_{d-2} is on disk when the coordinator kept it (it holds more
        // states than remain unseen) or as an early level `last2` keeps;
        // its states then leave the kernel's unseen set.
        let older = from_level
            .checked_sub(2)
            .filter(|&l| l > 0 && self.checkpoint.level_dir(l).is_dir());
        self.ctx.begin_level();
        let view = LevelView {
            from_level,
            older,
            older_failed: AtomicBool::new(false),
            targets: None,
            gaining_nothing: Mutex::new(Vec::new()),
            frozen,
        };
        let mapping = Instant::now();
        let known = KnownEmpty::new(from_level, may_hold.as_deref(), view.frozen.as_ref());
        let targets = self.sparse_targets(from_level, known, view.frozen.as_ref());
        if let Ok(Some(map)) = &targets {
            tracing::debug!(
                "level {}: sparse map of {} target shards in {:.1} ms",
                from_level,
                cayley_shared::space::bits::popcount(map),
                mapping.elapsed().as_secs_f64() * 1e3
            );
        }
        let counting = Instant::now();
        let open = self.open_shards(from_level, known);
        if let Some(open) = &open {
            tracing::debug!(
                "level {}: {} shards with states left to reach, counted in {:.1} ms",
                from_level,
                cayley_shared::space::bits::popcount(open),
                counting.elapsed().as_secs_f64() * 1e3
            );
        }
        (view, targets.map(|sparse| only_open(sparse, open)))
    }

    /// The shards of level `level` the cache holds, held still for the
    /// level's tasks (see [`FrozenLevel`]), with the level's chunk files,
    /// opened on the pool where not open yet (each would be opened by the
    /// level's first lookup in it anyway), unless they are more than half
    /// the files a worker keeps open. A chunk with no shard in `may_hold`
    /// (the shards the last level's sparse map let gain states) is empty
    /// and stays closed: the 4×4 Loopover's depths 1–4 hold states in
    /// 1–91 of their 309 chunks, and each level opened them all (its run to
    /// depth 8 made 5,282 `openat` calls, now 4,138).
    fn freeze(&self, level: u32, table: Vec<Option<Bits>>, may_hold: Option<&[u64]>) -> Option<FrozenLevel> {
        use rayon::prelude::*;
        let frozen = self.store.freeze(level, self.ctx.job.space.shards(), table)?;
        let chunking = &self.ctx.job.chunking;
        if chunking.chunks() as usize > self.store.file_capacity() / 2 {
            return Some(frozen);
        }
        let known = KnownEmpty::new(level, may_hold, None);
        let readers = (0..chunking.chunks())
            .into_par_iter()
            .map(|chunk| {
                let shards = chunking.shards_of(chunk);
                if known.none_in(level, shards.clone()) {
                    return None;
                }
                self.readers_of(&[(level, shards.start)]).ok()?.pop().flatten()
            })
            .collect();
        Some(frozen.with_readers(readers, chunking, may_hold))
    }

    /// The shards of `chunk` holding states of `level`, from its index.
    fn nonempty_shards(&self, level: u32, chunk: u64) -> Result<Vec<u64>, TaskError> {
        let first = self.ctx.job.chunking.shards_of(chunk).start;
        let reader = self
            .readers_of(&[(level, first)])?
            .pop()
            .flatten()
            .expect("a level above 0 has files");
        Ok(reader.nonempty().map(|(i, _)| first + i as u64).collect())
    }

    /// The shards that can hold states of level `level + 1`, as a bitmap,
    /// when level `level` is sparse: the level's non-empty shards (from the
    /// chunk indexes) and the shards that read them. Working out one
    /// shard's sources costs as much as one shard's targets, so this pays
    /// while at most a quarter of the shards hold states; `None` above that,
    /// or where the space has no cheap map from sources to targets. The 4×4
    /// Loopover's first levels (499,961 shards, a few thousand states) took
    /// minutes each, all of it in working out every shard's sources.
    ///
    /// The non-empty shards come from `frozen`'s map of them when the
    /// level is held still (read from the same indexes when it began);
    /// otherwise from the indexes of the chunks `known` cannot tell empty.
    fn sparse_targets(
        &self,
        level: u32,
        known: KnownEmpty,
        frozen: Option<&FrozenLevel>,
    ) -> Result<Option<Vec<u64>>, TaskError> {
        let job = &self.ctx.job;
        let shards = job.space.shards();
        if self.ctx.target_shards(job.solved_shard()).is_none() {
            return Ok(None);
        }
        use rayon::prelude::*;
        let limit = shards / 4;
        let mut nonempty = Vec::new();
        if level == 0 {
            nonempty.push(job.solved_shard());
        } else if let Some(listed) = frozen.and_then(|f| f.nonempty_shards(level)) {
            nonempty.extend(listed.take(limit as usize + 1));
            if nonempty.len() as u64 > limit {
                return Ok(None);
            }
        } else {
            // The chunk indexes a few per thread at a time, on the pool,
            // since every task of the level waits for this map. One after
            // the other they took 10–70 ms of each of the 4×4's levels 1–7
            // at any thread count (179 ms in all); on 2 threads 136–150 ms.
            // Only the chunks that may hold states: the 15-puzzle's 20,808
            // indexes a level, too many files to hold the level's open, took
            // 110–137 ms of each of its sparse levels.
            let chunking = &job.chunking;
            let chunks: Vec<u64> = (0..chunking.chunks())
                .filter(|&c| !known.none_in(level, chunking.shards_of(c)))
                .collect();
            for batch in chunks.chunks(INDEXES_PER_THREAD * self.threads()) {
                let found: Vec<Vec<u64>> = self.pool.install(|| {
                    batch
                        .par_iter()
                        .map(|&chunk| self.nonempty_shards(level, chunk))
                        .collect::<Result<_, _>>()
                })?;
                nonempty.extend(found.into_iter().flatten());
                if nonempty.len() as u64 > limit {
                    return Ok(None);
                }
            }
        }
        let mut bits = vec![0u64; shards.div_ceil(64) as usize];
        let mut set = |shard: u64| bits[(shard / 64) as usize] |= 1 << (shard % 64);
        // In batches: the targets of every source at once would be up to
        // 24 entries per non-empty shard (24 MB on the 4×4).
        for batch in nonempty.chunks(TARGET_BATCH) {
            let targets: Vec<Vec<u64>> = self.pool.install(|| {
                batch
                    .par_iter()
                    .map(|&a| self.ctx.target_shards(a).expect("checked above"))
                    .collect()
            });
            batch
                .iter()
                .chain(targets.iter().flatten())
                .for_each(|&shard| set(shard));
        }
        Ok(Some(bits))
    }
}
