//! Antipodes: states at the maximum depth, each with a shortest solving word
//! found by walking back through the levels (from depth `d`, some move leads
//! to a state of depth `d − 1`).

use crate::kernel::bits::{first_set_bits, Plane};
use crate::search::job::Job;
use anyhow::Context;
use std::collections::HashMap;

/// A state at maximum depth with a shortest solving word.
#[derive(Clone, Debug)]
pub struct Antipode {
    /// Position notation `p[piece] = slot`, or coded notation.
    pub state: Vec<u8>,
    /// Move indices that take the state back to solved, in order (directed
    /// graphs: that build it from solved); empty when the earlier levels
    /// were not kept.
    pub solution: Vec<usize>,
}

/// One shard's words, mapped or loaded.
pub enum ShardWords {
    Mapped(Plane),
    Loaded(Vec<u64>),
}

impl ShardWords {
    fn words(&self) -> &[u64] {
        match self {
            ShardWords::Mapped(p) => p.words(),
            ShardWords::Loaded(w) => w,
        }
    }
}

/// Where the walk reads level bits from.
pub trait LevelSource {
    /// The words of `(level, shard)`.
    fn shard(&mut self, level: u32, shard: u64) -> anyhow::Result<ShardWords>;
}

/// Picks the first `limit` states of level `depth` and finds a shortest
/// solving word for each through the earlier levels.
pub fn find_antipodes(
    job: &Job,
    source: &mut dyn LevelSource,
    depth: u32,
    limit: usize,
) -> anyhow::Result<Vec<Antipode>> {
    let states = first_states(job, source, depth, limit)?;
    let mut walkers: Vec<Antipode> = states
        .into_iter()
        .map(|state| Antipode {
            state,
            solution: Vec::new(),
        })
        .collect();
    let space = &job.space;
    let mut positions: Vec<Vec<u8>> = walkers.iter().map(|a| a.state.clone()).collect();
    for d in (0..depth).rev() {
        // Shards this step touches, loaded once per level and dropped after it.
        let mut bits: HashMap<u64, ShardWords> = HashMap::new();
        for (walker, pos) in walkers.iter_mut().zip(positions.iter_mut()) {
            let mut step = None;
            for (i, m) in job.puzzle.moves.iter().enumerate() {
                // Undirected: a neighbour one step nearer solved. Directed:
                // a state one level up that this move leads from.
                let next = if job.directed {
                    job.puzzle.apply_backwards(m, pos)
                } else {
                    job.puzzle.apply(m, pos)
                };
                let Some(next) = next else { continue };
                let (shard, word, bit) = space.locate(&next);
                let words = match bits.entry(shard) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => e.insert(source.shard(d, shard)?),
                };
                if (words.words()[word] >> bit) & 1 == 1 {
                    step = Some((i, next));
                    break;
                }
            }
            let (i, next) = step.with_context(|| {
                format!(
                    "no neighbour at depth {} while walking back; the level files are inconsistent",
                    d
                )
            })?;
            walker.solution.push(i);
            *pos = next;
        }
    }
    anyhow::ensure!(
        positions.iter().all(|p| job.puzzle.is_solved(p)),
        "walking back did not end at the solved state; the level files are inconsistent"
    );
    if job.directed {
        // Recorded from the state back; the word builds it from solved.
        walkers.iter_mut().for_each(|w| w.solution.reverse());
    }
    Ok(walkers)
}

/// The first `limit` states of level `depth` in rank order.
pub fn first_states(job: &Job, source: &mut dyn LevelSource, depth: u32, limit: usize) -> anyhow::Result<Vec<Vec<u8>>> {
    let space = &job.space;
    let mut states = Vec::new();
    for shard in 0..space.shards() {
        if states.len() >= limit {
            break;
        }
        let words = source.shard(depth, shard)?;
        for bit in first_set_bits(words.words(), limit - states.len()) {
            states.push(space.state_at(shard, bit));
        }
    }
    Ok(states)
}
