//! Block keys and their classes under the symmetries.
//!
//! The pieces are partitioned into blocks that every symmetry maps onto
//! blocks. A state's **key** is, for each block, the set of slots its pieces
//! occupy. A move maps a key to a key (it moves slot sets), and so does a
//! symmetry (it maps slot sets and relabels the blocks), so keys fall into
//! classes; the smallest key of each class (by rank) is its representative.
//! A shard of the reduced space is one representative key.
//!
//! Each block has a **domain**: the slots its pieces can reach (the union of
//! the moves' orbits they start in; every slot on Loopover). A block's slot
//! set is ranked among the free slots of its domain, so keys that put a
//! piece where no move takes it are not numbered at all: the 3×3×3's corner
//! and edge permutations, cut into the corners and six pairs of opposite
//! edges, make 12!/2⁶ = 7,484,400 keys, where ranking over all 20 slots
//! would make 20!/(2⁶·8!) = 9.4·10¹¹, almost all unreachable.

use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::Symmetries;
use crate::space::colex::Binomials;

/// Most blocks a partition may have.
pub const MAX_BLOCKS: usize = 32;

/// Slot sets of the blocks, one mask per block.
pub type Key = [u64; MAX_BLOCKS];

/// Subtrees of the class search per thread, so that the few large ones
/// do not leave threads idle (`KeySpace::enumerate_classes`).
const PARALLEL_SUBTREES_PER_THREAD: usize = 16;

/// Ranking of keys and their classes.
#[derive(Clone, Debug)]
pub struct KeySpace {
    /// Number of slots.
    slots: usize,
    /// Sizes of the blocks.
    sizes: Vec<u32>,
    /// Slots each block may hold (its domain): domains of two blocks are
    /// equal or disjoint.
    domains: Vec<u64>,
    /// Radix of each block's digit (the last block has one choice).
    radices: Vec<u64>,
    /// Number of keys.
    total: u64,
    binomials: Binomials,
    /// For each symmetry: the slot permutation and the block each block goes to.
    actions: Vec<(Perm, Vec<u8>)>,
    /// For each symmetry: the block that goes to each block.
    inverse_blocks: Vec<Vec<u8>>,
    /// The least first block of any image, looked up (see [`FirstBlocks`]).
    first: Option<FirstBlocks>,
    /// Ranks of the class representatives, ascending.
    reps: Vec<u64>,
    /// Where each range of ranks starts in `reps` (see [`RankIndex`]).
    index: RankIndex,
    /// Order of each representative's stabiliser in the symmetry group.
    stabilizers: Vec<u32>,
}

impl KeySpace {
    /// Keys of blocks of the given sizes and domains (see [`block_domains`]),
    /// each symmetry `k` mapping block `b` to block `block_maps[k][b]`;
    /// enumerates the class representatives.
    pub fn new(
        slots: usize,
        sizes: &[u32],
        domains: Vec<u64>,
        symmetries: &Symmetries,
        block_maps: Vec<Vec<u8>>,
    ) -> KeySpace {
        assert!(sizes.len() <= MAX_BLOCKS, "too many blocks");
        assert_eq!(sizes.len(), domains.len(), "a domain per block");
        let binomials = Binomials::new();
        let radices = radices(&binomials, sizes, &domains);
        let total = radices.iter().product();
        let inverse_blocks = block_maps
            .iter()
            .map(|to| {
                let mut from = vec![0u8; to.len()];
                for (b, &t) in to.iter().enumerate() {
                    from[t as usize] = b as u8;
                }
                from
            })
            .collect();
        let actions = symmetries.slots.iter().cloned().zip(block_maps).collect();
        let mut space = KeySpace {
            slots,
            sizes: sizes.to_vec(),
            domains,
            radices,
            total,
            binomials,
            actions,
            inverse_blocks,
            first: None,
            reps: Vec::new(),
            index: RankIndex::default(),
            stabilizers: Vec::new(),
        };
        space.enumerate_classes();
        space.first = FirstBlocks::new(&space);
        space
    }

    /// Number of keys (before reduction).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of classes (shards of the reduced space).
    pub fn classes(&self) -> usize {
        self.reps.len()
    }

    /// The slots each block may hold.
    pub fn domains(&self) -> &[u64] {
        &self.domains
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.sizes.len()
    }

