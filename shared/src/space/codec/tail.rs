//! The group ranking with the chain's tail as the low part.
//!
//! The twist-lattice ranking ([`super::group`]) makes blocks of the pure
//! twists a move carries along, which leaves a few states per block, or one
//! when nothing is oriented (M24 on 24 points, the pyramorphix), and then
//! the kernel's per-block work (a source block per move, every level)
//! is per state. Here the low part is a subgroup instead: `L = H_j · N`,
//! the elements fixing the first `j` base slots of the chain, twists
//! included. Every element is `g = u_b ∘ h` with `u_b = u_1 ∘ … ∘ u_j` (the
//! **block**, the first `j` chain digits) and `h ∈ L`, and
//! `rank(g) = block · |L| + rank_L(h)`, `rank_L` being the last chain digits
//! and then `N`'s lattice index. A move `m` maps the elements of block `b`
//! to one block `b'`: `m⁻¹ ∘ u_b = u_b' ∘ c` with `c ∈ L`, so the
//! predecessor of `u_b ∘ h` is `u_b' ∘ (c ∘ h)`, and its low index is row
//! `c` of `L`'s multiplication table at `rank_L(h)`. That `c`, the label of
//! the pair `(b, m)`, is the low index of `m⁻¹` applied to the block's
//! first state, so the kernel finds it where it finds the source block.
//!
//! States are worked on piece by piece: `pos[h]` and `tw[h]` are the slot
//! and twist of the piece whose home is slot `h`.
//!
//! **Identical pieces.** The chain is then of the group on slots (as if
//! every piece were distinct), with the slots of distinct pieces first, and
//! a position is a coset `g·S` of the solved state's stabiliser `S`. `S`
//! fixes every distinct piece, so `S ⊆ L` while the block's levels are
//! those of distinct pieces: the block of a position is read from where
//! its distinct pieces are, and its low part is `h·solved` for `h ∈ L`,
//! one of the `|L| / |S|` states of `L`'s orbit, listed and looked up. The
//! labels stay elements of `L` (a move's `c`), worked out on the group's
//! elements (`TailRank::source`), so the table has `|L|` rows of `|L·solved|`.

use super::chain::Lift;
use super::group::{ChainParts, RankLevel};
use super::lattice::Lattice;
use super::twists::LowTables;
use super::{CodecInput, MAX_CODED_SLOTS};
use rayon::prelude::*;
use std::collections::HashMap;

/// Largest tail `L`: `|L| · W ≤ |L|²` table entries both ways (4 MiB at 1024).
pub(super) const MAX_TAIL_STATES: u64 = 1 << 10;

/// A state piece by piece (see the module doc).
#[derive(Clone, Copy)]
struct Pieces {
    pos: [u8; MAX_CODED_SLOTS],
    tw: [u8; MAX_CODED_SLOTS],
}

/// The tail ranking (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TailRank {
    slots: usize,
    modulus: Vec<u8>,
    solved_cells: Vec<u8>,
    solved_twists: Vec<u8>,
    /// Home slot of each class.
    home: Vec<u8>,
    levels: Vec<RankLevel>,
    /// Chain levels in the block (`j`).
    block_levels: usize,
    oriented: Vec<u8>,
    twists: Lattice,
    /// With identical pieces, the low states (`L` applied to solved).
    orbit: Option<LowOrbit>,
    low: LowTables,
}

/// The states `L` reaches from solved (slot classes, then twists), and the
/// index of each.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LowOrbit {
    states: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, u16>,
}

impl TailRank {
    /// The ranking whose low part is the largest tail `L` of at most
    /// `max_low` elements; `None` when the smallest possible tail is larger:
    /// `N`, or with identical pieces every level from the first identical
    /// piece's on (trapentrix: its distinct pieces pin down too little).
    pub fn plan(input: &CodecInput, parts: &ChainParts, max_low: u64) -> Option<TailRank> {
        let n = input.solved_cells.len();
        let mut w = parts.twists.order_of(0..parts.twists.len());
        // Block levels must be those of distinct pieces (see the module doc).
        let distinct_levels = parts.levels.iter().take_while(|l| l.distinct).count();
        let mut j = parts.levels.len();
        while j > distinct_levels {
            j -= 1;
            w = w.checked_mul(parts.levels[j].radix)?;
        }
        if w > max_low {
            return None;
        }
        while j > 0 && w * parts.levels[j - 1].radix <= max_low {
            j -= 1;
            w *= parts.levels[j].radix;
        }
        let mut home = vec![0u8; 256];
        input
            .solved_cells
            .iter()
            .enumerate()
            .for_each(|(s, &c)| home[c as usize] = s as u8);
        let mut rank = TailRank {
            slots: n,
            modulus: parts.modulus.clone(),
            solved_cells: input.solved_cells.to_vec(),
            solved_twists: input.solved_twists.to_vec(),
            home,
            levels: parts.levels.clone(),
            block_levels: j,
            oriented: parts.oriented.clone(),
            twists: parts.twists.clone(),
            orbit: None,
            low: LowTables::default(),
        };
        rank.low = if parts.identical {
            rank.orbit = Some(rank.low_orbit(w));
            rank.orbit_action(w as usize)
        } else {
            rank.multiplication_table(w as usize)
        };
        Some(rank)
    }

