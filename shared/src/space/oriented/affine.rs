//! The map a move undone and a conjugation make of one block's twists, as
//! two half tables of the block index (see the parent module).

use super::{Join, OrientedSpace};
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

    /// Half tables of the map on block indices (`forward`: source index to
    /// target index; else target to source): an index `i` maps to
    /// `lo[i % split] + hi[i / split]`, or `lo[i % split] ^ hi[i / split]`
    /// where the space's [`Join`] says so.
    pub fn tables(&self, space: &OrientedSpace, forward: bool) -> (Vec<u32>, Vec<u32>) {
        match space.join() {
            Join::Add => self.digit_tables(space, forward),
            Join::Xor => self.flip_tables(space, forward),
        }
    }

    /// [`Self::tables`] over GF(2): every digit is a flip, the map is
    /// `index ↦ base ^ (XOR of a column per set bit)`. A derived flip (the
    /// sum of its orbit's others) adds its column to each of theirs.
    fn flip_tables(&self, space: &OrientedSpace, forward: bool) -> (Vec<u32>, Vec<u32>) {
        let n = self.dest.len();
        debug_assert!(self.unit.iter().all(|&u| u == 1), "the only unit mod 2");
        let out_bit = |s: usize| if space.radix[s] > 1 { space.stride[s] as u32 } else { 0 };
        // Each output slot reads one input slot's flip, plus a constant.
        let mut base = 0u32;
        let mut column = vec![0u32; n];
        for z in 0..n {
            let (input, output) = if forward {
                (self.dest[z] as usize, z)
            } else {
                (z, self.dest[z] as usize)
            };
            column[input] ^= out_bit(output);
            if self.constant[z] == 1 {
                base ^= out_bit(output);
            }
        }
        let bits = space.block_states.trailing_zeros() as usize;
        let mut by_bit = vec![0u32; bits];
        for s in (0..n).filter(|&s| space.radix[s] > 1) {
            let through_derived = space.derived_of[s].map_or(0, |d| column[space.derived[d as usize].slot]);
            by_bit[space.stride[s].trailing_zeros() as usize] = column[s] ^ through_derived;
        }
        let low_bits = space.split.trailing_zeros() as usize;
        let half = |first: u32, size: u64, offset: usize| -> Vec<u32> {
            let mut table = vec![first; size as usize];
            for i in 1..table.len() {
                table[i] = table[i & (i - 1)] ^ by_bit[offset + i.trailing_zeros() as usize];
            }
            table
        };
        (
            half(base, space.split, 0),
            half(0, space.block_states / space.split, low_bits),
        )
    }

    /// The map applied to every slot's twist at once, straight from its
    /// definition (`forward`: a source's twists to the target's): what the
    /// half tables are checked against.
    #[cfg(test)]
    pub(super) fn apply(&self, space: &OrientedSpace, twists: &[u8], forward: bool) -> Vec<u8> {
        let mut out = vec![0u8; twists.len()];
        for z in 0..twists.len() {
            let k = u32::from(space.modulus[z]);
            let (u, c) = (u32::from(self.unit[z]), u32::from(self.constant[z]));
            if forward {
                let inverse = (1..k).find(|&w| w * u % k == 1).unwrap_or(0);
                out[z] = (inverse * (u32::from(twists[self.dest[z] as usize]) + k - c) % k) as u8;
            } else {
                out[self.dest[z] as usize] = ((u * u32::from(twists[z]) + c) % k) as u8;
            }
        }
        out
    }

    /// [`Self::tables`] in mixed radix: each digit maps to one digit.
    fn digit_tables(&self, space: &OrientedSpace, forward: bool) -> (Vec<u32>, Vec<u32>) {
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
