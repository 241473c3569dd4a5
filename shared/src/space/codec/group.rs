//! The group ranking: coded states of distinct pieces, exactly the
//! reachable ones.
//!
//! A state is `u_1 ∘ … ∘ u_k ∘ n` applied to solved ([`super::chain`]): one
//! representative per level of a stabiliser chain of the slot action `P`,
//! then a pure twist `n ∈ N`. Written in the slots of the state itself,
//! its twists are `t = t_0 + n'` with `t_0` the twists of `u_1 ∘ … ∘ u_k`
//! applied to solved and `n' ∈ N` (`N` is closed under permuting slots).
//! Digits, most significant first:
//! 1. the chain digits: level `i`'s digit is where `u_i` sends its base
//!    slot (the shard key is the first `k`: the slots of `k` pieces, which
//!    a move maps to slots, so shards work as with the class digits);
//! 2. the **block twists**: `n'` on the slots of the block's orbits, ranked
//!    in `N`'s echelon form ([`super::lattice`]) with those coordinates first;
//! 3. the **low part**: the twists of the low orbits, a coset of `N_lo` (the
//!    pure twists that are zero on the block's orbits), ranked in it.
//!
//! So a rank is `block · W + low` with `W = |N_lo|` and there are
//! `|P| · |N| = |G|` ranks. A move maps a block to one block (chain
//! digits: slots to slots; block twists: the block's orbits' twists only)
//! and the low twists by themselves; but which coset of `N_lo` a block's
//! low twists fill, its **label**, depends on the block, so the low tables
//! have one row per move and target label ([`LowTables`]). Labels are
//! enumerated from solved by the moves when the lattice is planned.

use super::chain::{Lift, LiftedChain};
use super::lattice::Lattice;
use super::plan::slot_orbits;
use super::twists::{LowTables, MAX_LOW_STATES};
use super::{CodecInput, MAX_CODED_SLOTS};
use std::collections::HashMap;

/// Most low-table entries each way (labels × `W` × moves): 4 MiB per table.
const MAX_LOW_ENTRIES: usize = 1 << 21;

/// One nontrivial level of the chain (both group rankings use them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RankLevel {
    /// True when the piece whose home is the base slot is the only one of
    /// its class (where it is then says where the base slot went).
    pub distinct: bool,
    /// Class of the piece whose home is the level's base slot.
    pub piece: u8,
    pub point: u8,
    pub radix: u64,
    /// Digit of each slot (`u8::MAX` = outside the orbit).
    pub index: Vec<u8>,
    pub reps: Vec<Lift>,
    pub inverses: Vec<Lift>,
}

/// What both group rankings start from: the chain of the slot action `P`
/// (nontrivial levels) and `N`, the pure twists the group reaches.
#[derive(Clone)]
pub(super) struct ChainParts {
    /// Some pieces are identical: the chain is of the group on slots, and
    /// states are its cosets of the solved state's stabiliser.
    pub identical: bool,
    pub modulus: Vec<u8>,
    pub levels: Vec<RankLevel>,
    /// Slots with an orientation: `N`'s coordinates, in slot order.
    pub oriented: Vec<u8>,
    /// `N` over `oriented`.
    pub twists: Lattice,
}

