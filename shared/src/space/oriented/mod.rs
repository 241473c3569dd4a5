//! Distinct oriented pieces reduced by symmetry: one block of twists per
//! class of arrangements.
//!
//! A state is an arrangement (the class in each slot, a permutation) and a
//! twist per slot. The puzzle's symmetries
//! ([`crate::puzzle::symmetry::oriented`]) act on arrangements by their
//! slot maps alone, so arrangements fall into classes; each class is
//! represented by its least arrangement (rank, `arrangements.rs`), and its **block**
//! holds one bit per twist vector of that arrangement: the state `(p, t)`
//! with `p` a representative. Any other state is stored as the conjugate
//! that brings its arrangement to the representative. A conjugation's
//! twists depend on which piece sits where (`u·t + a(y) − a(h)`), so the
//! map a move and a conjugation make of a block's twists is an affine map
//! worked out per block and move ([`AffineMap`]), not a fixed table.
//!
//! Used when the twists are independent of the arrangement: every move
//! keeps the twist sum of each orbit of slots, and the group is exactly the
//! reachable arrangements times the twist vectors of sum 0 per orbit (its
//! order says so). A block stores all `Π modulus` twist vectors, those of a
//! nonzero sum never set: with them the index map is a sum of per-digit
//! terms (the last digit of an orbit, forced by the others, would make it
//! depend on all of them). On the 2×2×2 (48 symmetries) that is 984
//! classes of 6,561 bits, 6.5 million bits for 88 million states.
//!
//! Where every digit is a flip (modulus 2), the last flip of an orbit of
//! constant sum is left out of the index instead, so a block holds only
//! valid twist vectors: the index is then a vector over GF(2), the forced
//! flip the sum of the others, and the map stays affine, its half tables
//! combined with XOR ([`Join`]). On the 3×3×3's edges that halves a level,
//! 4.8 → 2.4 GiB.
//!
//! The bits of a block are complete: every twist vector of the
//! representative's level states is set, so the block is closed under the
//! representative's stabiliser and any symmetry that canonicalises an
//! arrangement may be used. A stored bit of a class stands for
//! `|Σ| / |Stab(p)|` states; shards hold classes of one stabiliser order.

mod affine;
mod arrangements;
mod least;
mod plan;
mod predecessors;

pub use affine::AffineMap;
use arrangements::Arrangements;
use least::{LeastImages, RepIndex};
use predecessors::PredecessorCache;

use crate::puzzle::symmetry::oriented::OrientedSymmetries;

/// Most arrangements tabulated (`Π k!` over orbits of `k` slots, entries of
/// 6 bytes); above, each arrangement's class is computed when needed
/// (the computed class index, `least.rs`).
pub const MAX_ARRANGEMENT_TABLE: u128 = 1 << 22;

/// Most arrangements whose classes are computed: every rank is tested once
/// when the space is planned (12!, the 3×3×3's edges, takes about a minute
/// on two cores).
pub const MAX_COMPUTED_ARRANGEMENTS: u128 = 1 << 30;

/// How an arrangement's class and canonicalising element are found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ClassIndex {
    /// Looked up: per rank, the class (`u32::MAX` when unreachable) and the
    /// element that maps it to its class's representative.
    Table { class_of: Vec<u32>, via: Vec<u16> },
    /// Computed: the least image under the symmetries (every arrangement
    /// reachable), and its class from an index of the representatives'
    /// ranks. A table would take 6 bytes an arrangement: 2.9 GB for the
    /// 3×3×3's 12! edge arrangements, where the index takes 104 MB.
    Computed { images: LeastImages, reps: RepIndex },
}

/// Most twist vectors of a block (indices are 32-bit, tables per half).
pub const MAX_BLOCK_STATES: u64 = 1 << 24;

/// Classes per shard, at most.
const CLASSES_PER_SHARD: usize = 64;

/// The orbits of slots, their moduli and the twist sums they reach (every
/// multiple of `sum_step`), once the twists are known to be independent of
/// the arrangement.
#[derive(Clone, Debug)]
pub struct TwistLattice {
    orbits: Vec<Vec<usize>>,
    modulus: Vec<u8>,
    sum_step: Vec<u32>,
    /// Whether every arrangement (`Π k!`) is reachable.
    all_arrangements: bool,
}

