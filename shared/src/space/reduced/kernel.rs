//! The BFS kernel of the reduced space: the same task `(level d, target
//! shard B)` as [`crate::kernel::blocks`], where `B` is a class of keys.
//!
//! For a move `m`, the predecessors `x = m⁻¹ y` of the states `y` of `B`'s
//! fiber all have the key `m⁻¹(K_B)`; a symmetry `σ` maps that key to its
//! class's representative `K_A`, so the predecessors are stored, as
//! `c_σ(x)`, in shard `A`'s fiber. Both directions are one [`FiberMap`]:
//! bottom-up maps `y` to `c_σ(m⁻¹ y)` and tests that bit of `F_d(A)`,
//! top-down maps every state `z` of `F_d(A)` back to `m · c_σ⁻¹(z)` and sets
//! that bit. Each costs one table lookup per state after a per-row sum.

use super::fiber::FiberMap;
use super::keys::{map_mask, Key, MAX_BLOCKS};
use super::ReducedSpace;
use crate::kernel::task::{ShardInputs, TaskStats};
use crate::puzzle::perm::Perm;
use crate::puzzle::Puzzle;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The moves of a puzzle in the form the reduced kernel uses.
pub struct ReducedMoves {
    forward: Vec<Perm>,
    inverse: Vec<Perm>,
    /// Legal only while piece `.0` is in slot `.1`.
    guards: Vec<Option<(usize, usize)>>,
}

/// Where the predecessors of a shard's states under one move are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The source shard.
    pub source: u64,
    /// The symmetry mapping the predecessors' key to the source's representative.
    pub symmetry: usize,
}

impl ReducedMoves {
    /// Prepares the moves of `puzzle`.
    pub fn new(puzzle: &Puzzle) -> ReducedMoves {
        ReducedMoves {
            forward: puzzle.moves.iter().map(|m| m.perm.clone()).collect(),
            inverse: puzzle.moves.iter().map(|m| m.perm.inverse()).collect(),
            guards: puzzle
                .moves
                .iter()
                .map(|m| m.guard.map(|g| (g.piece, g.slot)))
                .collect(),
        }
    }

    /// For each move, where the predecessors of `shard`'s states are (none
    /// when the move is illegal for the whole shard).
    pub fn steps(&self, space: &ReducedSpace, shard: u64) -> Vec<Option<Step>> {
        let key = space.key(shard);
        let blocks = space.fiber().blocks();
        (0..self.forward.len())
            .map(|g| {
                if let Some((piece, slot)) = self.guards[g] {
                    // x = m⁻¹(y) has the piece in `slot` iff y has it in m(slot);
                    // a guarded piece is a block of its own, so the key says.
                    let at = key[space.fiber().block_of(piece)];
                    if at != 1u64 << self.forward[g][slot] {
                        return None;
                    }
                }
                let mut source: Key = [0u64; MAX_BLOCKS];
                for b in 0..blocks {
                    source[b] = map_mask(&self.inverse[g], key[b]);
                }
                let (class, symmetry) = space.keys().canonicalize(&source);
                Some(Step {
                    source: class as u64,
                    symmetry,
                })
            })
            .collect()
    }

    /// The shards `shard`'s task reads (one per legal move).
    pub fn source_shards(&self, space: &ReducedSpace, shard: u64) -> Vec<u64> {
        self.steps(space, shard)
            .into_iter()
            .flatten()
            .map(|s| s.source)
            .collect()
    }

    /// A superset of the shards whose tasks read `source` (the inverse of
    /// [`Self::source_shards`]): the classes of `m(K_A)` for each move `m`.
    /// Shard `B` reads `A` under `m` when `m⁻¹(K_B) = σ(K_A)` for a symmetry
    /// `σ`, so `K_B = m σ (K_A) = σ m' (K_A)` with `m' = σ⁻¹ m σ`, again a
    /// move (every symmetry maps the move set onto itself, checked by
    /// [`crate::puzzle::symmetry::Symmetries::generate`]): `B` is the class
    /// of `m'(K_A)`. Guards are ignored; they only remove shards.
    pub fn target_shards(&self, space: &ReducedSpace, source: u64) -> Vec<u64> {
        let keys = space.keys();
        let key = space.key(source);
        let mut targets: Vec<u64> = self
            .forward
            .iter()
            .map(|m| {
                let mut target: Key = [0u64; MAX_BLOCKS];
                for b in 0..keys.blocks() {
                    target[b] = map_mask(m, key[b]);
                }
                keys.canonicalize(&target).0 as u64
            })
            .collect();
        targets.sort_unstable();
        targets.dedup();
        targets
    }