impl ChainParts {
    /// The parts of a puzzle with no wild pieces (`group_order` is the
    /// order of the group on slots and twists, which with identical pieces
    /// is more than the positions); `None` otherwise, or when `|P| · |N|`
    /// differs from `group_order` (the chain's residues must generate `N`;
    /// the order is the check).
    pub fn plan(input: &CodecInput, group_order: u128) -> Option<ChainParts> {
        let n = input.solved_cells.len();
        let mut count = [0u32; 256];
        input.solved_cells.iter().for_each(|&c| count[c as usize] += 1);
        if n > MAX_CODED_SLOTS || input.wild.iter().any(|&w| w) {
            return None;
        }
        // Slots of distinct pieces first: a state's first chain digits are
        // then read from where those pieces are, identical ones or not.
        let unique = |s: &u8| count[input.solved_cells[*s as usize] as usize] == 1;
        let mut base: Vec<u8> = (0..n as u8).filter(unique).collect();
        base.extend((0..n as u8).filter(|s| !unique(s)));
        let modulus: Vec<u8> = input.modulus.iter().map(|&m| m.max(1)).collect();
        let gens: Vec<Lift> = input
            .moves
            .iter()
            .map(|(perm, twist)| Lift {
                to: perm.to_vec(),
                twist: (0..n)
                    .map(|s| twist.get(s).copied().unwrap_or(0) % modulus[s])
                    .collect(),
            })
            .collect();
        let chain = LiftedChain::build(&modulus, &gens, &base);
        let levels: Vec<RankLevel> = chain
            .levels
            .into_iter()
            .filter(|l| l.orbit.len() > 1)
            .map(|l| RankLevel {
                distinct: unique(&l.point),
                piece: input.solved_cells[l.point as usize],
                point: l.point,
                radix: l.orbit.len() as u64,
                index: l.index,
                reps: l.reps,
                inverses: l.inverses,
            })
            .collect();
        let positions = levels.iter().try_fold(1u128, |p, l| p.checked_mul(l.radix as u128))?;
        // N, closed under the moves' slot permutations (conjugation).
        let oriented: Vec<u8> = (0..n as u8).filter(|&s| modulus[s as usize] > 1).collect();
        let mut all = Lattice::new(oriented.iter().map(|&s| modulus[s as usize]).collect());
        let to_coords = |v: &[u8], coords: &[u8]| coords.iter().map(|&s| v[s as usize]).collect::<Vec<u8>>();
        chain.residues.iter().for_each(|r| all.insert(to_coords(r, &oriented)));
        loop {
            let before = all.order_of(0..all.len());
            let rows: Vec<Vec<u8>> = all.rows().cloned().collect();
            for (perm, _) in &input.moves {
                for row in &rows {
                    let mut moved = vec![0u8; n];
                    oriented
                        .iter()
                        .zip(row)
                        .for_each(|(&s, &x)| moved[perm[s as usize] as usize] = x);
                    all.insert(to_coords(&moved, &oriented));
                }
            }
            if all.order_of(0..all.len()) == before {
                break;
            }
        }
        if positions.checked_mul(all.order_of(0..all.len()) as u128) != Some(group_order) {
            return None;
        }
        Some(ChainParts {
            identical: count.iter().any(|&c| c > 1),
            modulus,
            levels,
            oriented,
            twists: all,
        })
    }

    /// `N`'s generators (its echelon rows) as slot-indexed twist vectors.
    fn twist_generators(&self, slots: usize) -> Vec<Vec<u8>> {
        self.twists
            .rows()
            .map(|row| {
                let mut v = vec![0u8; slots];
                self.oriented.iter().zip(row).for_each(|(&s, &x)| v[s as usize] = x);
                v
            })
            .collect()
    }
}

/// The slots of the pieces of the first `k` levels in shard `shard`, one
/// bit each.
pub(super) fn key_masks(levels: &[RankLevel], shard: u64, k: usize) -> Vec<u64> {
    let mut digits = vec![0u8; k];
    let mut rest = shard;
    for (d, level) in digits.iter_mut().zip(levels).rev() {
        *d = (rest % level.radix) as u8;
        rest /= level.radix;
    }
    (0..k)
        .map(|i| {
            let mut x = levels[i].point;
            for j in (0..k).rev() {
                x = levels[j].reps[digits[j] as usize].to[x as usize];
            }
            1u64 << x
        })
        .collect()
}

/// The shard whose first `masks.len()` levels' pieces sit in `masks`.
pub(super) fn shard_of_masks(levels: &[RankLevel], masks: &[u64]) -> u64 {
    let mut digits = [0u8; MAX_CODED_SLOTS];
    let mut shard = 0u64;
    for (i, (level, &mask)) in levels.iter().zip(masks).enumerate() {
        let mut x = mask.trailing_zeros() as u8;
        for (j, done) in levels[..i].iter().enumerate() {
            x = done.inverses[digits[j] as usize].to[x as usize];
        }
        digits[i] = level.index[x as usize];
        shard = shard * level.radix + digits[i] as u64;
    }
    shard
}

