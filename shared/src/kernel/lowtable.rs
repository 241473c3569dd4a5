//! The low table: how a permutation `τ` of the low part's relative slots
//! moves every low index of a block.
//!
//! Entry `[τ][q·S + i]` is the low index of `τ ∘ r`, where `r` is the low
//! arrangement with index `i` in a block whose low parity is `q` (always 0
//! when all permutations are ranked) and `S` is the number of states per
//! block. It is the multiplication table of `S_L` written in ranks, so
//! moving a whole block is one sequential pass over one table row.

use crate::space::rank::{factorial, low_rank, rank_perm, unrank_perm};
use rayon::prelude::*;

/// Precomputed low table for `L` low pieces.
pub struct LowTable {
    low: usize,
    even: bool,
    states: usize,
    row_len: usize,
    data: Vec<u16>,
}

impl LowTable {
    /// Builds the table (`L!` rows of `L!` entries), in parallel.
    ///
    /// Only the identity's row and the transpositions' rows are computed
    /// entry by entry (a composition and a rank each). Every other row is
    /// one gather: a permutation `τ` whose first moved point is `i`, with
    /// `τ(i) = k`, is `(i k) ∘ τ'` where `τ'` also fixes `i`, so `τ'` ranks
    /// below `τ` and its row is already built: the low index of `τ ∘ r` is
    /// the transposition's entry at the low index of `τ' ∘ r`. Ranks below `m!`
    /// fix the first `L - m` points, so the rows are built in blocks
    /// `[(m - 1)!, m!)` for `m = 2 ..= L`, each block in parallel from the
    /// rows below it. For `L = 7` (25 million entries, built by every
    /// unreduced run of a blocked space before its first level) one
    /// thread took 0.23–0.32 s ranking every entry and takes 0.035–0.056 s
    /// this way (`cargo run --release -p cayley-shared --example
    /// low_table -- 7 --threads 1`).
    pub fn new(low: usize, even: bool) -> LowTable {
        assert!(low <= 8, "low part too large for a u16 table");
        let row_len = factorial(low) as usize;
        let states = if even { row_len / 2 } else { row_len };
        let arrangements = Arrangements::new(low, even, states);
        // The row of the transposition (i k), i < k, at i·L + k.
        let transpositions: Vec<Vec<u16>> = (0..low * low)
            .map(|ik| {
                let (i, k) = (ik / low, ik % low);
                if i >= k {
                    return Vec::new();
                }
                let mut tau: Vec<u8> = (0..low as u8).collect();
                tau.swap(i, k);
                let mut row = vec![0u16; row_len];
                arrangements.fill_row(&tau, &mut row);
                row
            })
            .collect();
        let mut data = vec![0u16; row_len * row_len];
        let identity: Vec<u8> = (0..low as u8).collect();
        arrangements.fill_row(&identity, &mut data[..row_len]);
        for m in 2..=low {
            let (below, block) = (factorial(m - 1) as usize, factorial(m) as usize);
            let (built, rest) = data.split_at_mut(below * row_len);
            let built = &*built;
            let first_moved = low - m;
            rest[..(block - below) * row_len]
                .par_chunks_mut(row_len)
                .enumerate()
                .for_each(|(n, row)| {
                    let tau = unrank_perm((below + n) as u64, low);
                    let k = tau[first_moved] as usize;
                    debug_assert!(k > first_moved, "ranks from (m-1)! on move point L-m");
                    // τ' = (i k) ∘ τ: the same images with i and k swapped.
                    let fixed: Vec<u8> = tau
                        .iter()
                        .map(|&x| match x as usize {
                            x if x == first_moved => k as u8,
                            x if x == k => first_moved as u8,
                            _ => x,
                        })
                        .collect();
                    let fixed_rank = rank_perm(&fixed) as usize;
                    debug_assert!(fixed_rank < below, "τ' fixes one more point");
                    let from = &built[fixed_rank * row_len..(fixed_rank + 1) * row_len];
                    let swap = &transpositions[first_moved * low + k];
                    Arrangements::compose_row(swap, from, row);
                });
        }
        LowTable {
            low,
            even,
            states,
            row_len,
            data,
        }
    }

    /// Number of low pieces.
    pub fn low_pieces(&self) -> usize {
        self.low
    }

    /// States per block.
    pub fn states(&self) -> usize {
        self.states
    }

