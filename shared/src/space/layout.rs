//! The shard plan: how a state's rank splits into shard, block and low part,
//! and how a move carries a whole block onto another block.
//!
//! Pieces are ranked in order `0..n`. The first `k` pieces' slots form the
//! **shard** key (a coset of their stabiliser, a contiguous rank range). The
//! last `L` pieces form the **low** part: their arrangement among the `L`
//! slots the others leave free is a permutation of `0..L`, ranked
//! lexicographically (or by half-rank when only even states exist). The pieces
//! before the low part form the **block** key; a block's `L!` (or `L!/2`)
//! states are one small bit array, padded to whole 64-bit words.
//!
//! A slot permutation `h` maps every state of block `b` into one block
//! `h(b)` and acts on the low part as a fixed permutation `τ` of `0..L`, so a
//! whole block moves with one table row (the kernel's low table).

use crate::puzzle::perm::Perm;
use crate::puzzle::perm::MAX_RANKED_POINTS;
use crate::puzzle::Puzzle;
use crate::space::rank::{factorial, falling_factorial, rank_prefix, unrank_prefix};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Default number of low pieces: `7! = 5040` states per block keeps the low
/// table (`L!²` entries) at 50 MB and the per-block bookkeeping negligible.
/// Spaces with fewer states than that table has entries get a smaller low
/// part ([`low_pieces_for`]).
pub const DEFAULT_LOW_PIECES: usize = 7;

/// Fewest low pieces a space gets when it has that many pieces to spare:
/// `4!² = 576` entries (1.1 KiB), where a block of 24 (or 12) states still
/// fills most of its 64-bit word.
pub const MIN_LOW_PIECES: usize = 4;

/// Low pieces of a space of `states` states with `spare` pieces outside the
/// block key's minimum: the largest `L ≤ DEFAULT_LOW_PIECES` whose low table
/// has no more entries (`L!²`) than the space has states, but at least
/// [`MIN_LOW_PIECES`] (and at most `spare`). The table is built eagerly, so
/// on a small space the default `L = 7` cost far more than the search: 50 MB
/// and 0.15 s of CPU for the 20,160 states of a pyramorphix.
pub fn low_pieces_for(states: u128, spare: usize) -> usize {
    let fits = |l: usize| factorial(l) * factorial(l) <= states;
    let sized = (MIN_LOW_PIECES..=DEFAULT_LOW_PIECES)
        .rev()
        .find(|&l| fits(l))
        .unwrap_or(MIN_LOW_PIECES);
    sized.min(spare)
}

/// Blocks per unit of progress (the kernel's callback per unit, and
/// rayon's smallest piece of work): one callback per block cost more than
/// the block itself on the 60-state blocks of a small space.
pub const BLOCKS_PER_UNIT: usize = 16;

/// Shards are sized to hold at most this many bytes of bits when the
/// number of shard pieces is chosen automatically: a shard is what a worker
/// holds in memory and the kernel works on, so a task's working set (its
/// sources, one per move) stays a few hundred MB; chunks group shards into
/// bigger files (the job's chunking).
pub const TARGET_SHARD_BYTES: u128 = 8 << 20;

/// Shards a level over [`TARGET_SHARD_BYTES`] is cut into, at least, when
/// shards of [`MIN_SPLIT_SHARD_BYTES`] or more allow: a shard's fetch,
/// compression and cache bookkeeping run on one thread, so a level of 12
/// shards (the 2×6 Loopover unreduced, `pancake:12`) kept at most 4 of them
/// in flight on 16 threads. The block layout only: coded spaces cut finer
/// ran slower on 2 threads (`codec::TARGET_SHARD_BITS`).
pub const MIN_SHARDS: u64 = 64;

/// Smallest shard that [`MIN_SHARDS`] cuts a level into: below it a shard's
/// fixed costs (its file entry, its transitions' set-up, its cache entry)
/// would show. The 2×6 Loopover unreduced in shards of 4.8 MiB, 444 KiB
/// and 44 KiB ran equally fast on one and two threads (docs/history.md,
/// "Enough shards for a node's threads").
pub const MIN_SPLIT_SHARD_BYTES: u64 = 128 << 10;

