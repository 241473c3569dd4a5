//! Permutations of a small set of points (at most 256), the vocabulary of
//! every puzzle: slots, pieces and moves are all points of such a set.
//!
//! Convention used throughout: a permutation `m` maps point `i` to `m[i]`.
//! A move is a permutation of *slots*: the content of slot `s` goes to slot
//! `m[s]`. A state in position notation is `p[piece] = slot`, and applying the
//! move gives `p' = m ∘ p`, i.e. `p'[piece] = m[p[piece]]`.

use std::fmt;

/// Most points a permutation has: points are bytes. Every puzzle family and
/// definition file is refused beyond it.
pub const MAX_POINTS: usize = 256;

/// Most points whose permutations a 64-bit rank can number (`20! < 2⁶⁴ <
/// 21!`): the families searched by permutation rank (sliding puzzles,
/// Turnstyle) are refused beyond it, and so is a block layout.
pub const MAX_RANKED_POINTS: usize = 20;

/// A permutation of `0..n` stored as its image list.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Perm(Vec<u8>);

impl Perm {
    /// The identity on `n` points.
    pub fn identity(n: usize) -> Perm {
        assert!(n <= MAX_POINTS, "permutations are limited to {} points", MAX_POINTS);
        Perm((0..n).map(|i| i as u8).collect())
    }

    /// Builds a permutation from its image list, or says why it is not one.
    pub fn from_images(images: Vec<u8>) -> Result<Perm, String> {
        let n = images.len();
        let mut seen = vec![false; n];
        for &x in &images {
            let x = x as usize;
            if x >= n {
                return Err(format!("image {} is out of range 0..{}", x, n));
            }
            if seen[x] {
                return Err(format!("image {} appears twice", x));
            }
            seen[x] = true;
        }
        Ok(Perm(images))
    }

    /// Number of points.
    pub fn degree(&self) -> usize {
        self.0.len()
    }

    /// Image list.
    pub fn images(&self) -> &[u8] {
        &self.0
    }

    /// `self ∘ inner`: first `inner`, then `self`.
    pub fn after(&self, inner: &Perm) -> Perm {
        Perm(inner.0.iter().map(|&i| self.0[i as usize]).collect())
    }

    /// The inverse permutation.
    pub fn inverse(&self) -> Perm {
        let mut inv = vec![0u8; self.0.len()];
        for (i, &x) in self.0.iter().enumerate() {
            inv[x as usize] = i as u8;
        }
        Perm(inv)
    }

    /// True when every point is fixed.
    pub fn is_identity(&self) -> bool {
        self.0.iter().enumerate().all(|(i, &x)| i == x as usize)
    }

    /// True for even permutations (an even number of transpositions).
    pub fn is_even(&self) -> bool {
        let n = self.0.len();
        let mut seen = vec![false; n];
        let mut transpositions = 0usize;
        for start in 0..n {
            let mut len = 0usize;
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                i = self.0[i] as usize;
                len += 1;
            }
            transpositions += len.saturating_sub(1);
        }
        transpositions % 2 == 0
    }

    /// The order: the least `k > 0` with `self^k` the identity (the lcm of
    /// the cycle lengths), saturating at `u128::MAX`.
    pub fn order(&self) -> u128 {
        fn gcd(a: u128, b: u128) -> u128 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        self.cycles().iter().fold(1u128, |order, c| {
            let len = c.len() as u128;
            (order / gcd(order, len)).saturating_mul(len)
        })
    }

    /// Disjoint cycles of length at least two, each starting at its smallest point.
    pub fn cycles(&self) -> Vec<Vec<u8>> {
        let n = self.0.len();
        let mut seen = vec![false; n];
        let mut out = Vec::new();
        for start in 0..n {
            if seen[start] || self.0[start] as usize == start {
                seen[start] = true;
                continue;
            }
            let mut cycle = Vec::new();
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                cycle.push(i as u8);
                i = self.0[i] as usize;
            }
            out.push(cycle);
        }
        out
    }
}

impl std::ops::Index<usize> for Perm {
    type Output = u8;
    fn index(&self, i: usize) -> &u8 {
        &self.0[i]
    }
}

impl Perm {
    /// Cycle notation with points numbered from `first` (0 for the families
    /// that number points as CayleyPy does, 1 elsewhere), `()` for the
    /// identity.
    pub fn cycles_from(&self, first: usize) -> String {
        let cycles = self.cycles();
        if cycles.is_empty() {
            return "()".into();
        }
        cycles
            .iter()
            .map(|c| {
                let parts: Vec<String> = c.iter().map(|&x| (x as usize + first).to_string()).collect();
                format!("({})", parts.join(","))
            })
            .collect()
    }
}

/// Prints 1-based cycle notation, `()` for the identity.
impl fmt::Display for Perm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cycles_from(1))
    }
}

impl fmt::Debug for Perm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Perm{}", self)
    }
}

/// The orbits of the points `0..n` under maps whose images of a point `x`
/// are `images(x)`: each orbit ascending, orbits in order of their least
/// point.
pub fn orbits_of(n: usize, mut images: impl FnMut(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
    let mut orbit_of = vec![usize::MAX; n];
    let mut orbits = Vec::new();
    for start in 0..n {
        if orbit_of[start] != usize::MAX {
            continue;
        }
        orbit_of[start] = orbits.len();
        let mut orbit = vec![start];
        let mut next = 0;
        while next < orbit.len() {
            for y in images(orbit[next]) {
                if orbit_of[y] == usize::MAX {
                    orbit_of[y] = orbits.len();
                    orbit.push(y);
                }
            }
            next += 1;
        }
        orbit.sort_unstable();
        orbits.push(orbit);
    }
    orbits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_inverse_and_parity() {
        let a = Perm::from_images(vec![1, 2, 0, 3]).unwrap(); // (1,2,3)
        let b = Perm::from_images(vec![0, 1, 3, 2]).unwrap(); // (3,4)
        assert!(a.after(&a.inverse()).is_identity());
        assert!(a.is_even());
        assert!(!b.is_even());
        assert!(!a.after(&b).is_even());
        assert_eq!(a.to_string(), "(1,2,3)");
        assert_eq!(a.after(&b).images(), &[1, 2, 3, 0]);
        assert_eq!((a.order(), b.order(), a.after(&b).order()), (3, 2, 4));
        assert_eq!(Perm::identity(5).order(), 1);
        assert_eq!(a.after(&b).cycles_from(0), "(0,1,2,3)");
    }

    #[test]
    fn rejects_non_permutations() {
        assert!(Perm::from_images(vec![0, 0]).is_err());
        assert!(Perm::from_images(vec![0, 2]).is_err());
    }
}