    /// The representative key of class `class`.
    pub fn rep(&self, class: usize) -> Key {
        self.unrank(self.reps[class])
    }

    /// Order of the stabiliser of class `class`'s representative.
    pub fn stabilizer(&self, class: usize) -> u32 {
        self.stabilizers[class]
    }

    /// Rank of a key.
    pub fn rank(&self, key: &Key) -> u64 {
        let mut free = self.all_slots();
        let mut rank = 0u64;
        for (b, &radix) in self.radices.iter().enumerate() {
            rank = rank * radix + self.binomials.rank(key[b], free & self.domains[b]);
            free &= !key[b];
        }
        rank
    }

    /// The key of a rank.
    pub fn unrank(&self, mut rank: u64) -> Key {
        let mut values = [0u64; MAX_BLOCKS];
        for b in (0..self.radices.len()).rev() {
            values[b] = rank % self.radices[b];
            rank /= self.radices[b];
        }
        let mut key = [0u64; MAX_BLOCKS];
        let mut free = self.all_slots();
        for (b, &c) in self.sizes.iter().enumerate() {
            key[b] = self.binomials.unrank(values[b], free & self.domains[b], c);
            free &= !key[b];
        }
        key
    }

    fn all_slots(&self) -> u64 {
        if self.slots == 64 {
            u64::MAX
        } else {
            (1u64 << self.slots) - 1
        }
    }

    /// `key` with each block's slots sent through `perm` (a move: every
    /// block keeps its place).
    #[inline]
    pub fn moved(&self, perm: &Perm, key: &Key) -> Key {
        let mut out = [0u64; MAX_BLOCKS];
        for b in 0..self.blocks() {
            out[b] = map_mask(perm, key[b]);
        }
        out
    }

    /// The image of `key` under symmetry `k`.
    pub fn apply(&self, k: usize, key: &Key) -> Key {
        let (sigma, blocks) = &self.actions[k];
        let mut out = [0u64; MAX_BLOCKS];
        for (b, &to) in blocks.iter().enumerate() {
            out[to as usize] = map_mask(sigma, key[b]);
        }
        out
    }

    /// The class of `key` and a symmetry that maps `key` to the class's
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

    /// The rank of `key`'s least image and the first symmetry giving it.
    fn least_rank(&self, key: &Key) -> (u64, usize) {
        match &self.first {
            Some(first) => self.least_image_via(first, key),
            None => self.least_image(key, 0..self.actions.len()),
        }
    }