/// Whether a plan of `shards` shards of `shard_bytes` bytes is cut one step
/// finer, into shards of `finer_shard_bytes`: when its shards are over
/// [`TARGET_SHARD_BYTES`], or when its level is over that size and its
/// shards too few for a node's threads ([`MIN_SHARDS`]) while the finer
/// ones stay big enough ([`MIN_SPLIT_SHARD_BYTES`]). A smaller level stays
/// whole: `pancake:11` (4.8 MiB a level) cut into 11 shards, one task
/// each, took 0.32–0.36 s on two threads against 0.25–0.32 s as one shard.
pub fn cut_finer(shards: u64, shard_bytes: u64, finer_shard_bytes: u64) -> bool {
    let level = shards as u128 * shard_bytes as u128;
    shard_bytes as u128 > TARGET_SHARD_BYTES
        || (level > TARGET_SHARD_BYTES && shards < MIN_SHARDS && finer_shard_bytes >= MIN_SPLIT_SHARD_BYTES)
}

/// A plan that cannot be made.
#[derive(Debug, Error)]
pub enum LayoutError {
    #[error(
        "{states} states need {bits} bits per level; ranking supports at most {max}! states ({pieces} pieces given)"
    )]
    TooManyPieces {
        pieces: usize,
        states: String,
        bits: String,
        max: usize,
    },
    #[error("--shard-pieces {asked} is out of range: this puzzle allows 0..={max}")]
    BadShardPieces { asked: usize, max: usize },
}

/// A parity that follows one piece: the permutation parity of every
/// reachable state is bit `slot` of `odd_slots`, where `slot` is where
/// `piece` is. A sliding puzzle has one: each move swaps the blank with a
/// neighbour (an odd permutation) and moves the blank to a cell of the
/// other colour of the board's chessboard colouring. Only the half of the
/// permutations it allows are then ranked, as for a group of even moves:
/// half the bits, half the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityRule {
    /// The piece whose slot gives the parity (a key piece of the layout).
    pub piece: u8,
    /// Slots where that piece makes a state an odd permutation.
    pub odd_slots: u64,
}

impl ParityRule {
    /// The rule of `puzzle`, if it has one worth using: every move guarded
    /// on one piece, and a colouring of that piece's slots by the parity of
    /// the states that put it there, consistent over every move (found by
    /// propagation from the solved state, checked on every move). None
    /// when all moves are even (plain even ranking covers that).
    pub fn find(puzzle: &Puzzle) -> Option<ParityRule> {
        let n = puzzle.slots;
        if puzzle.coding.is_some() || puzzle.all_moves_even() || n > 64 {
            return None;
        }
        let guards: Vec<_> = puzzle.moves.iter().map(|m| m.guard).collect::<Option<_>>()?;
        let piece = guards.first()?.piece;
        if guards.iter().any(|g| g.piece != piece) {
            return None;
        }
        let solved_odd = !Perm::from_images(puzzle.solved[..n].to_vec()).ok()?.is_even();
        // colour[s]: parity of the states with `piece` in slot s.
        let mut colour: Vec<Option<bool>> = vec![None; n];
        colour[puzzle.solved[piece] as usize] = Some(solved_odd);
        let mut changed = true;
        while changed {
            changed = false;
            for (m, g) in puzzle.moves.iter().zip(&guards) {
                let (from, to) = (g.slot, m.perm.images()[g.slot] as usize);
                let odd = !m.perm.is_even();
                match (colour[from], colour[to]) {
                    (Some(a), None) => colour[to] = Some(a ^ odd),
                    (None, Some(b)) => colour[from] = Some(b ^ odd),
                    (Some(a), Some(b)) if a ^ odd != b => return None,
                    _ => continue,
                }
                changed = true;
            }
        }
        let odd_slots = (0..n)
            .filter(|&s| colour[s] == Some(true))
            .fold(0u64, |m, s| m | 1 << s);
        Some(ParityRule {
            piece: piece as u8,
            odd_slots,
        })
    }

