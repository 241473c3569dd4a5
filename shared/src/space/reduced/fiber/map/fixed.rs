//! The states a map of a key onto itself leaves in place, listed from the
//! map's digits instead of found by trying every state of the shard.
//!
//! A map of [`MapForm::Digits`](super::MapForm::Digits) sends digit `i`'s
//! value `v` to value `g_i(v)` of digit `π(i)`: a state is fixed when
//! `v_π(i) = g_i(v_i)` for every digit. Along a cycle `i₁ → … → i_k` of
//! `π` the first value fixes the others, and it must come back to itself,
//! so the fixed states are the product over the cycles of each cycle's
//! few fixed first values.
//!
//! Why: counting a shard's classes (Burnside's lemma over its key's
//! stabiliser) tried every stored state under every symmetry of the
//! stabiliser. On the 4×4 Loopover to depth 8 that was 3.5 % of the
//! CPU, and the few dense shards of keys with large stabilisers came last
//! in their levels, where one thread counted for tens of milliseconds
//! while the other waited.

use super::{FiberMap, Inner};
use crate::space::reduced::keys::MAX_BLOCKS;

impl FiberMap {
    /// The states this map sends to themselves, for a map of a key onto
    /// itself in digit form (`None` for row tables), whose piece map sends
    /// each digit to `targets`' ([`FiberLayout::digit_targets`]: worked out
    /// here, not by every map the kernel builds); `None` as well when
    /// there are more than `limit`, for then trying the stored states
    /// costs less, and for a halved layout (whose last digit's table is by
    /// full rank, not by stored value). Indices are padded (rows of
    /// `row_bits` bits).
    ///
    /// [`FiberLayout::digit_targets`]: crate::space::reduced::fiber::FiberLayout::digit_targets
    pub fn fixed_states(&self, targets: &[u8; MAX_BLOCKS], row_bits: u64, limit: usize) -> Option<FixedStates> {
        let Inner::Digits(inner) = &self.inner else {
            return None;
        };
        if self.halved {
            return None;
        }
        // Each digit's stride in padded index units and its contribution
        // (the target digit's value times the target's stride) by value.
        let digits: Vec<(u64, &[u64])> = self
            .outer
            .iter()
            .map(|d| (d.stride * row_bits, &d.table[..d.radix as usize]))
            .chain(inner.iter().map(|d| (d.stride, &d.table[..d.radix as usize])))
            .collect();
        let mut cycles = Vec::new();
        let mut count = 1usize;
        let mut seen = vec![false; digits.len()];
        for first in 0..digits.len() {
            if seen[first] {
                continue;
            }
            let mut cycle = Vec::new();
            let mut i = first;
            while !seen[i] {
                seen[i] = true;
                cycle.push(i);
                i = targets[i] as usize;
            }
            debug_assert_eq!(i, first, "digits map one to one");
            // The index parts of this cycle's fixed values.
            let parts: Vec<u64> = (0..digits[first].1.len() as u64)
                .filter_map(|v| {
                    let mut value = v;
                    let mut part = 0;
                    for &i in &cycle {
                        let (stride, table) = digits[i];
                        part += value * stride;
                        let target_stride = digits[targets[i] as usize].0;
                        value = table[value as usize] / target_stride;
                    }
                    (value == v).then_some(part)
                })
                .collect();
            count = count.saturating_mul(parts.len());
            if count > limit {
                return None;
            }
            cycles.push(parts);
        }
        Some(FixedStates { cycles, count })
    }
}

/// The fixed states of a map: one index part per fixed value of each
/// cycle of digits, a state the sum of one part of every cycle. Listed
/// one by one only as they are visited, so counting them allocates
/// nothing beyond the parts.
pub struct FixedStates {
    cycles: Vec<Vec<u64>>,
    count: usize,
}

impl FixedStates {
    /// How many states are fixed.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no state is fixed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Calls `f` with the padded index of every fixed state.
    pub fn for_each(&self, mut f: impl FnMut(u64)) {
        fn visit(cycles: &[Vec<u64>], base: u64, f: &mut impl FnMut(u64)) {
            match cycles.split_first() {
                None => f(base),
                Some((parts, rest)) => parts.iter().for_each(|&part| visit(rest, base + part, f)),
            }
        }
        if self.count > 0 {
            visit(&self.cycles, 0, &mut f);
        }
    }
}