/// The reduced space of distinct oriented pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrientedSpace {
    /// The symmetries reduced by.
    pub symmetries: OrientedSymmetries,
    modulus: Vec<u8>,
    /// Values of each slot's twist digit: its modulus, or 1 for a slot no
    /// move takes anywhere (its twist stays 0: the sum of its orbit) and
    /// for a derived slot (its flip follows from the others').
    radix: Vec<u8>,
    /// Mixed-radix stride of each slot's twist in a block index.
    stride: Vec<u64>,
    /// Twist vectors per block.
    block_states: u64,
    block_words: usize,
    /// Twist vectors of sum 0 in every orbit, as a block's bits.
    valid: Vec<u64>,
    /// Block indices split as `lo + split · hi` for the half tables.
    split: u64,
    /// Slots whose twist is not a digit of the block index: the last slot
    /// of each orbit of flips (modulus 2) whose sum never changes, whose
    /// flip is the sum of the others' ([`Self::twists_at`]). Empty unless
    /// every digit is a flip.
    derived: Vec<Derived>,
    /// Per slot: the index in `derived` of its orbit's derived slot, if any.
    derived_of: Vec<Option<u8>>,
    /// How arrangements are ranked.
    arrangements: Arrangements,
    /// How an arrangement's class is found.
    index: ClassIndex,
    /// Per class: the representative's rank (classes in order of
    /// stabiliser, descending, then representative).
    reps: Vec<u64>,
    /// Per class: the order of the representative's stabiliser.
    stabilizer: Vec<u32>,
    /// First class of each shard, and the class count at the end.
    shard_first: Vec<u32>,
    /// The puzzle's moves.
    moves: usize,
    /// Where classes' predecessors lie, kept across levels
    /// (`predecessors.rs`); none where an entry could not hold them.
    predecessors: Option<PredecessorCache>,
}

/// A slot whose flip is the sum (mod 2) of the other slots of its orbit.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Derived {
    slot: usize,
    others: Vec<usize>,
}

/// How the two half tables of a block index map combine
/// ([`AffineMap::tables`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// `lo + hi`: every digit maps to one digit (mixed radix, no carries).
    Add,
    /// `lo ^ hi`: every digit is a flip and some flips are derived from
    /// others, so the map is affine over GF(2).
    Xor,
}

impl Join {
    /// The index that half-table values `lo` and `hi` stand for.
    pub fn of(self, lo: u32, hi: u32) -> u32 {
        match self {
            Join::Add => lo + hi,
            Join::Xor => lo ^ hi,
        }
    }
}

impl OrientedSpace {
    /// Number of shards.
    pub fn shards(&self) -> u64 {
        self.shard_first.len() as u64 - 1
    }

    /// Number of classes of arrangements (blocks).
    pub fn classes(&self) -> usize {
        self.reps.len()
    }

    /// Words of one block.
    pub fn block_words(&self) -> usize {
        self.block_words
    }

    /// Twist vectors of one block.
    pub fn block_states(&self) -> u64 {
        self.block_states
    }

    /// Words of a shard (the most classes a shard holds, in blocks).
    pub fn shard_words(&self) -> usize {
        CLASSES_PER_SHARD.min(self.classes()) * self.block_words
    }

    /// Bits of a level that stand for twist vectors.
    pub fn states(&self) -> u128 {
        self.classes() as u128 * self.block_states as u128
    }

    /// The classes of `shard`.
    pub fn shard_classes(&self, shard: u64) -> std::ops::Range<usize> {
        self.shard_first[shard as usize] as usize..self.shard_first[shard as usize + 1] as usize
    }

    /// The shard of a class and its position there.
    pub fn place_of(&self, class: usize) -> (u64, usize) {
        let shard = self.shard_first.partition_point(|&f| f as usize <= class) - 1;
        (shard as u64, class - self.shard_first[shard] as usize)
    }

    /// The valid twist vectors of a block, as its bits.
    pub fn valid(&self) -> &[u64] {
        &self.valid
    }

    /// States each stored bit of `shard` stands for.
    pub fn weight(&self, shard: u64) -> u64 {
        let first = self.shard_first[shard as usize] as usize;
        (self.symmetries.order() as u32 / self.stabilizer[first]) as u64
    }

    /// The representative arrangement of `class`.
    pub fn rep(&self, class: usize) -> Vec<u8> {
        self.arrangements.unrank(self.reps[class])
    }

