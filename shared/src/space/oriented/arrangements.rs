//! Arrangements (the class in each slot) of distinct pieces, ranked orbit
//! by orbit, and their classes under the symmetries.
//!
//! Pieces never leave the orbit of their home slot, so an arrangement is a
//! permutation within each orbit of slots: its rank is the mixed-radix
//! number of one Lehmer rank per orbit, `Π k!` ranks for orbits of `k`
//! slots, not `n!` (the pyraminx's 14 slots: 6! for its edges, 1 for each
//! fixed tip and centre).

use crate::puzzle::symmetry::oriented::OrientedSymmetries;
use crate::puzzle::Puzzle;
use crate::space::rank::{factorial, rank_perm, unrank_perm};

/// The ranking of arrangements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrangements {
    /// Slots of each orbit, ascending.
    pub(super) orbits: Vec<Vec<u8>>,
    /// Each slot's index in its orbit.
    pub(super) position: Vec<u8>,
    /// Home slot of each class, and class of each home slot.
    pub(super) home_of: Vec<u8>,
    class_at: Vec<u8>,
    /// Place value of each orbit's Lehmer rank.
    place: Vec<u64>,
    /// Number of ranks, `Π k!`.
    size: u128,
    /// Slots by their weight in a rank: the last orbit's first (its Lehmer
    /// rank has the highest place value), each orbit's in order. Digits
    /// compared in this order compare ranks (Lehmer ranks are
    /// lexicographic).
    pub(super) by_weight: Vec<u8>,
}

impl Arrangements {
    /// The ranking of `puzzle`'s arrangements (distinct pieces).
    pub fn new(puzzle: &Puzzle, orbits: &[Vec<usize>]) -> Arrangements {
        let n = puzzle.slots;
        let mut position = vec![0u8; n];
        for orbit in orbits {
            for (j, &s) in orbit.iter().enumerate() {
                position[s] = j as u8;
            }
        }
        let (mut home_of, mut class_at) = (vec![0u8; n], vec![0u8; n]);
        for (slot, &class) in puzzle.solved[..n].iter().enumerate() {
            home_of[class as usize] = slot as u8;
            class_at[slot] = class;
        }
        let mut place = Vec::with_capacity(orbits.len());
        let mut size = 1u128;
        for orbit in orbits {
            place.push(u64::try_from(size).unwrap_or(u64::MAX));
            // 34! is past u128: larger orbits only say "too many".
            let ranks = if orbit.len() <= 30 {
                factorial(orbit.len())
            } else {
                u128::MAX
            };
            size = size.saturating_mul(ranks);
        }
        Arrangements {
            orbits: orbits.iter().map(|o| o.iter().map(|&s| s as u8).collect()).collect(),
            position,
            home_of,
            class_at,
            place,
            size,
            by_weight: orbits.iter().rev().flatten().map(|&s| s as u8).collect(),
        }
    }

    /// Number of ranks.
    pub fn size(&self) -> u128 {
        self.size
    }

    /// Rank of an arrangement whose pieces sit in their home orbits.
    pub fn rank(&self, cells: &[u8]) -> u64 {
        let mut local = [0u8; 64];
        let mut rank = 0u64;
        for (orbit, &place) in self.orbits.iter().zip(&self.place) {
            for (j, &s) in orbit.iter().enumerate() {
                local[j] = self.position[self.home_of[cells[s as usize] as usize] as usize];
            }
            rank += rank_perm(&local[..orbit.len()]) * place;
        }
        rank
    }

    /// The arrangement of rank `rank`.
    pub fn unrank(&self, rank: u64) -> Vec<u8> {
        let mut cells = vec![0u8; self.position.len()];
        for (o, orbit) in self.orbits.iter().enumerate() {
            let radix = factorial(orbit.len()) as u64;
            let local = unrank_perm((rank / self.place[o]) % radix, orbit.len());
            for (j, &s) in orbit.iter().enumerate() {
                cells[s as usize] = self.class_at[orbit[local[j] as usize] as usize];
            }
        }
        cells
    }

