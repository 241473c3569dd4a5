//! Subgroups of `Z_{k_0} × … × Z_{k_{r-1}}` (twist vectors) in echelon form.
//!
//! Row `j`, when present, is an element with zeros before coordinate `j`
//! and `d_j` (a divisor of `k_j`) at `j`, where `d_j Z_{k_j}` is exactly the
//! set of `j`-th coordinates of the subgroup's elements that are zero
//! before `j` (a Howell form). Every element is then uniquely
//! `Σ q_j · row_j` with `0 ≤ q_j < k_j / d_j` (coordinates without a row
//! have `d_j = k_j`, one value), so the subgroup has `∏ k_j / d_j`
//! elements, the `q_j` rank it in mixed radix, and reducing any vector by
//! the rows gives the canonical representative of its coset.

/// A subgroup in echelon form (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Lattice {
    moduli: Vec<u8>,
    rows: Vec<Option<Vec<u8>>>,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Lattice {
    /// The trivial subgroup.
    pub fn new(moduli: Vec<u8>) -> Lattice {
        let rows = vec![None; moduli.len()];
        Lattice { moduli, rows }
    }

    /// Number of coordinates.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// `a · v + b · w`, coordinate by coordinate.
    fn combine(&self, a: u32, v: &[u8], b: u32, w: &[u8]) -> Vec<u8> {
        self.moduli
            .iter()
            .zip(v.iter().zip(w))
            .map(|(&k, (&x, &y))| ((a * x as u32 + b * y as u32) % k as u32) as u8)
            .collect()
    }

    /// `v − q · w`, coordinate by coordinate.
    fn minus(&self, v: &[u8], q: u32, w: &[u8]) -> Vec<u8> {
        self.moduli
            .iter()
            .zip(v.iter().zip(w))
            .map(|(&k, (&x, &y))| {
                let k = k as u32;
                ((x as u32 + k - q * y as u32 % k) % k) as u8
            })
            .collect()
    }

    /// Adds `v` and everything it generates with the subgroup so far.
    pub fn insert(&mut self, v: Vec<u8>) {
        let zero = vec![0u8; self.len()];
        let mut work = vec![v];
        while let Some(mut v) = work.pop() {
            for j in 0..self.len() {
                let k = self.moduli[j] as u32;
                let x = v[j] as u32 % k;
                if x == 0 {
                    continue;
                }
                let (row, d) = match &self.rows[j] {
                    Some(row) if x % row[j] as u32 == 0 => {
                        // Reducible: subtract and go on.
                        let q = x / row[j] as u32;
                        v = self.minus(&v, q, row);
                        continue;
                    }
                    Some(row) => (Some(row.clone()), row[j] as u32),
                    None => (None, k),
                };
                // A new row at `j` with `g = gcd(d, x)`: `a·row + b·v`.
                let g = gcd(d, x);
                let (a, b) = (0..k)
                    .flat_map(|a| (0..k).map(move |b| (a, b)))
                    .find(|&(a, b)| (a * d + b * x) % k == g % k)
                    .expect("Bezout coefficients exist modulo k");
                let new = self.combine(a, row.as_deref().unwrap_or(&zero), b, &v);
                // What the old row and `v` leave past `j`, and the multiple of
                // the new row that vanishes at `j`, must be in the rows below.
                if let Some(row) = row {
                    work.push(self.minus(&row, d / g, &new));
                }
                work.push(self.minus(&v, x / g, &new));
                work.push(self.combine(k / g, &new, 0, &zero));
                self.rows[j] = Some(new);
                break;
            }
        }
    }

    /// Values of digit `j` (`k_j / d_j`; 1 without a row).
    pub fn radix(&self, j: usize) -> u64 {
        self.rows[j]
            .as_ref()
            .map_or(1, |row| self.moduli[j] as u64 / row[j] as u64)
    }

    /// Number of elements of the subgroup restricted to rows `range`.
    pub fn order_of(&self, range: std::ops::Range<usize>) -> u64 {
        range.map(|j| self.radix(j)).product()
    }

    /// Reduces `v` by the rows in `range` (coordinates before `range` are
    /// taken as zero), appending each digit `q_j` to `rank` (mixed radix);
    /// `v` becomes the canonical representative of its coset modulo those
    /// rows.
    #[inline]
    pub fn reduce(&self, v: &mut [u8], range: std::ops::Range<usize>, mut rank: u64) -> u64 {
        for j in range {
            if let Some(row) = &self.rows[j] {
                let k = self.moduli[j];
                let q = v[j] / row[j];
                rank = rank * (k / row[j]) as u64 + q as u64;
                if q != 0 {
                    for (i, (x, &r)) in v.iter_mut().zip(row).enumerate().skip(j) {
                        let k = self.moduli[i] as u32;
                        *x = ((*x as u32 + (k - r as u32) * q as u32) % k) as u8;
                    }
                }
            }
        }
        rank
    }

    /// Adds `Σ q_j · row_j` over the rows in `range` to `v`, the digits
    /// `q_j` read from `value` (mixed radix, the last row least significant).
    pub fn expand(&self, v: &mut [u8], range: std::ops::Range<usize>, mut value: u64) {
        for j in range.rev() {
            if let Some(row) = &self.rows[j] {
                let radix = self.radix(j);
                let q = (value % radix) as u32;
                value /= radix;
                for (i, (x, &r)) in v.iter_mut().zip(row).enumerate().skip(j) {
                    let k = self.moduli[i] as u32;
                    *x = ((*x as u32 + r as u32 * q) % k) as u8;
                }
            }
        }
    }

    /// The rows, for closing the subgroup under coordinate permutations.
    pub fn rows(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.rows.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Brute-force closure of `gens` under addition.
    fn closure(moduli: &[u8], gens: &[Vec<u8>]) -> HashSet<Vec<u8>> {
        let zero = vec![0u8; moduli.len()];
        let mut set: HashSet<Vec<u8>> = [zero.clone()].into();
        let mut queue = vec![zero];
        while let Some(v) = queue.pop() {
            for g in gens {
                let w: Vec<u8> = v.iter().zip(g).zip(moduli).map(|((&a, &b), &k)| (a + b) % k).collect();
                if set.insert(w.clone()) {
                    queue.push(w);
                }
            }
        }
        set
    }

    #[test]
    fn echelon_form_ranks_exactly_the_generated_subgroup() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for trial in 0..200 {
            let moduli: Vec<u8> = (0..4).map(|i| [2, 3, 4, 6, 4][(trial + i) % 5]).collect();
            let gens: Vec<Vec<u8>> = (0..1 + next(3))
                .map(|_| moduli.iter().map(|&k| next(k as u64) as u8).collect())
                .collect();
            let mut lattice = Lattice::new(moduli.clone());
            gens.iter().for_each(|g| lattice.insert(g.clone()));
            let set = closure(&moduli, &gens);
            let order = lattice.order_of(0..moduli.len());
            assert_eq!(order, set.len() as u64, "moduli {moduli:?} gens {gens:?}");
            // Ranks are a bijection onto the subgroup.
            let mut ranks = HashSet::new();
            for v in &set {
                let mut w = v.clone();
                let rank = lattice.reduce(&mut w, 0..moduli.len(), 0);
                assert!(w.iter().all(|&x| x == 0), "{v:?} reduces to zero");
                assert!(rank < order && ranks.insert(rank));
                let mut back = vec![0u8; moduli.len()];
                lattice.expand(&mut back, 0..moduli.len(), rank);
                assert_eq!(&back, v);
            }
        }
    }
}