    /// The parity of every state whose key (slots of the first pieces,
    /// `piece` among them) is `key`.
    #[inline]
    fn parity_of_key(&self, key: &[u8]) -> bool {
        self.odd_slots >> key[self.piece as usize] & 1 == 1
    }
}

/// How the state space is cut into shards and blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Number of pieces (= slots).
    pub pieces: usize,
    /// True when only half the permutations are ranked: the even ones, or
    /// with a [`ParityRule`] those of the parity it gives.
    pub even: bool,
    /// The parity rule of the ranked half, if not "even".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<ParityRule>,
    /// Pieces whose slots form the shard key (`k`).
    pub shard_pieces: usize,
    /// Pieces of the low part (`L`).
    pub low_pieces: usize,
}

impl Layout {
    /// Plans the layout for `pieces` pieces. `min_key` pieces must be in the
    /// block key (guarded pieces); `shard_pieces` overrides the automatic `k`.
    /// A parity rule is used when its piece is in the key (then `even` is
    /// implied).
    pub fn plan(
        pieces: usize,
        even: bool,
        parity: Option<ParityRule>,
        min_key: usize,
        shard_pieces: Option<usize>,
    ) -> Result<Layout, LayoutError> {
        if pieces > MAX_RANKED_POINTS {
            let states = factorial(pieces) / if even { 2 } else { 1 };
            return Err(LayoutError::TooManyPieces {
                pieces,
                states: format!("{:.3e}", states as f64),
                bits: format!("{:.3e}", states as f64),
                max: MAX_RANKED_POINTS,
            });
        }
        let halved = even || parity.is_some();
        let states = factorial(pieces) / if halved { 2 } else { 1 };
        let low_pieces = low_pieces_for(states, pieces - min_key.min(pieces)).max(2.min(pieces));
        let key = pieces - low_pieces;
        let parity = parity.filter(|r| (r.piece as usize) < key && !even);
        let mut layout = Layout {
            pieces,
            even: even || parity.is_some(),
            parity,
            shard_pieces: 0,
            low_pieces,
        };
        match shard_pieces {
            Some(k) if k > key => return Err(LayoutError::BadShardPieces { asked: k, max: key }),
            Some(k) => layout.shard_pieces = k,
            None => {
                while layout.shard_pieces < key {
                    let finer = layout.with_shard_pieces(layout.shard_pieces + 1);
                    if !cut_finer(layout.shards(), layout.shard_bytes(), finer.shard_bytes()) {
                        break;
                    }
                    layout = finer;
                }
            }
        }
        Ok(layout)
    }

    /// The same layout with `k` shard pieces.
    fn with_shard_pieces(&self, k: usize) -> Layout {
        Layout {
            shard_pieces: k,
            ..self.clone()
        }
    }

    /// Number of pieces in the block key.
    pub fn key_pieces(&self) -> usize {
        self.pieces - self.low_pieces
    }

    /// States in the whole space (`n!` or `n!/2`).
    pub fn states(&self) -> u128 {
        factorial(self.pieces) / if self.even { 2 } else { 1 }
    }

    /// States per block (`L!` or `L!/2`).
    pub fn block_states(&self) -> usize {
        (factorial(self.low_pieces) / if self.even { 2 } else { 1 }) as usize
    }

    /// 64-bit words per block (the block is padded to whole words).
    pub fn block_words(&self) -> usize {
        self.block_states().div_ceil(64)
    }

    /// Number of blocks in the space.
    pub fn blocks(&self) -> u64 {
        falling_factorial(self.pieces, self.key_pieces()) as u64
    }

    /// Number of shards.
    pub fn shards(&self) -> u64 {
        falling_factorial(self.pieces, self.shard_pieces) as u64
    }

    /// Blocks per shard.
    pub fn blocks_per_shard(&self) -> u64 {
        self.blocks() / self.shards()
    }

    /// Units of progress in one shard: runs of [`BLOCKS_PER_UNIT`] blocks.
    pub fn units_per_shard(&self) -> u64 {
        self.blocks_per_shard().div_ceil(BLOCKS_PER_UNIT as u64)
    }

