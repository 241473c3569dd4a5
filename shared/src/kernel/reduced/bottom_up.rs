//! Bottom-up: every state of the target shard not seen before probes its
//! predecessors, one move after another, until one is in `F_d`.
//!
//! The pass goes move by move over the whole shard (or over the rows of
//! one thread's part of it), not row by row over the moves: each move
//! reads one source shard (40.5 KiB on the 4×4 Loopover), which then stays
//! in the core's L1 cache for all its probes, where row by row the probes
//! of 24 sources shared the cache.

use super::{Expansion, Step};
use crate::kernel::task::TaskStats;
use crate::space::reduced::fiber::FiberMap;
use rayon::prelude::*;
use std::borrow::Cow;

/// Rows handed to one thread at a time when a shard is split.
const ROWS_PER_TASK: usize = 64;

/// Finds the unseen states of the shard with a predecessor in one of the
/// `steps`' sources, trying the steps in the order given; `out` gets them.
pub(crate) fn expand(task: &Expansion, steps: &[(usize, Step, u64)], out: &mut [u64]) -> TaskStats {
    let rw = task.space.fiber().row_words();
    // A source held as a list only is laid out here: bottom-up tests its
    // bits at random. (Listed sources are sparse, so wherever they appear
    // top-down is usually the cheaper direction.)
    let maps: Vec<(Cow<[u64]>, FiberMap)> = steps
        .iter()
        .map(|&(g, step, _)| {
            let source = task.inputs.sources.laid_out(step.source, out.len());
            (source, task.moves.backward(task.space, &task.key, g, step))
        })
        .collect();
    // `out` holds the states still unreached while the probes run.
    for (w, o) in out.iter_mut().enumerate() {
        *o = task.unseen_word(w);
    }
    let evaluations = if task.inputs.split {
        out.par_chunks_mut(rw * ROWS_PER_TASK)
            .enumerate()
            .map(|(part, remaining)| probe(&maps, part * ROWS_PER_TASK, remaining, rw))
            .sum()
    } else {
        probe(&maps, 0, out, rw)
    };
    // Found: unseen at the start and no longer unreached.
    for (w, o) in out.iter_mut().enumerate() {
        *o = task.unseen_word(w) & !*o;
    }
    TaskStats {
        evaluations,
        bottom_up_blocks: 1,
        ..TaskStats::default()
    }
}

/// Clears from `remaining` (rows `first_row..` of the shard) every state
/// with a predecessor in a source; returns the probes made.
fn probe(maps: &[(Cow<[u64]>, FiberMap)], first_row: usize, remaining: &mut [u64], rw: usize) -> u64 {
    let rows = remaining.len() / rw;
    let mut probes = 0u64;
    for (source, map) in maps {
        for ((base, table), row) in map.rows().skip(first_row).take(rows).zip(remaining.chunks_mut(rw)) {
            let table = table.whole().expect("bottom-up maps have whole rows");
            for (w, rem) in row.iter_mut().enumerate() {
                let mut bits = *rem;
                let mut hit = 0u64;
                while bits != 0 {
                    let b = bits.trailing_zeros();
                    let x = base + table[w * 64 + b as usize];
                    hit |= ((source[(x >> 6) as usize] >> (x & 63)) & 1) << b;
                    probes += 1;
                    bits &= bits - 1;
                }
                *rem &= !hit;
            }
        }
        if remaining.iter().all(|&w| w == 0) {
            break;
        }
    }
    probes
}
