//! The BFS kernel of distinct oriented pieces reduced by symmetry
//! ([`crate::space::oriented`]), block by block.
//!
//! For a target block (representative arrangement `p`) and a move `m`, the
//! predecessors `m⁻¹ y` of its states share one arrangement, whose class
//! and canonicalising symmetry give the source block; their twists follow
//! by an [`AffineMap`] worked out for this block and move, as two half
//! tables of the block index (a few hundred entries: building them costs
//! less than a cache of them). Bottom-up probes each unseen valid twist
//! vector through the backward maps, densest source first, until a hit;
//! top-down walks each source block's set bits through the forward maps.
//! The cheaper direction is chosen per block from the counts.

use crate::kernel::task::{ShardInputs, TaskStats};
use crate::puzzle::{Move, Puzzle};
use crate::space::bits::popcount;
use crate::space::oriented::{AffineMap, Join, OrientedSpace};

/// The moves as the kernel applies them: undone, to reach predecessors.
pub struct OrientedMoves {
    inverses: Vec<Move>,
    /// Every move's undoing move is a move and no move has a guard: a
    /// shard's targets are then its sources ([`Self::target_shards`]).
    targets_are_sources: bool,
}

impl OrientedMoves {
    /// The undoing move of each move of `puzzle`.
    pub fn new(puzzle: &Puzzle) -> OrientedMoves {
        let modulus = puzzle.coding.as_ref().map(|c| &c.modulus[..]);
        let inverses: Vec<Move> = puzzle.moves.iter().map(|m| m.undoing(modulus)).collect();
        // No twist and twists of zero are the same move.
        let twist = |m: &Move, s: usize| m.twist.get(s).copied().unwrap_or(0);
        let same = |a: &Move, b: &Move| a.perm == b.perm && (0..a.perm.degree()).all(|s| twist(a, s) == twist(b, s));
        let closed = inverses.iter().all(|u| puzzle.moves.iter().any(|m| same(m, u)));
        let unguarded = puzzle.moves.iter().all(|m| m.guard.is_none());
        OrientedMoves {
            inverses,
            targets_are_sources: closed && unguarded,
        }
    }

    /// A superset of the shards whose tasks read `source`, when the moves
    /// are closed under undoing (`None` otherwise): `source`'s own sources.
    /// Shard `B` reads `A` under move `m` when `m⁻¹(p_B) = σ(p_A)` for the
    /// representatives' arrangements and an element `σ`, so `p_B =
    /// σ m'(p_A)` with `m' = σ⁻¹ m σ`, again a move (the symmetries map the
    /// move set onto itself, `crate::puzzle::symmetry::oriented`); with the
    /// moves closed under undoing, the classes of `m'(p_A)` over all moves
    /// are those of the undone moves, `A`'s predecessors. A sparse level's
    /// map then visits only the non-empty shards' targets: on the 3×3×3's
    /// edges, every level before worked out all 156,037 shards' sources,
    /// 6.7 thread-seconds a level, and depth 1 the predecessors of all 10
    /// million classes (53 thread-seconds).
    pub fn target_shards(&self, space: &OrientedSpace, source: u64) -> Option<Vec<u64>> {
        self.targets_are_sources.then(|| self.source_shards(space, source))
    }

    /// The shards holding the predecessors of `shard`'s blocks.
    pub fn source_shards(&self, space: &OrientedSpace, shard: u64) -> Vec<u64> {
        let mut shards: Vec<u64> = self
            .predecessors(space, shard)
            .iter()
            .map(|&(class, _)| space.place_of(class).0)
            .collect();
        shards.sort_unstable();
        shards.dedup();
        shards
    }

    /// Per class of `shard` and move (class-major), the class of the
    /// predecessors' arrangement and the element that canonicalises it
    /// (kept by the space across levels).
    fn predecessors(&self, space: &OrientedSpace, shard: u64) -> Vec<(usize, usize)> {
        let classes = space.shard_classes(shard);
        let mut found = Vec::with_capacity(classes.len() * self.inverses.len());
        for class in classes {
            space.predecessors_of(class, &self.inverses, &mut found);
        }
        found
    }
}

#[cfg(test)]
mod tests;

/// One move's source block of a target block.
struct Step<'a> {
    words: &'a [u64],
    count: u64,
    map: AffineMap,
}

