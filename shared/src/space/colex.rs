//! Colex ranking of slot sets: which `k` of the slots still free a set of
//! identical pieces occupies, as a number in `0 .. C(free, k)`.
//!
//! A set is ranked by the positions of its members among the free slots,
//! `Σ C(position_i, i)` over its members in increasing order (colex order).

/// Binomial coefficients `C(n, k)` for `n, k ≤ 64`, saturating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binomials(Vec<u64>);

impl Default for Binomials {
    fn default() -> Binomials {
        Binomials::new()
    }
}

impl Binomials {
    const SIZE: usize = 65;

    /// The table.
    pub fn new() -> Binomials {
        let mut t = vec![0u64; Self::SIZE * Self::SIZE];
        for n in 0..Self::SIZE {
            t[n * Self::SIZE] = 1;
            for k in 1..=n {
                t[n * Self::SIZE + k] = t[(n - 1) * Self::SIZE + k - 1].saturating_add(t[(n - 1) * Self::SIZE + k]);
            }
        }
        Binomials(t)
    }

    /// `C(n, k)` (0 when `k > n`).
    #[inline]
    pub fn get(&self, n: u32, k: u32) -> u64 {
        if k > n {
            0
        } else {
            self.0[n as usize * Self::SIZE + k as usize]
        }
    }

    /// Colex rank of the slots `set` among the slots `free` (`set ⊆ free`).
    #[inline]
    pub fn rank(&self, set: u64, free: u64) -> u64 {
        let mut value = 0u64;
        let mut bits = set;
        let mut i = 1;
        while bits != 0 {
            let position = (free & ((1u64 << bits.trailing_zeros()) - 1)).count_ones();
            value += self.get(position, i);
            i += 1;
            bits &= bits - 1;
        }
        value
    }

    /// The `count` slots of `free` with colex rank `value`.
    pub fn unrank(&self, mut value: u64, free: u64, count: u32) -> u64 {
        let mut set = 0u64;
        let mut position = free.count_ones();
        for i in (1..=count).rev() {
            position -= 1;
            while self.get(position, i) > value {
                position -= 1;
            }
            value -= self.get(position, i);
            set |= 1 << crate::space::rank::select_bit(free, position);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subset_gets_its_own_rank() {
        let b = Binomials::new();
        let free = 0b1011_0111u64; // 6 free slots
        for k in 0..=6u32 {
            let mut seen = std::collections::HashSet::new();
            for set in 0..256u64 {
                if set & !free != 0 || set.count_ones() != k {
                    continue;
                }
                let r = b.rank(set, free);
                assert!(r < b.get(6, k));
                assert!(seen.insert(r));
                assert_eq!(b.unrank(r, free, k), set);
            }
            assert_eq!(seen.len() as u64, b.get(6, k));
        }
    }
}
