//! What one task's kernel reads and what it reports.
//!
//! A task computes `F_{d+1}(B)` for target shards `B`. For each `B` the
//! kernel reads `F_{d-1}(B)`, `F_d(B)` and `F_d` of `B`'s source shards (one
//! per move; see `SearchContext::source_shards`). Workers fetch exactly
//! those from their cache or the checkpoint, so a kernel never sees more of
//! a level than one shard's sources.

/// `F_d` of the source shards of one target shard, by shard number.
pub struct SourceBits<'a> {
    /// Sorted by shard number.
    entries: Vec<(u64, &'a [u64])>,
}

impl<'a> SourceBits<'a> {
    /// Wraps `(shard, words)` pairs (any order, no duplicates).
    pub fn new(mut entries: Vec<(u64, &'a [u64])>) -> SourceBits<'a> {
        entries.sort_unstable_by_key(|&(s, _)| s);
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0), "duplicate source shard");
        SourceBits { entries }
    }

    /// The words of source shard `shard`. Asking for a shard that is not a
    /// source of the task is a bug in the caller's source list.
    #[inline]
    pub fn get(&self, shard: u64) -> &'a [u64] {
        match self.entries.binary_search_by_key(&shard, |&(s, _)| s) {
            Ok(i) => self.entries[i].1,
            Err(_) => panic!("source shard {} was not loaded for this task", shard),
        }
    }

    /// Total set bits over the sources.
    pub fn popcount(&self) -> u64 {
        self.entries.iter().map(|(_, w)| crate::kernel::bits::popcount(w)).sum()
    }
}

/// Everything the kernel reads for one target shard.
pub struct ShardInputs<'a> {
    /// `F_d` of every source shard.
    pub sources: SourceBits<'a>,
    /// `F_{d-1}(B)` (all zero at level 0; for a directed graph every earlier level).
    pub previous: &'a [u64],
    /// `F_d(B)`.
    pub current: &'a [u64],
}

/// What one task (or one shard of it) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskStats {
    /// States of `F_{d+1}(B)` (set bits).
    pub found: u64,
    /// Neighbour evaluations (table lookups) performed.
    pub evaluations: u64,
    /// Blocks (or units) expanded top-down.
    pub top_down_blocks: u64,
    /// Blocks (or units) expanded bottom-up.
    pub bottom_up_blocks: u64,
}

impl TaskStats {
    /// Sum of two statistics.
    pub fn plus(self, o: TaskStats) -> TaskStats {
        TaskStats {
            found: self.found + o.found,
            evaluations: self.evaluations + o.evaluations,
            top_down_blocks: self.top_down_blocks + o.top_down_blocks,
            bottom_up_blocks: self.bottom_up_blocks + o.bottom_up_blocks,
        }
    }
}