    /// The rank of the least image of `key` under the symmetries `ks`
    /// (ascending) and the first symmetry giving it.
    ///
    /// Images go into two buffers by turns, the least so far kept in one:
    /// a key has room for 32 blocks (256 bytes, where the 4×4 Loopover
    /// uses four), and copying the least image whole, then returning it,
    /// made canonicalising a key take 166–172 ns where this takes 154–164
    /// (`examples/canonical_keys`, every shard of the 4×4).
    fn least_image(&self, key: &Key, ks: impl Iterator<Item = usize>) -> (u64, usize) {
        let blocks = self.sizes.len();
        let mut images = [[u64::MAX; MAX_BLOCKS]; 2];
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
            // Equal images keep the earlier symmetry.
            if order == std::cmp::Ordering::Less || best_k == usize::MAX {
                best ^= 1;
                best_k = k;
            }
        }
        (self.rank(&images[best]), best_k)
    }

    /// [`Self::least_image`] over only the symmetries that give the least
    /// first block, which `first` lists for each first block.
    fn least_image_via(&self, first: &FirstBlocks, key: &Key) -> (u64, usize) {
        let all = self.all_slots();
        let mut least = u64::MAX;
        let mut lists = [(0u32, 0u32); MAX_BLOCKS];
        let mut found = 0;
        for (source, offset) in first.offsets.iter().enumerate() {
            let Some(offset) = offset else { continue };
            let entry = &first.entries[offset + self.binomials.rank(key[source], all) as usize];
            if entry.least < least {
                (least, found) = (entry.least, 0);
            }
            if entry.least == least {
                lists[found] = (entry.start, entry.len);
                found += 1;
            }
        }
        let listed = |&(start, len): &(u32, u32)| &first.symmetries[start as usize..(start + len) as usize];
        let total: usize = lists[..found].iter().map(|list| listed(list).len()).sum();
        let mut on_stack = [0u32; 64];
        let mut on_heap = Vec::new();
        let ks: &mut [u32] = if total <= on_stack.len() {
            &mut on_stack[..total]
        } else {
            on_heap.resize(total, 0);
            &mut on_heap
        };
        let mut n = 0;
        for list in &lists[..found] {
            let list = listed(list);
            ks[n..n + list.len()].copy_from_slice(list);
            n += list.len();
        }
        // Ascending, so that equal images keep the earliest symmetry as the
        // full search does.
        ks.sort_unstable();
        self.least_image(key, ks.iter().map(|&k| k as usize))
    }

    /// Symmetries that fix class `class`'s representative.
    pub fn stabilizer_elements(&self, class: usize) -> Vec<usize> {
        let key = self.rep(class);
        (0..self.actions.len())
            .filter(|&k| self.apply(k, &key)[..self.blocks()] == key[..self.blocks()])
            .collect()
    }

    /// Finds every class's representative (its least key) and stabiliser
    /// by a depth-first search over block masks in rank order, pruned where
    /// the blocks fixed so far already show a smaller image. Rank order is
    /// the order of the block-mask tuples (see [`Self::canonicalize`]), so
    /// a key is its class's representative exactly when no symmetry maps it
    /// below itself. On the 4×4 Loopover (63,063,000 keys, 128 symmetries,
    /// 499,961 classes) this took 0.2 s instead of 3.3 s for marking every
    /// class's images in a bitmap of all keys.
    ///
    /// The subtrees run in parallel below the first blocks that leave
    /// enough of them (`prefixes`): pruning keeps few of the first block's
    /// masks (those least under the symmetries), so subtrees of the first
    /// block alone left one thread doing most of the search. On 2 cores,
    /// `cayley info loopover:4x4` took 0.62–0.66 s of wall with 0.70–0.74 s
    /// of CPU split that way, and 0.35–0.36 s (the same CPU) split below
    /// enough prefixes; every `cayley run` and worker pays it first. Each
    /// node then compared only the symmetries its parent left undecided
    /// (see [`Self::advance`]): 0.37–0.51 s of wall and 0.70–0.94 s of CPU
    /// before, 0.19–0.24 s and 0.32–0.41 s after.
    fn enumerate_classes(&mut self) {
        if self.sizes.is_empty() {
            // One key, fixed by every symmetry.
            self.reps.push(0);
            self.stabilizers.push(self.actions.len() as u32);
            self.index = RankIndex::new(&self.reps, self.total);
            return;
        }
        (self.reps, self.stabilizers) = self.search(PARALLEL_SUBTREES_PER_THREAD * rayon::current_num_threads());
        self.index = RankIndex::new(&self.reps, self.total);
    }

    /// Every representative's rank and its stabiliser's order, in rank
    /// order: the subtrees below at least `subtrees` prefixes in parallel.
    fn search(&self, subtrees: usize) -> (Vec<u64>, Vec<u32>) {
        use rayon::prelude::*;
        let (depth, prefixes) = self.prefixes(subtrees);
        let found: Vec<Vec<(u64, u32)>> = prefixes
            .par_iter()
            .map(|&(rank, free, key)| {
                let mut out = Vec::new();
                let mut key = key;
                let mut lists = PendingLists::new(self.sizes.len(), self.actions.len());
                let root = self.every_symmetry_pending();
                self.advance(&key, depth, &root, lists.at(depth))
                    .expect("prefixes are kept only where no symmetry maps them below");
                for v in 0..self.radices[depth] {
                    self.visit(depth, v, free, rank, &mut key, &mut lists, &mut out);
                }
                out
            })
            .collect();
        // The parts copied into place on the pool, each into its own slice
        // of the two vectors: joined and then split on one thread, the 4×4
        // Loopover's 499,961 classes (6 MB) took 8 ms while every other
        // thread waited.
        let classes = found.iter().map(Vec::len).sum();
        let (mut reps, mut stabilizers) = (vec![0u64; classes], vec![0u32; classes]);
        let mut places = Vec::with_capacity(found.len());
        let (mut reps_left, mut stabilizers_left) = (&mut reps[..], &mut stabilizers[..]);
        for part in &found {
            let (r, rest) = std::mem::take(&mut reps_left).split_at_mut(part.len());
            let (s, rest_s) = std::mem::take(&mut stabilizers_left).split_at_mut(part.len());
            (reps_left, stabilizers_left) = (rest, rest_s);
            places.push((part, r, s));
        }
        places.into_par_iter().for_each(|(part, r, s)| {
            for ((&(rank, stabilizer), r), s) in part.iter().zip(r).zip(s) {
                (*r, *s) = (rank, stabilizer);
            }
        });
        (reps, stabilizers)
    }

    /// The nodes of the search with the first `depth` blocks fixed that
    /// pruning keeps, in rank order, each as the digits' rank, the slots
    /// still free and the key so far: the least `depth` (never the last
    /// block) with at least `wanted` nodes.
    fn prefixes(&self, wanted: usize) -> (usize, Vec<(u64, u64, Key)>) {
        let root = self.every_symmetry_pending();
        let mut scratch = Vec::with_capacity(root.len());
        let mut nodes = vec![(0u64, self.all_slots(), [0u64; MAX_BLOCKS])];
        let mut depth = 0;
        while nodes.len() < wanted && depth + 1 < self.sizes.len() {
            let mut next = Vec::new();
            for &(rank, free, key) in &nodes {
                let mut key = key;
                for value in 0..self.radices[depth] {
                    key[depth] = self
                        .binomials
                        .unrank(value, free & self.domains[depth], self.sizes[depth]);
                    if self.advance(&key, depth + 1, &root, &mut scratch).is_some() {
                        next.push((rank * self.radices[depth] + value, free & !key[depth], key));
                    }
                }
            }
            nodes = next;
            depth += 1;
        }
        (depth, nodes)
    }

    /// Every symmetry, nothing of its image compared yet.
    fn every_symmetry_pending(&self) -> Vec<Pending> {
        (0..self.actions.len() as u32)
            .map(|symmetry| Pending { symmetry, block: 0 })
            .collect()
    }

    /// Block `b` takes its `value`-th mask among the `free` slots (`rank`
    /// holds the digits of the blocks before, `lists.at(b)` the symmetries
    /// they leave undecided); then the later blocks, in rank order. Pushes
    /// each representative with its stabiliser's order.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        b: usize,
        value: u64,
        free: u64,
        rank: u64,
        key: &mut Key,
        lists: &mut PendingLists,
        out: &mut Vec<(u64, u32)>,
    ) {
        key[b] = self.binomials.unrank(value, free & self.domains[b], self.sizes[b]);
        let rank = rank * self.radices[b] + value;
        let (undecided, still) = lists.split(b);
        let Some(stabilizer) = self.advance(key, b + 1, undecided, still) else {
            return;
        };
        if b + 1 == self.sizes.len() {
            out.push((rank, stabilizer));
            return;
        }
        let free = free & !key[b];
        for next in 0..self.radices[b + 1] {
            self.visit(b + 1, next, free, rank, key, lists, out);
        }
    }

    /// With blocks `0..fixed` of `key` set, carries on comparing the image
    /// of each symmetry in `pending` (left undecided with fewer blocks
    /// fixed) with `key`: `None` when some symmetry now maps every
    /// completion below `key`; else the symmetries still undecided go to
    /// `still`, and the result is the number whose image is decided equal
    /// to `key` (the stabiliser's order once every block is fixed).
    ///
    /// An image decided greater stays greater below this node, for the
    /// blocks that decided it stay fixed there, so its symmetry is dropped:
    /// comparing every symmetry from the first block at every node took
    /// 0.70–0.94 CPU-seconds of `cayley info loopover:4x4` (128 symmetries).
    fn advance(&self, key: &Key, fixed: usize, pending: &[Pending], still: &mut Vec<Pending>) -> Option<u32> {
        use std::cmp::Ordering;
        still.clear();
        let blocks = self.sizes.len();
        let mut equal = 0u32;
        for &Pending { symmetry, mut block } in pending {
            let k = symmetry as usize;
            let from = &self.inverse_blocks[k];
            let mut order = Ordering::Equal;
            while (block as usize) < blocks {
                let b = block as usize;
                let source = from[b] as usize;
                if source >= fixed {
                    // Undecided: the image's block `b` is not known yet.
                    still.push(Pending { symmetry, block });
                    order = Ordering::Greater;
                    break;
                }
                // Image blocks `0..=b` come from `b + 1` distinct fixed
                // blocks, so `b < fixed`: `key[b]` is set.
                order = map_mask(&self.actions[k].0, key[source]).cmp(&key[b]);
                if order != Ordering::Equal {
                    break;
                }
                block += 1;
            }
            match order {
                Ordering::Less => return None,
                Ordering::Equal => equal += 1,
                Ordering::Greater => {}
            }
        }
        Some(equal)
    }
}

