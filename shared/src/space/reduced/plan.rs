//! Choosing the partition of the pieces into blocks, and the symmetries to
//! reduce by.
//!
//! A partition works when every symmetry maps blocks onto blocks. For a
//! group that moves every slot to every other (Loopover's translations) such
//! partitions are its **block systems** (the rows, the columns, the four
//! parity classes `(r mod 2, c mod 2)` of an even board); otherwise the
//! group's orbits give them. Each candidate (a group and a partition) is
//! costed before anything is enumerated: the classes of keys come from
//! Burnside's lemma (the average number of keys each symmetry fixes) and each
//! class stores one fiber. The cheapest candidate wins, provided its fibers
//! are big enough for the kernel's per-shard work to be noise.

use super::keys::{block_domains, key_count};
use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::Symmetries;
use crate::puzzle::Puzzle;
use crate::space::rank::factorial;
use rayon::prelude::*;
use std::collections::HashMap;

/// Largest number of keys whose classes are enumerated (a bitmap of this
/// many bits, 256 MiB).
pub const MAX_KEYS: u128 = 1 << 31;
/// Largest fiber (states of one shard).
pub const MAX_FIBER: u128 = 1 << 30;
/// Largest block (its arrangement digit is tabulated in full).
pub const MAX_BLOCK: usize = 9;
/// Fibers of big spaces hold at least this many states.
pub const MIN_FIBER: u128 = 4096;

/// A partition with the group it is for, and what it costs.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub symmetries: Symmetries,
    /// Blocks of pieces, each ascending.
    pub blocks: Vec<Vec<u8>>,
    /// Keys before reduction.
    pub keys: u128,
    /// Classes of keys (Burnside).
    pub classes: u128,
    /// States per fiber.
    pub fiber: u128,
}

/// Per-shard work (a source lookup and two small tables per move) priced
/// in states: what a shard costs besides its fiber.
const SHARD_OVERHEAD_STATES: u128 = 8192;

impl Candidate {
    /// Bits the reduced space stores per level.
    pub fn stored(&self) -> u128 {
        self.classes * self.fiber
    }

    /// What the plan is judged by: its bits plus its shards' fixed work.
    fn cost(&self) -> u128 {
        self.classes * (self.fiber + SHARD_OVERHEAD_STATES)
    }
}

/// The best candidate for `puzzle` under one of `groups` (or a subgroup of
/// one without one of its generators), or why there is none.
pub fn choose(puzzle: &Puzzle, groups: &[super::groups::Candidate], even: bool) -> Result<Candidate, String> {
    let n = puzzle.slots;
    let unreduced = factorial(n) / if even { 2 } else { 1 };
    // Small spaces may have small fibers: their speed does not matter.
    let min_fiber = MIN_FIBER.min((unreduced >> 20).max(1));
    let mut subgroups: Vec<Symmetries> = Vec::new();
    for candidate in groups {
        let (full, generators) = (&candidate.group, &candidate.generators);
        subgroups.push(full.clone());
        // Subgroups without one generator (a square board without its
        // transpose keeps rows as blocks).
        if generators.len() > 1 {
            for skip in 0..generators.len() {
                let rest: Vec<(String, Perm)> = generators
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != skip)
                    .map(|(_, g)| g.clone())
                    .collect();
                if let Ok(g) = Symmetries::generate(puzzle, &rest) {
                    if g.order() > 1 && g.order() < full.order() {
                        subgroups.push(g);
                    }
                }
            }
        }
    }
    let guarded = puzzle.guarded_pieces();
    let moves: Vec<&Perm> = puzzle.moves.iter().map(|m| &m.perm).collect();
    let mut best: Option<Candidate> = None;
    for group in subgroups {
        for slot_blocks in invariant_partitions(n, &group.slots) {
            let blocks = piece_blocks(puzzle, &slot_blocks);
            // One block: one key, nothing to reduce.
            if blocks.len() < 2
                || blocks.len() > super::keys::MAX_BLOCKS
                || blocks.iter().any(|b| b.len() > MAX_BLOCK)
                || guarded
                    .iter()
                    .any(|&p| blocks.iter().any(|b| b.len() > 1 && b.contains(&(p as u8))))
            {
                continue;
            }
            let domains = block_domains(n, &moves, &puzzle.solved, &blocks);
            let sizes: Vec<u32> = blocks.iter().map(|b| b.len() as u32).collect();
            let keys = key_count(&sizes, &domains);
            let fiber = blocks.iter().map(|b| factorial(b.len())).product::<u128>() / if even { 2 } else { 1 };
            if keys > MAX_KEYS || fiber > MAX_FIBER || fiber < min_fiber {
                continue;
            }
            let classes = burnside_classes(&group.slots, &slot_blocks, &domains);
            let c = Candidate {
                symmetries: group.clone(),
                blocks,
                keys,
                classes,
                fiber,
            };
            let better = best
                .as_ref()
                .is_none_or(|b| (c.cost(), std::cmp::Reverse(c.fiber)) < (b.cost(), std::cmp::Reverse(b.fiber)));
            if better {
                best = Some(c);
            }
        }
    }
    match best {
        Some(c) if c.stored() * 10 < unreduced * 9 => Ok(c),
        Some(c) => Err(format!(
            "the best partition the symmetries keep stores {} of {} states",
            c.stored(),
            unreduced
        )),
        None => Err("no partition of the pieces that the symmetries keep has fibers of a workable size".into()),
    }
}

