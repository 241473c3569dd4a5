//! The least image of an arrangement under the symmetries, computed
//! without a table of arrangements ([`super::ClassIndex::Computed`]).
//!
//! An image is compared with the least so far digit by digit from the
//! highest place value of the rank, and each digit is read through two
//! small per-element tables rather than by conjugating the whole
//! arrangement: most images differ from the least in their first digit or
//! two, so an element costs a few loads. Conjugating every arrangement
//! whole and comparing after made the 3×3×3 edges' first level take over
//! 8 minutes on two cores, almost all of it here.

use super::arrangements::Arrangements;
use crate::puzzle::symmetry::oriented::OrientedSymmetries;
use std::cmp::Ordering;

/// Most slots of an arrangement (digits on the stack).
const MAX_SLOTS: usize = 64;

/// Per element, the tables that read the digits of an image. Rows of
/// [`MAX_SLOTS`] entries, indexed by values masked to that size, so that
/// reading a digit needs no bounds check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeastImages {
    slots: usize,
    /// Per element `k` and digit `i` (by weight): the slot whose piece the
    /// element takes to the `i`-th slot by weight (`s⁻¹` of that slot).
    from: Vec<[u8; MAX_SLOTS]>,
    /// Per element `k` and home slot `h`: the digit of a piece at home in
    /// `h` once moved by the element (where `s(h)` is in its orbit).
    digit_of_home: Vec<[u8; MAX_SLOTS]>,
}

impl LeastImages {
    /// The tables of `symmetries` acting on `arrangements`.
    pub fn new(arrangements: &Arrangements, symmetries: &OrientedSymmetries) -> LeastImages {
        let n = arrangements.position.len();
        assert!(n <= MAX_SLOTS, "{} slots", n);
        let (mut from, mut digit_of_home) = (Vec::new(), Vec::new());
        for e in &symmetries.elements {
            let mut inverse = [0u8; MAX_SLOTS];
            for y in 0..n {
                inverse[e.slots[y] as usize] = y as u8;
            }
            let (mut from_row, mut digit_row) = ([0u8; MAX_SLOTS], [0u8; MAX_SLOTS]);
            for (i, &s) in arrangements.by_weight.iter().enumerate() {
                from_row[i] = inverse[s as usize];
            }
            for (h, d) in digit_row.iter_mut().enumerate().take(n) {
                *d = arrangements.position[e.slots[h] as usize];
            }
            from.push(from_row);
            digit_of_home.push(digit_row);
        }
        LeastImages {
            slots: n,
            from,
            digit_of_home,
        }
    }

    /// The least image of `cells`: its rank, an element that maps `cells`
    /// to it, and how many elements do (its stabiliser's order).
    pub fn least(&self, arrangements: &Arrangements, cells: &[u8]) -> (u64, usize, u32) {
        let n = self.slots;
        let home = self.homes(arrangements, cells);
        // Element 0 is the identity: the least so far is `cells` itself.
        let mut best = [0u8; MAX_SLOTS];
        self.digits(0, &home, 0, &mut best);
        let (mut via, mut count) = (0usize, 1u32);
        for k in 1..self.elements() {
            match self.compare(k, &home, &best) {
                (Ordering::Less, i) => {
                    self.digits(k, &home, i, &mut best);
                    (via, count) = (k, 1);
                }
                (Ordering::Equal, _) => count += 1,
                (Ordering::Greater, _) => {}
            }
        }
        (arrangements.rank_of_digits(&best[..n]), via, count)
    }

    /// The stabiliser order of `cells` when no element maps it lower (it
    /// is its class's representative), else None, found at the first
    /// lower image.
    pub fn stabilizer_if_least(&self, arrangements: &Arrangements, cells: &[u8]) -> Option<u32> {
        let home = self.homes(arrangements, cells);
        let mut own = [0u8; MAX_SLOTS];
        self.digits(0, &home, 0, &mut own);
        let mut stabilizer = 1u32;
        for k in 1..self.elements() {
            match self.compare(k, &home, &own).0 {
                Ordering::Less => return None,
                Ordering::Equal => stabilizer += 1,
                Ordering::Greater => {}
            }
        }
        Some(stabilizer)
    }

    fn elements(&self) -> usize {
        self.from.len()
    }

    /// The home slot of the piece in each slot.
    fn homes(&self, arrangements: &Arrangements, cells: &[u8]) -> [u8; MAX_SLOTS] {
        let mut home = [0u8; MAX_SLOTS];
        for (h, &class) in home.iter_mut().zip(cells) {
            *h = arrangements.home_of[class as usize];
        }
        home
    }

