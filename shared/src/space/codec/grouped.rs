//! The two group rankings of puzzles of distinct pieces, and the choice
//! between them: both rank exactly the group's elements, and differ in the
//! low part, the states of one block.
//! - [`GroupRank`]: the pure twists a move carries along (the twist
//!   lattice). Its tables are rows per move, small however large the low
//!   part: the 2187 corner twists of a 2×2×2 in 157 KB.
//! - [`TailRank`]: the subgroup fixing the chain's first base slots, with
//!   its multiplication table (`W²` entries). Used when the twist lattice
//!   leaves blocks of fewer than [`TWIST_LOW_ENOUGH`] states, and the tail
//!   makes them larger: pieces without orientation (one state per block
//!   otherwise), or a few oriented ones; and the only one for identical
//!   pieces, whose positions are cosets of the solved state's stabiliser.

use super::group::{key_masks, shard_of_masks, ChainParts, GroupRank};
use super::tail::{TailRank, MAX_TAIL_STATES};
use super::twists::LowTables;
use super::CodecInput;

/// Twist-lattice blocks at least this large are kept: the kernel's work
/// per block is then small against its work per state.
const TWIST_LOW_ENOUGH: usize = 64;

/// A tail may always have this many elements: a small group is then one
/// block or a few (its table is at most 4,096 entries).
const MIN_TAIL_LIMIT: u64 = 64;

/// A source block's ranking (unrank the block, apply the move, sift the
/// block levels) against one table product: the weight that balanced the
/// skewb diamond at 384-state blocks, 0.08 s, against 96-state blocks at
/// 0.11 s with a weight of 1 (median of 5 runs each, 2026-11-26).
const RANK_COST: f64 = 4.0;

/// A group ranking (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum GroupRanking {
    Twists(GroupRank),
    Tail(TailRank),
}

impl GroupRanking {
    /// The ranking of a puzzle with distinct pieces, none wild, whose
    /// group has `group_order` elements; `None` when the chain does not
    /// account for them all.
    pub fn plan(input: &CodecInput, group_order: u128) -> Option<GroupRanking> {
        let parts = ChainParts::plan(input, group_order)?;
        if parts.identical {
            let limit = tail_limit(group_order, input.moves.len());
            return TailRank::plan(input, &parts, limit).map(GroupRanking::Tail);
        }
        let twists = GroupRank::plan(input, parts.clone());
        let twist_low = twists.as_ref().map_or(0, |t| t.low().states());
        if twist_low >= TWIST_LOW_ENOUGH {
            return twists.map(GroupRanking::Twists);
        }
        match TailRank::plan(input, &parts, tail_limit(group_order, input.moves.len())) {
            Some(tail) if tail.low().states() > twist_low => Some(GroupRanking::Tail(tail)),
            _ => twists.map(GroupRanking::Twists),
        }
    }

    /// Number of ranks.
    pub fn states(&self) -> u128 {
        self.key_states(0) as u128 * self.blocks_below(0) as u128 * self.low().states() as u128
    }

