//! The coded kernel state by state: bottom-up unranks each unseen target
//! state once and ranks its predecessor under each inverse move until one
//! is in `F_d`; top-down unranks each frontier state of a source shard once
//! for all moves sharing that source and sets the successors' bits (atomic
//! ORs, parallel over units of [`CODED_UNIT_STATES`]). The cheaper
//! estimate wins, as in the block kernel.

use super::{CodedMove, CodedTask, State};
use crate::kernel::task::TaskStats;
use crate::space::CODED_UNIT_STATES;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Words per parallel unit (one progress unit).
const UNIT_WORDS: usize = (CODED_UNIT_STATES / 64) as usize;

impl CodedTask<'_> {
    fn rank_in(&self, state: &mut State) -> (u64, u64) {
        self.codec
            .split(self.codec.rank_with(&state.cells, &state.twists, &mut state.masks))
    }

    fn unrank_into(&self, shard: u64, index: u64, state: &mut State) {
        let rank = shard * self.codec.shard_states() + index;
        self.codec.unrank(rank, &mut state.cells, &mut state.twists);
    }
}

/// One direction's inputs: the task, each move's source shard, the unseen
/// states of the target shard and the progress callback.
struct Pass<'a> {
    task: &'a CodedTask<'a>,
    sources: &'a [u64],
    unseen: &'a [u64],
    on_unit: &'a (dyn Fn(u64) + Sync),
}

/// Computes the task state by state (see the module doc).
pub(super) fn expand(task: &CodedTask, sources: &[u64], out: &mut [u64], on_unit: &(dyn Fn(u64) + Sync)) -> TaskStats {
    let states = task.codec.shard_states();
    let mut unseen: Vec<u64> = task.previous.iter().zip(task.current).map(|(p, c)| !(p | c)).collect();
    if states % 64 != 0 {
        *unseen.last_mut().expect("a shard has states") &= (1u64 << (states % 64)) - 1;
    }
    let unseen_count = crate::space::bits::popcount(&unseen);
    let frontier_count: u64 = sources
        .iter()
        .map(|&s| crate::space::bits::popcount(task.frontier_of(s)))
        .sum();
    let pass = Pass {
        task,
        sources,
        unseen: &unseen,
        on_unit,
    };
    let mut stats = if unseen_count == 0 || frontier_count == 0 {
        out.fill(0);
        for _ in out.chunks(UNIT_WORDS) {
            on_unit(0);
        }
        TaskStats::default()
    } else if unseen_count * task.moves.len() as u64 <= 2 * frontier_count {
        bottom_up(&pass, out)
    } else {
        top_down(&pass, out)
    };
    stats.found = crate::space::bits::popcount(out);
    stats.cheaper_bound = frontier_count.min(unseen_count * task.moves.len() as u64);
    stats
}

fn bottom_up(pass: &Pass, out: &mut [u64]) -> TaskStats {
    let (task, sources, unseen) = (pass.task, pass.sources, pass.unseen);
    let evaluations = AtomicU64::new(0);
    out.par_chunks_mut(UNIT_WORDS).enumerate().for_each(|(unit, chunk)| {
        let mut y = State::new();
        let mut x = State::new();
        let mut probes = 0u64;
        for (i, word) in chunk.iter_mut().enumerate() {
            let w = unit * UNIT_WORDS + i;
            let mut bits = unseen[w];
            let mut hits = 0u64;
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                task.unrank_into(task.shard, (w * 64) as u64 + b as u64, &mut y);
                for (inv, &src) in task.moves.inverse.iter().zip(sources) {
                    task.moves.apply(inv, &y, &mut x);
                    probes += 1;
                    if !x.allows(inv) {
                        continue;
                    }
                    let (xs, xi) = task.rank_in(&mut x);
                    debug_assert_eq!(xs, src);
                    if task.frontier_of(xs)[(xi / 64) as usize] >> (xi % 64) & 1 == 1 {
                        hits |= 1 << b;
                        break;
                    }
                }
            }
            *word = hits;
        }
        evaluations.fetch_add(probes, Ordering::Relaxed);
        (pass.on_unit)(crate::space::bits::popcount(chunk));
    });
    TaskStats {
        evaluations: evaluations.into_inner(),
        bottom_up_blocks: 1,
        ..TaskStats::default()
    }
}

fn top_down(pass: &Pass, out: &mut [u64]) -> TaskStats {
    let task = pass.task;
    let marks: Vec<AtomicU64> = (0..out.len()).map(|_| AtomicU64::new(0)).collect();
    let mut distinct: Vec<u64> = pass.sources.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let evaluations = AtomicU64::new(0);
    for &src in &distinct {
        let moves: Vec<&CodedMove> = task
            .moves
            .forward
            .iter()
            .zip(pass.sources)
            .filter(|(_, &s)| s == src)
            .map(|(m, _)| m)
            .collect();
        task.frontier_of(src)
            .par_chunks(UNIT_WORDS)
            .enumerate()
            .for_each(|(unit, chunk)| {
                let mut x = State::new();
                let mut y = State::new();
                let mut applied = 0u64;
                for (i, &word) in chunk.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let b = bits.trailing_zeros();
                        bits &= bits - 1;
                        task.unrank_into(src, ((unit * UNIT_WORDS + i) * 64) as u64 + b as u64, &mut x);
                        for mv in moves.iter().filter(|mv| x.allows(mv)) {
                            task.moves.apply(mv, &x, &mut y);
                            applied += 1;
                            let (ys, yi) = task.rank_in(&mut y);
                            debug_assert_eq!(ys, task.shard);
                            marks[(yi / 64) as usize].fetch_or(1 << (yi % 64), Ordering::Relaxed);
                        }
                    }
                }
                evaluations.fetch_add(applied, Ordering::Relaxed);
            });
    }
    for ((o, mark), &u) in out.iter_mut().zip(marks).zip(pass.unseen) {
        *o = mark.into_inner() & u;
    }
    for chunk in out.chunks(UNIT_WORDS) {
        (pass.on_unit)(crate::space::bits::popcount(chunk));
    }
    TaskStats {
        evaluations: evaluations.into_inner(),
        top_down_blocks: 1,
        ..TaskStats::default()
    }
}
