//! One target shard `B` of a task, start to end on one thread:
//! [`TaskRunner::gather`] fetches what its kernel reads, [`expand`] runs
//! the kernel, [`prepare`] counts and compresses the output, and
//! [`TaskRunner::settle`] tells the cache what stays. Shards gaining no
//! state (known from the level's sparse map) only have their cache entries
//! moved on ([`TaskRunner::skip`]).

use super::frozen::Source;
use super::level::LevelView;
use super::{TaskError, TaskRunner};
use crate::cache::{Bits, CacheStats, Seen, SeenList, ShardKey};
use crate::slab::Slot;
use cayley_shared::files::format::{list, PreparedShard};
use cayley_shared::kernel::task::{ShardInputs, SourceBits, TaskStats};

/// A target shard with what its kernel reads, held until it is settled.
pub(super) struct Gathered<'v> {
    pub shard: u64,
    /// `F_0(B) ∪ … ∪ F_{d-1}(B)` when at hand; the next level's union is
    /// made from it.
    seen: Option<Slot>,
    /// The set bits of `seen`, where known without reading its words.
    seen_list: SeenList,
    /// `F_{d-1}(B)` when no union is at hand.
    before: Option<Fetched<'v>>,
    /// `F_{d-2}(B) ∪ F_{d-1}(B)` when no union is at hand, level `d - 2`
    /// is still on disk and `F_{d-2}(B)` holds states: bottom-up then does
    /// not probe the states of depth `d - 2`, which cannot be hit. On the
    /// 4×4 Loopover's depth 13 they were more than half the states left
    /// unseen by `F_11 ∪ F_12`.
    wider: Option<Slot>,
    current: Fetched<'v>,
    sources: Vec<(u64, Source<'v>)>,
    /// Where `F_{d+1}(B)` goes.
    pub output: Slot,
}

/// A fetched shard of the target itself, which the kernel reads as words:
/// the cache's, or laid out here when it holds the shard as a list only.
struct Fetched<'v> {
    bits: Source<'v>,
    laid: Option<Slot>,
}

impl Drop for Fetched<'_> {
    /// A laid-out list goes back to the slab cleared (its bits are known).
    fn drop(&mut self) {
        if let (Some(laid), Some(positions)) = (self.laid.take(), self.bits.positions()) {
            laid.release_cleared(positions);
        }
    }
}

impl Fetched<'_> {
    fn words(&self) -> &[u64] {
        match &self.laid {
            Some(laid) => laid,
            None => self.bits.words().expect("held with its words, or laid out"),
        }
    }
}