    /// Bottom-up map of move `g`: a state of `shard` to its predecessor's
    /// stored form in the source shard.
    pub(crate) fn backward(&self, space: &ReducedSpace, shard: u64, g: usize, step: Step) -> FiberMap {
        let sym = &space.symmetries;
        let f = sym.slots[step.symmetry].after(&self.inverse[g]);
        let (map, target) = space.fiber_map(&space.key(shard), &f, &sym.pieces[step.symmetry]);
        debug_assert_eq!(
            target[..space.fiber().blocks()],
            space.key(step.source)[..space.fiber().blocks()]
        );
        map
    }

    /// Top-down map of move `g`: a stored state of the source shard to its
    /// successor in `shard`.
    pub(crate) fn forward_map(&self, space: &ReducedSpace, shard: u64, g: usize, step: Step) -> FiberMap {
        let sym = &space.symmetries;
        let f = self.forward[g].after(&sym.slots[step.symmetry].inverse());
        let g_pieces = sym.pieces[step.symmetry].inverse();
        let (map, target) = space.fiber_map(&space.key(step.source), &f, &g_pieces);
        debug_assert_eq!(
            target[..space.fiber().blocks()],
            space.key(shard)[..space.fiber().blocks()]
        );
        map
    }
}

/// Computes `F_{d+1}(shard)` into `out` (fully overwritten); `on_unit` gets
/// the states found per row.
pub fn expand_reduced(
    space: &ReducedSpace,
    moves: &ReducedMoves,
    shard: u64,
    inputs: &ShardInputs,
    out: &mut [u64],
    on_unit: &(dyn Fn(u64) + Sync),
) -> TaskStats {
    let fiber = space.fiber();
    let rw = fiber.row_words();
    let unseen: Vec<u64> = inputs
        .previous
        .iter()
        .zip(inputs.current)
        .enumerate()
        .map(|(w, (p, c))| !(p | c) & fiber.valid_mask(w % rw))
        .collect();
    let unseen_count = crate::kernel::bits::popcount(&unseen);
    // Moves whose source shard is empty can neither mark nor hit a state:
    // leaving them out saves building their maps (most moves of a shard on
    // a sparse level).
    let mut sources = 0u64;
    let steps: Vec<(usize, Step)> = moves
        .steps(space, shard)
        .into_iter()
        .enumerate()
        .filter_map(|(g, s)| s.map(|s| (g, s)))
        .filter(|(_, s)| {
            let bits = crate::kernel::bits::popcount(inputs.sources.get(s.source));
            sources += bits;
            bits > 0
        })
        .collect();
    let task = Expansion {
        space,
        moves,
        shard,
        steps: &steps,
        inputs,
        unseen: &unseen,
    };
    let mut stats = if unseen_count == 0 || sources == 0 {
        out.fill(0);
        TaskStats::default()
    } else if unseen_count * steps.len() as u64 <= 2 * sources {
        bottom_up(&task, out)
    } else if sources < SEQUENTIAL_SOURCE_BITS {
        top_down_here(&task, out)
    } else {
        top_down(&task, out)
    };
    for row in out.chunks(rw) {
        on_unit(crate::kernel::bits::popcount(row));
    }
    stats.found = crate::kernel::bits::popcount(out);
    stats
}

/// Rows handed to one thread at a time.
const ROWS_PER_TASK: usize = 16;

/// Source bits below which a shard is expanded top-down on the calling
/// thread: splitting a few thousand marks over the pool costs more in
/// thread wake-ups than the marks themselves (on the 4×4 Loopover's depth
/// 8, a source shard holds about 74 states).
const SEQUENTIAL_SOURCE_BITS: u64 = 1 << 14;

