//! Perfect lexicographic ranking of permutations and of their prefixes.
//!
//! A state `p[piece] = slot` is ranked by its Lehmer code: digit `c_i` counts
//! the free slots below `p[i]` once the slots of pieces `0..i` are taken. With
//! a bit mask of free slots each digit is one popcount, so ranking and
//! unranking are linear in `n` (Korf–Schultze).
//!
//! The digits are a mixed-radix number with radices `n, n-1, …, 1`, so the
//! first `j` digits (the slots of pieces `0..j`) are the high part of the rank
//! and the rest are the low part. That is why a coset shard ("slots of the
//! first k pieces") is a contiguous range of ranks.
//!
//! Parity: the sum of the digits is the number of inversions, so it is the
//! permutation's parity; and the rank's lowest bit equals digit `n-2`
//! (digit `n-1` is always 0), so ranks `2h` and `2h+1` have opposite parity.
//! Halving the rank therefore ranks even permutations exactly.

/// `n!` as `u128` (exact up to `n = 34`).
pub fn factorial(n: usize) -> u128 {
    (1..=n as u128).product()
}

/// Number of ways to place `j` distinct pieces in `n` slots: `n!/(n-j)!`.
pub fn falling_factorial(n: usize, j: usize) -> u128 {
    ((n - j + 1) as u128..=n as u128).product()
}

/// Rank of the placement of the first `prefix.len()` pieces of an `n`-slot
/// puzzle, in `0 .. n!/(n-j)!`. Also returns the parity of its digit sum.
pub fn rank_prefix(prefix: &[u8], n: usize) -> (u64, bool) {
    debug_assert!(n <= 64);
    let mut free: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let mut rank = 0u64;
    let mut odd = false;
    for (i, &slot) in prefix.iter().enumerate() {
        let below = free & ((1u64 << slot) - 1);
        let digit = below.count_ones() as u64;
        free &= !(1u64 << slot);
        rank = rank * (n - i) as u64 + digit;
        odd ^= digit & 1 == 1;
    }
    (rank, odd)
}

/// Inverse of [`rank_prefix`]: the slots of the first `j` pieces.
pub fn unrank_prefix(mut rank: u64, n: usize, j: usize, out: &mut [u8]) {
    debug_assert!(out.len() >= j);
    let mut digits = [0u8; 64];
    for i in (0..j).rev() {
        let radix = (n - i) as u64;
        digits[i] = (rank % radix) as u8;
        rank /= radix;
    }
    let mut free: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    for i in 0..j {
        let slot = select_bit(free, digits[i] as u32);
        out[i] = slot as u8;
        free &= !(1u64 << slot);
    }
}

/// Lexicographic rank of a whole permutation in `0 .. n!`.
pub fn rank_perm(p: &[u8]) -> u64 {
    rank_prefix(p, p.len()).0
}

/// Inverse of [`rank_perm`].
pub fn unrank_perm(rank: u64, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    unrank_prefix(rank, n, n, &mut out);
    out
}

/// Parity of the permutation with lexicographic rank `rank` among `n` points
/// (true = odd), from its digit sum.
pub fn rank_parity(mut rank: u64, n: usize) -> bool {
    let mut odd = false;
    for i in (0..n).rev() {
        let radix = (n - i) as u64;
        odd ^= (rank % radix) & 1 == 1;
        rank /= radix;
    }
    odd
}

/// Rank of an even permutation among the even permutations, `0 .. n!/2`.
pub fn rank_even(p: &[u8]) -> u64 {
    rank_perm(p) >> 1
}

/// Inverse of [`rank_even`]: the even permutation with half-rank `h`.
pub fn unrank_even(h: u64, n: usize) -> Vec<u8> {
    let base = 2 * h;
    let rank = if rank_parity(base, n) { base + 1 } else { base };
    unrank_perm(rank, n)
}

/// Position of the `k`-th (0-based) set bit of `mask`.
#[inline]
pub fn select_bit(mut mask: u64, k: u32) -> u32 {
    for _ in 0..k {
        mask &= mask - 1;
    }
    mask.trailing_zeros()
}

/// Lexicographic rank of the low arrangement with index `i` in a block of
/// low parity `odd`.
pub fn low_rank(i: usize, odd: bool, even: bool, low: usize) -> u64 {
    if !even {
        return i as u64;
    }
    let base = 2 * i as u64;
    if rank_parity(base, low) == odd {
        base
    } else {
        base + 1
    }
}

/// Index of a low arrangement given its lexicographic rank.
pub fn low_index(rank: u64, even: bool) -> usize {
    if even {
        (rank >> 1) as usize
    } else {
        rank as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::perm::Perm;
    use proptest::prelude::*;

    #[test]
    fn small_ranks_are_lexicographic() {
        let all: Vec<Vec<u8>> = (0..6).map(|r| unrank_perm(r, 3)).collect();
        assert_eq!(
            all,
            vec![
                vec![0, 1, 2],
                vec![0, 2, 1],
                vec![1, 0, 2],
                vec![1, 2, 0],
                vec![2, 0, 1],
                vec![2, 1, 0]
            ]
        );
    }

    #[test]
    fn ranking_is_a_bijection_on_s_n() {
        for n in 1..=7 {
            let total = factorial(n) as u64;
            let mut seen = std::collections::HashSet::new();
            for r in 0..total {
                let p = unrank_perm(r, n);
                assert!(Perm::from_images(p.clone()).is_ok());
                assert_eq!(rank_perm(&p), r);
                assert!(seen.insert(p));
            }
        }
    }

    #[test]
    fn even_ranking_is_a_bijection_on_a_n() {
        for n in 2..=7 {
            let half = (factorial(n) / 2) as u64;
            let mut seen = std::collections::HashSet::new();
            for h in 0..half {
                let p = unrank_even(h, n);
                assert!(Perm::from_images(p.clone()).unwrap().is_even());
                assert_eq!(rank_even(&p), h);
                assert!(seen.insert(p));
            }
            assert_eq!(seen.len() as u64, half);
        }
    }

    proptest! {
        // A failing case is printed, never written into the source tree.
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn rank_roundtrip_up_to_20(n in 1usize..=20, seed in any::<u64>()) {
            let total = factorial(n) as u64;
            let r = seed % total;
            let p = unrank_perm(r, n);
            prop_assert_eq!(rank_perm(&p), r);
            let perm = Perm::from_images(p.clone()).unwrap();
            prop_assert_eq!(rank_parity(r, n), !perm.is_even());
        }

        #[test]
        fn prefix_rank_is_high_part(n in 2usize..=16, j in 0usize..=16, seed in any::<u64>()) {
            let j = j.min(n);
            let total = factorial(n) as u64;
            let p = unrank_perm(seed % total, n);
            let (prefix_rank, _) = rank_prefix(&p[..j], n);
            let low = factorial(n - j) as u64;
            prop_assert_eq!(prefix_rank, rank_perm(&p) / low);
            let mut back = vec![0u8; j];
            unrank_prefix(prefix_rank, n, j, &mut back);
            prop_assert_eq!(&back[..], &p[..j]);
        }

        #[test]
        fn even_rank_roundtrip(n in 2usize..=14, seed in any::<u64>()) {
            let half = (factorial(n) / 2) as u64;
            let h = seed % half;
            let p = unrank_even(h, n);
            prop_assert!(Perm::from_images(p.clone()).unwrap().is_even());
            prop_assert_eq!(rank_even(&p), h);
        }
    }
}