/// Partitions of the slots that every element maps onto themselves: the
/// block systems of each orbit's action (each orbit cut the same way, from
/// its smallest slot), the orbits themselves, and the fixed slots alone with
/// every other slot in one block.
fn invariant_partitions(n: usize, group: &[Perm]) -> Vec<Vec<Vec<u8>>> {
    let orbits = join_closure(n, group, &[]);
    let mut out: Vec<Vec<Vec<u8>>> = vec![orbits.clone()];
    if orbits.len() == 1 {
        for x in 1..n {
            let system = join_closure(n, group, &[(0, x)]);
            if system.len() > 1 && !out.contains(&system) {
                out.push(system);
            }
        }
    } else {
        for product in orbit_systems(n, group, &orbits) {
            if !out.contains(&product) {
                out.push(product);
            }
        }
        for packed in (2..=MAX_BLOCK).filter_map(|capacity| pack_orbits(&orbits, capacity)) {
            if !out.contains(&packed) {
                out.push(packed);
            }
        }
        let (fixed, moved): (Vec<Vec<u8>>, Vec<Vec<u8>>) = orbits.into_iter().partition(|o| o.len() == 1);
        if moved.len() > 1 {
            let mut merged = fixed;
            merged.push(moved.concat());
            out.push(
                merged
                    .into_iter()
                    .map(|mut b| {
                        b.sort_unstable();
                        b
                    })
                    .collect(),
            );
        }
    }
    out
}

/// Most partitions [`orbit_systems`] lists: past it, orbits are cut only
/// alone.
const MAX_ORBIT_SYSTEMS: usize = 256;

