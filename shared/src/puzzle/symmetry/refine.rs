//! Partial maps of points and their refinement, for the backtrack search of
//! [`super::search`].
//!
//! A partial map σ (some points with their images) stays alive while every
//! move `m` still has a candidate image `m'` among the moves: one of the same
//! cycle type with `m'(σ(x)) = σ(m(x))` wherever both sides are known, and
//! with `m'(σ(x))` not an assigned image where `m(x)` is unassigned (and
//! likewise backwards). Candidate sets are bit sets over the moves, narrowed
//! on each assignment by word-wise ANDs with precomputed sets "moves sending
//! `y` to `z`". A move left with one candidate `m'` forces `σ` along every
//! cycle of `m` through an assigned point: `σ(m(x)) = m'(σ(x))`.

use std::collections::HashMap;

/// No image (or preimage) yet.
pub(super) const NONE: u16 = u16::MAX;

/// Most words of the "moves sending `y` to `z`" table (64 MiB): 256 points
/// with 2,048 moves.
const MAX_TABLE_WORDS: usize = 8 << 20;

/// The moves as the refinement reads them.
pub(super) struct Moves {
    /// Number of points.
    pub n: usize,
    forward: Vec<Vec<u16>>,
    backward: Vec<Vec<u16>>,
    /// Words of a set of moves.
    words: usize,
    /// `sends[(y·n + z)·words ..]`: the moves `m` with `m(y) = z`.
    sends: Vec<u64>,
    /// For each move, the moves of its cycle type.
    same_type: Vec<u64>,
    /// A class per point: the cycle lengths through it of each cycle type of
    /// move. σ maps a point only to a point of its class.
    pub class: Vec<u32>,
}

impl Moves {
    /// The distinct permutations among `perms` (all on `n` points), or why
    /// they are too many to search.
    pub fn new(n: usize, perms: &[Vec<u16>]) -> Result<Moves, String> {
        let mut forward: Vec<Vec<u16>> = perms.to_vec();
        forward.sort_unstable();
        forward.dedup();
        let words = forward.len().div_ceil(64).max(1);
        if n * n * words > MAX_TABLE_WORDS {
            return Err(format!(
                "{} points with {} moves are too many to search for symmetries",
                n,
                forward.len()
            ));
        }
        let backward = forward
            .iter()
            .map(|m| crate::puzzle::group::points::inverse(m))
            .collect();
        let mut sends = vec![0u64; n * n * words];
        for (j, m) in forward.iter().enumerate() {
            for (y, &z) in m.iter().enumerate() {
                sends[(y * n + z as usize) * words + j / 64] |= 1 << (j % 64);
            }
        }
        // Cycle types, and each point's cycle lengths under each type.
        let types: Vec<u32> = ids(forward.iter().map(|m| {
            let mut lengths = crate::puzzle::group::points::cycle_lengths(m, &(0..n as u16).collect::<Vec<_>>());
            lengths.sort_unstable();
            lengths
        }));
        let mut same_type = vec![0u64; forward.len() * words];
        for (i, &t) in types.iter().enumerate() {
            for (j, _) in types.iter().enumerate().filter(|&(_, &u)| u == t) {
                same_type[i * words + j / 64] |= 1 << (j % 64);
            }
        }
        let class = ids((0..n).map(|x| {
            let mut profile: Vec<(u32, u32)> = forward
                .iter()
                .zip(&types)
                .map(|(m, &t)| (t, cycle_length(m, x)))
                .collect();
            profile.sort_unstable();
            profile
        }));
        Ok(Moves {
            n,
            forward,
            backward,
            words,
            sends,
            same_type,
            class,
        })
    }

    /// The map with no point assigned: every move may go to any move of its
    /// cycle type.
    pub fn empty_map(&self) -> Partial {
        Partial {
            image: vec![NONE; self.n],
            preimage: vec![NONE; self.n],
            assigned: Vec::new(),
            candidates: self.same_type.clone(),
        }
    }

