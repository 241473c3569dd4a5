//! One target shard `B` of a task, in three steps: [`TaskRunner::gather`]
//! fetches what its kernel reads through the cache, [`expand_batch`] runs
//! the kernels of a batch of gathered shards side by side on the worker's
//! pool, and [`TaskRunner::settle`] tells the cache what stays.
//!
//! Why batches: on sparse levels a shard's kernel is a few thousand marks
//! on one thread (splitting them costs more than they do), so one shard at
//! a time left every other core idle. On the 4×4 Loopover, depths 7–10 ran
//! at 1.0–1.2 cores of 2 for 1,800 s. Gathering stays sequential: the
//! cache belongs to the worker.

use super::{TaskError, TaskRunner};
use crate::cache::Bits;
use crate::slab::Slot;
use cayley_shared::files::format::PreparedShard;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::kernel::task::{ShardInputs, SourceBits, TaskStats};
use rayon::prelude::*;
use std::collections::BTreeSet;

/// A target shard with what its kernel reads, held until it is settled.
pub(super) struct Gathered {
    pub shard: u64,
    /// `None` when `B` is known to gain no state: it is written empty.
    held: Option<Held>,
}

struct Held {
    /// `F_0(B) ∪ … ∪ F_{d-1}(B)` when at hand; the next level's union is
    /// made from it.
    seen: Option<Slot>,
    /// `F_{d-1}(B)` when no union is at hand.
    before: Option<Bits>,
    /// `F_{d-2}(B) ∪ F_{d-1}(B)` when no union is at hand and level `d - 2`
    /// is still on disk: bottom-up then does not probe the states of depth
    /// `d - 2`, which cannot be hit. On the 4×4 Loopover's depth 13 they
    /// were more than half the states left unseen by `F_11 ∪ F_12`.
    wider: Option<Slot>,
    current: Bits,
    sources: Vec<(u64, Bits)>,
}

impl TaskRunner {
    /// The inputs of `F_{from_level+1}(shard)`, from the cache or the
    /// checkpoint; `sources` are its source shards from
    /// [`Self::sources_of`], `None` when it is known to gain nothing.
    pub(super) fn gather(
        &mut self,
        from_level: u32,
        shard: u64,
        sources: Option<BTreeSet<u64>>,
    ) -> Result<Gathered, TaskError> {
        let Some(source_shards) = sources else {
            if from_level > 0 {
                self.cache.remove((from_level - 1, shard));
            }
            // F_d(B) is empty: the union of earlier levels carries over as is.
            self.cache.carry_seen(from_level, shard);
            return Ok(Gathered { shard, held: None });
        };
        // "Seen" is every earlier level when this worker holds their union
        // (or must read it: a directed graph reaches states again at any
        // later depth); otherwise the level before, which suffices for an
        // undirected graph. Every earlier level makes bottom-up probe only
        // the states still unreached, not those found two or more levels
        // ago, which never hit: on the cube's corners, 41% fewer
        // evaluations over the whole search.
        let seen = match self.cache.take_seen(from_level, shard) {
            Some(seen) => Some(seen),
            None if from_level == 0 => Some(self.cache.zeroed()),
            None if self.ctx.job.directed => Some(self.union_of_levels(from_level, shard)?),
            None => None,
        };
        let before = match seen {
            Some(_) => None,
            None => Some(self.shard(from_level - 1, shard)?),
        };
        let wider = match (&before, self.older) {
            (Some(before), Some(older)) => {
                let mut wider = self.cache.buffer();
                wider.copy_from_slice(before.words());
                let mut buffer = self.cache.buffer();
                match self.or_level_into(older, shard, &mut wider, &mut buffer) {
                    Ok(()) => Some(wider),
                    Err(e) => {
                        // Level d-2 only takes states out of the unseen set
                        // that no probe can hit: the level goes on without
                        // it (same table, more probes) rather than failing
                        // a task on an input the coordinator cannot repair.
                        tracing::warn!("level {} left out of the unseen set: {}", older, e);
                        self.older = None;
                        None
                    }
                }
            }
            _ => None,
        };
        let current = self.shard(from_level, shard)?;
        let mut sources = Vec::new();
        for s in source_shards {
            sources.push((s, self.shard(from_level, s)?));
        }
        let held = Held {
            seen,
            before,
            wider,
            current,
            sources,
        };
        Ok(Gathered {
            shard,
            held: Some(held),
        })
    }

    /// The source shards of each shard of `group`, `None` for those known
    /// to gain nothing. Worked out in parallel: on a sparse level of a
    /// reduced space this (24 canonical keys per shard on the 4×4) costs
    /// more than the kernel.
    pub(super) fn sources_of(&self, group: &[u64]) -> Vec<Option<BTreeSet<u64>>> {
        let (ctx, targets) = (&self.ctx, &self.targets);
        let one = |&shard: &u64| (!gains_nothing(targets, shard)).then(|| ctx.source_shards(shard));
        if group.iter().filter(|&&shard| !gains_nothing(targets, shard)).count() < 2 {
            return group.iter().map(one).collect();
        }
        group.par_iter().map(one).collect()
    }