/// Partitions that cut each orbit by one of its block systems (the orbit
/// whole, its slots alone, or the blocks that joining its first slot with
/// another makes): the 3×3×3's corners whole with its edges in six pairs of
/// opposite edges (the cheapest, and the one it uses) or in three slices of
/// four.
/// Their product when it is at most [`MAX_ORBIT_SYSTEMS`], else each orbit's
/// systems with the other orbits whole.
fn orbit_systems(n: usize, group: &[Perm], orbits: &[Vec<u8>]) -> Vec<Vec<Vec<u8>>> {
    let per_orbit: Vec<Vec<Vec<Vec<u8>>>> = orbits
        .iter()
        .map(|orbit| {
            let mut systems = vec![vec![orbit.clone()], orbit.iter().map(|&s| vec![s]).collect()];
            for &x in &orbit[1..] {
                let inside: Vec<Vec<u8>> = join_closure(n, group, &[(orbit[0] as usize, x as usize)])
                    .into_iter()
                    .filter(|b| orbit.contains(&b[0]))
                    .collect();
                if inside.len() > 1 && !systems.contains(&inside) {
                    systems.push(inside);
                }
            }
            systems
        })
        .collect();
    let product: usize = per_orbit
        .iter()
        .map(|s| s.len())
        .try_fold(1usize, |p, k| p.checked_mul(k))
        .unwrap_or(usize::MAX);
    let mut out: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut push = |choice: &[usize]| {
        let mut blocks: Vec<Vec<u8>> = choice
            .iter()
            .enumerate()
            .flat_map(|(o, &c)| per_orbit[o][c].iter().cloned())
            .collect();
        blocks.sort();
        out.push(blocks);
    };
    if product <= MAX_ORBIT_SYSTEMS {
        let mut choice = vec![0usize; orbits.len()];
        'all: loop {
            push(&choice);
            for (o, c) in choice.iter_mut().enumerate() {
                *c += 1;
                if *c < per_orbit[o].len() {
                    continue 'all;
                }
                *c = 0;
            }
            break;
        }
    } else {
        for (o, systems) in per_orbit.iter().enumerate() {
            for c in 1..systems.len() {
                let mut choice = vec![0usize; orbits.len()];
                choice[o] = c;
                push(&choice);
            }
        }
    }
    out
}

/// Unions of orbits of at most `capacity` slots each (first fit, largest
/// orbit first): invariant blocks bigger than the orbits, for groups with
/// many small orbits (a point stabiliser fixes its base points, and fibers
/// of single points are too small to work). `None` when an orbit does not
/// fit or everything fits one block.
fn pack_orbits(orbits: &[Vec<u8>], capacity: usize) -> Option<Vec<Vec<u8>>> {
    let mut sorted: Vec<&Vec<u8>> = orbits.iter().collect();
    sorted.sort_by_key(|o| std::cmp::Reverse(o.len()));
    let mut bins: Vec<Vec<u8>> = Vec::new();
    for orbit in sorted {
        if orbit.len() > capacity {
            return None;
        }
        match bins.iter_mut().find(|b| b.len() + orbit.len() <= capacity) {
            Some(bin) => bin.extend_from_slice(orbit),
            None => bins.push(orbit.clone()),
        }
    }
    if bins.len() < 2 {
        return None;
    }
    bins.iter_mut().for_each(|b| b.sort_unstable());
    bins.sort();
    Some(bins)
}

/// The finest partition of the slots that joins the given pairs, every
/// orbit's points, and is mapped onto itself by the group (a union-find
/// closed under the group's action).
fn join_closure(n: usize, group: &[Perm], pairs: &[(usize, usize)]) -> Vec<Vec<u8>> {
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    // Orbits: join each point with its images.
    let mut queue: Vec<(usize, usize)> = pairs.to_vec();
    let pairs_given = !pairs.is_empty();
    if !pairs_given {
        for g in group {
            for s in 0..n {
                queue.push((s, g[s] as usize));
            }
        }
    }
    while let Some((a, b)) = queue.pop() {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        if ra == rb {
            continue;
        }
        root[ra.max(rb)] = ra.min(rb);
        if pairs_given {
            for g in group {
                queue.push((g[a] as usize, g[b] as usize));
            }
        }
    }
    let mut blocks: HashMap<usize, Vec<u8>> = HashMap::new();
    for s in 0..n {
        let r = find(&mut root, s);
        blocks.entry(r).or_default().push(s as u8);
    }
    let mut out: Vec<Vec<u8>> = blocks.into_values().collect();
    out.sort();
    out
}

/// Blocks of pieces from blocks of home slots.
fn piece_blocks(puzzle: &Puzzle, slot_blocks: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = puzzle.slots;
    let mut piece_at_home = vec![0u8; n];
    for (piece, &home) in puzzle.solved[..n].iter().enumerate() {
        piece_at_home[home as usize] = piece as u8;
    }
    slot_blocks
        .iter()
        .map(|b| {
            let mut pieces: Vec<u8> = b.iter().map(|&s| piece_at_home[s as usize]).collect();
            pieces.sort_unstable();
            pieces
        })
        .collect()
}