    /// Words of one shard's bit array.
    pub fn shard_words(&self) -> usize {
        self.blocks_per_shard() as usize * self.block_words()
    }

    /// Bytes of one shard's bit array.
    pub fn shard_bytes(&self) -> u64 {
        self.shard_words() as u64 * 8
    }

    /// Bytes of one whole level (all shards).
    pub fn level_bytes(&self) -> u64 {
        self.shard_bytes() * self.shards()
    }

    /// Shard that holds block `block`.
    pub fn shard_of_block(&self, block: u64) -> u64 {
        block / self.blocks_per_shard()
    }

    /// Word offset of block `block` inside its shard's array.
    pub fn block_offset_in_shard(&self, block: u64) -> usize {
        (block % self.blocks_per_shard()) as usize * self.block_words()
    }

    /// Slots of the key pieces of block `block`.
    pub fn block_key(&self, block: u64, out: &mut [u8]) {
        unrank_prefix(block, self.pieces, self.key_pieces(), out);
    }

    /// Block of a key, and the parity of the low digits of its ranked
    /// states. A permutation's parity is that of its key digits' sum plus
    /// its low digits' sum, so the low parity is the key's for even states,
    /// and the key's flipped where a parity rule makes the state odd.
    pub fn block_of_key(&self, key: &[u8]) -> (u64, bool) {
        let (block, key_odd) = rank_prefix(key, self.pieces);
        (block, key_odd ^ self.parity.is_some_and(|r| r.parity_of_key(key)))
    }

    /// Low-part parity of the ranked states of a block (see
    /// [`Layout::block_of_key`]).
    pub fn low_parity_of_block(&self, block: u64) -> bool {
        let mut key = [0u8; 64];
        self.block_key(block, &mut key);
        self.block_of_key(&key[..self.key_pieces()]).1
    }

    /// Mask of the slots not used by `key`.
    pub fn free_mask(&self, key: &[u8]) -> u64 {
        let all = if self.pieces == 64 {
            u64::MAX
        } else {
            (1u64 << self.pieces) - 1
        };
        key.iter().fold(all, |m, &s| m & !(1u64 << s))
    }
}

/// Where one state lives: its block and its index inside the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateIndex {
    /// Global block number.
    pub block: u64,
    /// Index inside the block (`0..block_states`).
    pub low: usize,
}

impl Layout {
    /// Locates a state given in position notation.
    pub fn index_of(&self, state: &[u8]) -> StateIndex {
        let key_len = self.key_pieces();
        let (block, odd) = self.block_of_key(&state[..key_len]);
        let free = self.free_mask(&state[..key_len]);
        let mut rel = [0u8; 64];
        for (j, &slot) in state[key_len..].iter().enumerate() {
            rel[j] = (free & ((1u64 << slot) - 1)).count_ones() as u8;
        }
        let rank = crate::space::rank::rank_perm(&rel[..self.low_pieces]);
        debug_assert!(!self.even || crate::space::rank::rank_parity(rank, self.low_pieces) == odd);
        StateIndex {
            block,
            low: crate::space::rank::low_index(rank, self.even),
        }
    }

    /// The state (position notation) at an index.
    pub fn state_at(&self, index: StateIndex) -> Vec<u8> {
        let key_len = self.key_pieces();
        let mut state = vec![0u8; self.pieces];
        self.block_key(index.block, &mut state[..key_len]);
        let odd = self.low_parity_of_block(index.block);
        let rank = crate::space::rank::low_rank(index.low, odd, self.even, self.low_pieces);
        let rel = crate::space::rank::unrank_perm(rank, self.low_pieces);
        let free = self.free_mask(&state[..key_len]);
        for (j, &r) in rel.iter().enumerate() {
            state[key_len + j] = crate::space::rank::select_bit(free, r as u32) as u8;
        }
        state
    }

    /// Shard, word and bit of a state inside the level's shard arrays.
    pub fn bit_position(&self, index: StateIndex) -> (u64, usize, u32) {
        let word = self.block_offset_in_shard(index.block) + index.low / 64;
        (self.shard_of_block(index.block), word, (index.low % 64) as u32)
    }
}

#[cfg(test)]
mod tests;
