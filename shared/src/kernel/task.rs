//! What one task's kernel reads and what it reports.
//!
//! A task computes `F_{d+1}(B)` for target shards `B`. For each `B` the
//! kernel reads `F_{d-1}(B)`, `F_d(B)` and `F_d` of `B`'s source shards (one
//! per move; see `SearchContext::source_shards`). Workers fetch exactly
//! those from their cache or the checkpoint, so a kernel never sees more of
//! a level than one shard's sources.

/// `F_d` of the source shards of one target shard, by shard number, with
/// the number of set bits of each.
pub struct SourceBits<'a> {
    /// Sorted by shard number.
    entries: Vec<Source<'a>>,
}

/// One source shard.
#[derive(Clone, Copy)]
struct Source<'a> {
    shard: u64,
    words: &'a [u64],
    count: u64,
    positions: Positions<'a>,
}

/// A sparse source's set bits as a list (see [`SourceBits::with_counts`]).
pub type Positions<'a> = Option<&'a [u32]>;

/// The most set bits a source shard of `shard_words` words may carry as a
/// list of positions: a list then takes at most an eighth of the shard's
/// own bytes (4 bytes a bit, one bit in 256), which is what a worker
/// charges its cache for it.
pub fn position_limit(shard_words: usize) -> u64 {
    shard_words as u64 * 64 / 256
}

impl<'a> SourceBits<'a> {
    /// Wraps `(shard, words)` pairs (any order, no duplicates), counting
    /// their bits.
    pub fn new(entries: Vec<(u64, &'a [u64])>) -> SourceBits<'a> {
        SourceBits::with_counts(
            entries
                .into_iter()
                .map(|(shard, words)| (shard, words, crate::space::bits::popcount(words), None))
                .collect(),
        )
    }

    /// Wraps `(shard, words, set bits, positions)` whose counts the caller
    /// already knows (a worker reads them from the chunk index: counting
    /// 24 source shards per target was 15% of a worker's time on the 4×4
    /// Loopover's sparse levels), and, for a sparse source, the positions
    /// of its set bits in order
    /// ([`positions`](crate::space::bits::positions)). A shard is the
    /// source of about as many targets as there are moves, and each of them
    /// scanned all of its words for a few set bits: a list made once lets
    /// the others read a few kilobytes instead (the reduced kernel's
    /// top-down walk; other kernels read the words). A listed source may
    /// come without its words (an empty slice): the reduced kernel then
    /// lays them out where it needs them ([`Self::laid_out`]); the other
    /// kernels are never given lists.
    pub fn with_counts(entries: Vec<(u64, &'a [u64], u64, Positions<'a>)>) -> SourceBits<'a> {
        let mut entries: Vec<Source<'a>> = entries
            .into_iter()
            .map(|(shard, words, count, positions)| Source {
                shard,
                words,
                count,
                positions,
            })
            .collect();
        entries.sort_unstable_by_key(|s| s.shard);
        debug_assert!(
            entries.windows(2).all(|w| w[0].shard < w[1].shard),
            "duplicate source shard"
        );
        debug_assert!(
            entries.iter().all(|s| match (s.words, s.positions) {
                ([], Some(p)) => p.len() as u64 == s.count && p.is_sorted_by(|a, b| a < b),
                (words, p) => {
                    crate::space::bits::popcount(words) == s.count
                        && p.is_none_or(|p| *p == crate::space::bits::positions(words, s.count)[..])
                }
            }),
            "a source's count or positions are not its set bits"
        );
        SourceBits { entries }
    }

    fn find(&self, shard: u64) -> &Source<'a> {
        &self.entries[self.position(shard)]
    }

    /// Where `shard` is among the sources, in shard order. Asking for a
    /// shard that is not a source of the task is a bug in the caller's
    /// source list.
    #[inline]
    pub fn position(&self, shard: u64) -> usize {
        match self.entries.binary_search_by_key(&shard, |s| s.shard) {
            Ok(i) => i,
            Err(_) => panic!("source shard {} was not loaded for this task", shard),
        }
    }

    /// The sources in shard order: shard number, words and set bits.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &'a [u64], u64)> + '_ {
        self.entries.iter().map(|s| (s.shard, s.words, s.count))
    }

    /// The words of the source at `position` (see [`Self::position`]).
    #[inline]
    pub fn words_at(&self, position: usize) -> &'a [u64] {
        self.entries[position].words
    }

    /// The words of source shard `shard` (empty for a source given as its
    /// list only). Asking for a shard that is not a source of the task is a
    /// bug in the caller's source list.
    #[inline]
    pub fn get(&self, shard: u64) -> &'a [u64] {
        self.find(shard).words
    }

    /// The words of source shard `shard` (`words` long), laid out from its
    /// list when it came without them.
    pub fn laid_out(&self, shard: u64, words: usize) -> std::borrow::Cow<'a, [u64]> {
        let source = self.find(shard);
        match (source.words, source.positions) {
            ([], Some(positions)) => {
                let mut laid = vec![0; words];
                crate::space::bits::set_positions(&mut laid, positions);
                std::borrow::Cow::Owned(laid)
            }
            (source, _) => std::borrow::Cow::Borrowed(source),
        }
    }

    /// The positions of the set bits of source shard `shard`, when the
    /// caller gave them.
    #[inline]
    pub fn positions(&self, shard: u64) -> Positions<'a> {
        self.find(shard).positions
    }

    /// Set bits of source shard `shard`.
    #[inline]
    pub fn count(&self, shard: u64) -> u64 {
        self.find(shard).count
    }

    /// Total set bits over the sources.
    pub fn popcount(&self) -> u64 {
        self.entries.iter().map(|s| s.count).sum()
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
    /// True when the kernel may split this shard over the thread pool;
    /// false when the caller already runs as many shards side by side as
    /// there are threads (splitting then only adds synchronisation: marks
    /// from two cores into one 40 KiB shard bounce its cache lines).
    pub split: bool,
    /// The kernel lists the states it finds while they are at most this
    /// many (0: never), for a caller that stores a sparse output as its
    /// list: the reduced space's top-down pass does, in the pass it makes
    /// over the output anyway (see [`SearchContext::expand`]).
    ///
    /// [`SearchContext::expand`]: crate::kernel::context::SearchContext::expand
    pub list_up_to: u64,
    /// True when the output buffer arrives all zero: the reduced space's
    /// kernel then marks into it without clearing it first (a worker
    /// hands out buffers it knows to be zero; see the worker's slab).
    pub output_zeroed: bool,
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
    /// The cheaper of the two directions' costs as the kernel knew them
    /// before choosing, summed over its choices: top-down expands every
    /// source state once, bottom-up probes at most every legal move of
    /// every unseen state. Evaluations above this mean a poor choice.
    pub cheaper_bound: u64,
}

impl TaskStats {
    /// Sum of two statistics.
    pub fn plus(self, o: TaskStats) -> TaskStats {
        TaskStats {
            found: self.found + o.found,
            evaluations: self.evaluations + o.evaluations,
            top_down_blocks: self.top_down_blocks + o.top_down_blocks,
            bottom_up_blocks: self.bottom_up_blocks + o.bottom_up_blocks,
            cheaper_bound: self.cheaper_bound + o.cheaper_bound,
        }
    }
}