    /// `e_x` of every low index `x` as a group element (slot `h` goes to
    /// `pos[h]`, gaining its twist).
    fn low_lifts(&self, elements: u64) -> Vec<Lift> {
        (0..elements)
            .map(|x| {
                let e = self.low_element(x);
                let mut lift = Lift {
                    to: e.pos[..self.slots].to_vec(),
                    twist: vec![0; self.slots],
                };
                for h in 0..self.slots {
                    let k = self.modulus[h];
                    lift.twist[h] = (e.tw[h] + k - self.solved_twists[h] % k) % k;
                }
                lift
            })
            .collect()
    }

    /// `mul[c · W + y] = rank_L(e_c ∘ e_y)`, the low part's table.
    fn multiplication_table(&self, w: usize) -> LowTables {
        let elements: Vec<Pieces> = (0..w as u64).map(|x| self.low_element(x)).collect();
        let lifts = self.low_lifts(w as u64);
        let mut mul = vec![0u16; w * w];
        mul.par_chunks_mut(w).zip(&lifts).for_each(|(row, lift)| {
            for (y, out) in row.iter_mut().enumerate() {
                let mut p = elements[y];
                apply(lift, &mut p, &self.modulus, self.slots);
                *out = self.rank_low(&mut p) as u16;
            }
        });
        LowTables::action(w, w, mul)
    }

    /// The states of `L` applied to solved, in the order of `L`'s elements.
    fn low_orbit(&self, elements: u64) -> LowOrbit {
        let mut orbit = LowOrbit {
            states: Vec::new(),
            index: HashMap::new(),
        };
        for x in 0..elements {
            let mut state = vec![0u8; 2 * self.slots];
            let (cells, twists) = state.split_at_mut(self.slots);
            self.write_state(&self.low_element(x), cells, twists);
            if !orbit.index.contains_key(&state) {
                orbit.index.insert(state.clone(), orbit.states.len() as u16);
                orbit.states.push(state);
            }
        }
        orbit
    }

    /// `|L|` rows of the low states' indices after each element of `L`.
    fn orbit_action(&self, elements: usize) -> LowTables {
        let orbit = self.orbit.as_ref().expect("identical pieces have an orbit");
        let w = orbit.states.len();
        let lifts = self.low_lifts(elements as u64);
        let mut table = vec![0u16; elements * w];
        table.par_chunks_mut(w).zip(&lifts).for_each(|(row, lift)| {
            let mut scratch = [0u8; 128];
            for (y, out) in row.iter_mut().enumerate() {
                let mut state = orbit.states[y].clone();
                let (cells, twists) = state.split_at_mut(self.slots);
                lift.apply(cells, twists, &self.modulus, &mut scratch);
                *out = orbit.index[&state];
            }
        });
        LowTables::action(w, elements, table)
    }

    /// The state `e_x` of low index `x` (block 0), piece by piece.
    fn low_element(&self, x: u64) -> Pieces {
        let mut p = self.solved_pieces();
        self.write_low(x, &mut p);
        p
    }

    /// Pieces at home with their solved twists.
    fn solved_pieces(&self) -> Pieces {
        let mut p = Pieces {
            pos: [0; MAX_CODED_SLOTS],
            tw: [0; MAX_CODED_SLOTS],
        };
        for h in 0..self.slots {
            p.pos[h] = h as u8;
            p.tw[h] = self.solved_twists[h];
        }
        p
    }

