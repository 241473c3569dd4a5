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
use super::tables::TableCache;
use crate::puzzle::perm::Perm;
use crate::space::rank::{factorial, low_rank, rank_parity, rank_perm, unrank_perm, unrank_prefix};
use std::sync::Arc;

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

/// A state map `z[g(i)] = f(y[i])` from the fiber of one key to the fiber
/// of its image key, as per-digit contributions to the target index.
pub struct FiberMap {
    /// Per outer source digit: contribution of each value.
    outer: Vec<Arc<Vec<u64>>>,
    /// Per forced parity of the row (one table unless halved): contribution
    /// of each inner index of the row.
    inner: Arc<Vec<Vec<u64>>>,
    /// Parity term of the source key (for a halved last digit).
    key_parity: bool,
    /// Outer digit sizes, for row parities.
    outer_sizes: Vec<usize>,
    outer_radices: Vec<u64>,
    outer_strides: Vec<u64>,
}

impl FiberMap {
    /// The map `f`, `g` on states of the fiber of `source` (`g` must map
    /// blocks onto blocks). Returns the map and the target key.
    /// Its tables come from `tables` when an earlier map built them.
    pub fn new(layout: &FiberLayout, tables: &TableCache, source: &Key, f: &Perm, g: &Perm) -> (FiberMap, Key) {
        let nb = layout.blocks.len();
        let mut target = [0u64; MAX_BLOCKS];
        // Per source block: target block, slot position map μ, piece position map λ.
        let mut to_block = [0usize; MAX_BLOCKS];
        for b in 0..nb {
            let (tb, _) = layout.place[g[layout.blocks[b][0] as usize] as usize];
            to_block[b] = tb as usize;
            target[tb as usize] = super::keys::map_mask(f, source[b]);
        }
        let positions = |b: usize| -> (Vec<u8>, Vec<u8>) {
            let tb = to_block[b];
            let mut mu = Vec::new();
            let mut bits = source[b];
            while bits != 0 {
                let s = bits.trailing_zeros();
                let image = f[s as usize];
                mu.push((target[tb] & ((1u64 << image) - 1)).count_ones() as u8);
                bits &= bits - 1;
            }
            let lambda = layout.blocks[b]
                .iter()
                .map(|&p| layout.place[g[p as usize] as usize].1)
                .collect();
            (mu, lambda)
        };
        let maps: Vec<(Vec<u8>, Vec<u8>)> = (0..nb).map(positions).collect();
        let target_digit =
            |i: usize| -> usize { layout.digit_of_block[to_block[layout.digits[i].block]].expect("same size") };
        // What digit i's contributions depend on: the digit, its target
        // digit and the two position maps. Equal keys give equal tables.
        let digit_key = |i: usize| -> Vec<u8> {
            let (mu, lambda) = &maps[layout.digits[i].block];
            let mut key = vec![i as u8, target_digit(i) as u8];
            key.extend_from_slice(mu);
            key.extend_from_slice(lambda);
            key
        };
        // Contribution of source digit i by full rank.
        let by_rank = |i: usize| -> Arc<Vec<u64>> {
            tables.digit(&digit_key(i), || {
                let d = &layout.digits[i];
                let (mu, lambda) = &maps[d.block];
                let td = &layout.digits[target_digit(i)];
                (0..factorial(d.size) as u64)
                    .map(|rank| {
                        let mut a = [0u8; MAX_BLOCKS];
                        unrank_prefix(rank, d.size, d.size, &mut a);
                        let mut image = [0u8; MAX_BLOCKS];
                        for j in 0..d.size {
                            image[lambda[j] as usize] = mu[a[j] as usize];
                        }
                        layout.stored(td, rank_perm(&image[..d.size])) * td.stride
                    })
                    .collect()
            })
        };
        let split = layout.digits.iter().take_while(|d| d.outer).count();
        let outer: Vec<Arc<Vec<u64>>> = (0..split).map(by_rank).collect();
        let inner_digits = split..layout.digits.len();
        let rows_key: Vec<u8> = inner_digits.clone().flat_map(digit_key).collect();
        let inner = tables.rows(&rows_key, || {
            let contributions: Vec<Arc<Vec<u64>>> = inner_digits.clone().map(by_rank).collect();
            let parities = if layout.halved { 2 } else { 1 };
            (0..parities)
                .map(|q| {
                    (0..layout.row_states)
                        .map(|col| {
                            let mut sum = 0u64;
                            let mut parity = false;
                            for (k, i) in inner_digits.clone().enumerate() {
                                let d = &layout.digits[i];
                                let mut value = (col / d.stride) % d.radix;
                                if layout.halved && i + 1 == layout.digits.len() {
                                    value = low_rank(value as usize, (q == 1) ^ parity, true, d.size);
                                } else {
                                    parity ^= rank_parity(value, d.size);
                                }
                                sum += contributions[k][value as usize];
                            }
                            sum
                        })
                        .collect()
                })
                .collect()
        });
        let map = FiberMap {
            outer,
            inner,
            key_parity: layout.forced_parity(layout.key_parity(source), false),
            outer_sizes: layout.digits[..split].iter().map(|d| d.size).collect(),
            outer_radices: layout.digits[..split].iter().map(|d| d.radix).collect(),
            outer_strides: layout.digits[..split]
                .iter()
                .map(|d| d.stride / (layout.row_words as u64 * 64))
                .collect(),
        };
        (map, target)
    }

