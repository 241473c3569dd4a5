//! Ranking of general states: identical pieces and oriented pieces.
//!
//! The block layout ([`crate::space::layout`]) ranks permutations of distinct
//! pieces. Partial puzzles (`--track`), `.tws` files with identical pieces
//! and oriented pieces need more: a state is the **class** of the piece in
//! every slot (pieces of one class are indistinguishable) and the **twist**
//! of every slot's content. This module ranks such states perfectly.
//!
//! Digits, most significant first:
//! 1. one per class and slot orbit, in class order: which of the slots still
//!    free in the orbit the class occupies, as a combination rank (colex).
//!    For a class of one piece that is a Lehmer digit, so tracking pieces
//!    ranks their partial permutation; the last class of an orbit has one
//!    choice.
//! 2. the twists of each oriented slot orbit (`twists`). When every move
//!    keeps an orbit's twist sum, the twist of the orbit's last slot follows
//!    from the others (3⁷ instead of 3⁸ for a cube's corners). Orbits whose
//!    pieces all keep their orientation come last, as the **low part**.
//!
//! A rank is `block · W + low`: the low part (`W` values) is the twists of
//! whole orbits, which a move maps through one table row whatever the rest
//! of the state is, and the **block** is everything else, which a move maps
//! as a whole to one block. The **shard** is the first `k` class digits:
//! where the first `k` classes sit. A move maps slot sets to slot sets, so
//! every state of a target shard has its predecessors under one move in one
//! source shard, exactly as with the block layout, and a task is still
//! `(level, shard)`.

mod arrangement;
mod chain;
mod group;
mod grouped;
mod lattice;
mod plan;
mod tail;
mod twists;

use crate::space::colex::Binomials;
use grouped::GroupRanking;
pub use twists::LowTables;
use twists::{unrank_low, TwistOrbit};

/// Shards are sized to hold at most this many bits when `k` is automatic.
/// Unlike the block layout's, a coded level is not cut further toward
/// `layout::MIN_SHARDS`: twsearch's `tangram` in 30 shards instead of 6
/// took 1.70–2.13 s on 2 threads against 1.43–1.96 s, medians 1.81 and
/// 1.67 s (docs/history.md, "Enough shards for a node's threads").
const TARGET_SHARD_BITS: u64 = (crate::space::layout::TARGET_SHARD_BYTES as u64) * 8;

/// Largest number of slots a coded state may have (slot sets are `u64` masks).
pub const MAX_CODED_SLOTS: usize = 64;

/// One class digit: where a class's pieces sit in one orbit.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ClassDigit {
    /// Class id (the value stored in a slot).
    class: u8,
    /// Pieces of the class in this orbit.
    count: u32,
    /// Slots of the orbit the class lives in.
    orbit: u64,
    /// Number of values the digit takes.
    radix: u64,
}

/// A perfect ranking of coded states and its shard plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codec {
    slots: usize,
    /// Number of class ids (`max class + 1`).
    class_count: usize,
    classes: Vec<ClassDigit>,
    /// Twist digits of each oriented orbit, in rank order.
    twists: Vec<TwistOrbit>,
    /// Index in `twists` of the first orbit of the low part.
    first_low: usize,
    /// Index in `classes` of the first digit of the low part (the
    /// arrangement of one orbit, `codec/arrangement.rs`; `classes.len()`
    /// when the low part is twists).
    first_low_class: usize,
    /// Classes whose orientation is ignored (indexed by class, 256 long).
    wild: Vec<bool>,
    low: LowTables,
    /// The group ranking, when it replaces the class digits and twists
    /// (distinct pieces, fewer ranks: see `codec/grouped.rs`).
    group: Option<Box<GroupRanking>>,
    /// Class digits (or chain levels) in the shard key (`k`).
    pub shard_classes: usize,
    /// Blocks per shard.
    shard_blocks: u64,
    /// Number of shards.
    shards: u64,
    binomials: Binomials,
}

/// What the codec needs to know about a puzzle.
pub struct CodecInput<'a> {
    /// Class in each slot of the solved state.
    pub solved_cells: &'a [u8],
    /// Twist of each slot in the solved state.
    pub solved_twists: &'a [u8],
    /// Orientation modulus of each slot (1 = no orientation).
    pub modulus: &'a [u8],
    /// Classes whose orientation is ignored (indexed by class; empty = none).
    pub wild: &'a [bool],
    /// Slot permutation and twist of every move (twist empty = none), in
    /// the order of the puzzle's moves: the low tables are indexed so.
    pub moves: Vec<(&'a [u8], &'a [u8])>,
    /// Slots a move's guard reads, one bit each.
    pub guarded_slots: u64,
    /// The order of the group the moves generate on slots and twists, when
    /// the states are its elements or their cosets (no guards, no wild
    /// pieces): the group ranking is then tried, and used when it ranks
    /// fewer states.
    pub group_order: Option<u128>,
}