    /// Turns solved pieces into `e_x ∘ (solved)`: the twist of `N`'s index,
    /// then the tail levels' representatives, last level first.
    fn write_low(&self, mut x: u64, p: &mut Pieces) {
        let len = self.oriented.len();
        let twist_states = self.twists.order_of(0..len);
        let mut v = [0u8; MAX_CODED_SLOTS];
        self.twists.expand(&mut v[..len], 0..len, x % twist_states);
        x /= twist_states;
        for (c, &s) in self.oriented.iter().enumerate() {
            let s = s as usize;
            p.tw[s] = (p.tw[s] + v[c]) % self.modulus[s];
        }
        for level in self.levels[self.block_levels..].iter().rev() {
            let d = (x % level.radix) as usize;
            x /= level.radix;
            if d != 0 {
                apply(&level.reps[d], p, &self.modulus, self.slots);
            }
        }
    }

    /// Strips `levels` off `p`, their digits appended to `rank` (mixed radix).
    #[inline]
    fn strip(&self, p: &mut Pieces, levels: &[RankLevel], mut rank: u64) -> u64 {
        for level in levels {
            let d = level.index[p.pos[level.point as usize] as usize];
            debug_assert_ne!(d, u8::MAX, "a state outside the group");
            rank = rank * level.radix + d as u64;
            if d != 0 {
                apply(&level.inverses[d as usize], p, &self.modulus, self.slots);
            }
        }
        rank
    }

    /// The block digits of pieces, stripped off them.
    #[inline]
    fn strip_block(&self, p: &mut Pieces) -> u64 {
        self.strip(p, &self.levels[..self.block_levels], 0)
    }

    /// The low index of pieces whose block digits are stripped: the tail's
    /// digits, then `N`'s index of the pure twist left.
    #[inline]
    fn rank_low(&self, p: &mut Pieces) -> u64 {
        let rank = self.strip(p, &self.levels[self.block_levels..], 0);
        let len = self.oriented.len();
        if len == 0 {
            return rank;
        }
        // All pieces home: what is left is a pure twist of N.
        let mut v = [0u8; MAX_CODED_SLOTS];
        for (c, &s) in self.oriented.iter().enumerate() {
            let (s, k) = (s as usize, self.modulus[s as usize]);
            v[c] = (p.tw[s] + k - self.solved_twists[s] % k) % k;
        }
        self.twists.reduce(&mut v[..len], 0..len, rank)
    }

    /// A coded state piece by piece.
    fn pieces_of(&self, cells: &[u8], twists: &[u8]) -> Pieces {
        let mut p = Pieces {
            pos: [0; MAX_CODED_SLOTS],
            tw: [0; MAX_CODED_SLOTS],
        };
        for s in 0..self.slots {
            let h = self.home[cells[s] as usize] as usize;
            p.pos[h] = s as u8;
            p.tw[h] = twists[s];
        }
        p
    }

    /// Writes pieces back as slot classes and twists.
    fn write_state(&self, p: &Pieces, cells: &mut [u8], twists: &mut [u8]) {
        for h in 0..self.slots {
            let s = p.pos[h] as usize;
            cells[s] = self.solved_cells[h];
            twists[s] = p.tw[h];
        }
    }

    /// The low part's tables (labels per block and move).
    pub fn low(&self) -> &LowTables {
        &self.low
    }

    /// Chain levels of the block part (the largest shard key).
    pub fn levels(&self) -> usize {
        self.block_levels
    }

    /// All chain levels (for the shard keys' masks).
    pub fn rank_levels(&self) -> &[RankLevel] {
        &self.levels
    }

    /// Values of the first `k` chain digits together (the shards).
    pub fn key_states(&self, k: usize) -> u64 {
        self.levels[..k].iter().map(|l| l.radix).product()
    }

    /// Blocks per shard with a key of `k` levels.
    pub fn blocks_below(&self, k: usize) -> u64 {
        self.levels[k..self.block_levels].iter().map(|l| l.radix).product()
    }

    /// Block and low index of a state.
    #[inline]
    pub fn rank(&self, cells: &[u8], twists: &[u8]) -> (u64, u64) {
        if let Some(orbit) = &self.orbit {
            return self.rank_in_orbit(orbit, cells, twists);
        }
        let mut p = self.pieces_of(cells, twists);
        let block = self.strip_block(&mut p);
        (block, self.rank_low(&mut p))
    }