    /// Offset of the row for permutation rank `tau` applied to blocks of low
    /// parity `odd`.
    pub fn row_offset(&self, tau: u64, odd: bool) -> u32 {
        (tau as usize * self.row_len + if odd && self.even { self.states } else { 0 }) as u32
    }

    /// The `states` entries starting at `offset`.
    #[inline]
    pub fn row(&self, offset: u32) -> &[u16] {
        &self.data[offset as usize..offset as usize + self.states]
    }

    /// Memory the table occupies.
    pub fn bytes(&self) -> usize {
        self.data.len() * 2
    }
}

/// The low arrangements in the order of a row's entries: parity-0
/// indexes first, then (with `even`) the parity-1 ones.
struct Arrangements {
    low: usize,
    even: bool,
    perms: Vec<[u8; 8]>,
}

impl Arrangements {
    fn new(low: usize, even: bool, states: usize) -> Arrangements {
        let parities = if even { 2 } else { 1 };
        let perms = (0..parities * states)
            .map(|j| {
                let rank = low_rank(j % states, j >= states, even, low);
                let mut a = [0u8; 8];
                a[..low].copy_from_slice(&unrank_perm(rank, low));
                a
            })
            .collect();
        Arrangements { low, even, perms }
    }

    /// The row of `tau`, entry by entry: a composition and a rank each.
    fn fill_row(&self, tau: &[u8], row: &mut [u16]) {
        let low = self.low;
        for (entry, r) in row.iter_mut().zip(&self.perms) {
            let mut image = [0u8; 8];
            for (x, &y) in image.iter_mut().zip(&r[..low]) {
                *x = tau[y as usize];
            }
            let rank = rank_perm(&image[..low]);
            *entry = if self.even { (rank >> 1) as u16 } else { rank as u16 };
        }
    }

    /// The row of `c ∘ τ'` from `c`'s row and `τ'`'s. Entry `j` of `τ'`'s
    /// row is the low index of `τ' ∘ r_j`, and `c`'s row at that index is
    /// the low index of `c ∘ τ' ∘ r_j` whatever that arrangement's parity:
    /// the two arrangements of one index (ranks `2i` and `2i + 1`) differ
    /// by swapping their last two points, and so do their images under `c`.
    fn compose_row(c: &[u16], fixed: &[u16], row: &mut [u16]) {
        for (entry, &at) in row.iter_mut().zip(fixed) {
            *entry = c[at as usize];
        }
    }
}

/// Memory a table for `L` low pieces needs.
pub fn table_bytes(low: usize) -> u64 {
    let f = factorial(low) as u64;
    f * f * 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::rank::{low_index, rank_parity};

    #[test]
    fn rows_are_permutations_and_compose() {
        for (low, even) in [(4, false), (4, true), (5, true)] {
            let t = LowTable::new(low, even);
            let n = factorial(low) as u64;
            for tau in 0..n {
                let tau_perm = unrank_perm(tau, low);
                let odd_tau = rank_parity(tau, low);
                for q in [false, true] {
                    if !even && q {
                        continue;
                    }
                    let row = t.row(t.row_offset(tau, q));
                    let mut seen = vec![false; t.states()];
                    for (i, &j) in row.iter().enumerate() {
                        assert!(!seen[j as usize]);
                        seen[j as usize] = true;
                        let r = unrank_perm(low_rank(i, q, even, low), low);
                        let image: Vec<u8> = r.iter().map(|&x| tau_perm[x as usize]).collect();
                        let target = rank_perm(&image);
                        assert_eq!(j as usize, low_index(target, even));
                        if even {
                            assert_eq!(rank_parity(target, low), q ^ odd_tau);
                        }
                    }
                }
            }
        }
    }

    /// The rows built by gathers are the rows computed entry by entry
    /// (a composition and a rank each), for every size up to 6 pieces.
    #[test]
    fn gathered_rows_equal_rows_ranked_entry_by_entry() {
        for low in 2..=6 {
            for even in [false, true] {
                let t = LowTable::new(low, even);
                let arrangements = Arrangements::new(low, even, t.states());
                let n = factorial(low) as u64;
                let mut ranked = vec![0u16; n as usize];
                for tau in 0..n {
                    arrangements.fill_row(&unrank_perm(tau, low), &mut ranked);
                    let start = tau as usize * t.row_len;
                    assert_eq!(
                        &t.data[start..start + t.row_len],
                        &ranked[..],
                        "{low} pieces, even {even}, row {tau}"
                    );
                }
            }
        }
    }
}
