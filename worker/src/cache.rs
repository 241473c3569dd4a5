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
//! sparse levels cost nothing here.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// `(level, shard)`; a level with [`SEEN`] set names the union of the
/// shard's levels below it instead.
pub type ShardKey = (u32, u64);

/// Freed shard buffers kept for the next load. A load into a recycled
/// buffer touches no fresh page; a fresh one costs a page fault per 4 KiB,
/// since every shard buffer is its own mapping (see
/// `crate::return_freed_shards_to_the_kernel`). A few cover the steady
/// state of one eviction per load; they are the worker's fixed overhead,
/// outside the budget.
const SPARE_BUFFERS: usize = 4;

/// Tag of a key's level for `F_0(B) ∪ … ∪ F_{L-1}(B)`, the "seen" set a
/// task of level `L` may use in place of `F_{L-1}(B)`.
const SEEN: u32 = 1 << 31;

/// Counters of the cache's use, reset by the caller per task.
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
    words: Arc<Vec<u64>>,
    tick: u64,
}

/// The cache.
pub struct ShardCache {
    budget: u64,
    used: u64,
    /// Bytes of one shard.
    shard_bytes: u64,
    tick: u64,
    /// Ticks below this are handed to low-priority entries (oldest first).
    low_tick: u64,
    entries: HashMap<ShardKey, Entry>,
    /// Least recently used first.
    order: BTreeMap<u64, ShardKey>,
    /// Highest resident bytes seen.
    pub peak: u64,
    pub stats: CacheStats,
    /// Buffers of evicted shards, at most [`SPARE_BUFFERS`].
    spare: Vec<Vec<u64>>,
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
    /// A cache of at most `budget` bytes of shards of `shard_bytes` each.
    pub fn new(budget: u64, shard_bytes: u64) -> ShardCache {
        ShardCache {
            budget,
            used: 0,
            shard_bytes,
            tick: TICK_BASE,
            low_tick: TICK_BASE,
            entries: HashMap::new(),
            order: BTreeMap::new(),
            peak: 0,
            stats: CacheStats::default(),
            spare: Vec::new(),
            empty_seen: BTreeMap::new(),
        }
    }

    /// Bytes held.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// True when one more shard fits without evicting anything.
    pub fn has_room(&self) -> bool {
        self.used + self.shard_bytes <= self.budget
    }

    /// Number of shards held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A shard-sized buffer of unspecified contents, recycled when one is
    /// spare; the caller overwrites every word.
    pub fn buffer(&mut self) -> Vec<u64> {
        self.spare
            .pop()
            .unwrap_or_else(|| vec![0u64; (self.shard_bytes / 8) as usize])
    }

    /// A shard-sized buffer of zeros, recycled when one is spare.
    pub fn zeroed(&mut self) -> Vec<u64> {
        let mut words = self.buffer();
        words.fill(0);
        words
    }

    /// Keeps the buffer of a shard leaving the cache for [`Self::buffer`],
    /// if nobody else holds it and fewer than [`SPARE_BUFFERS`] are kept.
    fn recycle(&mut self, words: Arc<Vec<u64>>) {
        if let Ok(words) = Arc::try_unwrap(words) {
            self.keep_spare(words);
        }
    }

    fn keep_spare(&mut self, words: Vec<u64>) {
        if self.spare.len() < SPARE_BUFFERS {
            self.spare.push(words);
        }
    }

    /// The shard `key`, from memory or from `load`, which reads it from the
    /// checkpoint into the buffer it is given (of unspecified contents) and
    /// returns it with the compressed bytes read.
    pub fn get<E>(
        &mut self,
        key: ShardKey,
        load: impl FnOnce(Vec<u64>) -> Result<(Vec<u64>, u64), E>,
    ) -> Result<Arc<Vec<u64>>, E> {
        self.stats.lookups += 1;
        self.tick += 1;
        if let Some(entry) = self.entries.get_mut(&key) {
            self.stats.hits += 1;
            self.order.remove(&entry.tick);
            entry.tick = self.tick;
            self.order.insert(self.tick, key);
            return Ok(entry.words.clone());
        }
        let started = std::time::Instant::now();
        let buffer = self.buffer();
        let (words, read) = load(buffer)?;
        self.stats.load_seconds += started.elapsed().as_secs_f64();
        self.stats.bytes_read += read;
        let words = Arc::new(words);
        self.insert_at(key, words.clone(), self.tick);
        Ok(words)
    }