/// A symmetry whose image of a partial key is not decided against the key
/// yet: the image's blocks before `block` equal the key's.
#[derive(Clone, Copy, Debug)]
struct Pending {
    symmetry: u32,
    block: u8,
}

/// The undecided symmetries at each depth of one depth-first walk, kept
/// for the whole walk so that a node allocates nothing.
struct PendingLists {
    /// `lists[d]`: those left undecided with blocks `0..d` fixed.
    lists: Vec<Vec<Pending>>,
}

impl PendingLists {
    fn new(blocks: usize, symmetries: usize) -> PendingLists {
        PendingLists {
            lists: (0..=blocks).map(|_| Vec::with_capacity(symmetries)).collect(),
        }
    }

    fn at(&mut self, fixed: usize) -> &mut Vec<Pending> {
        &mut self.lists[fixed]
    }

    /// The list with `b` blocks fixed, to read, and the one with `b + 1`,
    /// to fill.
    fn split(&mut self, b: usize) -> (&[Pending], &mut Vec<Pending>) {
        let (before, after) = self.lists.split_at_mut(b + 1);
        (&before[b], &mut after[0])
    }
}

/// Radix of each block's digit: its slot sets among the slots of its domain
/// that the earlier blocks of that domain leave free (the last block of a
/// domain has one choice).
fn radices(binomials: &Binomials, sizes: &[u32], domains: &[u64]) -> Vec<u64> {
    (0..sizes.len())
        .map(|b| {
            let taken: u32 = (0..b).filter(|&e| domains[e] == domains[b]).map(|e| sizes[e]).sum();
            binomials.get(domains[b].count_ones() - taken, sizes[b])
        })
        .collect()
}

