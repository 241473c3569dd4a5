//! A low part of piece places: the arrangement of one slot orbit.
//!
//! Without orientation the class digits leave no low part, so every block
//! is one state and the kernel ranks state by state (twsearch's
//! `puzzlerchallenger`, 2,910,600 positions of identical pieces: 0.68 s
//! against twsearch's 0.20 s). But a move permutes each orbit's slots
//! among themselves, so the arrangement of the classes in one orbit (all its
//! class digits) maps to an arrangement of that orbit whatever the rest of
//! the state is: one table row per move, like the twists of an orbit that
//! keeps its orientation. So the class digits of the largest orbit whose
//! arrangements fit (at least [`MIN_ARRANGEMENTS`], at most
//! [`MAX_ARRANGEMENTS`]) go last and are the low part, when another orbit is
//! left for the blocks and shards. Slots that a guard reads stay in the
//! block, which must tell the guard's truth.

use super::twists::LowTables;
use super::{ClassDigit, Codec, MAX_CODED_SLOTS};

/// Fewer arrangements than this are not worth a low part: the table
/// kernel's per-block work is then close to its per-state work.
const MIN_ARRANGEMENTS: u64 = 64;

/// Most arrangements a low part takes: low indices are 16 bits. With one
/// row per move and no labels the tables are `W · moves · 4` bytes both
/// ways (turnstile's edges, 55,440 arrangements under 10 moves: 2.2 MB),
/// so the twists' smaller limit, which also pays for labels, does not apply.
/// Below it turnstile had no low part and ran state by state.
const MAX_ARRANGEMENTS: u64 = 1 << 16;

/// Class digits with the low orbit's last, and the index of its first
/// (`digits.len()` when no orbit qualifies: none without guards' slots
/// with between [`MIN_ARRANGEMENTS`] and [`MAX_ARRANGEMENTS`] arrangements).
pub(super) fn order_for_low_orbit(digits: Vec<ClassDigit>, guarded_slots: u64) -> (Vec<ClassDigit>, usize) {
    let mut orbits: Vec<u64> = digits.iter().map(|d| d.orbit).collect();
    orbits.sort_unstable();
    orbits.dedup();
    let arrangements = |orbit: u64| -> u64 {
        digits
            .iter()
            .filter(|d| d.orbit == orbit)
            .fold(1u64, |p, d| p.saturating_mul(d.radix))
    };
    // One orbit alone stays class digits: a shard key needs digits in the
    // block (tracked Loopover is one orbit, and its shards are its pieces).
    if orbits.len() < 2 {
        let len = digits.len();
        return (digits, len);
    }
    let best = orbits
        .into_iter()
        .filter(|&o| o & guarded_slots == 0)
        .map(|o| (arrangements(o), o))
        .filter(|&(a, _)| (MIN_ARRANGEMENTS..=MAX_ARRANGEMENTS).contains(&a))
        .max();
    let Some((_, low)) = best else {
        let len = digits.len();
        return (digits, len);
    };
    let (mut block, tail): (Vec<ClassDigit>, Vec<ClassDigit>) = digits.into_iter().partition(|d| d.orbit != low);
    let first = block.len();
    block.extend(tail);
    (block, first)
}

impl Codec {
    /// Rank of the low orbit's arrangement; `masks` holds each class's
    /// slots (as [`Codec::rank_block`] leaves them).
    #[inline]
    pub(super) fn rank_low_classes(&self, masks: &[u64]) -> u64 {
        self.rank_digits(&self.classes[self.first_low_class..], masks)
    }

    /// Writes the classes of the low orbit's arrangement `value`.
    pub(super) fn unrank_low_classes(&self, value: u64, cells: &mut [u8]) {
        self.unrank_digits(&self.classes[self.first_low_class..], value, cells);
    }

    /// The low tables of the low orbit's arrangements under `moves`.
    pub(super) fn arrangement_tables(&self, moves: &[(&[u8], &[u8])]) -> LowTables {
        let low = &self.classes[self.first_low_class..];
        let states: u64 = low.iter().map(|d| d.radix).product();
        // Every low digit lives in the one low orbit.
        let orbit = low[0].orbit;
        let mut before = [0u8; MAX_CODED_SLOTS];
        let mut masks = [0u64; 256];
        LowTables::tabulate(states as usize, moves.len(), |m, x| {
            self.unrank_low_classes(x as u64, &mut before);
            let to = moves[m].0;
            masks.fill(0);
            let mut bits = orbit;
            while bits != 0 {
                let s = bits.trailing_zeros() as usize;
                masks[before[s] as usize] |= 1 << to[s];
                bits &= bits - 1;
            }
            self.rank_low_classes(&masks) as usize
        })
    }
}