impl TaskRunner {
    /// `bits` of the target `shard` as words, laid out in a buffer of the
    /// cache's when held as a list only.
    fn lay_out<'v>(&self, shard: u64, bits: Source<'v>) -> Fetched<'v> {
        if bits.words().is_some() {
            return Fetched { bits, laid: None };
        }
        let buffer = self.store.lock(shard).cache.zero_buffer();
        let mut laid = buffer.into_zeroed();
        bits.set_into_zeroed(&mut laid);
        Fetched { bits, laid: Some(laid) }
    }

    /// The inputs of `F_{d+1}(shard)` (`d` the view's level), from the
    /// cache or the checkpoint, and a buffer for its output; `sources` are
    /// its source shards.
    pub(super) fn gather<'v>(
        &self,
        view: &'v LevelView,
        shard: u64,
        sources: Vec<u64>,
        stats: &mut CacheStats,
    ) -> Result<Gathered<'v>, TaskError> {
        let from_level = view.from_level;
        let mut held = self.store.lock(shard);
        // "Seen" is every earlier level when this worker holds their union;
        // otherwise the level before, which suffices for an undirected
        // graph. Every earlier level makes bottom-up probe only the states
        // still unreached, not those found two or more levels ago, which
        // never hit: on the cube's corners, 41% fewer evaluations over the
        // whole search.
        let seen = match held.cache.take_seen(from_level, shard) {
            Some(seen) => Some(seen),
            None if from_level == 0 => Some(Seen::Empty(held.cache.zero_buffer())),
            None => None,
        };
        let output = held.cache.zero_buffer();
        // A directed graph reaches states again at any later depth: its
        // seen set is every earlier level, read here when not held.
        let seen = match seen {
            None if self.ctx.job.directed => {
                drop(held);
                let union = self.union_of_levels(from_level, shard, stats)?;
                held = self.store.lock(shard);
                Some(Seen::Words(union))
            }
            seen => seen,
        };
        drop(held);
        // The stripe is let go of: the union and the output are zeroed or
        // copied now.
        let (seen, seen_list) = match seen.map(Seen::into_listed_words) {
            Some((words, list)) => (Some(words), list),
            None => (None, SeenList::Unknown),
        };
        let output = output.into_zeroed();
        // Shards of the level held still are borrowed from it, or known
        // empty from its bits; the rest, and `F_{d-1}(B)`, are fetched.
        // Every source's entry first, then (below) every entry's contents:
        // their misses overlap (see `prefetch`).
        if let Some(frozen) = &view.frozen {
            sources.iter().for_each(|&s| frozen.prefetch(s));
        }
        let own = self.held_still(view, (from_level, shard), stats);
        let found: Vec<Option<Source<'v>>> = sources
            .iter()
            .map(|&s| self.held_still(view, (from_level, s), stats))
            .collect();
        found.iter().flatten().for_each(|source| source.prefetch());
        let mut keys: Vec<(u32, u64)> = Vec::with_capacity(sources.len() + 2);
        if seen.is_none() {
            keys.push((from_level - 1, shard));
        }
        if own.is_none() {
            keys.push((from_level, shard));
        }
        keys.extend(
            sources
                .iter()
                .zip(&found)
                .filter(|(_, f)| f.is_none())
                .map(|(&s, _)| (from_level, s)),
        );
        let fetched = if keys.is_empty() {
            Vec::new()
        } else {
            self.fetch(&keys, stats)?
        };
        let mut fetched = fetched.into_iter().map(Source::Fetched);
        let before = seen
            .is_none()
            .then(|| self.lay_out(shard, fetched.next().expect("fetched")));
        let current = self.lay_out(shard, own.unwrap_or_else(|| fetched.next().expect("fetched")));
        let sources: Vec<(u64, Source<'v>)> = sources
            .into_iter()
            .zip(found)
            .map(|(s, f)| (s, f.unwrap_or_else(|| fetched.next().expect("fetched"))))
            .collect();
        let wider = match (&before, view.older()) {
            (Some(before), Some(older)) => self.widen(before, older, shard, stats).unwrap_or_else(|e| {
                tracing::warn!("level {} left out of the unseen set: {}", older, e);
                view.give_up_older();
                None
            }),
            _ => None,
        };
        Ok(Gathered {
            shard,
            seen,
            seen_list,
            before,
            wider,
            current,
            sources,
            output,
        })
    }

    /// The shard of `key` from the level held still, borrowed, or the
    /// empty shard where its bits (from its file's index) say so (counted in `stats` as
    /// lookups that hit); `None` when it has to be fetched.
    fn held_still<'v>(&self, view: &'v LevelView, key: ShardKey, stats: &mut CacheStats) -> Option<Source<'v>> {
        let frozen = view.frozen.as_ref()?;
        // Emptiness first: most sources of a sparse level are empty, and
        // then the table is not read (a cache miss fewer).
        let found = if frozen.holds_none(key) {
            Source::Fetched(self.zeros())
        } else {
            Source::Frozen(frozen.get(key)?)
        };
        stats.lookups += 1;
        stats.hits += 1;
        Some(found)
    }

    /// `F_{d-2}(B) ∪ F_{d-1}(B)`, `F_{d-1}(B)` being `before` and `d - 2`
    /// `older`; `None` when `F_{d-2}(B)` is empty (the index says so), for
    /// the union is then `before` itself. On the 4×4 Loopover's depth 8,
    /// 98% of the shards: copying their `F_6(B)` (mostly the shared empty
    /// shard) into a buffer of its own was 3% of a 1-thread run to depth 8.
    fn widen(
        &self,
        before: &Fetched<'_>,
        older: u32,
        shard: u64,
        stats: &mut CacheStats,
    ) -> Result<Option<Slot>, TaskError> {
        if self.indexed_count(older, shard)? == 0 {
            return Ok(None);
        }
        let mut wider = self.store.lock(shard).cache.buffer();
        wider.copy_from_slice(before.words());
        self.or_level_into(older, shard, &mut wider, stats)?;
        Ok(Some(wider))
    }

    /// Lets go of a computed shard's inputs: `F_{d-1}(B)` leaves the cache
    /// (no other task reads it) and the next level's union goes in if
    /// there is room (as a list only when sparse). Returns the output
    /// buffer.
    pub(super) fn settle(&self, from_level: u32, gathered: Gathered<'_>) -> Slot {
        let shard = gathered.shard;
        // The union, its count and its list are made before the lock is
        // taken; none for a last level (no task of the next reads it).
        let current = gathered.current;
        let next_is_read = self.keeps_level(from_level + 1);
        let seen_list = gathered.seen_list;
        let seen = gathered.seen.and_then(|seen| match seen_list.positions() {
            // Not kept: its slot goes back clean where its bits are known.
            Some(positions) if !next_is_read => {
                seen.release_cleared(positions);
                None
            }
            _ => next_is_read.then_some(seen),
        });
        let seen = seen.map(|mut seen| {
            // An empty shard is no list, but as good as an empty one.
            let now = match current.bits.count() {
                0 => Some(&[][..]),
                _ => current.bits.positions(),
            };
            match now {
                Some(positions) => cayley_shared::space::bits::set_positions(&mut seen, positions),
                None => seen.iter_mut().zip(current.words()).for_each(|(s, c)| *s |= c),
            }
            // Levels are disjoint: the union's bits are both lists merged.
            let merged = seen_list.positions().zip(now).map(|(before, now)| merge(before, now));
            let count = match &merged {
                Some(merged) => merged.len() as u64,
                None => cayley_shared::space::bits::popcount(&seen),
            };
            Bits::with_listed_positions(seen, count, self.ctx.position_limit(), merged).list_only()
        });
        // The handles go first, so that the cache can recycle the buffer of
        // `F_{d-1}(B)` instead of unmapping it while this shard still held
        // it (the next buffer would then fault in afresh).
        drop((gathered.before, gathered.wider, current, gathered.sources));
        let output = gathered.output;
        let mut held = self.store.lock(shard);
        if from_level > 0 {
            held.cache.remove((from_level - 1, shard));
        }
        if let Some(union) = seen {
            held.cache.offer_seen(from_level + 1, shard, union);
        }
        output
    }

    /// Lets go of the cache entries of `shards`, which gain no state at
    /// this level: `F_{d-1}` leaves (their unions were carried over when
    /// the level began, `ShardCache::carry_seen_past`). Each stripe is
    /// locked once for the range: the 4×4 Loopover's depths 3–6 pass over
    /// 1.2 million shards this way, and the threads' time in here went from
    /// 115–120 to 81–85 ms of a 2-thread run to depth 8 (three runs each, a
    /// temporary timer).
    pub(super) fn skip(&self, from_level: u32, shards: std::ops::Range<u64>) {
        if shards.is_empty() || from_level == 0 {
            return;
        }
        self.store.each_held_in(shards, |held, shard| {
            held.cache.remove((from_level - 1, shard));
        });
    }
}

