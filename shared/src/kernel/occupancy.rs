//! Which blocks of a level's source shards hold frontier states, one bit
//! per block, worked out once per shard and level and shared by every task
//! that reads the shard. A kernel then skips a move whose source block is
//! empty without reading that block.
//!
//! Why: a shard is the source of about as many target shards as there are
//! moves, and each of them scanned it again. On the coded kernel that was
//! 9% of twsearch's 233 (3 s of 34); on the block kernel (the 2×6 Loopover
//! unreduced, 16 moves) a sparse level read every source block twice per
//! move (docs/history.md, "On 16 cores, measured").

use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Source shards by number: the state count their occupancy was worked out
/// for, and the occupancy.
type Kept = HashMap<u64, (u64, Arc<Vec<u64>>)>;

/// The occupancy of the level's source shards worked out so far, by shard,
/// with the shard's state count as a check. At most one bit per block of a
/// level.
#[derive(Default)]
pub struct OccupancyCache {
    shards: Mutex<Kept>,
}

impl OccupancyCache {
    /// A new level begins: the last level's occupancy no longer applies.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The occupancy of source shard `shard`, which holds `count` states:
    /// the one kept for it when its count matches, else `compute`'s (worked
    /// out outside the lock, then kept).
    pub fn get(&self, shard: u64, count: u64, compute: impl FnOnce() -> Vec<u64>) -> Arc<Vec<u64>> {
        let known = self.lock().get(&shard).cloned();
        if let Some((_, bits)) = known.filter(|(c, _)| *c == count) {
            return bits;
        }
        let bits = Arc::new(compute());
        self.lock().insert(shard, (count, bits.clone()));
        bits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // Entries are inserted whole: a panic elsewhere leaves none half-made.
        self.shards.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One bit per block of `block_words` words of `words`: whether the block
/// holds a set bit.
pub fn occupied_word_blocks(words: &[u64], block_words: usize) -> Vec<u64> {
    let blocks = words.len() / block_words.max(1);
    let mut bits = vec![0u64; blocks.div_ceil(64)];
    bits.par_iter_mut().enumerate().for_each(|(i, bits)| {
        for b in i * 64..(i * 64 + 64).min(blocks) {
            let block = &words[b * block_words..(b + 1) * block_words];
            *bits |= (block.iter().any(|&w| w != 0) as u64) << (b % 64);
        }
    });
    bits
}

/// True when bit `i` of `bits` is set.
#[inline]
pub fn has(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_occupied_exactly_when_one_of_its_words_is_not_zero() {
        // 130 blocks of 3 words: bits 0, 64 and 129 on, one word each.
        let mut words = vec![0u64; 130 * 3];
        words[0] = 1;
        words[64 * 3 + 2] = 1 << 63;
        words[129 * 3 + 1] = 5;
        let bits = occupied_word_blocks(&words, 3);
        assert_eq!(bits.len(), 3);
        let on: Vec<usize> = (0..130).filter(|&b| has(&bits, b)).collect();
        assert_eq!(on, vec![0, 64, 129]);
    }

    #[test]
    fn a_kept_occupancy_is_used_only_for_the_same_count_and_level() {
        let cache = OccupancyCache::default();
        let first = cache.get(7, 3, || vec![1]);
        assert_eq!(*cache.get(7, 3, || panic!("kept")), *first);
        assert_eq!(*cache.get(7, 4, || vec![2]), vec![2], "another count: worked out again");
        cache.clear();
        assert_eq!(*cache.get(7, 4, || vec![3]), vec![3], "a new level: worked out again");
    }
}
