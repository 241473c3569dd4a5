//! Decompressed shards of the checkpoint, held within a byte budget.
//!
//! A task reads, for each of its target shards, the shard's sources (one
//! per move) and its two earlier levels. Holding everything a worker ever
//! read made a worker grow to whole levels; this cache keeps at most
//! `budget` bytes and evicts in this order:
//! 1. shards of levels no task will read again (below the running level
//!    minus one),
//! 2. the least recently used shard not in use by the running computation.
//!
//! Empty shards (popcount 0, known from a chunk's index) are never stored:
//! sparse levels cost nothing here. Every buffer comes from the worker's
//! [`Slab`], so the cache's memory is slots of one mapping, never heap
//! holes; a shard with at most one bit in 256 may instead be held as the
//! list of its bits (on the heap, at most an eighth of a slot, charged to
//! the budget with its bookkeeping).

mod bits;
mod seen;

use crate::slab::{Slab, Slot, ZeroSlot};
use bits::Held;
pub use bits::{Bits, Seen, SeenList};
use std::collections::{BTreeMap, HashMap};

/// `(level, shard)`; a level with the `SEEN` bit set names the union of the
/// shard's levels below it instead.
pub type ShardKey = (u32, u64);

/// Tag of a key's level for `F_0(B) ∪ … ∪ F_{L-1}(B)`, the "seen" set a
/// task of level `L` may use in place of `F_{L-1}(B)`.
const SEEN: u32 = 1 << 31;

/// What the cache charges a shard held as a list only besides the list:
/// its entry in the map and in the LRU order and its shared handle, twice
/// their sizes for the tables' spare room and the allocator's headers. A
/// slot's bytes cover these for a shard held whole; without a charge, a
/// level of lists of a few bits each (the 4×4 Loopover's depth 7, 6.6 bits
/// a shard on average) would hold more in bookkeeping than in bits,
/// uncounted.
const LIST_ENTRY_BYTES: u64 = 2
    * (std::mem::size_of::<(ShardKey, Entry)>()
        + std::mem::size_of::<(u64, ShardKey)>()
        + std::mem::size_of::<Held>()
        + 2 * std::mem::size_of::<usize>()) as u64;

/// Counters of the cache's use, kept by its callers (per thread, then
/// summed per task).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheStats {
    /// Shards asked for.
    pub lookups: u64,
    /// Shards found in memory.
    pub hits: u64,
    /// Compressed bytes read from the checkpoint on misses.
    pub bytes_read: u64,
    /// Seconds spent reading and verifying missed shards.
    pub load_seconds: f64,
}

struct Entry {
    bits: Bits,
    /// Bytes charged: a shard unless held as a list only, and its list of
    /// positions if any.
    bytes: u64,
    /// Last use.
    tick: u64,
    /// The tick it is filed under in `order` (its last use when it was
    /// filed; a hit only moves `tick`, see [`ShardCache::evict_one`]).
    queued: u64,
}

/// Keys are small integers: a fast hash (hits are most of a sparse level's
/// bookkeeping; see [`ShardCache::get`]).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The cache.
pub struct ShardCache {
    budget: u64,
    /// Bytes the cache holds at most now: the budget, or less while the
    /// process's resident memory passes its budget (see
    /// `runner::resident`).
    limit: u64,
    used: u64,
    /// Bytes of one shard.
    shard_bytes: u64,
    tick: u64,
    /// Ticks below this are handed to low-priority entries (oldest first).
    low_tick: u64,
    entries: Map<ShardKey, Entry>,
    /// Entries by the tick they were filed under, oldest first; an entry
    /// used since is refiled when eviction reaches it.
    order: BTreeMap<u64, ShardKey>,
    /// Where every shard buffer of the worker comes from.
    slab: Slab,
    /// Buffers handed out beyond the slab (it was exhausted): 0 unless the
    /// worker's sizing is wrong.
    pub overflow: u64,
    /// Highest resident bytes seen.
    pub peak: u64,
    /// Unions known to be empty, by the level they are below: one bit per
    /// shard. An empty union is a bit here, not a shard-sized buffer: on
    /// the 4×4 Loopover's first levels nearly every shard's union is empty,
    /// and as buffers they filled the whole budget with zeros (10 GB of
    /// RSS at depth 1).
    empty_seen: BTreeMap<u32, Vec<u64>>,
}

/// Ticks of ordinary use start here; low-priority inserts count down from it.
const TICK_BASE: u64 = 1 << 62;