/// The group ranking (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GroupRank {
    slots: usize,
    modulus: Vec<u8>,
    solved_cells: Vec<u8>,
    solved_twists: Vec<u8>,
    levels: Vec<RankLevel>,
    /// Slot of each twist coordinate: block orbits' slots, then low ones.
    coords: Vec<u8>,
    /// Number of block coordinates.
    hi: usize,
    lattice: Lattice,
    /// Values of the block twists (`|N| / W`).
    hi_states: u64,
    /// Label of each canonical low twist vector (low coordinates only).
    labels: HashMap<Vec<u8>, u32>,
    low: LowTables,
}

impl GroupRank {
    /// The ranking with the twist lattice as the low part; `None` when its
    /// low tables do not fit.
    pub fn plan(input: &CodecInput, parts: ChainParts) -> Option<GroupRank> {
        if parts.identical {
            return None;
        }
        let n = input.solved_cells.len();
        let generators = parts.twist_generators(n);
        let oriented = parts.oriented;
        let modulus = parts.modulus;
        let levels = parts.levels;
        let mut rank = GroupRank {
            slots: n,
            modulus,
            solved_cells: input.solved_cells.to_vec(),
            solved_twists: input.solved_twists.to_vec(),
            levels,
            coords: Vec::new(),
            hi: 0,
            lattice: Lattice::new(Vec::new()),
            hi_states: 1,
            labels: HashMap::new(),
            low: LowTables::default(),
        };
        // Low orbits: all oriented orbits, then fewer while the low part is
        // too large or has too many labels, dropping the orbit that keeps
        // the largest low part.
        let orbits: Vec<u64> = slot_orbits(n, &input.moves)
            .into_iter()
            .filter(|&o| oriented.iter().any(|&s| o >> s & 1 == 1))
            .collect();
        let mut low: Vec<u64> = orbits.clone();
        loop {
            rank.set_low_orbits(&oriented, &low, &generators);
            let w = rank.lattice.order_of(rank.hi..rank.coords.len());
            if w <= MAX_LOW_STATES && rank.build_low_tables(&input.moves) {
                return Some(rank);
            }
            let best = (0..low.len()).max_by_key(|&i| {
                let mut fewer = low.clone();
                fewer.remove(i);
                rank.set_low_orbits(&oriented, &fewer, &generators);
                let w = rank.lattice.order_of(rank.hi..rank.coords.len());
                // The largest part that fits, or else the smallest.
                if w <= MAX_LOW_STATES {
                    w as i128
                } else {
                    -(w as i128)
                }
            })?;
            low.remove(best);
        }
    }

    /// Orders the coordinates (block orbits' slots first) and rebuilds the
    /// lattice in that order.
    fn set_low_orbits(&mut self, oriented: &[u8], low: &[u64], generators: &[Vec<u8>]) {
        let is_low = |s: u8| low.iter().any(|&o| o >> s & 1 == 1);
        self.coords = oriented.iter().copied().filter(|&s| !is_low(s)).collect();
        self.hi = self.coords.len();
        self.coords.extend(oriented.iter().copied().filter(|&s| is_low(s)));
        self.lattice = Lattice::new(self.coords.iter().map(|&s| self.modulus[s as usize]).collect());
        for g in generators {
            self.lattice
                .insert(self.coords.iter().map(|&s| g[s as usize]).collect());
        }
        self.hi_states = self.lattice.order_of(0..self.hi);
    }