    /// Lets go of a computed shard's inputs: `F_{d-1}(B)` leaves the cache
    /// (no other task reads it) and the next level's union goes in if
    /// there is room.
    pub(super) fn settle(&mut self, from_level: u32, gathered: Gathered) {
        let Some(held) = gathered.held else {
            return;
        };
        let Held {
            seen,
            before,
            current,
            sources,
            ..
        } = held;
        // The handles go first, so that the cache can recycle the buffer of
        // `F_{d-1}(B)` instead of unmapping it while this shard still held
        // it (the next buffer would then fault in afresh).
        drop((before, sources));
        if from_level > 0 {
            self.cache.remove((from_level - 1, gathered.shard));
        }
        if let Some(mut seen) = seen {
            seen.iter_mut().zip(current.words()).for_each(|(s, c)| *s |= c);
            self.cache.offer_seen(from_level + 1, gathered.shard, seen);
        }
    }
}

/// Runs the kernel of each gathered shard into the output of the same
/// index, all at once on the current pool; one shard runs here directly.
/// `None` for a shard known to gain nothing: its output is left as it was
/// (see [`expand_one`]).
pub(super) fn expand_batch(
    ctx: &SearchContext,
    zeros: &Bits,
    batch: &[Gathered],
    outputs: &mut [Slot],
    on_unit: &(dyn Fn(u64) + Sync),
) -> Vec<Option<TaskStats>> {
    let computed = batch.iter().filter(|g| kernel_inputs(g, zeros).is_some()).count();
    // With at least a shard per thread, each kernel stays on its thread:
    // splitting one too only makes the threads mark into the same shard.
    let split = computed < rayon::current_num_threads();
    let one = |(gathered, out): (&Gathered, &mut Slot)| expand_one(ctx, zeros, gathered, out, split, on_unit);
    // Waking the pool for shards written empty costs more than writing
    // them (4×4 depths 1–5: 12 s a level instead of 5 s).
    if computed < 2 {
        return batch.iter().zip(outputs.iter_mut()).map(one).collect();
    }
    batch.par_iter().zip(outputs.par_iter_mut()).map(one).collect()
}

/// Each computed output of a batch prepared for writing (counted,
/// checksummed, compressed) with its classes of states, side by side on
/// the current pool as [`expand_batch`] ran them; `None` where nothing was
/// computed.
pub(super) fn prepare_batch(
    ctx: &SearchContext,
    batch: &[Gathered],
    outputs: &[Slot],
    found: &[Option<TaskStats>],
) -> std::io::Result<Vec<Option<(PreparedShard, u64)>>> {
    let one = |((gathered, out), found): ((&Gathered, &Slot), &Option<TaskStats>)| {
        found
            .map(|found| {
                let prepared = PreparedShard::new(out)?;
                let classes = match found.found {
                    0 => 0,
                    _ => ctx.job.space.classes_in(gathered.shard, out),
                };
                Ok((prepared, classes))
            })
            .transpose()
    };
    if found.iter().filter(|f| f.is_some()).count() < 2 {
        return batch.iter().zip(outputs).zip(found).map(one).collect();
    }
    batch
        .par_iter()
        .zip(outputs.par_iter())
        .zip(found.par_iter())
        .map(one)
        .collect()
}

/// What the kernel reads for `gathered`; `None` when it is written empty.
fn kernel_inputs<'a>(gathered: &'a Gathered, zeros: &Bits) -> Option<&'a Held> {
    // Sources the chunk index shows empty are all one shared buffer. When
    // every source is, nothing can be reached: skip the kernel and its
    // per-shard transitions. Early and late levels of a big space are
    // mostly such shards (2×7 Loopover, 2,184 shards: level 1 took 261 s
    // before, see BENCHMARKS.md).
    gathered
        .held
        .as_ref()
        .filter(|h| !h.sources.iter().all(|(_, w)| w.same(zeros)))
}

/// True when the running level's sparse map says `shard` gains no state.
fn gains_nothing(targets: &Option<Vec<u64>>, shard: u64) -> bool {
    targets
        .as_ref()
        .is_some_and(|bits| bits[(shard / 64) as usize] >> (shard % 64) & 1 == 0)
}

/// `F_{d+1}(B)` of one gathered shard into `out`; `None`, with `out`
/// untouched, when `B` gains nothing. Such shards are written as empty
/// index entries without zeroing or counting their words: on the 4×4
/// Loopover's first levels nearly all of the 499,961 shards are, and
/// zeroing and popcounting their 40.5 KiB took 0.65 s a level.
fn expand_one(
    ctx: &SearchContext,
    zeros: &Bits,
    gathered: &Gathered,
    out: &mut [u64],
    split: bool,
    on_unit: &(dyn Fn(u64) + Sync),
) -> Option<TaskStats> {
    let Some(held) = kernel_inputs(gathered, zeros) else {
        (0..ctx.job.space.units_per_shard()).for_each(|_| on_unit(0));
        return None;
    };
    let previous: &[u64] = match (&held.seen, &held.wider, &held.before) {
        (Some(seen), _, _) => seen,
        (None, Some(wider), _) => wider,
        (None, None, Some(before)) => before.words(),
        (None, None, None) => unreachable!("gather holds one of the three"),
    };
    let inputs = ShardInputs {
        sources: SourceBits::with_counts(held.sources.iter().map(|(s, w)| (*s, w.words(), w.count())).collect()),
        previous,
        current: held.current.words(),
        split,
    };
    Some(ctx.expand(gathered.shard, &inputs, out, on_unit))
}