impl ShardCache {
    /// A cache of at most `budget` bytes of shards of `shard_bytes` each,
    /// taking its buffers (and handing out others) from `slab`.
    pub fn new(budget: u64, shard_bytes: u64, slab: Slab) -> ShardCache {
        ShardCache {
            budget,
            limit: budget,
            used: 0,
            shard_bytes,
            tick: TICK_BASE,
            low_tick: TICK_BASE,
            entries: Map::default(),
            order: BTreeMap::new(),
            slab,
            overflow: 0,
            peak: 0,
            empty_seen: BTreeMap::new(),
        }
    }

    /// The byte budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Holds at most `limit` bytes from now on (at most the budget):
    /// evicts least recently used shards not in use down to it.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit.min(self.budget);
        self.make_room_for(0);
    }

    /// Handles on every shard of `level` held, and the bytes they are
    /// charged.
    pub fn shards_of_level(&self, level: u32) -> (Vec<(u64, Bits)>, u64) {
        let mut bytes = 0;
        let shards = self
            .entries
            .iter()
            .filter(|(&(l, _), _)| l == level)
            .map(|(&(_, shard), entry)| {
                bytes += entry.bytes;
                (shard, entry.bits.clone())
            })
            .collect();
        (shards, bytes)
    }

    /// Bytes held.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Slots of the worker's slab ever handed out (see [`Slab::touched`]).
    pub fn slots_touched(&self) -> usize {
        self.slab.touched()
    }

    /// True when one more shard fits without evicting anything.
    pub fn has_room(&self) -> bool {
        self.used + self.shard_bytes <= self.limit
    }

    /// Entries held for tasks of `level`: its shards, and the unions of
    /// the levels below it.
    #[cfg(test)]
    pub fn held_for(&self, level: u32) -> usize {
        self.entries.keys().filter(|&&(l, _)| l & !SEEN == level).count()
    }

    /// Number of shards held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A shard-sized buffer of unspecified contents from the slab. When the
    /// slab is exhausted, the least recently used shard not in use gives
    /// up its slot; only when every slot is in use does the buffer come
    /// from the heap (counted in [`Self::overflow`]).
    pub fn buffer(&mut self) -> Slot {
        self.buffer_from(Slab::take, Slot::heap)
    }

    /// A buffer to be used all zero (see [`Slab::take_zeroed`]).
    pub fn zero_buffer(&mut self) -> ZeroSlot {
        self.buffer_from(Slab::take_zeroed, ZeroSlot::heap)
    }

    /// A free slot of the slab by `take`, evicting shards until one is
    /// free, or a buffer of the heap by `heap` when none is left.
    fn buffer_from<T>(&mut self, take: impl Fn(&Slab) -> Option<T>, heap: impl FnOnce(usize) -> T) -> T {
        loop {
            if let Some(slot) = take(&self.slab) {
                return slot;
            }
            if !self.evict_one() {
                self.overflow += 1;
                return heap(self.slab.slot_words());
            }
        }
    }

    /// A buffer to load a shard into that [`Self::admit`] will keep: the
    /// least recently used shards not in use make room for it first.
    pub fn buffer_for_load(&mut self) -> Slot {
        self.make_room();
        self.buffer()
    }

    /// The shard `key`, from memory or from `load`, which reads it from the
    /// checkpoint into the buffer it is given (of unspecified contents) and
    /// returns it with its set bits and the compressed bytes read; counted
    /// in `stats`. (The worker's threads use [`Self::lookup`] and
    /// [`Self::admit`] instead, so that loads run outside its lock.)
    pub fn get<E>(
        &mut self,
        key: ShardKey,
        stats: &mut CacheStats,
        load: impl FnOnce(Slot) -> Result<(Slot, u64, u64), E>,
    ) -> Result<Bits, E> {
        stats.lookups += 1;
        if let Some(bits) = self.lookup(key) {
            stats.hits += 1;
            return Ok(bits);
        }
        let started = std::time::Instant::now();
        let buffer = self.buffer_for_load();
        let (words, count, read) = load(buffer)?;
        stats.load_seconds += started.elapsed().as_secs_f64();
        stats.bytes_read += read;
        Ok(self.admit(key, Bits::new(words, count)))
    }

    /// The shard `key` if held, noted as just used.
    pub fn lookup(&mut self, key: ShardKey) -> Option<Bits> {
        self.tick += 1;
        let entry = self.entries.get_mut(&key)?;
        // A hit only notes the tick: refiling in `order` here (a BTreeMap
        // removal and insertion per hit) was most of the 4×4 Loopover's
        // 13 million lookups at depth 8.
        entry.tick = self.tick;
        Some(entry.bits.clone())
    }

    /// Keeps `bits`, just loaded as `key`, if there is room once the least
    /// recently used shards not in use are gone; returns the shard held
    /// under `key`: `bits`, or what another thread loaded first.
    pub fn admit(&mut self, key: ShardKey, bits: Bits) -> Bits {
        if let Some(held) = self.lookup(key) {
            return held;
        }
        self.tick += 1;
        self.insert_at(key, bits.clone(), self.tick);
        bits
    }

    /// Adds a shard the worker computed itself (the next level's input), as
    /// the first candidate for eviction: it must not push out the running
    /// level's sources, but if it stays, the next level finds it here.
    /// Returns false (and keeps nothing) when there is no free room.
    pub fn offer(&mut self, key: ShardKey, bits: Bits) -> bool {
        if self.entries.contains_key(&key) || self.used + bits.bytes(self.shard_bytes) > self.limit {
            return false;
        }
        self.low_tick -= 1;
        self.insert_at(key, bits, self.low_tick);
        true
    }

    /// Forgets one shard (it will not be read again).
    pub fn remove(&mut self, key: ShardKey) {
        if let Some(entry) = self.entries.remove(&key) {
            self.order.remove(&entry.queued);
            self.used -= entry.bytes;
        }
    }

    /// Forgets every shard of levels below `level`, which no task reads
    /// again, and the unions a task of level `level` or earlier would use
    /// (tasks run from level `level + 1` on).
    pub fn drop_levels_below(&mut self, level: u32) {
        let dead: Vec<ShardKey> = self
            .entries
            .keys()
            .filter(|&&(l, _)| if l & SEEN != 0 { l & !SEEN <= level } else { l < level })
            .copied()
            .collect();
        for key in dead {
            self.remove(key);
        }
        self.empty_seen.retain(|&below, _| below > level);
    }

    /// Forgets `F_{level-1}(B)` of every shard `B` whose union below
    /// `level` is held, and returns how many shards went.
    /// Only the task of `B` at level `level` reads `F_{level-1}(B)`, and
    /// only when it has no union (see `runner/shard.rs`): with one, that
    /// shard is dead weight until the task settles. Kept, it made the
    /// worker hold four levels' worth at a level's start: the level below,
    /// the running level, the unions and the outputs offered for the next
    /// (a one-shard puzzle held four shard buffers where three suffice).
    /// A union evicted later only costs a read of `F_{level-1}(B)` from the
    /// checkpoint, where it stays while level `level` runs.
    pub fn drop_covered(&mut self, level: u32) -> usize {
        let Some(below) = level.checked_sub(1) else {
            return 0;
        };
        let covered: Vec<u64> = self
            .entries
            .keys()
            .filter(|&&(l, shard)| l == SEEN | level && self.entries.contains_key(&(below, shard)))
            .map(|&(_, shard)| shard)
            .collect();
        for &shard in &covered {
            self.remove((below, shard));
        }
        covered.len()
    }

    fn insert_at(&mut self, key: ShardKey, bits: Bits, tick: u64) {
        let bytes = bits.bytes(self.shard_bytes);
        self.make_room_for(bytes);
        if self.used + bytes > self.limit {
            // Everything left is in use by the running computation; the
            // caller still gets its shard, it is just not kept.
            return;
        }
        self.used += bytes;
        self.peak = self.peak.max(self.used);
        self.order.insert(tick, key);
        self.entries.insert(
            key,
            Entry {
                bits,
                bytes,
                tick,
                queued: tick,
            },
        );
    }

    /// Evicts least recently used shards not in use until one more fits.
    fn make_room(&mut self) {
        self.make_room_for(self.shard_bytes);
    }

    /// Evicts least recently used shards not in use until `bytes` more fit.
    fn make_room_for(&mut self, bytes: u64) {
        while self.used + bytes > self.limit {
            if !self.evict_one() {
                return;
            }
        }
    }

    /// Evicts the least recently used shard not in use; false when every
    /// shard held is in use by the running computation.
    /// Entries used since they were filed are refiled under their last use
    /// on the way, so the victim is the one exact LRU order would pick.
    fn evict_one(&mut self) -> bool {
        let mut from = 0;
        loop {
            let Some((&queued, &key)) = self.order.range(from..).next() else {
                return false;
            };
            let entry = self.entries.get_mut(&key).expect("every filed key is held");
            if entry.tick != queued {
                // Refiled later than `queued`: reached again further on.
                self.order.remove(&queued);
                self.order.insert(entry.tick, key);
                entry.queued = entry.tick;
                continue;
            }
            if entry.bits.in_use() {
                from = queued + 1;
                continue;
            }
            let entry_bytes = entry.bytes;
            self.order.remove(&queued);
            self.entries.remove(&key);
            self.used -= entry_bytes;
            return true;
        }
    }
}

#[cfg(test)]
mod tests;