    /// Digit `i` (by weight) of element `k`'s image.
    fn digit(&self, k: usize, home: &[u8; MAX_SLOTS], i: usize) -> u8 {
        let mask = MAX_SLOTS - 1;
        let y = self.from[k][i & mask] as usize;
        self.digit_of_home[k][home[y & mask] as usize & mask]
    }

    /// Digits `from..` (by weight) of element `k`'s image into `out`.
    fn digits(&self, k: usize, home: &[u8; MAX_SLOTS], from: usize, out: &mut [u8]) {
        for (i, d) in out.iter_mut().enumerate().take(self.slots).skip(from) {
            *d = self.digit(k, home, i);
        }
    }

    /// How element `k`'s image compares with the digits `best`, and the
    /// first digit where they differ.
    fn compare(&self, k: usize, home: &[u8; MAX_SLOTS], best: &[u8]) -> (Ordering, usize) {
        for (i, &b) in best.iter().enumerate().take(self.slots) {
            let order = self.digit(k, home, i).cmp(&b);
            if order.is_ne() {
                return (order, i);
            }
        }
        (Ordering::Equal, self.slots)
    }
}

/// Every class's `(representative, stabiliser order)`, the representative
/// being the least rank of its class, found by testing every rank (all
/// must be reachable) in parallel, without a table: under a minute for the
/// 12! arrangements of the 3×3×3's edges on two cores.
pub fn least_of_every_class(arrangements: &Arrangements, images: &LeastImages) -> Vec<(u64, u32)> {
    use rayon::prelude::*;
    const RANKS_PER_TASK: u64 = 1 << 16;
    let size = u64::try_from(arrangements.size()).expect("at most MAX_COMPUTED_ARRANGEMENTS ranks");
    (0..size.div_ceil(RANKS_PER_TASK))
        .into_par_iter()
        .flat_map_iter(|t| {
            let (start, end) = (t * RANKS_PER_TASK, ((t + 1) * RANKS_PER_TASK).min(size));
            (start..end)
                .filter_map(|rank| {
                    let cells = arrangements.unrank(rank);
                    images
                        .stabilizer_if_least(arrangements, &cells)
                        .map(|stabilizer| (rank, stabilizer))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The class of each representative rank, found in three loads: a bit
/// per rank marks the representatives, counts before each 512-bit block
/// give a representative's place among them in rank order, and that place
/// its class (classes run by stabiliser order first). A binary search of
/// the 10 million representatives of the 3×3×3's edges was 40 % of a
/// level's time; this index is 104 MB there (1.7 bits an arrangement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepIndex {
    bits: Vec<u64>,
    before: Vec<u32>,
    class_by_place: Vec<u32>,
}

/// Words of a block counted in [`RepIndex::before`].
const BLOCK_WORDS: usize = 8;

impl RepIndex {
    /// The index of `reps` (class `c` has representative `reps[c]`) among
    /// `size` ranks.
    pub fn new(reps: &[u64], size: u64) -> RepIndex {
        let mut bits = vec![0u64; size.div_ceil(64) as usize];
        for &rep in reps {
            bits[(rep / 64) as usize] |= 1 << (rep % 64);
        }
        let mut before = Vec::with_capacity(bits.len().div_ceil(BLOCK_WORDS));
        let mut count = 0u32;
        for block in bits.chunks(BLOCK_WORDS) {
            before.push(count);
            count += block.iter().map(|w| w.count_ones()).sum::<u32>();
        }
        let mut by_rank: Vec<u32> = (0..reps.len() as u32).collect();
        by_rank.sort_unstable_by_key(|&c| reps[c as usize]);
        RepIndex {
            bits,
            before,
            class_by_place: by_rank,
        }
    }

    /// The class whose representative is `rank`.
    pub fn class(&self, rank: u64) -> Option<usize> {
        let word = (rank / 64) as usize;
        let bit = 1u64 << (rank % 64);
        if self.bits[word] & bit == 0 {
            return None;
        }
        let block = word / BLOCK_WORDS;
        let place = self.before[block]
            + self.bits[block * BLOCK_WORDS..word]
                .iter()
                .map(|w| w.count_ones())
                .sum::<u32>()
            + (self.bits[word] & (bit - 1)).count_ones();
        Some(self.class_by_place[place as usize] as usize)
    }

    /// Bytes it takes.
    pub fn bytes(&self) -> u64 {
        (self.bits.len() * 8 + self.before.len() * 4 + self.class_by_place.len() * 4) as u64
    }
}