    /// Adds a shard the worker computed itself (the next level's input), as
    /// the first candidate for eviction: it must not push out the running
    /// level's sources, but if it stays, the next level finds it here.
    pub fn offer(&mut self, key: ShardKey, words: Arc<Vec<u64>>) {
        if self.entries.contains_key(&key) {
            return;
        }
        self.low_tick -= 1;
        let tick = self.low_tick;
        // Only into free room: never evict for a low-priority entry.
        if self.has_room() {
            self.insert_at(key, words, tick);
        }
    }

    /// Forgets one shard (it will not be read again).
    pub fn remove(&mut self, key: ShardKey) {
        if let Some(entry) = self.entries.remove(&key) {
            self.order.remove(&entry.tick);
            self.used -= self.shard_bytes;
            self.recycle(entry.words);
        }
    }

    /// Takes out the union of `shard`'s levels below `below`, if held.
    pub fn take_seen(&mut self, below: u32, shard: u64) -> Option<Vec<u64>> {
        if self.take_empty_seen(below, shard) {
            return Some(self.zeroed());
        }
        let entry = self.entries.remove(&(SEEN | below, shard))?;
        self.order.remove(&entry.tick);
        self.used -= self.shard_bytes;
        Some(Arc::try_unwrap(entry.words).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Keeps the union of `shard`'s levels below `below` if there is free
    /// room, as the first candidate for eviction (it only saves work).
    pub fn offer_seen(&mut self, below: u32, shard: u64, words: Vec<u64>) {
        if words.iter().all(|&w| w == 0) {
            let bits = self.empty_seen.entry(below).or_default();
            let word = (shard / 64) as usize;
            if bits.len() <= word {
                bits.resize(word + 1, 0);
            }
            bits[word] |= 1 << (shard % 64);
            self.keep_spare(words);
            return;
        }
        self.offer((SEEN | below, shard), Arc::new(words));
    }

    /// The union below `below` becomes the union below `below + 1`, for a
    /// shard empty at level `below`.
    pub fn carry_seen(&mut self, below: u32, shard: u64) {
        if let Some(words) = self.take_seen(below, shard) {
            self.offer_seen(below + 1, shard, words);
        }
    }

    /// Clears and returns the mark of an empty union.
    fn take_empty_seen(&mut self, below: u32, shard: u64) -> bool {
        let Some(bits) = self.empty_seen.get_mut(&below) else {
            return false;
        };
        let (word, bit) = ((shard / 64) as usize, 1u64 << (shard % 64));
        let marked = bits.get(word).is_some_and(|w| w & bit != 0);
        if marked {
            bits[word] &= !bit;
        }
        marked
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

    fn insert_at(&mut self, key: ShardKey, words: Arc<Vec<u64>>, tick: u64) {
        self.make_room();
        if self.used + self.shard_bytes > self.budget {
            // Everything left is in use by the running computation; the
            // caller still gets its shard, it is just not kept.
            return;
        }
        self.used += self.shard_bytes;
        self.peak = self.peak.max(self.used);
        self.order.insert(tick, key);
        self.entries.insert(key, Entry { words, tick });
    }

    /// Evicts least recently used shards not in use until one more fits.
    fn make_room(&mut self) {
        if self.used + self.shard_bytes <= self.budget {
            return;
        }
        let mut victims = Vec::new();
        let mut freed = 0u64;
        for (&tick, key) in &self.order {
            if self.used - freed + self.shard_bytes <= self.budget {
                break;
            }
            // In use by the running task (or a pending write): keep it.
            if Arc::strong_count(&self.entries[key].words) > 1 {
                continue;
            }
            victims.push((tick, *key));
            freed += self.shard_bytes;
        }
        for (tick, key) in victims {
            self.order.remove(&tick);
            if let Some(entry) = self.entries.remove(&key) {
                self.recycle(entry.words);
            }
            self.used -= self.shard_bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(v: u64) -> impl FnOnce(Vec<u64>) -> Result<(Vec<u64>, u64), ()> {
        move |mut buffer| {
            buffer.fill(v);
            Ok((buffer, 10))
        }
    }

    #[test]
    fn stays_within_budget_and_evicts_least_recently_used() {
        let mut cache = ShardCache::new(3 * 32, 32);
        for s in 0..3 {
            cache.get((1, s), load(s)).unwrap();
        }
        cache.get((1, 0), load(0)).unwrap(); // 0 is now the most recent
        cache.get((1, 3), load(3)).unwrap(); // evicts 1, the least recent
        assert_eq!(cache.len(), 3);
        assert!(cache.used() <= 96);
        let before = cache.stats;
        cache.get((1, 0), load(0)).unwrap();
        cache.get((1, 1), load(1)).unwrap();
        assert_eq!(cache.stats.hits - before.hits, 1, "0 was kept, 1 was evicted");
        assert_eq!(cache.stats.bytes_read - before.bytes_read, 10);
        assert_eq!(cache.peak, 96);
    }

    #[test]
    fn shards_in_use_are_not_evicted_and_overflow_is_not_kept() {
        let mut cache = ShardCache::new(2 * 32, 32);
        let a = cache.get((1, 0), load(0)).unwrap();
        let b = cache.get((1, 1), load(1)).unwrap();
        let c = cache.get((1, 2), load(2)).unwrap();
        assert_eq!(*c, vec![2; 4]);
        assert_eq!(cache.len(), 2, "nothing evictable: the third is returned, not kept");
        drop((a, b));
        cache.get((1, 3), load(3)).unwrap();
        assert_eq!(cache.len(), 2);
        assert!(cache.used() <= 64);
    }

    #[test]
    fn own_outputs_only_take_free_room_and_go_first() {
        let mut cache = ShardCache::new(3 * 32, 32);
        cache.get((1, 0), load(0)).unwrap();
        cache.offer((2, 9), Arc::new(vec![9; 4]));
        cache.get((1, 1), load(1)).unwrap();
        cache.get((1, 2), load(2)).unwrap(); // full: the offered shard goes first
        assert!(!cache.entries.contains_key(&(2, 9)));
        cache.offer((2, 8), Arc::new(vec![8; 4]));
        assert!(!cache.entries.contains_key(&(2, 8)), "no room, nothing evicted for it");
        cache.drop_levels_below(2);
        assert!(cache.is_empty());
        assert_eq!(cache.used(), 0);
    }

    #[test]
    fn seen_unions_are_taken_once_and_dropped_with_their_level() {
        let mut cache = ShardCache::new(3 * 32, 32);
        cache.offer_seen(3, 5, vec![7; 4]);
        cache.offer_seen(4, 5, vec![8; 4]);
        assert_eq!(cache.take_seen(3, 5), Some(vec![7; 4]));
        assert_eq!(cache.take_seen(3, 5), None, "taken out");
        assert_eq!(cache.take_seen(3, 6), None);
        cache.get((3, 1), load(1)).unwrap();
        cache.drop_levels_below(3); // tasks of level 4 on: (3, _) stays
        assert_eq!(cache.len(), 2);
        cache.drop_levels_below(4);
        assert!(cache.is_empty());
        assert_eq!(cache.used(), 0);
    }

    #[test]
    fn empty_unions_take_no_room_and_carry_over() {
        let mut cache = ShardCache::new(32, 32);
        cache.offer_seen(3, 5, vec![0; 4]);
        cache.offer_seen(3, 700, vec![0; 4]);
        cache.offer_seen(3, 6, vec![1; 4]);
        assert_eq!(cache.used(), 32, "only the non-empty union takes room");
        cache.offer_seen(3, 7, vec![2; 4]);
        assert_eq!(cache.take_seen(3, 7), None, "no room for a second one");
        assert_eq!(cache.take_seen(3, 5), Some(vec![0; 4]));
        assert_eq!(cache.take_seen(3, 5), None, "taken out");
        cache.carry_seen(3, 700);
        cache.carry_seen(3, 6);
        assert_eq!(cache.take_seen(3, 700), None);
        assert_eq!(cache.take_seen(4, 700), Some(vec![0; 4]));
        assert_eq!(cache.take_seen(4, 6), Some(vec![1; 4]));
        cache.offer_seen(4, 9, vec![0; 4]);
        cache.drop_levels_below(4);
        assert_eq!(cache.take_seen(4, 9), None, "dropped with its level");
    }

    #[test]
    fn evicted_buffers_serve_the_next_loads() {
        let mut cache = ShardCache::new(2 * 32, 32);
        let first = cache.get((1, 0), load(7)).unwrap();
        let address = first.as_ptr();
        drop(first);
        cache.remove((1, 0));
        // The next miss loads into the freed buffer, stale words and all.
        let mut seen = Vec::new();
        let again = cache
            .get((1, 1), |buffer| {
                seen = buffer.clone();
                load(9)(buffer)
            })
            .unwrap();
        assert_eq!(again.as_ptr(), address);
        assert_eq!(seen, vec![7; 4]);
        assert_eq!(*again, vec![9; 4]);
        // A shard still held elsewhere is not recycled.
        cache.remove((1, 1));
        let held = cache.get((1, 2), load(3)).unwrap();
        cache.remove((1, 2));
        assert_eq!(cache.buffer(), vec![0; 4], "a fresh buffer: the held one was not taken");
        assert_eq!(*held, vec![3; 4]);
    }
}
