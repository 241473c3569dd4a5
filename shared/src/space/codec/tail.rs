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
//! and twist of the piece whose home is slot `h` (pieces are distinct).

use super::chain::Lift;
use super::group::{ChainParts, RankLevel};
use super::lattice::Lattice;
use super::twists::LowTables;
use super::{CodecInput, MAX_CODED_SLOTS};
use rayon::prelude::*;

/// Largest low part: `|L|²` table entries both ways (4 MiB at 1024).
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
    low: LowTables,
}

impl TailRank {
    /// The ranking whose low part is the largest tail `L` of at most
    /// `max_low` elements; `None` when even `N` is larger.
    pub fn plan(input: &CodecInput, parts: &ChainParts, max_low: u64) -> Option<TailRank> {
        let n = input.solved_cells.len();
        let twist_states = parts.twists.order_of(0..parts.twists.len());
        let mut w = twist_states;
        let mut j = parts.levels.len();
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
            low: LowTables::default(),
        };
        rank.low = rank.multiplication_table(w as usize);
        Some(rank)
    }

    /// `mul[c · W + y] = rank_L(e_c ∘ e_y)`, the low part's table.
    fn multiplication_table(&self, w: usize) -> LowTables {
        let elements: Vec<Pieces> = (0..w as u64).map(|x| self.low_element(x)).collect();
        let mut mul = vec![0u16; w * w];
        mul.par_chunks_mut(w).enumerate().for_each(|(c, row)| {
            let e = &elements[c];
            // e_c as a group element: slot h goes to pos[h], gaining its twist.
            let mut lift = Lift {
                to: e.pos[..self.slots].to_vec(),
                twist: vec![0; self.slots],
            };
            for h in 0..self.slots {
                let k = self.modulus[h];
                lift.twist[h] = (e.tw[h] + k - self.solved_twists[h] % k) % k;
            }
            for (y, out) in row.iter_mut().enumerate() {
                let mut p = elements[y];
                apply(&lift, &mut p, &self.modulus, self.slots);
                *out = self.sift(&mut p, self.block_levels.., 0) as u16;
            }
        });
        LowTables::multiplication(w, mul)
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

    /// Strips the levels `range` off `p` (their digits appended to `rank`,
    /// mixed radix); from the block levels on, then also `N`'s index.
    #[inline]
    fn sift(&self, p: &mut Pieces, range: std::ops::RangeFrom<usize>, mut rank: u64) -> u64 {
        for level in &self.levels[range.clone()] {
            let d = level.index[p.pos[level.point as usize] as usize];
            debug_assert_ne!(d, u8::MAX, "a state outside the group");
            rank = rank * level.radix + d as u64;
            if d != 0 {
                apply(&level.inverses[d as usize], p, &self.modulus, self.slots);
            }
        }
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
        let mut p = self.pieces_of(cells, twists);
        let mut block = 0u64;
        for level in &self.levels[..self.block_levels] {
            let d = level.index[p.pos[level.point as usize] as usize];
            debug_assert_ne!(d, u8::MAX, "a state outside the group");
            block = block * level.radix + d as u64;
            if d != 0 {
                apply(&level.inverses[d as usize], &mut p, &self.modulus, self.slots);
            }
        }
        (block, self.sift(&mut p, self.block_levels.., 0))
    }

    /// Writes the state of block `block` and low index `low`.
    pub fn unrank(&self, mut block: u64, low: u64, cells: &mut [u8], twists: &mut [u8]) {
        let mut p = self.low_element(low);
        let mut digits = [0u8; MAX_CODED_SLOTS];
        for (d, level) in digits.iter_mut().zip(&self.levels[..self.block_levels]).rev() {
            *d = (block % level.radix) as u8;
            block /= level.radix;
        }
        for (level, &d) in self.levels[..self.block_levels].iter().zip(&digits).rev() {
            if d != 0 {
                apply(&level.reps[d as usize], &mut p, &self.modulus, self.slots);
            }
        }
        self.write_state(&p, cells, twists);
    }
}

/// Applies a group element to pieces: the piece in slot `s` goes to
/// `to[s]`, gaining `twist[s]`.
#[inline]
fn apply(lift: &Lift, p: &mut Pieces, modulus: &[u8], slots: usize) {
    for h in 0..slots {
        let s = p.pos[h] as usize;
        p.pos[h] = lift.to[s];
        p.tw[h] = (p.tw[h] + lift.twist[s]) % modulus[s];
    }
}
