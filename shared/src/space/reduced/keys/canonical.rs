//! Canonicalising keys: the class of a key and a symmetry that maps it to
//! the class's representative.

use super::{map_mask, Key, KeySpace, MAX_BLOCKS};

impl KeySpace {
    /// The class of `key` and the least symmetry that maps `key` to the class's
    /// representative.
    ///
    /// The least image is found without ranking: a block's digit is the
    /// colex rank of its slot set among the slots the earlier blocks leave
    /// free, and for sets of one size colex order is the order of their
    /// masks as numbers (the larger set has the highest slot where they
    /// differ), also after removing the same slots from both. So the key of
    /// least rank is the least tuple of block masks, compared block by
    /// block, and only that one is ranked.
    pub fn canonicalize(&self, key: &Key) -> (usize, usize) {
        let (rank, k) = self.least_rank(key);
        let class = self.index.find(&self.reps, rank);
        (class.expect("the least image of a key is a representative"), k)
    }

    /// [`Self::canonicalize`] of each of `keys`, in order.
    ///
    /// A key's class is looked up in the index of ranks and then among the
    /// representatives (8 and 4 MB on the 4×4 Loopover): cache misses,
    /// each waiting for the one before. Here every key is ranked first,
    /// then every key's range of the index is read, then the searches
    /// run, so that the keys' misses overlap. A shard's 24 steps on the
    /// 4×4 (`examples/canonical_keys`, every shard): 154–164 ns a key one
    /// at a time, 143–155 ns together.
    pub fn canonicalize_each(&self, keys: &[Key]) -> Vec<(usize, usize)> {
        let ranked: Vec<(u64, usize)> = keys.iter().map(|key| self.least_rank(key)).collect();
        let ranks: Vec<u64> = ranked.iter().map(|r| r.0).collect();
        let classes = self.index.find_each(&self.reps, &ranks);
        classes
            .into_iter()
            .zip(ranked)
            .map(|(class, (_, k))| (class.expect("the least image of a key is a representative"), k))
            .collect()
    }

    /// The rank of `key`'s least image and the least symmetry giving it.
    ///
    /// Its buffers hold as many blocks as the space has, rounded up to
    /// [`FEW_BLOCKS`] or [`MAX_BLOCKS`]: with room for 32 blocks, two
    /// images and a list were filled at each call (768 bytes, where the
    /// 4×4 Loopover uses four blocks), and a key took 132–134 ns where it
    /// takes 125–128 (`examples/canonical_keys loopover:4x4 200000`, a
    /// shard's keys at once, three runs each).
    fn least_rank(&self, key: &Key) -> (u64, usize) {
        if self.sizes.len() <= FEW_BLOCKS {
            self.least_rank_in::<FEW_BLOCKS>(key)
        } else {
            self.least_rank_in::<MAX_BLOCKS>(key)
        }
    }

    /// [`Self::least_rank`] with buffers of `N` blocks, at least the space's.
    fn least_rank_in<const N: usize>(&self, key: &Key) -> (u64, usize) {
        match &self.first {
            Some(first) => self.least_image_via::<N>(first, key),
            None => self.least_image::<N>(key, 0..self.actions.len()),
        }
    }

    /// The rank of the least image of `key` under the symmetries `ks`
    /// (in any order) and the least symmetry giving it; `N` is at least
    /// the space's blocks.
    ///
    /// Images go into two buffers by turns, the least so far kept in one:
    /// copying the least image whole, then returning it, made
    /// canonicalising a key take 166–172 ns where this took 154–164
    /// (`examples/canonical_keys`, every shard of the 4×4).
    pub(super) fn least_image<const N: usize>(&self, key: &Key, ks: impl Iterator<Item = usize>) -> (u64, usize) {
        let blocks = self.sizes.len();
        let mut images = [[u64::MAX; N]; 2];
        // `images[best]` is the least image so far, the other the next.
        let mut best = 0;
        let mut best_k = usize::MAX;
        for k in ks {
            let (sigma, from) = (&self.actions[k].0, &self.inverse_blocks[k]);
            let [a, b] = &mut images;
            let (least, image) = if best == 0 { (&*a, b) } else { (&*b, a) };
            // Image blocks are worked out only while the prefix ties.
            let mut order = std::cmp::Ordering::Equal;
            for b in 0..blocks {
                image[b] = map_mask(sigma, key[from[b] as usize]);
                if order == std::cmp::Ordering::Equal {
                    order = image[b].cmp(&least[b]);
                    if order == std::cmp::Ordering::Greater {
                        break;
                    }
                }
            }
            // Of equal images, the least symmetry's is kept, whatever the
            // order they come in.
            if order == std::cmp::Ordering::Less || (order == std::cmp::Ordering::Equal && k < best_k) {
                best ^= 1;
                best_k = k;
            }
        }
        (self.rank_blocks(&images[best][..blocks]), best_k)
    }

