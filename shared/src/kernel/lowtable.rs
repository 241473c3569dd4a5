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
    pub fn new(low: usize, even: bool) -> LowTable {
        assert!(low <= 8, "low part too large for a u16 table");
        let row_len = factorial(low) as usize;
        let states = if even { row_len / 2 } else { row_len };
        let parities = if even { 2 } else { 1 };
        // Unrank every low arrangement once; each row then costs one
        // composition and one rank per entry.
        let arrangements: Vec<[u8; 8]> = (0..parities * states)
            .map(|j| {
                let rank = low_rank(j % states, j >= states, even, low);
                let mut a = [0u8; 8];
                a[..low].copy_from_slice(&unrank_perm(rank, low));
                a
            })
            .collect();
        let mut data = vec![0u16; row_len * row_len];
        data.par_chunks_mut(row_len).enumerate().for_each(|(tau_rank, row)| {
            let tau = unrank_perm(tau_rank as u64, low);
            for (entry, r) in row.iter_mut().zip(&arrangements) {
                let mut image = [0u8; 8];
                for (x, &y) in image.iter_mut().zip(&r[..low]) {
                    *x = tau[y as usize];
                }
                let rank = rank_perm(&image[..low]);
                *entry = if even { (rank >> 1) as u16 } else { rank as u16 };
            }
        });
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
}