/// A codec that cannot be planned.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecError {
    #[error("{slots} slots; coded states support at most {max}")]
    TooManySlots { slots: usize, max: usize },
    #[error("about {states:.3e} states; ranks must fit in 64 bits")]
    TooManyStates { states: f64 },
    #[error("--shard-pieces {asked} is out of range: this puzzle allows 0..={max}")]
    BadShardPieces { asked: usize, max: usize },
}

impl Codec {
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Number of ranks (states, reachable or not).
    pub fn states(&self) -> u128 {
        self.shards as u128 * self.shard_states() as u128
    }

    /// Number of shards.
    pub fn shards(&self) -> u64 {
        self.shards
    }

    /// Ranks per shard.
    pub fn shard_states(&self) -> u64 {
        self.shard_blocks * self.low.states() as u64
    }

    /// Blocks per shard.
    pub fn shard_blocks(&self) -> u64 {
        self.shard_blocks
    }

    /// The low part's tables; `states()` is `W`, the ranks per block.
    pub fn low(&self) -> &LowTables {
        &self.low
    }

    /// Number of class digits, or chain levels (the largest shard key).
    pub fn class_digits(&self) -> usize {
        self.group.as_ref().map_or(self.first_low_class, |g| g.levels())
    }

    /// True when states are ranked by the group (`codec/grouped.rs`): exactly the
    /// reachable ones.
    pub fn is_group_ranked(&self) -> bool {
        self.group.is_some()
    }