/// What both directions read for one target shard.
struct Expansion<'a> {
    space: &'a ReducedSpace,
    moves: &'a ReducedMoves,
    shard: u64,
    /// Legal moves and where their predecessors are stored.
    steps: &'a [(usize, Step)],
    inputs: &'a ShardInputs<'a>,
    /// States of the shard in no earlier level.
    unseen: &'a [u64],
}

fn top_down(task: &Expansion, out: &mut [u64]) -> TaskStats {
    let (space, moves, shard) = (task.space, task.moves, task.shard);
    let (steps, inputs, unseen) = (task.steps, task.inputs, task.unseen);
    let rw = space.fiber().row_words();
    let marks: Vec<AtomicU64> = (0..out.len()).map(|_| AtomicU64::new(0)).collect();
    let evaluations = AtomicU64::new(0);
    for &(g, step) in steps {
        let src = inputs.sources.get(step.source);
        let map = moves.forward_map(space, shard, g, step);
        src.par_chunks(rw)
            .enumerate()
            .with_min_len(ROWS_PER_TASK)
            .for_each(|(row, words)| {
                if words.iter().all(|&w| w == 0) {
                    return;
                }
                let (base, table) = map.row(row as u64);
                let mut applied = 0u64;
                for (w, &word) in words.iter().enumerate() {
                    applied += for_each_successor(base, table, w, word, |t| {
                        marks[(t >> 6) as usize].fetch_or(1u64 << (t & 63), Ordering::Relaxed);
                    });
                }
                evaluations.fetch_add(applied, Ordering::Relaxed);
            });
    }
    for ((o, m), &u) in out.iter_mut().zip(marks).zip(unseen) {
        *o = m.into_inner() & u;
    }
    TaskStats {
        evaluations: evaluations.into_inner(),
        top_down_blocks: 1,
        ..TaskStats::default()
    }
}

/// Calls `mark` with the successor of each state set in `word`, word `w`
/// of a source row whose map row is `(base, table)`; returns how many.
#[inline]
fn for_each_successor(base: u64, table: &[u64], w: usize, word: u64, mut mark: impl FnMut(u64)) -> u64 {
    let mut bits = word;
    while bits != 0 {
        mark(base + table[w * 64 + bits.trailing_zeros() as usize]);
        bits &= bits - 1;
    }
    u64::from(word.count_ones())
}

/// [`top_down`] on this thread alone, visiting only the non-zero words.
fn top_down_here(task: &Expansion, out: &mut [u64]) -> TaskStats {
    let (space, moves, shard) = (task.space, task.moves, task.shard);
    let rw = space.fiber().row_words();
    let mut marks = vec![0u64; out.len()];
    let mut evaluations = 0u64;
    for &(g, step) in task.steps {
        let map = moves.forward_map(space, shard, g, step);
        for (i, &word) in task.inputs.sources.get(step.source).iter().enumerate() {
            if word == 0 {
                continue;
            }
            let (base, table) = map.row((i / rw) as u64);
            evaluations += for_each_successor(base, table, i % rw, word, |t| {
                marks[(t >> 6) as usize] |= 1u64 << (t & 63);
            });
        }
    }
    for ((o, m), &u) in out.iter_mut().zip(marks).zip(task.unseen) {
        *o = m & u;
    }
    TaskStats {
        evaluations,
        top_down_blocks: 1,
        ..TaskStats::default()
    }
}

