//! The fiber of a key: every state with that key, ranked by how each
//! block's pieces are arranged over the block's slots.
//!
//! Block `b` with pieces `P_b[0] < … < P_b[c-1]` and slots `S_b` (the key)
//! has arrangement `a`: piece `P_b[j]` sits at the `a(j)`-th smallest slot
//! of `S_b`. Its Lehmer rank is one **digit**; blocks of one piece have
//! none. The fiber index is the mixed-radix number of the digits, split into
//! outer digits (the **row**) and inner digits (the position in the row);
//! rows are padded to whole 64-bit words, as the block layout's blocks are.
//! When every move is even, only states of the solved state's parity are
//! reachable: the last digit's parity is then forced by the others and it is
//! stored halved (`rank >> 1`).
//!
//! A **state map** `y ↦ z` with `z[g(i)] = f(y[i])` (`f` on slots, `g` on
//! pieces) is a move, a conjugation by a symmetry, or both. It maps the
//! fiber of a key onto the fiber of one other key, and block `b`'s
//! arrangement `a` to `μ ∘ a ∘ λ⁻¹` of block `g(b)` (`μ`, `λ` the position
//! maps of `f` on `S_b` and of `g` on `P_b`). So the target index is a sum of
//! one contribution per source digit: a [`FiberMap`] tabulates them, and the
//! kernel's inner loop is one table lookup per state.

use super::keys::{Key, MAX_BLOCKS};
use crate::puzzle::perm::Perm;
use crate::space::rank::{factorial, low_rank, rank_parity, rank_perm, unrank_perm};

mod map;
pub use map::{FiberMap, MapForm, RowTable};

/// Inner digits are taken from the end until a row holds at least this
/// many states (or every digit is inner).
const MIN_ROW_STATES: u64 = 64;

/// One block's arrangement digit.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Digit {
    block: usize,
    size: usize,
    /// Values the digit takes (`c!`, or `c!/2` when halved).
    radix: u64,
    /// Stride in padded index units (row stride × row bits, or column stride).
    stride: u64,
    outer: bool,
}

/// How the states of one key are laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiberLayout {
    slots: usize,
    /// Pieces of each block, ascending.
    blocks: Vec<Vec<u8>>,
    /// Block of each piece and its position in the block.
    place: Vec<(u8, u8)>,
    digits: Vec<Digit>,
    /// Digit of each block (blocks of one piece have none).
    digit_of_block: Vec<Option<usize>>,
    rows: u64,
    row_states: u64,
    row_words: usize,
    /// The last digit is stored halved.
    halved: bool,
    /// Parity of the solved state (the parity of every reachable state when halved).
    solved_parity: bool,
}

