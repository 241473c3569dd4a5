//! The BFS kernel of the reduced space: the same task `(level d, target
//! shard B)` as [`crate::kernel::blocks`], where `B` is a class of keys.
//!
//! For a move `m`, the predecessors `x = m⁻¹ y` of the states `y` of `B`'s
//! fiber all have the key `m⁻¹(K_B)`; a symmetry `σ` maps that key to its
//! class's representative `K_A`, so the predecessors are stored, as
//! `c_σ(x)`, in shard `A`'s fiber ([`steps`]). Both directions are one
//! [`FiberMap`](crate::space::reduced::fiber::FiberMap) per move:
//! [`bottom_up`] maps each unseen `y` to `c_σ(m⁻¹ y)` and tests that bit of
//! `F_d(A)`; [`top_down`] maps every state `z` of `F_d(A)` back to
//! `m · c_σ⁻¹(z)` and sets that bit. Each costs one table lookup per state
//! after a per-row sum.
//!
//! Nothing here allocates a shard-sized buffer: the output doubles as the
//! bottom-up pass's set of states still unreached, and "unseen" (neither in
//! `F_{d-1}(B)` nor in `F_d(B)`) is worked out word by word where it is
//! used. On the 4×4 Loopover's sparse levels, building that set for every
//! shard had been 12% of a worker's time.

pub mod bottom_up;
pub mod direction;
mod step_table;
pub mod steps;
pub mod top_down;

#[cfg(test)]
mod tests;

use crate::kernel::task::{ShardInputs, TaskStats};
use crate::space::reduced::keys::Key;
use crate::space::reduced::ReducedSpace;
pub use steps::{ReducedMoves, Step};

/// Computes `F_{d+1}(shard)` into `out` (fully overwritten); `on_unit` gets
/// the states found (a shard is one unit of progress). Top-down also
/// lists the states found while they are at most `inputs.list_up_to`
/// (`None` otherwise, and after bottom-up: a caller lists `out` itself).
pub fn expand_reduced(
    space: &ReducedSpace,
    moves: &ReducedMoves,
    shard: u64,
    inputs: &ShardInputs,
    out: &mut [u64],
    on_unit: &(dyn Fn(u64) + Sync),
) -> (TaskStats, Option<Vec<u32>>) {
    // Moves whose source shard is empty can neither mark nor hit a state:
    // leaving them out saves building their maps (most moves of a shard on
    // a sparse level). Counts come with the sources.
    let mut steps: Vec<(usize, Step, u64)> = Vec::new();
    moves.each_step(space, shard, |g, step| {
        if let Some(step) = step {
            let count = inputs.sources.count(step.source);
            if count > 0 {
                steps.push((g, step, count));
            }
        }
    });
    let sources: u64 = steps.iter().map(|s| s.2).sum();
    // Counting the unseen states stops past the most for which bottom-up
    // would be cheaper (on sparse levels, after a word or two).
    let bottom_up_limit = moves.costs.bottom_up_limit(sources, steps.len() as u64);
    let mut unseen = unseen_count(space, inputs, bottom_up_limit + 1);
    if unseen * (steps.len() as u64) < sources {
        // Rarely: counted in full for an exact cheaper bound below.
        unseen = unseen_count(space, inputs, u64::MAX);
    }
    let task = Expansion {
        space,
        moves,
        key: space.key(shard),
        inputs,
    };
    let (mut stats, positions) = if unseen == 0 || sources == 0 {
        if !inputs.output_zeroed {
            out.fill(0);
        }
        (TaskStats::default(), None)
    } else if unseen <= bottom_up_limit {
        // Densest sources first: a state stops at its first hit, and a
        // dense source hits most often.
        steps.sort_by_key(|s| std::cmp::Reverse(s.2));
        let started = std::time::Instant::now();
        let mut stats = bottom_up::expand(&task, &steps, out);
        moves
            .costs
            .record_bottom_up(started.elapsed().as_nanos() as u64, stats.evaluations, unseen);
        stats.found = crate::space::bits::popcount(out);
        (stats, None)
    } else {
        let started = std::time::Instant::now();
        let (stats, positions) = top_down::expand(&task, &steps, sources, out);
        moves
            .costs
            .record_top_down(started.elapsed().as_nanos() as u64, stats.evaluations);
        (stats, positions)
    };
    on_unit(stats.found);
    // `unseen` is exact, or so large that top-down is the cheaper bound.
    stats.cheaper_bound = sources.min(unseen * steps.len() as u64);
    (stats, positions)
}

/// What both directions read for one target shard.
pub(crate) struct Expansion<'a> {
    pub space: &'a ReducedSpace,
    pub moves: &'a ReducedMoves,
    /// The shard's key (its class's representative), unranked once for
    /// every move's map.
    pub key: Key,
    pub inputs: &'a ShardInputs<'a>,
}

impl Expansion<'_> {
    /// Word `w` of the states of the shard in no earlier level.
    #[inline]
    pub fn unseen_word(&self, w: usize) -> u64 {
        let fiber = self.space.fiber();
        !(self.inputs.previous[w] | self.inputs.current[w]) & fiber.valid_mask(w % fiber.row_words())
    }
}

/// States of the shard in neither `F_{d-1}(B)` nor `F_d(B)`, counted up to
/// `limit` at least (the count stops once it reaches `limit`).
fn unseen_count(space: &ReducedSpace, inputs: &ShardInputs, limit: u64) -> u64 {
    let fiber = space.fiber();
    let rw = fiber.row_words();
    let mut count = 0u64;
    for (previous, current) in inputs.previous.chunks(rw).zip(inputs.current.chunks(rw)) {
        if count >= limit {
            break;
        }
        for (w, (p, c)) in previous.iter().zip(current).enumerate() {
            count += u64::from((!(p | c) & fiber.valid_mask(w)).count_ones());
        }
    }
    count
}