/// The sorted union of two sorted lists without a common element.
fn merge(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            merged.push(a[i]);
            i += 1;
        } else {
            merged.push(b[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
}

/// What the kernel reads for `gathered`; `None` when every source is empty
/// (then nothing can be reached: the kernel and its per-shard transitions
/// are skipped). Early and late levels of a big space are mostly such
/// shards (2×7 Loopover, 2,184 shards: level 1 took 261 s before, see
/// docs/history.md).
fn reaches_nothing(gathered: &Gathered<'_>) -> bool {
    gathered.sources.iter().all(|(_, w)| w.count() == 0)
}

/// `F_{d+1}(B)` of one gathered shard into its output, with the positions
/// of its states when the kernel listed them (a shard few enough to be
/// stored as its list); `None`, with the output untouched, when `B` gains
/// nothing. `split` lets the kernel spread the shard over the pool (the
/// last shards of a task, when fewer are left than threads).
pub(super) fn expand(
    runner: &TaskRunner,
    gathered: &mut Gathered<'_>,
    split: bool,
    on_units: &(dyn Fn(u64, u64) + Sync),
) -> Option<(TaskStats, Option<Vec<u32>>)> {
    let ctx = &runner.ctx;
    if reaches_nothing(gathered) {
        on_units(ctx.job.space.units_per_shard(), 0);
        return None;
    }
    let previous: &[u64] = match (&gathered.seen, &gathered.wider, &gathered.before) {
        (Some(seen), _, _) => seen,
        (None, Some(wider), _) => wider,
        (None, None, Some(before)) => before.words(),
        (None, None, None) => unreachable!("gather holds one of the three"),
    };
    // The first line of each source's list, which the kernel reads in
    // turn (the rest follows in order, as the processor's own prefetch
    // sees).
    for (_, w) in &gathered.sources {
        if let Some(positions) = w.positions() {
            crate::prefetch::prefetch(positions.as_ptr());
        }
    }
    let inputs = ShardInputs {
        sources: SourceBits::with_counts(
            gathered
                .sources
                .iter()
                .map(|(s, w)| (*s, w.words().unwrap_or(&[]), w.count(), w.positions()))
                .collect(),
        ),
        previous,
        current: gathered.current.words(),
        split,
        list_up_to: list::most_listed(gathered.output.len() as u64 * 64),
        output_zeroed: true,
    };
    Some(ctx.expand(gathered.shard, &inputs, &mut gathered.output, &|found| {
        on_units(1, found)
    }))
}

/// A computed output of `found` set bits (the kernel's count, and its list
/// of them if it made one) checksummed and listed or compressed for
/// writing, with its classes of states.
pub(super) fn prepare(
    runner: &TaskRunner,
    shard: u64,
    output: &[u64],
    found: u64,
    listed: Option<Vec<u32>>,
) -> std::io::Result<(PreparedShard, u64)> {
    let prepared = PreparedShard::counted_listed(output, found, listed)?;
    let classes = match found {
        0 => 0,
        _ => runner.ctx.job.space.classes_in(shard, output, prepared.popcount()),
    };
    Ok((prepared, classes))
}
