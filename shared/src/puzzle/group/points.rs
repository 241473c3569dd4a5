//! Permutations of up to 65,536 points as image lists (`p[x]` is the image
//! of `x`), the form every group computation works in: a twisty puzzle's
//! `(position, orientation)` points exceed the 256 of [`crate::puzzle::perm::Perm`]
//! (20×20×20: 2,184 points).

/// The identity on `n` points.
pub fn identity(n: usize) -> Vec<u16> {
    (0..n).map(|i| i as u16).collect()
}

/// `a ∘ b`: first `b`, then `a`.
#[inline]
pub fn compose(a: &[u16], b: &[u16]) -> Vec<u16> {
    b.iter().map(|&x| a[x as usize]).collect()
}

/// The inverse permutation.
pub fn inverse(a: &[u16]) -> Vec<u16> {
    let mut inv = vec![0u16; a.len()];
    for (i, &x) in a.iter().enumerate() {
        inv[x as usize] = i as u16;
    }
    inv
}

/// True when every point is fixed.
pub fn is_identity(a: &[u16]) -> bool {
    a.iter().enumerate().all(|(i, &x)| i == x as usize)
}

/// The commutator `a⁻¹ ∘ b⁻¹ ∘ a ∘ b`.
pub fn commutator(a: &[u16], b: &[u16]) -> Vec<u16> {
    commutator_with(a, &inverse(a), b, &inverse(b))
}

/// [`commutator`] given the inverses, in one pass.
pub fn commutator_with(a: &[u16], a_inv: &[u16], b: &[u16], b_inv: &[u16]) -> Vec<u16> {
    b.iter()
        .map(|&x| a_inv[b_inv[a[x as usize] as usize] as usize])
        .collect()
}

/// Lengths of the cycles through `points` (each cycle once).
pub fn cycle_lengths(a: &[u16], points: &[u16]) -> Vec<u32> {
    let mut seen = vec![false; a.len()];
    let mut out = Vec::new();
    for &start in points {
        if seen[start as usize] {
            continue;
        }
        let (mut len, mut x) = (0u32, start as usize);
        while !seen[x] {
            seen[x] = true;
            x = a[x] as usize;
            len += 1;
        }
        out.push(len);
    }
    out
}

/// An order, or any number, as prime powers: `(prime, exponent)`, ascending.
pub type Factors = Vec<(u32, u32)>;

/// The least common multiple of `lengths`, factored.
pub fn lcm_factors(lengths: impl IntoIterator<Item = u32>) -> Factors {
    let mut out: Factors = Vec::new();
    for mut n in lengths {
        let mut p = 2;
        while n > 1 {
            if p * p > n {
                p = n;
            }
            let mut e = 0;
            while n % p == 0 {
                n /= p;
                e += 1;
            }
            if e > 0 {
                match out.binary_search_by_key(&p, |&(q, _)| q) {
                    Ok(i) => out[i].1 = out[i].1.max(e),
                    Err(i) => out.insert(i, (p, e)),
                }
            }
            p += 1;
        }
    }
    out
}

/// The number `factors` modulo `m` (`m ≥ 1`).
pub fn factors_mod(factors: &Factors, m: u32) -> u32 {
    let m = m as u64;
    let mut r = 1 % m;
    for &(p, e) in factors {
        for _ in 0..e {
            r = r * p as u64 % m;
        }
    }
    r as u32
}

/// `a` raised to the power `e`, cycle by cycle; `e_mod(len)` gives `e`
/// modulo a cycle length.
pub fn power(a: &[u16], e_mod: impl Fn(u32) -> u32) -> Vec<u16> {
    let mut out = identity(a.len());
    let mut seen = vec![false; a.len()];
    let mut cycle = Vec::new();
    for start in 0..a.len() {
        if seen[start] {
            continue;
        }
        cycle.clear();
        let mut x = start;
        while !seen[x] {
            seen[x] = true;
            cycle.push(x as u16);
            x = a[x] as usize;
        }
        let shift = e_mod(cycle.len() as u32) as usize;
        for (i, &p) in cycle.iter().enumerate() {
            out[p as usize] = cycle[(i + shift) % cycle.len()];
        }
    }
    out
}

/// A small deterministic generator of pseudo-random numbers (xorshift), so
/// the randomised searches for group elements are reproducible.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_powers_and_orders() {
        let a = vec![1u16, 2, 0, 4, 3]; // (0 1 2)(3 4)
        assert!(is_identity(&compose(&a, &inverse(&a))));
        assert_eq!(cycle_lengths(&a, &[0, 1, 2, 3, 4]), vec![3, 2]);
        assert_eq!(lcm_factors([3, 2, 4, 9]), vec![(2, 2), (3, 2)]);
        assert_eq!(factors_mod(&vec![(2, 2), (3, 2)], 7), 36 % 7);
        // a³ kills the 3-cycle and keeps the transposition.
        assert_eq!(power(&a, |len| 3 % len), vec![0, 1, 2, 4, 3]);
        let b = vec![0u16, 1, 3, 2, 4];
        assert!(!is_identity(&commutator(&a, &b)));
    }
}