    /// [`Self::least_image`] over only the symmetries that give the least
    /// first block, which `first` lists for each first block.
    pub(super) fn least_image_via<const N: usize>(&self, first: &FirstBlocks, key: &Key) -> (u64, usize) {
        let all = self.all_slots();
        let mut least = u64::MAX;
        let mut lists = [(0u32, 0u32); N];
        let mut found = 0;
        for (source, offset) in first.offsets.iter().enumerate() {
            let Some(offset) = offset else { continue };
            let rank = match &first.ranks {
                Some(ranks) => u64::from(ranks[key[source] as usize]),
                None => self.binomials.rank(key[source], all),
            };
            let entry = &first.entries[offset + rank as usize];
            if entry.least < least {
                (least, found) = (entry.least, 0);
            }
            if entry.least == least {
                lists[found] = (entry.start, entry.len);
                found += 1;
            }
        }
        // The lists as they are: ties go to the least symmetry whatever
        // the order, so they are neither copied together nor sorted.
        let listed = |&(start, len): &(u32, u32)| &first.symmetries[start as usize..(start + len) as usize];
        let ks = lists[..found].iter().flat_map(listed).map(|&k| k as usize);
        self.least_image::<N>(key, ks)
    }
}

/// Blocks the small buffers of [`KeySpace::least_rank`] hold: every
/// Loopover and sliding puzzle's shard key has at most this many.
const FEW_BLOCKS: usize = 8;

/// For each block `s` that some symmetry maps to block 0, and each slot
/// set `m` that block `s` can hold: the least image of `m` under those
/// symmetries, and which of them give it. The least image of a key has
/// the least first block over all symmetries, so canonicalising looks that
/// up and compares the rest only for the symmetries listed (a few of the
/// 4×4 Loopover's 128). Comparing every symmetry's image mispredicted
/// about one branch in two.
#[derive(Clone, Debug)]
pub(super) struct FirstBlocks {
    /// Where block `s`'s entries start, by the colex rank of its slot set
    /// among all slots; `None` when no symmetry maps it to block 0.
    offsets: Vec<Option<usize>>,
    entries: Vec<FirstBlock>,
    /// The lists of symmetries, ascending within each.
    symmetries: Vec<u32>,
    /// The colex rank of every slot set among all slots, by its mask, when
    /// there are at most [`RANKED_SLOTS`] slots: a key's first-block
    /// lookups then take one load each instead of a loop over the block's
    /// slots (`examples/canonical_keys loopover:4x4 200000`, a shard's keys
    /// at once, three interleaved pairs: 125–127 → 114–115 ns a key).
    pub(super) ranks: Option<Vec<u16>>,
}

/// Most slots for which [`FirstBlocks`] keeps every slot set's rank
/// (2^16 of them, 128 KiB; every rank is below C(16, 8) = 12,870, so it
/// fits 16 bits).
const RANKED_SLOTS: usize = 16;

#[derive(Clone, Copy, Debug)]
struct FirstBlock {
    least: u64,
    start: u32,
    len: u32,
}

/// Most entries [`FirstBlocks`] may hold (slot sets times blocks); larger
/// spaces compare every symmetry.
const MAX_FIRST_BLOCK_ENTRIES: u64 = 1 << 20;

impl FirstBlocks {
    pub(super) fn new(space: &KeySpace) -> Option<FirstBlocks> {
        let all = space.all_slots();
        let mut sources: Vec<Vec<usize>> = vec![Vec::new(); space.sizes.len()];
        for (k, from) in space.inverse_blocks.iter().enumerate() {
            sources[from[0] as usize].push(k);
        }
        let sets = |s: usize| space.binomials.get(space.slots as u32, space.sizes[s]);
        let needed: u64 = (0..sources.len()).filter(|&s| !sources[s].is_empty()).map(sets).sum();
        if needed > MAX_FIRST_BLOCK_ENTRIES || space.actions.len() > u32::MAX as usize {
            return None;
        }
        let ranks = (space.slots <= RANKED_SLOTS).then(|| {
            (0..1u64 << space.slots)
                .map(|mask| space.binomials.rank(mask, all) as u16)
                .collect()
        });
        let mut first = FirstBlocks {
            offsets: Vec::new(),
            entries: Vec::with_capacity(needed as usize),
            symmetries: Vec::new(),
            ranks,
        };
        for (s, ks) in sources.iter().enumerate() {
            if ks.is_empty() {
                first.offsets.push(None);
                continue;
            }
            first.offsets.push(Some(first.entries.len()));
            for value in 0..sets(s) {
                let mask = space.binomials.unrank(value, all, space.sizes[s]);
                let images: Vec<(usize, u64)> = ks.iter().map(|&k| (k, map_mask(&space.actions[k].0, mask))).collect();
                let least = images.iter().map(|&(_, image)| image).min().expect("a symmetry");
                let start = first.symmetries.len() as u32;
                first.symmetries.extend(
                    images
                        .iter()
                        .filter(|&&(_, image)| image == least)
                        .map(|&(k, _)| k as u32),
                );
                let len = first.symmetries.len() as u32 - start;
                first.entries.push(FirstBlock { least, start, len });
            }
        }
        Some(first)
    }
}