/// Number of classes of keys under the group (Burnside: the average number
/// of keys an element fixes). A key colours each slot of a block's domain
/// (`domains[b]`, see [`block_domains`]) with a block; an element fixes it
/// when it maps every colour class onto the class of the block it maps the
/// block to.
pub fn burnside_classes(group: &[Perm], blocks: &[Vec<u8>], domains: &[u64]) -> u128 {
    let n = group[0].degree();
    let mut block_of = vec![0usize; n];
    for (b, slots) in blocks.iter().enumerate() {
        for &s in slots {
            block_of[s as usize] = b;
        }
    }
    let sizes: Vec<usize> = blocks.iter().map(|b| b.len()).collect();
    // The elements on the pool: on one thread the 4×4 Loopover's five
    // candidates (128 elements each) took 7 ms before the class search
    // could start, on every thread count.
    let total: u128 = group
        .par_iter()
        .map(|g| fixed_keys(g, &block_of, &sizes, domains))
        .sum();
    total / group.len() as u128
}

/// Keys fixed by one element: each cycle of the element on slots takes the
/// colours of one orbit of its block map, evenly, an orbit that holds a
/// block whose domain has the cycle's slots; count the ways to give every
/// block its size.
fn fixed_keys(g: &Perm, block_of: &[usize], sizes: &[usize], domains: &[u64]) -> u128 {
    let n = g.degree();
    let nb = sizes.len();
    let block_map: Vec<usize> = (0..nb)
        .map(|b| {
            let s = block_of.iter().position(|&x| x == b).expect("a block has slots");
            block_of[g[s] as usize]
        })
        .collect();
    let mut seen = vec![false; n];
    // Each cycle's length and a slot of it.
    let mut cycles = Vec::new();
    for s in 0..n {
        let mut len = 0;
        let mut x = s;
        while !seen[x] {
            seen[x] = true;
            x = g[x] as usize;
            len += 1;
        }
        if len > 0 {
            cycles.push((len, s));
        }
    }
    // Colour vectors a cycle of each length can take from the blocks whose
    // domain holds its slot (a domain's blocks go to one domain's blocks).
    let domain_of = |s: usize| domains.iter().copied().find(|d| d & 1 << s != 0).unwrap_or(0);
    let mut options: HashMap<(usize, u64), Vec<Vec<usize>>> = HashMap::new();
    for &(len, s) in &cycles {
        let domain = domain_of(s);
        options.entry((len, domain)).or_insert_with(|| {
            let mut opts = Vec::new();
            for b in (0..nb).filter(|&b| domains[b] == domain) {
                let mut orbit = vec![b];
                let mut y = block_map[b];
                while y != b {
                    orbit.push(y);
                    y = block_map[y];
                }
                if len % orbit.len() == 0 {
                    let mut v = vec![0usize; nb];
                    for &c in &orbit {
                        v[c] += len / orbit.len();
                    }
                    opts.push(v);
                }
            }
            opts
        });
    }
    let mut memo: HashMap<(usize, Vec<usize>), u128> = HashMap::new();
    let cycles: Vec<(usize, u64)> = cycles.iter().map(|&(len, s)| (len, domain_of(s))).collect();
    fn go(
        i: usize,
        remaining: Vec<usize>,
        cycles: &[(usize, u64)],
        options: &HashMap<(usize, u64), Vec<Vec<usize>>>,
        memo: &mut HashMap<(usize, Vec<usize>), u128>,
    ) -> u128 {
        if i == cycles.len() {
            return u128::from(remaining.iter().all(|&r| r == 0));
        }
        if let Some(&v) = memo.get(&(i, remaining.clone())) {
            return v;
        }
        let mut total = 0u128;
        for v in &options[&cycles[i]] {
            if remaining.iter().zip(v).all(|(r, x)| r >= x) {
                let next: Vec<usize> = remaining.iter().zip(v).map(|(r, x)| r - x).collect();
                total += go(i + 1, next, cycles, options, memo);
            }
        }
        memo.insert((i, remaining), total);
        total
    }
    go(0, sizes.to_vec(), &cycles, &options, &mut memo)
}
