//! The map a move undone and a conjugation make of one block's twists, as
//! two half tables of the block index (see the parent module).

use super::OrientedSpace;
use crate::puzzle::Move;

/// The map of a block's twists that a move undone and a conjugation make:
/// target slot `z`'s twist `v` becomes `unit·v + constant` at `dest`.
pub struct AffineMap {
    /// Per slot `z` of the target: the source slot its twist lands in.
    dest: Vec<u8>,
    unit: Vec<u8>,
    constant: Vec<u8>,
}

impl AffineMap {
    /// For the block of arrangement `p`: `x = inverse(y)` (or `y` itself)
    /// conjugated by element `k`. Returns the map from `y`'s twists to
    /// those `c_k(x)` is stored with.
    pub fn new(space: &OrientedSpace, p: &[u8], inverse: Option<&Move>, k: usize) -> AffineMap {
        let e = &space.symmetries.elements[k];
        let n = p.len();
        let (mut dest, mut unit, mut constant) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
        for z in 0..n {
            let (y, pre) = match inverse {
                Some(m) => (m.perm[z] as usize, m.twist.get(z).copied().unwrap_or(0)),
                None => (z, 0),
            };
            let k_mod = u32::from(space.modulus[z]);
            let u = u32::from(e.unit[y]);
            let home = space.symmetries.home_of(p[z]);
            dest[z] = e.slots[y];
            unit[z] = e.unit[y];
            constant[z] =
                ((u * u32::from(pre) + u32::from(e.offset[y]) + k_mod - u32::from(e.offset[home])) % k_mod) as u8;
        }
        AffineMap { dest, unit, constant }
    }

    /// Half tables of the map on block indices (`backward`: target index to
    /// source index; else source to target): an index `i` maps to
    /// `lo[i % split] + hi[i / split]`.
    pub fn tables(&self, space: &OrientedSpace, forward: bool) -> (Vec<u32>, Vec<u32>) {
        // Terms (input slot, output slot, scale, constant) per digit.
        let mut terms: Vec<(usize, usize, u32, u32)> = (0..self.dest.len())
            .filter(|&z| space.radix[z] > 1)
            .map(|z| {
                let k = u32::from(space.modulus[z]);
                let (u, c) = (u32::from(self.unit[z]), u32::from(self.constant[z]));
                if forward {
                    // v = u·t + c  ⇒  t = u⁻¹·(v − c).
                    let inv = (1..k).find(|&w| w * u % k == 1).expect("a unit");
                    (self.dest[z] as usize, z, inv, (k - inv * c % k) % k)
                } else {
                    (z, self.dest[z] as usize, u, c)
                }
            })
            .collect();
        // Digits in index order: each half is built digit after digit.
        terms.sort_by_key(|t| space.stride[t.0]);
        let half = |low: bool| -> Vec<u32> {
            let (first, size) = if low {
                (1u64, space.split)
            } else {
                (space.split, space.block_states / space.split)
            };
            let mut table = vec![0u32; size as usize];
            let mut filled = 1usize;
            for &(input, output, scale, constant) in &terms {
                let stride = space.stride[input];
                if (stride >= space.split) == low {
                    continue;
                }
                let k = u64::from(space.modulus[input]);
                let local = (stride / first) as usize;
                debug_assert_eq!(local, filled);
                for v in (0..k).rev() {
                    let value = (scale as u64 * v + constant as u64) % k;
                    let contribution = (value * space.stride[output]) as u32;
                    for i in 0..filled {
                        table[v as usize * local + i] = table[i] + contribution;
                    }
                }
                filled *= k as usize;
            }
            table
        };
        (half(true), half(false))
    }
}