    /// The digit of slot `s` in the rank of `cells`: where, in its orbit,
    /// the piece in `s` is at home.
    #[cfg(test)]
    fn digit(&self, cells: &[u8], s: u8) -> u8 {
        self.position[self.home_of[cells[s as usize] as usize] as usize]
    }

    /// How the rank of `image` compares with that of `cells`, digit by
    /// digit from the highest place value (what [`super::least`] does
    /// lazily, checked against ranks by the tests).
    #[cfg(test)]
    pub(super) fn compare(&self, image: &[u8], cells: &[u8]) -> std::cmp::Ordering {
        for &s in &self.by_weight {
            let order = self.digit(image, s).cmp(&self.digit(cells, s));
            if order.is_ne() {
                return order;
            }
        }
        std::cmp::Ordering::Equal
    }

    /// The rank of an arrangement given by its digits in [`Self::by_weight`]
    /// order.
    pub(super) fn rank_of_digits(&self, digits: &[u8]) -> u64 {
        let mut at = 0;
        let mut rank = 0u64;
        for (orbit, &place) in self.orbits.iter().zip(&self.place).rev() {
            rank += rank_perm(&digits[at..at + orbit.len()]) * place;
            at += orbit.len();
        }
        rank
    }

    /// Ranks of every arrangement the moves reach from solved, ascending.
    /// The queue holds ranks, not arrangements: 8 bytes each, at most
    /// [`super::MAX_ARRANGEMENT_TABLE`] of them.
    pub fn reachable(&self, puzzle: &Puzzle) -> Vec<u64> {
        let n = puzzle.slots;
        let mut seen = vec![false; self.size as usize];
        let start = self.rank(&puzzle.solved[..n]);
        seen[start as usize] = true;
        let mut queue = vec![start];
        let mut next = 0;
        let mut out = vec![0u8; n];
        while next < queue.len() {
            let cells = self.unrank(queue[next]);
            for m in &puzzle.moves {
                for s in 0..n {
                    out[m.perm[s] as usize] = cells[s];
                }
                let r = self.rank(&out);
                if !seen[r as usize] {
                    seen[r as usize] = true;
                    queue.push(r);
                }
            }
            next += 1;
        }
        queue.sort_unstable();
        queue
    }

    /// Classes of the arrangements `ranks` (ascending) under the
    /// symmetries: per rank its class and the element taking it to the
    /// representative (the least rank of its class), and per class
    /// `(representative, stabiliser order)`.
    pub fn classify(&self, symmetries: &OrientedSymmetries, ranks: &[u64]) -> (Vec<u32>, Vec<u16>, Vec<(u64, u32)>) {
        let size = self.size as usize;
        let (mut class_of, mut via) = (vec![u32::MAX; size], vec![0u16; size]);
        let mut classes = Vec::new();
        let inverse: Vec<usize> = (0..symmetries.order()).map(|k| symmetries.inverse_of(k)).collect();
        let mut image = vec![0u8; self.position.len()];
        for &rank in ranks {
            if class_of[rank as usize] != u32::MAX {
                continue;
            }
            let rep = self.unrank(rank);
            let class = classes.len() as u32;
            let mut stabilizer = 0u32;
            for (k, &back) in inverse.iter().enumerate() {
                symmetries.conjugate_cells(k, &rep, &mut image);
                let r = self.rank(&image) as usize;
                if r as u64 == rank {
                    stabilizer += 1;
                }
                if class_of[r] == u32::MAX {
                    class_of[r] = class;
                    via[r] = back as u16;
                }
            }
            classes.push((rank, stabilizer));
        }
        (class_of, via, classes)
    }
}

/// The orbits of the moves on slots, each ascending.
pub fn slot_orbits(puzzle: &Puzzle) -> Vec<Vec<usize>> {
    crate::puzzle::perm::orbits_of(puzzle.slots, |s| {
        puzzle.moves.iter().map(|m| m.perm[s] as usize).collect()
    })
}