    /// The source block and label of `block` under each of `moves` (the
    /// kernel's inverse moves), when labels go with a block and a move (the
    /// tail ranking); false, and nothing called, otherwise.
    pub fn sources<'m>(
        &self,
        block: u64,
        moves: impl IntoIterator<Item = (&'m [u8], &'m [u8])>,
        each: impl FnMut(usize, u64, u64),
    ) -> bool {
        match self {
            GroupRanking::Twists(_) => false,
            GroupRanking::Tail(t) => {
                t.sources(block, moves, each);
                true
            }
        }
    }

    /// The low part's tables.
    pub fn low(&self) -> &LowTables {
        match self {
            GroupRanking::Twists(g) => g.low(),
            GroupRanking::Tail(t) => t.low(),
        }
    }

    /// How states are ranked, for people.
    pub fn describe(&self) -> &'static str {
        match self {
            GroupRanking::Twists(_) => "stabiliser chain of the pieces' places, then the twist lattice",
            GroupRanking::Tail(_) => {
                "stabiliser chain of the pieces' places and twists; a block is a coset of the chain's last levels"
            }
        }
    }

    /// Chain levels in the block part (the largest shard key).
    pub fn levels(&self) -> usize {
        match self {
            GroupRanking::Twists(g) => g.levels(),
            GroupRanking::Tail(t) => t.levels(),
        }
    }

    /// Values of the first `k` chain digits together (the shards).
    pub fn key_states(&self, k: usize) -> u64 {
        match self {
            GroupRanking::Twists(g) => g.key_states(k),
            GroupRanking::Tail(t) => t.key_states(k),
        }
    }

    /// Blocks per shard with a key of `k` levels.
    pub fn blocks_below(&self, k: usize) -> u64 {
        match self {
            GroupRanking::Twists(g) => g.blocks_below(k),
            GroupRanking::Tail(t) => t.blocks_below(k),
        }
    }

    /// Rank of a state; `w` is the low part's size.
    #[inline]
    pub fn rank(&self, cells: &[u8], twists: &[u8], w: u64) -> u64 {
        match self {
            GroupRanking::Twists(g) => g.rank_block(cells, twists) * w + g.rank_low(twists),
            GroupRanking::Tail(t) => {
                let (block, low) = t.rank(cells, twists);
                block * w + low
            }
        }
    }

    /// The block of a state.
    #[inline]
    pub fn rank_block(&self, cells: &[u8], twists: &[u8]) -> u64 {
        match self {
            GroupRanking::Twists(g) => g.rank_block(cells, twists),
            GroupRanking::Tail(t) => t.rank(cells, twists).0,
        }
    }

    /// Writes the state of rank `rank`.
    pub fn unrank(&self, rank: u64, w: u64, cells: &mut [u8], twists: &mut [u8]) {
        match self {
            GroupRanking::Twists(g) => {
                g.unrank_block(rank / w, cells, twists, false);
                g.unrank_low(rank % w, twists);
            }
            GroupRanking::Tail(t) => t.unrank(rank / w, rank % w, cells, twists),
        }
    }

    /// Writes the first state of `block`; returns its label (the twist
    /// lattice's; 0 for the tail, whose labels go with a move).
    pub fn unrank_block(&self, block: u64, cells: &mut [u8], twists: &mut [u8]) -> usize {
        match self {
            GroupRanking::Twists(g) => g.unrank_block(block, cells, twists, true) as usize,
            GroupRanking::Tail(t) => {
                t.unrank(block, 0, cells, twists);
                0
            }
        }
    }

    /// The slots of the pieces of the first `k` levels in shard `shard`.
    pub fn key_masks(&self, shard: u64, k: usize) -> Vec<u64> {
        match self {
            GroupRanking::Twists(g) => g.key_masks(shard, k),
            GroupRanking::Tail(t) => key_masks(t.rank_levels(), shard, k),
        }
    }

    /// The shard whose first `masks.len()` levels' pieces sit in `masks`.
    pub fn shard_of_masks(&self, masks: &[u64]) -> u64 {
        match self {
            GroupRanking::Twists(g) => g.shard_of_masks(masks),
            GroupRanking::Tail(t) => shard_of_masks(t.rank_levels(), masks),
        }
    }
}

/// Largest tail for a group of `order` elements and `moves` moves: the
/// table costs `W²` products once, the source blocks `order / W · moves`
/// rankings of about [`RANK_COST`] products each, so about
/// `(RANK_COST · order · moves)^(1/3)`, at most [`MAX_TAIL_STATES`] and at
/// least [`MIN_TAIL_LIMIT`].
fn tail_limit(order: u128, moves: usize) -> u64 {
    let balanced = (RANK_COST * order as f64 * moves.max(1) as f64).cbrt() as u64;
    balanced.clamp(MIN_TAIL_LIMIT, MAX_TAIL_STATES)
}