/// Number of keys of blocks of `sizes` in `domains`: the product of the
/// radices (for each domain, its multinomial coefficient).
pub fn key_count(sizes: &[u32], domains: &[u64]) -> u128 {
    radices(&Binomials::new(), sizes, domains)
        .iter()
        .map(|&r| r as u128)
        .product()
}

/// The domain of each block of pieces: the slots its pieces can reach,
/// i.e. the union of the orbits of `moves` that hold their home slots
/// (`home[p]`), joined where two blocks' unions meet, so that any two
/// domains are equal or disjoint.
pub fn block_domains(slots: usize, moves: &[&Perm], home: &[u8], blocks: &[Vec<u8>]) -> Vec<u64> {
    let mut orbit = vec![0u64; slots];
    let images = |x: usize| moves.iter().map(|m| m[x] as usize).collect();
    for slots_of_orbit in crate::puzzle::perm::orbits_of(slots, images) {
        let mask = slots_of_orbit.iter().fold(0u64, |m, &s| m | 1 << s);
        slots_of_orbit.iter().for_each(|&s| orbit[s] = mask);
    }
    let mut domains: Vec<u64> = blocks
        .iter()
        .map(|b| b.iter().fold(0, |m, &p| m | orbit[home[p as usize] as usize]))
        .collect();
    // Join overlapping domains until none overlap: each domain becomes the
    // union of those it meets (which only grows them), until nothing moves.
    loop {
        let mut changed = false;
        for a in 0..domains.len() {
            let this = domains[a];
            let joined = domains.iter().filter(|&&d| d & this != 0).fold(0, |m, &d| m | d);
            for d in domains.iter_mut().filter(|d| **d & this != 0) {
                changed |= *d != joined;
                *d = joined;
            }
        }
        if !changed {
            return domains;
        }
    }
}