    /// How states are ranked, for people.
    pub fn describe(&self) -> &'static str {
        match &self.group {
            Some(g) => g.describe(),
            None if self.first_low_class < self.classes.len() => {
                "places of each piece class; a block's states are one orbit's arrangements"
            }
            None => "places of each piece class, then twists",
        }
    }

    /// Rank of a state given as slot classes and slot twists.
    pub fn rank(&self, cells: &[u8], twists: &[u8]) -> u64 {
        self.rank_with(cells, twists, &mut [0u64; MAX_CODED_SLOTS])
    }

    /// [`Codec::rank`] with a caller's scratch array (the kernel ranks in its
    /// inner loop; clearing a fresh 512-byte array per call showed up in
    /// profiles).
    #[inline]
    pub fn rank_with(&self, cells: &[u8], twists: &[u8], masks: &mut [u64; MAX_CODED_SLOTS]) -> u64 {
        if let Some(group) = &self.group {
            return group.rank(cells, twists, self.low.states() as u64);
        }
        let block = self.rank_block(cells, twists, masks);
        if self.first_low_class < self.classes.len() {
            return block * self.low.states() as u64 + self.rank_low_classes(masks);
        }
        self.twists[self.first_low..]
            .iter()
            .fold(block, |r, t| t.rank(r, cells, twists, &self.wild))
    }

    /// The block of a state: every digit but the low part. Reads the twists
    /// of the block part's slots only.
    #[inline]
    pub fn rank_block(&self, cells: &[u8], twists: &[u8], masks: &mut [u64; MAX_CODED_SLOTS]) -> u64 {
        if let Some(group) = &self.group {
            return group.rank_block(cells, twists);
        }
        masks[..self.class_count].fill(0);
        for (slot, &class) in cells[..self.slots].iter().enumerate() {
            masks[class as usize] |= 1 << slot;
        }
        let rank = self.rank_digits(&self.classes[..self.first_low_class], masks);
        self.twists[..self.first_low]
            .iter()
            .fold(rank, |r, t| t.rank(r, cells, twists, &self.wild))
    }

    /// Mixed-radix rank of class `digits` (a run of `self.classes` holding
    /// whole orbits); `masks` holds each class's slots.
    #[inline]
    fn rank_digits(&self, digits: &[ClassDigit], masks: &[u64]) -> u64 {
        let mut rank = 0u64;
        let mut taken = 0u64;
        for digit in digits {
            let free = digit.orbit & !taken;
            let mask = masks[digit.class as usize] & digit.orbit;
            taken |= mask;
            rank = rank * digit.radix + self.combination_rank(mask, free);
        }
        rank
    }

    /// Writes the classes of `digits`' value `value` (see
    /// [`Codec::rank_digits`]) into `cells`.
    fn unrank_digits(&self, digits: &[ClassDigit], mut value: u64, cells: &mut [u8]) {
        let mut values = [0u64; MAX_CODED_SLOTS];
        for (v, digit) in values.iter_mut().zip(digits).rev() {
            *v = value % digit.radix;
            value /= digit.radix;
        }
        let mut taken = 0u64;
        for (digit, &v) in digits.iter().zip(&values) {
            let mask = self.unrank_combination(v, digit.orbit & !taken, digit.count);
            taken |= mask;
            let mut bits = mask;
            while bits != 0 {
                cells[bits.trailing_zeros() as usize] = digit.class;
                bits &= bits - 1;
            }
        }
    }

    /// Colex rank of the slots `mask` among the slots `free`.
    #[inline]
    fn combination_rank(&self, mask: u64, free: u64) -> u64 {
        if mask & mask.wrapping_sub(1) == 0 {
            // One piece: its position among the free slots.
            return (free & mask.wrapping_sub(1)).count_ones() as u64;
        }
        let mut value = 0u64;
        let mut bits = mask;
        let mut i = 1;
        while bits != 0 {
            let position = (free & ((1u64 << bits.trailing_zeros()) - 1)).count_ones();
            value += self.binomials.get(position, i);
            i += 1;
            bits &= bits - 1;
        }
        value
    }

    /// The state with rank `rank`, written into `cells` and `twists` (both
    /// `slots` long).
    pub fn unrank(&self, rank: u64, cells: &mut [u8], twists: &mut [u8]) {
        let w = self.low.states() as u64;
        if let Some(group) = &self.group {
            group.unrank(rank, w, cells, twists);
            return;
        }
        self.unrank_block(rank / w, cells, twists);
        if self.first_low_class < self.classes.len() {
            self.unrank_low_classes(rank % w, cells);
            return;
        }
        unrank_low(&self.twists[self.first_low..], rank % w, cells, twists, &self.wild);
    }

    /// The classes of every slot and the twists of the block part's slots
    /// of block `block` (other twists are left as they are).
    pub fn unrank_block(&self, block: u64, cells: &mut [u8], twists: &mut [u8]) {
        self.unrank_block_label(block, cells, twists);
    }

    /// [`Codec::unrank_block`], returning the block's label: the row of the
    /// low tables a move into this block uses ([`LowTables`]).
    pub fn unrank_block_label(&self, mut block: u64, cells: &mut [u8], twists: &mut [u8]) -> usize {
        if let Some(group) = &self.group {
            return group.unrank_block(block, cells, twists);
        }
        let mut twist_values = [0u64; MAX_CODED_SLOTS];
        for (value, orbit) in twist_values.iter_mut().zip(&self.twists[..self.first_low]).rev() {
            *value = block % orbit.radix;
            block /= orbit.radix;
        }
        self.unrank_digits(&self.classes[..self.first_low_class], block, cells);
        // Wild orbits read the classes, so twists come after them.
        for (orbit, &value) in self.twists[..self.first_low].iter().zip(&twist_values) {
            orbit.unrank(value, cells, twists, &self.wild);
        }
        0
    }

    /// The slots (a subset of `free` of `count` slots) with colex rank `value`.
    fn unrank_combination(&self, mut value: u64, free: u64, count: u32) -> u64 {
        if count == 1 {
            // A single piece (the common, tracked case): the digit is its
            // position among the free slots.
            return 1 << crate::space::rank::select_bit(free, value as u32);
        }
        let mut mask = 0u64;
        let mut position = free.count_ones();
        for i in (1..=count).rev() {
            position -= 1;
            while self.binomials.get(position, i) > value {
                position -= 1;
            }
            value -= self.binomials.get(position, i);
            mask |= 1 << crate::space::rank::select_bit(free, position);
        }
        mask
    }

    /// Shard and index inside the shard of a rank.
    #[inline]
    pub fn split(&self, rank: u64) -> (u64, u64) {
        (rank / self.shard_states(), rank % self.shard_states())
    }

    /// The source block and label (both in the whole space) of block
    /// `block` under each of the kernel's inverse moves (`to`, `twist`),
    /// as `each(m, source, label)`, when the low tables' labels go with a
    /// block and a move ([`LowTables::labels_per_move`]); false, and
    /// nothing called, otherwise.
    pub fn sources_and_labels<'m>(
        &self,
        block: u64,
        moves: impl IntoIterator<Item = (&'m [u8], &'m [u8])>,
        each: impl FnMut(usize, u64, u64),
    ) -> bool {
        self.group.as_ref().is_some_and(|g| g.sources(block, moves, each))
    }

    /// The slot sets of the shard key's classes for `shard`.
    pub fn key_masks(&self, shard: u64) -> Vec<u64> {
        let k = self.shard_classes;
        if let Some(group) = &self.group {
            return group.key_masks(shard, k);
        }
        let mut values = vec![0u64; k];
        let mut rest = shard;
        for (value, digit) in values.iter_mut().zip(&self.classes[..k]).rev() {
            *value = rest % digit.radix;
            rest /= digit.radix;
        }
        let mut taken = 0u64;
        self.classes[..k]
            .iter()
            .zip(values)
            .map(|(digit, value)| {
                let mask = self.unrank_combination(value, digit.orbit & !taken, digit.count);
                taken |= mask;
                mask
            })
            .collect()
    }

    /// The shard whose key classes occupy `masks`.
    pub fn shard_of_masks(&self, masks: &[u64]) -> u64 {
        if let Some(group) = &self.group {
            return group.shard_of_masks(masks);
        }
        let mut shard = 0u64;
        let mut taken = 0u64;
        for (digit, &mask) in self.classes.iter().zip(masks) {
            let free = digit.orbit & !taken;
            taken |= mask;
            shard = shard * digit.radix + self.combination_rank(mask, free);
        }
        shard
    }
}

#[cfg(test)]
mod tests;
