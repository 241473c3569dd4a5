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
use canonical::{FirstBlocks, RankIndex};

// Ranking and moving keys are here; finding a key's class is in
// `canonical`, finding every class once in `classes`.
mod canonical;
mod classes;
#[cfg(test)]
mod tests;

/// Most blocks a partition may have.
pub const MAX_BLOCKS: usize = 32;

/// Slot sets of the blocks, one mask per block.
pub type Key = [u64; MAX_BLOCKS];

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
        self.rank_blocks(&key[..self.blocks()])
    }

    /// Rank of the key whose blocks' slot sets are `blocks` (one per block).
    fn rank_blocks(&self, blocks: &[u64]) -> u64 {
        let mut free = self.all_slots();
        let mut rank = 0u64;
        for ((&set, &radix), &domain) in blocks.iter().zip(&self.radices).zip(&self.domains) {
            rank = rank * radix + self.binomials.rank(set, free & domain);
            free &= !set;
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