/// Computes `F_{d+1}(shard)` into `out` (fully overwritten); `on_unit` gets
/// the states found (a shard is one unit).
pub fn expand_oriented(
    space: &OrientedSpace,
    moves: &OrientedMoves,
    shard: u64,
    inputs: &ShardInputs,
    out: &mut [u64],
    on_unit: &(dyn Fn(u64) + Sync),
) -> TaskStats {
    let bw = space.block_words();
    out.fill(0);
    let mut stats = TaskStats::default();
    let predecessors = moves.predecessors(space, shard);
    for (position, class) in space.shard_classes(shard).enumerate() {
        let at = position * bw;
        let unseen: Vec<u64> = (0..bw)
            .map(|w| !(inputs.previous[at + w] | inputs.current[at + w]) & space.valid()[w])
            .collect();
        let unseen_count = popcount(&unseen);
        if unseen_count == 0 {
            continue;
        }
        let rep = space.rep(class);
        let found = &predecessors[position * moves.inverses.len()..(position + 1) * moves.inverses.len()];
        let mut steps: Vec<Step> = moves
            .inverses
            .iter()
            .zip(found)
            .filter_map(|(inv, &(source, k))| {
                let (source_shard, source_position) = space.place_of(source);
                let words = &inputs.sources.get(source_shard)[source_position * bw..(source_position + 1) * bw];
                let count = popcount(words);
                (count > 0).then(|| Step {
                    words,
                    count,
                    map: AffineMap::new(space, &rep, Some(inv), k),
                })
            })
            .collect();
        if steps.is_empty() {
            continue;
        }
        let top_down_cost: u64 = steps.iter().map(|s| s.count).sum();
        let bottom_up_bound = unseen_count * steps.len() as u64;
        let block = &mut out[at..at + bw];
        // A probe stops at its first hit: about half the moves on average
        // where states are found, all of them where none is.
        if bottom_up_bound / 2 < top_down_cost {
            steps.sort_by_key(|s| std::cmp::Reverse(s.count));
            stats.evaluations += match space.join() {
                Join::Add => bottom_up::<Sum>(space, &steps, &unseen, block),
                Join::Xor => bottom_up::<Xor>(space, &steps, &unseen, block),
            };
            stats.bottom_up_blocks += 1;
        } else {
            stats.evaluations += match space.join() {
                Join::Add => top_down::<Sum>(space, &steps, &unseen, block),
                Join::Xor => top_down::<Xor>(space, &steps, &unseen, block),
            };
            stats.top_down_blocks += 1;
        }
        stats.cheaper_bound += top_down_cost.min(bottom_up_bound);
    }
    stats.found = popcount(out);
    on_unit(stats.found);
    stats
}

/// How a block index's half-table values combine ([`Join`]), as a type so
/// that each inner loop below is compiled for one of them.
trait Combine {
    fn join(lo: u32, hi: u32) -> usize;
}

/// [`Join::Add`].
struct Sum;

impl Combine for Sum {
    #[inline(always)]
    fn join(lo: u32, hi: u32) -> usize {
        Join::Add.of(lo, hi) as usize
    }
}

/// [`Join::Xor`].
struct Xor;

impl Combine for Xor {
    #[inline(always)]
    fn join(lo: u32, hi: u32) -> usize {
        Join::Xor.of(lo, hi) as usize
    }
}

/// New states of one block by probing each unseen state's predecessors.
fn bottom_up<C: Combine>(space: &OrientedSpace, steps: &[Step], unseen: &[u64], block: &mut [u64]) -> u64 {
    let split = space.split() as usize;
    let tables: Vec<(Vec<u32>, Vec<u32>, &[u64])> = steps
        .iter()
        .map(|s| {
            let (lo, hi) = s.map.tables(space, false);
            (lo, hi, s.words)
        })
        .collect();
    let mut evaluations = 0u64;
    for (w, (&word, found)) in unseen.iter().zip(block.iter_mut()).enumerate() {
        let mut bits = word;
        while bits != 0 {
            let b = bits.trailing_zeros();
            let y = w * 64 + b as usize;
            for (lo, hi, source) in &tables {
                evaluations += 1;
                let x = C::join(lo[y % split], hi[y / split]);
                if source[x / 64] >> (x % 64) & 1 == 1 {
                    *found |= 1 << b;
                    break;
                }
            }
            bits &= bits - 1;
        }
    }
    evaluations
}

/// New states of one block by marking each source state's successor.
fn top_down<C: Combine>(space: &OrientedSpace, steps: &[Step], unseen: &[u64], block: &mut [u64]) -> u64 {
    let split = space.split() as usize;
    let mut evaluations = 0u64;
    for step in steps {
        let (lo, hi) = step.map.tables(space, true);
        // Only valid twist vectors are ever set in a level; calibration's
        // random sources set the others too, which have no image.
        for (w, (&word, &valid)) in step.words.iter().zip(space.valid()).enumerate() {
            let mut bits = word & valid;
            while bits != 0 {
                let x = w * 64 + bits.trailing_zeros() as usize;
                let y = C::join(lo[x % split], hi[x / split]);
                block[y / 64] |= 1 << (y % 64);
                evaluations += 1;
                bits &= bits - 1;
            }
        }
    }
    for (b, &u) in block.iter_mut().zip(unseen) {
        *b &= u;
    }
    evaluations
}