impl FiberLayout {
    /// The layout for blocks of pieces `blocks`; `even` when every move is even.
    pub fn new(slots: usize, blocks: Vec<Vec<u8>>, even: bool, solved: &[u8]) -> FiberLayout {
        let mut place = vec![(0u8, 0u8); slots];
        for (b, pieces) in blocks.iter().enumerate() {
            for (j, &p) in pieces.iter().enumerate() {
                place[p as usize] = (b as u8, j as u8);
            }
        }
        let mut digits: Vec<Digit> = blocks
            .iter()
            .enumerate()
            .filter(|(_, p)| p.len() >= 2)
            .map(|(block, p)| Digit {
                block,
                size: p.len(),
                radix: factorial(p.len()) as u64,
                stride: 0,
                outer: true,
            })
            .collect();
        // Small digits first, so that the inner digits (the row) are the
        // big ones and the outer ones few: with the 3×3×3's six edge pairs
        // ahead of its 8! corners, a row is the corners' 20,160 states
        // (315 words exactly) instead of the whole 1,290,240-state fiber,
        // whose contribution tables a map would build anew (`FiberMap`).
        // Blocks of one size (Loopover) keep their order.
        digits.sort_by_key(|d| d.size);
        let halved = even && !digits.is_empty();
        if halved {
            digits.last_mut().expect("checked").radix /= 2;
        }
        // Inner digits: the shortest suffix whose states fill a row.
        let mut row_states = 1u64;
        let mut split = digits.len();
        while split > 0 && row_states < MIN_ROW_STATES {
            split -= 1;
            row_states *= digits[split].radix;
        }
        let row_words = row_states.div_ceil(64) as usize;
        let mut stride = 1u64;
        for d in digits[split..].iter_mut().rev() {
            d.outer = false;
            d.stride = stride;
            stride *= d.radix;
        }
        let mut rows = 1u64;
        for d in digits[..split].iter_mut().rev() {
            d.stride = rows * row_words as u64 * 64;
            rows *= d.radix;
        }
        let mut digit_of_block = vec![None; blocks.len()];
        for (i, d) in digits.iter().enumerate() {
            digit_of_block[d.block] = Some(i);
        }
        let solved_perm = Perm::from_images(solved[..slots].to_vec()).expect("solved is a bijection");
        FiberLayout {
            slots,
            blocks,
            place,
            digits,
            digit_of_block,
            rows,
            row_states,
            row_words,
            halved,
            solved_parity: !solved_perm.is_even(),
        }
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The block of each digit, outermost first.
    pub fn digit_blocks(&self) -> Vec<usize> {
        self.digits.iter().map(|d| d.block).collect()
    }

    /// Pieces of block `b`.
    pub fn block_pieces(&self, b: usize) -> &[u8] {
        &self.blocks[b]
    }

    /// The block of a piece.
    pub fn block_of(&self, piece: usize) -> usize {
        self.place[piece].0 as usize
    }

    /// Rows of a fiber (units of progress).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// States per row.
    pub fn row_states(&self) -> u64 {
        self.row_states
    }

    /// Words per row.
    pub fn row_words(&self) -> usize {
        self.row_words
    }

    /// Words of a fiber's bit array.
    pub fn words(&self) -> usize {
        self.rows as usize * self.row_words
    }

    /// States of a fiber (bits that stand for a state).
    pub fn states(&self) -> u64 {
        self.rows * self.row_states
    }

    /// Bits of word `w` of a row that stand for states.
    #[inline]
    pub fn valid_mask(&self, w: usize) -> u64 {
        let tail = self.row_states % 64;
        if w + 1 == self.row_words && tail != 0 {
            (1u64 << tail) - 1
        } else {
            u64::MAX
        }
    }

    /// The key of a state (position notation).
    pub fn key_of(&self, state: &[u8]) -> Key {
        let mut key = [0u64; MAX_BLOCKS];
        for (b, pieces) in self.blocks.iter().enumerate() {
            key[b] = pieces.iter().fold(0, |m, &p| m | 1u64 << state[p as usize]);
        }
        key
    }

    /// Parity of the state of `key` whose arrangements are all the identity.
    pub fn key_parity(&self, key: &Key) -> bool {
        let mut images = vec![0u8; self.slots];
        for (b, pieces) in self.blocks.iter().enumerate() {
            let mut bits = key[b];
            for &p in pieces {
                images[p as usize] = bits.trailing_zeros() as u8;
                bits &= bits - 1;
            }
        }
        !Perm::from_images(images)
            .expect("a key covers every slot once")
            .is_even()
    }

    /// The parity the halved digit's arrangement must have, given the key's
    /// parity and the parities of the other digits.
    fn forced_parity(&self, key_parity: bool, others: bool) -> bool {
        self.solved_parity ^ key_parity ^ others
    }

    /// Index (padded) of `state`, whose key is `key`.
    pub fn encode(&self, state: &[u8], key: &Key) -> u64 {
        let mut index = 0u64;
        let mut arrangement = [0u8; MAX_BLOCKS];
        for d in &self.digits {
            let slots = key[d.block];
            for (j, &p) in self.blocks[d.block].iter().enumerate() {
                arrangement[j] = (slots & ((1u64 << state[p as usize]) - 1)).count_ones() as u8;
            }
            let rank = rank_perm(&arrangement[..d.size]);
            index += self.stored(d, rank) * d.stride;
        }
        index
    }

    /// The digit value stored for a full rank.
    #[inline]
    fn stored(&self, d: &Digit, rank: u64) -> u64 {
        if self.halved && self.is_last(d) {
            rank >> 1
        } else {
            rank
        }
    }

    fn is_last(&self, d: &Digit) -> bool {
        self.digits.last().is_some_and(|l| l.block == d.block)
    }

    /// The digit that each digit's block goes to under the piece map `g`
    /// (which maps blocks onto blocks), digits in layout order (outer, then
    /// inner): what [`FiberMap::fixed_states`] follows along its cycles.
    pub fn digit_targets(&self, g: &Perm) -> [u8; MAX_BLOCKS] {
        let mut targets = [0u8; MAX_BLOCKS];
        for (i, d) in self.digits.iter().enumerate() {
            let (to_block, _) = self.place[g[self.blocks[d.block][0] as usize] as usize];
            targets[i] = self.digit_of_block[to_block as usize].expect("same size") as u8;
        }
        targets
    }

    /// Full ranks of the digits of a (padded) index of the fiber of `key`.
    fn digit_ranks(&self, index: u64, key: &Key, ranks: &mut [u64; MAX_BLOCKS]) {
        let row_bits = self.row_words as u64 * 64;
        let (row, col) = (index / row_bits, index % row_bits);
        let mut parity = false;
        for (i, d) in self.digits.iter().enumerate() {
            let part = if d.outer { row * row_bits } else { col };
            let value = (part / d.stride) % d.radix;
            ranks[i] = value;
            if !(self.halved && i + 1 == self.digits.len()) {
                parity ^= rank_parity(value, d.size);
            }
        }
        if self.halved {
            let last = self.digits.len() - 1;
            let d = &self.digits[last];
            let odd = self.forced_parity(self.key_parity(key), parity);
            ranks[last] = low_rank(ranks[last] as usize, odd, true, d.size);
        }
    }

    /// The state at (padded) index `index` of the fiber of `key`.
    pub fn decode(&self, index: u64, key: &Key) -> Vec<u8> {
        let mut ranks = [0u64; MAX_BLOCKS];
        self.digit_ranks(index, key, &mut ranks);
        let mut state = vec![0u8; self.slots];
        for (b, pieces) in self.blocks.iter().enumerate() {
            let arrangement = match self.digit_of_block[b] {
                Some(i) => unrank_perm(ranks[i], pieces.len()),
                None => vec![0],
            };
            for (j, &p) in pieces.iter().enumerate() {
                state[p as usize] = crate::space::rank::select_bit(key[b], arrangement[j] as u32) as u8;
            }
        }
        state
    }
}