    /// Enumerates the labels from solved and tabulates the low part under
    /// `moves`; false when the tables would exceed [`MAX_LOW_ENTRIES`].
    fn build_low_tables(&mut self, moves: &[(&[u8], &[u8])]) -> bool {
        let (hi, len) = (self.hi, self.coords.len());
        let w = self.lattice.order_of(hi..len) as usize;
        let mut coord_of = [u8::MAX; MAX_CODED_SLOTS];
        self.coords
            .iter()
            .enumerate()
            .for_each(|(c, &s)| coord_of[s as usize] = c as u8);
        // The low twists after a move, in coordinates (block ones zero).
        let apply = |v: &[u8], (perm, twist): &(&[u8], &[u8])| -> Vec<u8> {
            let mut out = vec![0u8; len];
            for (&x, &s) in v[hi..].iter().zip(&self.coords[hi..]) {
                let s = s as usize;
                let t = coord_of[perm[s] as usize] as usize;
                out[t] = (x + twist.get(s).copied().unwrap_or(0)) % self.modulus[s];
            }
            out
        };
        let mut solved = vec![0u8; len];
        (hi..len).for_each(|c| solved[c] = self.solved_twists[self.coords[c] as usize]);
        self.lattice.reduce(&mut solved, hi..len, 0);
        let mut reps = vec![solved];
        let mut labels: HashMap<Vec<u8>, u32> = [(reps[0][hi..].to_vec(), 0)].into();
        let mut i = 0;
        while i < reps.len() {
            for mv in moves {
                let mut v = apply(&reps[i], mv);
                self.lattice.reduce(&mut v, hi..len, 0);
                if !labels.contains_key(&v[hi..]) {
                    if (reps.len() + 1) * w * moves.len().max(1) > MAX_LOW_ENTRIES {
                        return false;
                    }
                    labels.insert(v[hi..].to_vec(), reps.len() as u32);
                    reps.push(v);
                }
            }
            i += 1;
        }
        let count = reps.len();
        let mut forward = vec![0u16; moves.len() * count * w];
        let mut backward = vec![0u16; moves.len() * count * w];
        for rep in &reps {
            for x in 0..w {
                let mut t = rep.clone();
                self.lattice.expand(&mut t, hi..len, x as u64);
                for (m, mv) in moves.iter().enumerate() {
                    let mut v = apply(&t, mv);
                    let y = self.lattice.reduce(&mut v, hi..len, 0) as usize;
                    let row = (m * count + labels[&v[hi..]] as usize) * w;
                    forward[row + x] = y as u16;
                    backward[row + y] = x as u16;
                }
            }
        }
        self.labels = labels;
        self.low = LowTables::with_rows(w, count, forward, backward);
        true
    }

    /// The low part's tables.
    pub fn low(&self) -> &LowTables {
        &self.low
    }

    /// Number of chain levels (the largest shard key).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Values of the first `k` chain digits together (the shards).
    pub fn key_states(&self, k: usize) -> u64 {
        self.levels[..k].iter().map(|l| l.radix).product()
    }

    /// Blocks per shard with a key of `k` levels.
    pub fn blocks_below(&self, k: usize) -> u64 {
        self.levels[k..].iter().map(|l| l.radix).product::<u64>() * self.hi_states
    }

    /// The block of a state (chain digits, then block twists); reads the
    /// twists of the block orbits only.
    #[inline]
    pub fn rank_block(&self, cells: &[u8], twists: &[u8]) -> u64 {
        let mut slot_of = [0u8; 256];
        for (s, &c) in cells[..self.slots].iter().enumerate() {
            slot_of[c as usize] = s as u8;
        }
        let mut digits = [0u8; MAX_CODED_SLOTS];
        let mut rank = 0u64;
        for (i, level) in self.levels.iter().enumerate() {
            let mut x = slot_of[level.piece as usize];
            for (j, done) in self.levels[..i].iter().enumerate() {
                x = done.inverses[digits[j] as usize].to[x as usize];
            }
            digits[i] = level.index[x as usize];
            rank = rank * level.radix + digits[i] as u64;
        }
        if self.hi == 0 {
            return rank;
        }
        // n' = t − t_0 on the block coordinates.
        let (mut c0, mut t0) = ([0u8; MAX_CODED_SLOTS], [0u8; MAX_CODED_SLOTS]);
        self.lift(&digits, &mut c0, &mut t0);
        let mut v = [0u8; MAX_CODED_SLOTS];
        for (c, &s) in self.coords[..self.hi].iter().enumerate() {
            let (s, k) = (s as usize, self.modulus[s as usize]);
            v[c] = (twists[s] + k - t0[s]) % k;
        }
        self.lattice.reduce(&mut v[..self.coords.len()], 0..self.hi, rank)
    }