    /// Contribution of source row `row` and the inner table to use for it.
    #[inline]
    pub fn row(&self, row: u64) -> (u64, &[u64]) {
        let mut base = 0u64;
        let mut parity = self.key_parity;
        for i in 0..self.outer.len() {
            let value = (row / self.outer_strides[i]) % self.outer_radices[i];
            base += self.outer[i][value as usize];
            // Only a halved last digit has a table per parity.
            if self.inner.len() == 2 {
                parity ^= rank_parity(value, self.outer_sizes[i]);
            }
        }
        (base, self.table_of_parity(parity))
    }

    /// [`Self::row`] of every row in order. The bases are summed digit by
    /// digit into one vector first, outer digit after outer digit: an
    /// iterator that counted the row number up digit by digit per row was
    /// 8% of a worker's time on the 4×4's dense levels.
    pub fn rows(&self) -> impl Iterator<Item = (u64, &[u64])> + '_ {
        let rows: u64 = self.outer_radices.iter().product();
        let mut bases = Vec::with_capacity(rows as usize);
        bases.push((0u64, self.key_parity));
        let halved = self.inner.len() == 2;
        for (i, table) in self.outer.iter().enumerate() {
            let radix = self.outer_radices[i] as usize;
            let size = self.outer_sizes[i];
            let previous = bases.len();
            // Expand in place from the back, so that each entry's digits
            // stay ahead of the ones it makes.
            bases.resize(previous * radix, (0, false));
            for j in (0..previous).rev() {
                let (base, parity) = bases[j];
                for (v, contribution) in table[..radix].iter().enumerate().rev() {
                    let odd = halved && rank_parity(v as u64, size);
                    bases[j * radix + v] = (base + contribution, parity ^ odd);
                }
            }
        }
        bases
            .into_iter()
            .map(move |(base, parity)| (base, self.table_of_parity(parity)))
    }

    fn table_of_parity(&self, parity: bool) -> &[u64] {
        if self.inner.len() == 2 {
            &self.inner[parity as usize]
        } else {
            &self.inner[0]
        }
    }

    /// Target index of source index `index` (padded).
    pub fn apply(&self, index: u64, row_bits: u64) -> u64 {
        let (base, table) = self.row(index / row_bits);
        base + table[(index % row_bits) as usize]
    }

    /// Set bits of `words` (a fiber of `row_words`-word rows) that the map
    /// sends to themselves.
    pub fn fixed_points(&self, words: &[u64], row_words: usize) -> u64 {
        let row_bits = row_words as u64 * 64;
        let mut count = 0u64;
        for (row, row_words_slice) in words.chunks(row_words).enumerate() {
            if row_words_slice.iter().all(|&w| w == 0) {
                continue;
            }
            let (base, table) = self.row(row as u64);
            let start = row as u64 * row_bits;
            for (w, &word) in row_words_slice.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let col = w * 64 + bits.trailing_zeros() as usize;
                    count += u64::from(base + table[col] == start + col as u64);
                    bits &= bits - 1;
                }
            }
        }
        count
    }
}