    /// [`TailRank::rank`] with identical pieces: the block from where the
    /// distinct pieces of the block levels are, the low index looked up.
    fn rank_in_orbit(&self, orbit: &LowOrbit, cells: &[u8], twists: &[u8]) -> (u64, u64) {
        let n = self.slots;
        let mut state = [0u8; 2 * MAX_CODED_SLOTS];
        state[..n].copy_from_slice(&cells[..n]);
        state[n..2 * n].copy_from_slice(&twists[..n]);
        let mut scratch = [0u8; 128];
        let mut block = 0u64;
        for level in &self.levels[..self.block_levels] {
            let slot = state[..n]
                .iter()
                .position(|&c| c == level.piece)
                .expect("a distinct piece");
            let d = level.index[slot];
            debug_assert_ne!(d, u8::MAX, "a state outside the group");
            block = block * level.radix + d as u64;
            if d != 0 {
                let (cells, twists) = state.split_at_mut(n);
                level.inverses[d as usize].apply(cells, twists, &self.modulus, &mut scratch);
            }
        }
        let low = orbit.index.get(&state[..2 * n]).expect("a state of the group");
        (block, *low as u64)
    }

    /// Writes the state of block `block` and low index `low`.
    pub fn unrank(&self, block: u64, low: u64, cells: &mut [u8], twists: &mut [u8]) {
        let digits = self.block_digits(block);
        if let Some(orbit) = &self.orbit {
            let state = &orbit.states[low as usize];
            cells[..self.slots].copy_from_slice(&state[..self.slots]);
            twists[..self.slots].copy_from_slice(&state[self.slots..]);
            let mut scratch = [0u8; 128];
            for (level, &d) in self.levels[..self.block_levels].iter().zip(&digits).rev() {
                if d != 0 {
                    level.reps[d as usize].apply(cells, twists, &self.modulus, &mut scratch);
                }
            }
            return;
        }
        let mut p = self.low_element(low);
        self.lift_block(&digits, &mut p);
        self.write_state(&p, cells, twists);
    }

    /// The chain digits of a block.
    fn block_digits(&self, mut block: u64) -> [u8; MAX_CODED_SLOTS] {
        let mut digits = [0u8; MAX_CODED_SLOTS];
        for (d, level) in digits.iter_mut().zip(&self.levels[..self.block_levels]).rev() {
            *d = (block % level.radix) as u8;
            block /= level.radix;
        }
        digits
    }

    /// Applies the block's representatives `u_b` to pieces (last level first).
    fn lift_block(&self, digits: &[u8], p: &mut Pieces) {
        for (level, &d) in self.levels[..self.block_levels].iter().zip(digits).rev() {
            if d != 0 {
                apply(&level.reps[d as usize], p, &self.modulus, self.slots);
            }
        }
    }

    /// The source block and the label of block `block` under the inverse
    /// of each move, given as the moves the kernel applies (`to`, `twist`):
    /// `each(m, b', c)` with `m⁻¹ ∘ u_b = u_b' ∘ c`, `c ∈ L` (its index),
    /// computed on the group's elements, so identical pieces do not blur `c`.
    pub fn sources<'m>(
        &self,
        block: u64,
        moves: impl IntoIterator<Item = (&'m [u8], &'m [u8])>,
        mut each: impl FnMut(usize, u64, u64),
    ) {
        let mut first = self.solved_pieces();
        self.lift_block(&self.block_digits(block), &mut first);
        for (m, (to, twist)) in moves.into_iter().enumerate() {
            let mut p = first;
            apply_move(to, twist, &mut p, &self.modulus, self.slots);
            let source = self.strip_block(&mut p);
            each(m, source, self.rank_low(&mut p));
        }
    }
}

/// Applies a group element to pieces: the piece in slot `s` goes to
/// `to[s]`, gaining `twist[s]`.
#[inline]
fn apply(lift: &Lift, p: &mut Pieces, modulus: &[u8], slots: usize) {
    apply_move(&lift.to, &lift.twist, p, modulus, slots);
}

/// [`apply`] of a move given as its slot images and twists.
#[inline]
fn apply_move(to: &[u8], twist: &[u8], p: &mut Pieces, modulus: &[u8], slots: usize) {
    for h in 0..slots {
        let s = p.pos[h] as usize;
        p.pos[h] = to[s];
        // Both twists are below the slot's modulus, so one subtraction
        // reduces the sum: a division here per slot and level was most of
        // the table build (233: 4.1 s of its first three levels).
        debug_assert!(p.tw[h] < modulus[s].max(1) && twist[s] < modulus[s].max(1));
        let t = p.tw[h] + twist[s];
        p.tw[h] = if t >= modulus[s] { t - modulus[s] } else { t };
    }
}