    fn sends(&self, y: usize, z: usize) -> &[u64] {
        let at = (y * self.n + z) * self.words;
        &self.sends[at..at + self.words]
    }

    /// Assigns `x ↦ y` and everything it forces; false when the map dies.
    /// `work` counts the assignments made, for the search's budget.
    pub fn extend(&self, map: &mut Partial, x: usize, y: usize, work: &mut u64) -> bool {
        let w = self.words;
        let mut queue = vec![(x, y)];
        let (mut out_union, mut in_union) = (vec![0u64; w], vec![0u64; w]);
        loop {
            while let Some((x, y)) = queue.pop() {
                if map.image[x] != NONE {
                    if map.image[x] as usize != y {
                        return false;
                    }
                    continue;
                }
                if map.preimage[y] != NONE || self.class[x] != self.class[y] {
                    return false;
                }
                *work += 1;
                map.image[x] = y as u16;
                map.preimage[y] = x as u16;
                map.assigned.push(x as u16);
                // Moves sending y to an assigned image, or an assigned image to y.
                out_union.fill(0);
                in_union.fill(0);
                for &a in &map.assigned {
                    let z = map.image[a as usize] as usize;
                    or_into(&mut out_union, self.sends(y, z));
                    or_into(&mut in_union, self.sends(z, y));
                }
                for i in 0..self.forward.len() {
                    let after = self.forward[i][x] as usize;
                    let before = self.backward[i][x] as usize;
                    let c = &mut map.candidates[i * w..(i + 1) * w];
                    match map.image[after] {
                        NONE => and_not_into(c, &out_union),
                        z => and_into(c, self.sends(y, z as usize)),
                    }
                    match map.image[before] {
                        NONE => and_not_into(c, &in_union),
                        z => and_into(c, self.sends(z as usize, y)),
                    }
                    if c.iter().all(|&word| word == 0) {
                        return false;
                    }
                }
            }
            // Moves with one candidate left force the images along their cycles.
            for i in 0..self.forward.len() {
                let Some(j) = single(&map.candidates[i * w..(i + 1) * w]) else {
                    continue;
                };
                for &a in &map.assigned {
                    let after = self.forward[i][a as usize] as usize;
                    if map.image[after] == NONE {
                        queue.push((after, self.forward[j][map.image[a as usize] as usize] as usize));
                    }
                }
            }
            if queue.is_empty() {
                return true;
            }
        }
    }
}

/// A partial map of points and the candidate images of each move under it.
#[derive(Clone)]
pub(super) struct Partial {
    /// Image of each point, or [`NONE`].
    pub image: Vec<u16>,
    /// Preimage of each point, or [`NONE`].
    pub preimage: Vec<u16>,
    /// Points with an image, in the order they got it.
    pub assigned: Vec<u16>,
    /// For each move, its candidate images (a set of moves).
    candidates: Vec<u64>,
}

/// The length of the cycle of `m` through `x`.
fn cycle_length(m: &[u16], x: usize) -> u32 {
    let (mut len, mut y) = (1, m[x] as usize);
    while y != x {
        y = m[y] as usize;
        len += 1;
    }
    len
}

/// Small ids for values, equal values sharing one, in order of first
/// appearance.
fn ids<T: std::hash::Hash + Eq>(values: impl Iterator<Item = T>) -> Vec<u32> {
    let mut seen: HashMap<T, u32> = HashMap::new();
    values
        .map(|v| {
            let next = seen.len() as u32;
            *seen.entry(v).or_insert(next)
        })
        .collect()
}

/// The only element of a set, if it has exactly one.
fn single(set: &[u64]) -> Option<usize> {
    let mut found = None;
    for (k, &word) in set.iter().enumerate() {
        if word == 0 {
            continue;
        }
        if found.is_some() || word.count_ones() > 1 {
            return None;
        }
        found = Some(k * 64 + word.trailing_zeros() as usize);
    }
    found
}

fn or_into(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, &y)| *x |= y);
}

fn and_into(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, &y)| *x &= y);
}

fn and_not_into(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, &y)| *x &= !y);
}