fn bottom_up(task: &Expansion, out: &mut [u64]) -> TaskStats {
    let (space, moves, shard) = (task.space, task.moves, task.shard);
    let (steps, inputs, unseen) = (task.steps, task.inputs, task.unseen);
    let rw = space.fiber().row_words();
    let maps: Vec<(&[u64], FiberMap)> = steps
        .iter()
        .map(|&(g, step)| (inputs.sources.get(step.source), moves.backward(space, shard, g, step)))
        .collect();
    let evaluations = AtomicU64::new(0);
    out.par_chunks_mut(rw)
        .zip(unseen.par_chunks(rw))
        .enumerate()
        .with_min_len(ROWS_PER_TASK)
        .for_each(|(row, (out_row, unseen_row))| {
            let mut remaining = unseen_row.to_vec();
            out_row.fill(0);
            let mut probes = 0u64;
            for (src, map) in &maps {
                if remaining.iter().all(|&w| w == 0) {
                    break;
                }
                let (base, table) = map.row(row as u64);
                for (w, rem) in remaining.iter_mut().enumerate() {
                    let mut bits = *rem;
                    let mut hit = 0u64;
                    while bits != 0 {
                        let b = bits.trailing_zeros();
                        let x = base + table[w * 64 + b as usize];
                        hit |= ((src[(x >> 6) as usize] >> (x & 63)) & 1) << b;
                        probes += 1;
                        bits &= bits - 1;
                    }
                    *rem &= !hit;
                    out_row[w] |= hit;
                }
            }
            evaluations.fetch_add(probes, Ordering::Relaxed);
        });
    TaskStats {
        evaluations: evaluations.into_inner(),
        bottom_up_blocks: 1,
        ..TaskStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::task::SourceBits;
    use crate::puzzle::{parse_puzzle, Metric};

    /// Random valid bits of a fiber, each set with probability about
    /// `1 / 2^sparsity`.
    fn random_fiber(space: &ReducedSpace, seed: &mut u64, sparsity: u32) -> Vec<u64> {
        let rw = space.fiber().row_words();
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *seed ^ (*seed >> 29)
        };
        (0..space.shard_words())
            .map(|w| (0..sparsity).fold(u64::MAX, |acc, _| acc & next()) & space.fiber().valid_mask(w % rw))
            .collect()
    }

    /// The three ways to expand a shard (top-down on the pool, top-down on
    /// one thread, bottom-up) find the same states: marking successors and
    /// probing predecessors are independent computations of one set.
    #[test]
    fn every_direction_finds_the_same_states() {
        let p = parse_puzzle("loopover:3x4", Metric::Mtm).unwrap();
        let space = ReducedSpace::plan(&p, p.all_moves_even()).unwrap();
        let moves = ReducedMoves::new(&p);
        let mut seed = 7u64;
        for (shard, sparsity) in [(0u64, 6), (1, 3), (5, 1), (space.shards() - 1, 8)] {
            let sources: Vec<(u64, Vec<u64>)> = moves
                .source_shards(&space, shard)
                .into_iter()
                .chain([shard])
                .collect::<std::collections::BTreeSet<u64>>()
                .into_iter()
                .map(|s| (s, random_fiber(&space, &mut seed, sparsity)))
                .collect();
            let previous = random_fiber(&space, &mut seed, 4);
            let current = random_fiber(&space, &mut seed, 4);
            let inputs = ShardInputs {
                sources: SourceBits::new(sources.iter().map(|(s, w)| (*s, &w[..])).collect()),
                previous: &previous,
                current: &current,
            };
            let rw = space.fiber().row_words();
            let unseen: Vec<u64> = previous
                .iter()
                .zip(&current)
                .enumerate()
                .map(|(w, (p, c))| !(p | c) & space.fiber().valid_mask(w % rw))
                .collect();
            let steps: Vec<(usize, Step)> = moves
                .steps(&space, shard)
                .into_iter()
                .enumerate()
                .filter_map(|(g, s)| s.map(|s| (g, s)))
                .collect();
            let task = Expansion {
                space: &space,
                moves: &moves,
                shard,
                steps: &steps,
                inputs: &inputs,
                unseen: &unseen,
            };
            let run = |f: fn(&Expansion, &mut [u64]) -> TaskStats| {
                let mut out = vec![u64::MAX; space.shard_words()];
                f(&task, &mut out);
                out
            };
            let pooled = run(top_down);
            assert!(pooled.iter().any(|&w| w != 0), "shard {}: nothing found", shard);
            assert_eq!(run(top_down_here), pooled, "shard {}", shard);
            assert_eq!(run(bottom_up), pooled, "shard {}", shard);
        }
    }
}