    /// The class of an arrangement and the element that maps it to the
    /// class's representative.
    pub fn canonical(&self, cells: &[u8]) -> (usize, usize) {
        match &self.index {
            ClassIndex::Table { class_of, via } => {
                let rank = self.arrangements.rank(cells) as usize;
                (class_of[rank] as usize, usize::from(via[rank]))
            }
            ClassIndex::Computed { images, reps } => {
                let (rep, k, _) = images.least(&self.arrangements, cells);
                let class = reps.class(rep).expect("every least image is a class's representative");
                (class, k)
            }
        }
    }

    /// Block index of a state's twists (a derived slot's is implied).
    pub fn twist_index(&self, twists: &[u8]) -> u64 {
        twists
            .iter()
            .zip(&self.stride)
            .zip(&self.radix)
            .filter(|(_, &radix)| radix > 1)
            .map(|((&t, &s), _)| u64::from(t) * s)
            .sum()
    }

    /// The twist of every slot at block index `index`.
    pub fn twists_at(&self, index: u64) -> Vec<u8> {
        let mut twists: Vec<u8> = self
            .stride
            .iter()
            .zip(&self.radix)
            .map(|(&stride, &radix)| ((index / stride) % u64::from(radix)) as u8)
            .collect();
        for d in &self.derived {
            twists[d.slot] = d.others.iter().fold(0, |sum, &s| sum ^ twists[s]);
        }
        twists
    }

    /// How the half tables of this space's index maps combine.
    pub fn join(&self) -> Join {
        if self.derived.is_empty() {
            Join::Add
        } else {
            Join::Xor
        }
    }

    /// Shard, word and bit of a coded state.
    pub fn locate(&self, state: &[u8]) -> (u64, usize, u32) {
        let n = self.modulus.len();
        let (class, k) = self.canonical(&state[..n]);
        let image = self.symmetries.conjugate(k, state);
        let index = self.twist_index(&image[n..]);
        let (shard, position) = self.place_of(class);
        let bit = position as u64 * self.block_words as u64 * 64 + index;
        (shard, (bit / 64) as usize, (bit % 64) as u32)
    }

    /// The stored state at `bit` of `shard`.
    pub fn state_at(&self, shard: u64, bit: usize) -> Vec<u8> {
        let block_bits = self.block_words * 64;
        let class = self.shard_classes(shard).start + bit / block_bits;
        let index = (bit % block_bits) as u64;
        let mut state = self.rep(class);
        state.extend(self.twists_at(index));
        state
    }

    /// Classes of states among the set bits of `shard`: Burnside's lemma
    /// over each representative's stabiliser.
    pub fn classes_in(&self, shard: u64, words: &[u64]) -> u64 {
        let mut total = 0u64;
        for (position, class) in self.shard_classes(shard).enumerate() {
            let block = &words[position * self.block_words..(position + 1) * self.block_words];
            if self.stabilizer[class] == 1 {
                total += crate::space::bits::popcount(block);
                continue;
            }
            let rep = self.rep(class);
            let mut image = vec![0u8; rep.len()];
            let mut fixed = 0u64;
            let mut stabilizer = 0u64;
            for k in 0..self.symmetries.order() {
                self.symmetries.conjugate_cells(k, &rep, &mut image);
                if image != rep {
                    continue;
                }
                stabilizer += 1;
                let map = AffineMap::new(self, &rep, None, k);
                let (lo, hi) = map.tables(self, false);
                let join = self.join();
                fixed += crate::space::bits::set_bits(block)
                    .filter(|&i| {
                        let i = i as u64;
                        join.of(lo[(i % self.split) as usize], hi[(i / self.split) as usize]) == i as u32
                    })
                    .count() as u64;
            }
            total += fixed / stabilizer;
        }
        total
    }

    /// Number of symmetries reduced by.
    pub fn order(&self) -> usize {
        self.symmetries.order()
    }

    /// Bytes of the arrangement tables (the class and the canonicalising
    /// element of every arrangement, or the computed index; the classes;
    /// and the predecessor cache).
    pub fn table_bytes(&self) -> u64 {
        let per_rank = match &self.index {
            ClassIndex::Table { class_of, .. } => class_of.len() * 6,
            ClassIndex::Computed { reps, .. } => reps.bytes() as usize,
        };
        (per_rank + self.reps.len() * 12 + self.valid.len() * 8) as u64 + self.predecessor_cache_bytes()
    }

    /// Index split of the half tables.
    pub fn split(&self) -> u64 {
        self.split
    }
}

#[cfg(test)]
mod tests;
