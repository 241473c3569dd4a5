//! The checkpoint bytes each level of a search cut at `--max-depth` can
//! take at most, for the disk check of a short search of a huge space.
//!
//! A level at depth k holds at most as many states as there are canonical
//! words of length k ([`WordGrowth`]). Reduced, it stores fewer bits: a
//! stored bit of a shard of weight w stands for w states (the shard's
//! symmetries over its key's stabiliser), so N states are at most
//! N / w bits there. The bytes are largest when the states fall in the
//! lightest shards first, each up to its raw size, at
//! [`SPARSE_BYTES_PER_STATE`] a stored bit: that placement is the bound.
//! On the 4×4 Loopover (128 symmetries, most shards of weight 128), depth
//! 8's 6.3·10⁹ words make at most 0.73 GB of files, where counting a
//! bit per state made it a raw level (19.3 GiB); the run wrote 78 MB.

use super::{EMPTY_SHARD_BYTES, SPARSE_BYTES_PER_STATE};
use crate::files::format::HEADER_LEN;
use crate::job::Job;
use crate::search::bound::WordGrowth;
use crate::space::Space;

/// The per-level bound of one job (see the module's notes).
#[derive(Clone, Debug)]
pub struct DepthBound {
    words: WordGrowth,
    /// `(weight, shards of that weight)`, lightest first.
    shard_weights: Vec<(u64, u64)>,
    shard_bytes: u128,
    /// Every chunk file's header and every shard's index entry: a level's
    /// files hold them whatever its states.
    overhead: u128,
}

impl DepthBound {
    /// The bound for `job`'s moves and space.
    pub fn of(job: &Job) -> DepthBound {
        DepthBound {
            words: WordGrowth::of(&job.puzzle),
            shard_weights: shards_by_weight(&job.space),
            shard_bytes: job.space.shard_bytes() as u128,
            overhead: job.chunking.chunks() as u128 * HEADER_LEN as u128
                + job.space.shards() as u128 * EMPTY_SHARD_BYTES,
        }
    }

    /// Checkpoint bytes of each level `0..=depth` at most.
    pub fn levels_to(&self, depth: u32) -> Vec<u128> {
        self.words
            .up_to(depth as usize)
            .into_iter()
            .map(|states| self.level_of(states))
            .collect()
    }

    /// Checkpoint bytes of a level of at most `states` states.
    fn level_of(&self, states: u128) -> u128 {
        let mut left = states;
        let mut bytes = self.overhead;
        for &(weight, shards) in &self.shard_weights {
            if left == 0 {
                break;
            }
            let weight = weight as u128;
            // States that bring one shard of this weight to its raw size.
            let per_full_shard = (self.shard_bytes / SPARSE_BYTES_PER_STATE).max(1) * weight;
            let all_full = per_full_shard.saturating_mul(shards as u128);
            if left >= all_full {
                bytes = bytes.saturating_add(self.shard_bytes * shards as u128);
                left -= all_full;
            } else {
                bytes = bytes.saturating_add(left.div_ceil(weight) * SPARSE_BYTES_PER_STATE);
                left = 0;
            }
        }
        // At most every shard at its raw size, with the headers and index
        // entries: a dense level's files are its raw bytes and a few more
        // (the 2×6 unreduced's depth 10: 60,071,136 bytes for 60,068,712
        // raw; `loopover:3x4 --track 1-5`'s one shard of 11,880 bytes in
        // a file of 12,008, its 96-byte header and a 32-byte entry).
        bytes
    }
}

/// `(weight, shards)` of a space, lightest first: a reduced space's shard
/// is one class of keys, every stored bit of it standing for the same
/// number of states. An oriented space's shard holds several classes, and
/// is counted as one state a bit, as an unreduced one.
fn shards_by_weight(space: &Space) -> Vec<(u64, u64)> {
    match space {
        Space::Reduced(reduced) => {
            // Stabilisers divide the group's order, so there are few: a
            // list searched in line, by stabiliser (a weight is a division),
            // where a map's entry per shard took 2.7 ms of the 4×4
            // Loopover's 499,961 shards, three times a run's planning.
            let keys = reduced.keys();
            // (stabiliser, a shard of it, shards)
            let mut counts: Vec<(u32, u64, u64)> = Vec::new();
            for shard in 0..reduced.shards() {
                let stabilizer = keys.stabilizer(shard as usize);
                match counts.iter_mut().find(|(s, _, _)| *s == stabilizer) {
                    Some((_, _, n)) => *n += 1,
                    None => counts.push((stabilizer, shard, 1)),
                }
            }
            let mut weights: Vec<(u64, u64)> = counts
                .into_iter()
                .map(|(_, shard, n)| (reduced.weight(shard), n))
                .collect();
            weights.sort_unstable();
            weights
        }
        _ => vec![(1, space.shards())],
    }
}