/// Finds a representative's position among the ascending `reps` from its
/// rank, in two steps: ranks fall into coarse ranges of `2^shift` (about
/// 16 representatives each on average), and each range that holds any
/// into `per_range` fine ranges of `2^fine_shift`, whose starts in `reps`
/// are kept; a lookup then searches one fine range.
///
/// Representatives are least images, so they crowd into a few coarse
/// ranges: on the 4×4 Loopover, 2,194 of 61,585, where a lookup searched
/// 489 of them (the median) in coarse ranges alone, and that search was
/// 63 % of canonicalising a key. A binary search of all 499,961 (4 MB,
/// missing the cache at every step) had been half of it before that.
#[derive(Clone, Debug, Default)]
pub(super) struct RankIndex {
    shift: u32,
    fine_shift: u32,
    /// For each coarse range, where its fine starts begin in `fine`
    /// (`EMPTY`: none; the range holds no representative).
    coarse: Vec<u32>,
    /// For each coarse range that holds representatives, `per_range + 1`
    /// entries: the first representative of rank `≥` each fine range's
    /// start, and the range's end.
    fine: Vec<u32>,
}

impl RankIndex {
    const EMPTY: u32 = u32::MAX;
    /// Representatives a fine range should hold, about.
    const FINE_TARGET: u64 = 8;
    /// Fine starts allowed per representative (bounds the index's size).
    const MOST_FINE_PER_CLASS: u64 = 4;

    pub(super) fn new(reps: &[u64], total: u64) -> RankIndex {
        let per_class = (total / reps.len().max(1) as u64).max(1);
        let shift = (per_class * 16).ilog2();
        let ranges = (total >> shift) as usize + 1;
        // Where each coarse range starts in `reps`.
        let mut starts = Vec::with_capacity(ranges + 1);
        let mut next = 0usize;
        for r in 0..=ranges as u64 {
            while next < reps.len() && reps[next] >> shift < r {
                next += 1;
            }
            starts.push(next as u32);
        }
        let sizes = || starts.windows(2).map(|w| u64::from(w[1] - w[0]));
        let occupied = sizes().filter(|&n| n > 0).count().max(1) as u64;
        // Fine enough for the range an average lookup falls in (weighted by
        // its representatives), within the size allowance.
        let weighted = sizes().map(|n| n * n).sum::<u64>() / (reps.len().max(1) as u64);
        let wanted = (weighted / Self::FINE_TARGET).max(1);
        let allowed = (Self::MOST_FINE_PER_CLASS * reps.len() as u64 / occupied)
            .min(u64::from(u32::MAX) / occupied - 1)
            .max(1);
        let per_range = wanted.min(allowed).next_power_of_two().min(1 << shift);
        let fine_shift = shift - per_range.ilog2();
        let mut coarse = Vec::with_capacity(ranges);
        let mut fine = Vec::new();
        for (r, w) in starts.windows(2).enumerate() {
            if w[0] == w[1] {
                coarse.push(Self::EMPTY);
                continue;
            }
            coarse.push(fine.len() as u32);
            let mut next = w[0] as usize;
            for f in 0..per_range {
                let lowest = ((r as u64) << shift) + (f << fine_shift);
                while next < w[1] as usize && reps[next] < lowest {
                    next += 1;
                }
                fine.push(next as u32);
            }
            fine.push(w[1]);
        }
        RankIndex {
            shift,
            fine_shift,
            coarse,
            fine,
        }
    }

    /// The fine range `rank` falls in, as positions in `reps`.
    #[inline]
    fn fine_range(&self, rank: u64) -> Option<(usize, usize)> {
        let block = *self.coarse.get((rank >> self.shift) as usize)?;
        if block == Self::EMPTY {
            return None;
        }
        let f = block as usize + ((rank & ((1 << self.shift) - 1)) >> self.fine_shift) as usize;
        Some((self.fine[f] as usize, self.fine[f + 1] as usize))
    }

    /// The position of `rank` in `reps`, if it is there.
    #[inline]
    pub(super) fn find(&self, reps: &[u64], rank: u64) -> Option<usize> {
        let (from, to) = self.fine_range(rank)?;
        Self::search(reps, from, to, rank)
    }

    /// `rank` among `reps[from..to]`.
    #[inline]
    fn search(reps: &[u64], from: usize, to: usize, rank: u64) -> Option<usize> {
        reps[from..to].binary_search(&rank).ok().map(|i| from + i)
    }

    /// [`Self::find`] of each of `ranks`: every fine range first (the
    /// loads of one rank's range do not wait for another's), then the
    /// searches.
    fn find_each(&self, reps: &[u64], ranks: &[u64]) -> Vec<Option<usize>> {
        let ranges: Vec<Option<(usize, usize)>> = ranks.iter().map(|&rank| self.fine_range(rank)).collect();
        ranks
            .iter()
            .zip(ranges)
            .map(|(&rank, range)| range.and_then(|(from, to)| Self::search(reps, from, to, rank)))
            .collect()
    }
}
