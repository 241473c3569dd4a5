//! Which blocks of a task's source shards hold frontier states, so the
//! table kernel ([`super::blocks`]) skips empty source blocks unread; worked
//! out once per source shard and level.

use super::bitrange::any_in;
use super::CodedTask;
use rayon::prelude::*;
use std::sync::Arc;

/// Which blocks of each source shard hold a frontier state, one bit per
/// block, so empty source blocks are skipped without being read.
pub(super) struct Occupied {
    /// Bits of each distinct source shard.
    shards: Vec<Arc<Vec<u64>>>,
    /// Frontier states of each distinct source shard.
    counts: Vec<u64>,
    /// Index in `shards` of each move's source shard.
    of_move: Vec<usize>,
}

impl Occupied {
    pub(super) fn new(task: &CodedTask, sources: &[u64]) -> Occupied {
        let w = task.codec.low().states();
        let blocks = task.codec.shard_blocks() as usize;
        let mut distinct = sources.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let empty = Arc::new(vec![0u64; blocks.div_ceil(64)]);
        let (shards, counts) = distinct
            .iter()
            .map(|&s| {
                // The count comes with the source (a worker has it from the
                // chunk index): an empty source, most of them on the first
                // levels, is not read at all, and no source is counted
                // again once per target shard that reads it.
                let count = task.sources.count(s);
                if count == 0 {
                    return (empty.clone(), 0);
                }
                // Kept per shard and level: a shard is read by about as
                // many tasks as there are moves.
                let bits = task
                    .moves
                    .occupancy
                    .get(s, count, || occupied_blocks(task.frontier_of(s), w, blocks));
                debug_assert_eq!(*bits, occupied_blocks(task.frontier_of(s), w, blocks));
                (bits, count)
            })
            .unzip();
        let of_move = sources
            .iter()
            .map(|s| distinct.binary_search(s).expect("listed"))
            .collect();
        Occupied {
            shards,
            counts,
            of_move,
        }
    }

    /// Top-down's evaluations: every frontier state once per move (guards
    /// ignored, so an upper bound).
    pub(super) fn frontier_evaluations(&self) -> u64 {
        self.of_move.iter().map(|&i| self.counts[i]).sum()
    }

    #[inline]
    pub(super) fn has(&self, m: usize, block: usize) -> bool {
        let bits = &self.shards[self.of_move[m]];
        bits[block / 64] >> (block % 64) & 1 == 1
    }
}

/// One bit per block of `blocks` blocks of `w` states: whether it holds a set bit of `words`.
fn occupied_blocks(words: &[u64], w: usize, blocks: usize) -> Vec<u64> {
    let mut bits = vec![0u64; blocks.div_ceil(64)];
    bits.par_iter_mut().enumerate().for_each(|(i, bits)| {
        for b in i * 64..(i * 64 + 64).min(blocks) {
            *bits |= (any_in(words, b * w, w) as u64) << (b % 64);
        }
    });
    bits
}