/// For each block `s` that some symmetry maps to block 0, and each slot
/// set `m` that block `s` can hold: the least image of `m` under those
/// symmetries, and which of them give it. The least image of a key has
/// the least first block over all symmetries, so canonicalising looks that
/// up and compares the rest only for the symmetries listed (a few of the
/// 4×4 Loopover's 128). Comparing every symmetry's image mispredicted
/// about one branch in two.
#[derive(Clone, Debug)]
struct FirstBlocks {
    /// Where block `s`'s entries start, by the colex rank of its slot set
    /// among all slots; `None` when no symmetry maps it to block 0.
    offsets: Vec<Option<usize>>,
    entries: Vec<FirstBlock>,
    /// The lists of symmetries, ascending within each.
    symmetries: Vec<u32>,
}

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
    fn new(space: &KeySpace) -> Option<FirstBlocks> {
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
        let mut first = FirstBlocks {
            offsets: Vec::new(),
            entries: Vec::with_capacity(needed as usize),
            symmetries: Vec::new(),
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
struct RankIndex {
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

    fn new(reps: &[u64], total: u64) -> RankIndex {
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
    fn find(&self, reps: &[u64], rank: u64) -> Option<usize> {
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

/// The slots `mask` sent through `sigma`.
#[inline]
pub fn map_mask(sigma: &Perm, mask: u64) -> u64 {
    let mut out = 0u64;
    let mut bits = mask;
    while bits != 0 {
        out |= 1u64 << sigma[bits.trailing_zeros() as usize];
        bits &= bits - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::Metric;
    use crate::space::reduced::test_support::{space, PERMUTATIONS, SQUARES};

    const SPECS: [&str; 6] = [
        "loopover:3x4",
        "loopover:4x4",
        "loopover:2x5",
        "sliding:3x3",
        "varikon",
        SQUARES,
    ];

    /// The plain enumeration: keys in rank order, each one not yet marked
    /// starts a class whose images are then marked.
    fn marking(keys: &KeySpace) -> (Vec<u64>, Vec<u32>) {
        let mut seen = vec![false; keys.total() as usize];
        let (mut reps, mut stabilizers) = (Vec::new(), Vec::new());
        for rank in 0..keys.total() {
            if seen[rank as usize] {
                continue;
            }
            let key = keys.unrank(rank);
            let mut members = 0;
            for k in 0..keys.actions.len() {
                let image = keys.rank(&keys.apply(k, &key)) as usize;
                if !seen[image] {
                    seen[image] = true;
                    members += 1;
                }
            }
            reps.push(rank);
            stabilizers.push(keys.actions.len() as u32 / members);
        }
        (reps, stabilizers)
    }

    #[test]
    fn the_pruned_search_finds_the_classes_marking_finds() {
        for spec in ["loopover:3x4", "loopover:2x5", "sliding:3x3", "varikon", SQUARES] {
            let (_, r) = space(spec, Metric::Mtm);
            let keys = r.keys();
            let (reps, stabilizers) = marking(keys);
            assert_eq!(keys.reps, reps, "{}", spec);
            assert_eq!(keys.stabilizers, stabilizers, "{}", spec);
            // Cut below the first block, the first two, …, down to the
            // last but one: the same classes in the same order.
            let marked = (reps, stabilizers);
            for subtrees in [1, 2, 50, 5_000, usize::MAX] {
                assert_eq!(keys.search(subtrees), marked, "{} below {} subtrees", spec, subtrees);
            }
        }
    }

    #[test]
    fn looking_up_the_first_block_gives_the_least_image_of_every_symmetry() {
        for spec in SPECS {
            let (_, r) = space(spec, Metric::Mtm);
            let keys = r.keys();
            let first = keys.first.as_ref().expect("small spaces have the table");
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = keys.unrank(x % keys.total());
                let all = keys.least_image(&key, 0..keys.actions.len());
                assert_eq!(keys.least_image_via(first, &key), all, "{}", spec);
                let (class, k) = keys.canonicalize(&key);
                assert_eq!(keys.reps[class], all.0, "{}", spec);
                assert_eq!(k, all.1, "{}", spec);
                // The symmetry found maps the key onto its representative.
                assert_eq!(
                    keys.apply(k, &key)[..keys.blocks()],
                    keys.rep(class)[..keys.blocks()],
                    "{}",
                    spec
                );
            }
        }
    }

    /// Canonicalising keys together gives each its own canonical form:
    /// a shard's images under the moves, and random keys, some repeated.
    #[test]
    fn keys_canonicalised_together_are_canonicalised_each() {
        for spec in SPECS {
            let (puzzle, r) = space(spec, Metric::Mtm);
            let keys = r.keys();
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            let mut random = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                keys.unrank(x % keys.total())
            };
            for _ in 0..200 {
                let key = random();
                let mut batch: Vec<Key> = puzzle
                    .moves
                    .iter()
                    .map(|m| {
                        let mut image = [0u64; MAX_BLOCKS];
                        for b in 0..keys.blocks() {
                            image[b] = map_mask(&m.perm, key[b]);
                        }
                        image
                    })
                    .collect();
                batch.push(random());
                batch.push(batch[0]);
                let each: Vec<(usize, usize)> = batch.iter().map(|k| keys.canonicalize(k)).collect();
                assert_eq!(keys.canonicalize_each(&batch), each, "{}", spec);
            }
            assert!(keys.canonicalize_each(&[]).is_empty());
        }
    }

    /// Every representative is found at its position, and no other rank
    /// is: in a real space (crowded into few coarse ranges) and in made-up
    /// lists, one crowded at the start and one of a few far apart.
    #[test]
    fn the_rank_index_finds_exactly_the_representatives() {
        let (_, r) = space("loopover:3x4", Metric::Mtm);
        let keys = r.keys();
        let crowded: Vec<u64> = (0..5_000).chain((0..50).map(|i| 1_000_000 + 977 * i)).collect();
        let scattered = vec![3, 1 << 20, (1 << 20) + 1, 5 << 30];
        let cases = [
            (keys.reps.clone(), keys.total()),
            (crowded, 2_000_000),
            (scattered, 6 << 30),
        ];
        for (reps, total) in cases {
            let index = RankIndex::new(&reps, total);
            for (at, &rank) in reps.iter().enumerate() {
                assert_eq!(index.find(&reps, rank), Some(at));
                for other in [rank + 1, rank.wrapping_sub(1)] {
                    if reps.binary_search(&other).is_err() {
                        assert_eq!(index.find(&reps, other), None, "rank {}", other);
                    }
                }
            }
            assert_eq!(index.find(&reps, total + (1 << 40)), None);
        }
    }

    /// Each block's domain is the slots its pieces' move orbits cover,
    /// joined until domains are equal or disjoint: a block spanning two
    /// orbits joins them, and joins every block that meets either.
    #[test]
    fn domains_are_the_move_orbits_their_pieces_reach_joined() {
        let p = crate::puzzle::parse_puzzle(SQUARES, Metric::Mtm).unwrap();
        let moves: Vec<&Perm> = p.moves.iter().map(|m| &m.perm).collect();
        let mask = |slots: &[u8]| slots.iter().fold(0u64, |m, &s| m | 1 << s);
        // Slots alone: the squares group's five orbits (two corner
        // tetrads, three edge slices; slots numbered from 0).
        let alone: Vec<Vec<u8>> = (0..20).map(|s| vec![s]).collect();
        let domains = block_domains(20, &moves, &p.solved, &alone);
        let tetrads = [mask(&[0, 3, 5, 6]), mask(&[1, 2, 4, 7])];
        let slices = [mask(&[8, 11, 16, 19]), mask(&[9, 10, 17, 18]), mask(&[12, 13, 14, 15])];
        for (s, d) in domains.iter().enumerate() {
            let orbit = tetrads.iter().chain(&slices).find(|o| *o & 1 << s != 0).unwrap();
            assert_eq!(d, orbit, "slot {}", s);
        }
        // A block of corners and an edge joins the corners with the edge's
        // slice, and then the edges' blocks that meet that slice.
        let mixed = [
            vec![0, 1, 6, 7],
            vec![2, 3, 4, 5, 8],
            vec![9, 10, 12, 13, 19],
            vec![11, 16],
            vec![14, 15, 17, 18],
        ];
        assert_eq!(block_domains(20, &moves, &p.solved, &mixed), vec![(1 << 20) - 1; 5]);
        // The whole cube's face turns: corners and edges.
        let p = crate::puzzle::parse_puzzle(PERMUTATIONS, Metric::Mtm).unwrap();
        let moves: Vec<&Perm> = p.moves.iter().map(|m| &m.perm).collect();
        let domains = block_domains(20, &moves, &p.solved, &alone);
        assert!(domains[..8].iter().all(|&d| d == 0xff));
        assert!(domains[8..].iter().all(|&d| d == 0xfff << 8));
    }
}