    /// The low index of a state.
    #[inline]
    pub fn rank_low(&self, twists: &[u8]) -> u64 {
        let mut v = [0u8; MAX_CODED_SLOTS];
        for c in self.hi..self.coords.len() {
            v[c] = twists[self.coords[c] as usize];
        }
        self.lattice
            .reduce(&mut v[..self.coords.len()], self.hi..self.coords.len(), 0)
    }

    /// `u_1 ∘ … ∘ u_k` of the chain digits applied to solved.
    fn lift(&self, digits: &[u8], cells: &mut [u8], twists: &mut [u8]) {
        cells[..self.slots].copy_from_slice(&self.solved_cells);
        twists[..self.slots].copy_from_slice(&self.solved_twists);
        let mut scratch = [0u8; 128];
        for (level, &d) in self.levels.iter().zip(digits).rev() {
            if d != 0 {
                level.reps[d as usize].apply(cells, twists, &self.modulus, &mut scratch);
            }
        }
    }

    /// Writes the classes and twists of `block`, the low twists being the
    /// canonical ones of its label, which is returned when `label` is asked.
    pub fn unrank_block(&self, block: u64, cells: &mut [u8], twists: &mut [u8], label: bool) -> u32 {
        let hi_value = block % self.hi_states;
        let mut rest = block / self.hi_states;
        let mut digits = [0u8; MAX_CODED_SLOTS];
        for (d, level) in digits.iter_mut().zip(&self.levels).rev() {
            *d = (rest % level.radix) as u8;
            rest /= level.radix;
        }
        self.lift(&digits[..self.levels.len()], cells, twists);
        let len = self.coords.len();
        if len == 0 {
            return 0;
        }
        let mut v = [0u8; MAX_CODED_SLOTS];
        self.lattice.expand(&mut v[..len], 0..self.hi, hi_value);
        for (c, &s) in self.coords.iter().enumerate() {
            let s = s as usize;
            twists[s] = (twists[s] + v[c]) % self.modulus[s];
        }
        let mut u = [0u8; MAX_CODED_SLOTS];
        for c in self.hi..len {
            u[c] = twists[self.coords[c] as usize];
        }
        self.lattice.reduce(&mut u[..len], self.hi..len, 0);
        for c in self.hi..len {
            twists[self.coords[c] as usize] = u[c];
        }
        if label {
            *self
                .labels
                .get(&u[self.hi..len])
                .expect("every reachable block's label is enumerated")
        } else {
            0
        }
    }

    /// Adds the low index `value` to the canonical low twists `unrank_block`
    /// wrote.
    pub fn unrank_low(&self, value: u64, twists: &mut [u8]) {
        let len = self.coords.len();
        let mut v = [0u8; MAX_CODED_SLOTS];
        for c in self.hi..len {
            v[c] = twists[self.coords[c] as usize];
        }
        self.lattice.expand(&mut v[..len], self.hi..len, value);
        for c in self.hi..len {
            twists[self.coords[c] as usize] = v[c];
        }
    }

    /// The slots of the pieces of the first `k` levels in shard `shard`.
    pub fn key_masks(&self, shard: u64, k: usize) -> Vec<u64> {
        key_masks(&self.levels, shard, k)
    }

    /// The shard whose first `masks.len()` levels' pieces sit in `masks`.
    pub fn shard_of_masks(&self, masks: &[u64]) -> u64 {
        shard_of_masks(&self.levels, masks)
    }
}
