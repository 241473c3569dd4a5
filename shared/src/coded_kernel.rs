//! The BFS kernel for coded states (identical or oriented pieces): the same
//! task `(level d, target shard B)` as [`crate::kernel`], computed state by
//! state with [`Codec`] ranking instead of block tables.
//!
//! Under a move `m`, the predecessors of every state of `B` lie in one
//! source shard (the key classes' slots mapped back by `m⁻¹`). Top-down
//! walks the frontier of each source shard once, unranking each state once
//! for all the moves that share that source; bottom-up walks the unseen
//! states of `B` and stops probing a state at its first predecessor in
//! `F_d`. The cheaper estimate wins, as in the block kernel.

use crate::codec::{Codec, MAX_CODED_SLOTS};
use crate::puzzle::{Move, Puzzle};
use crate::space::CODED_UNIT_STATES;
use crate::task::{SourceBits, TaskStats};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Words per parallel unit (one progress unit).
const UNIT_WORDS: usize = (CODED_UNIT_STATES / 64) as usize;

/// One move in the form the kernel applies it.
struct CodedMove {
    /// Slot the content of each slot goes to.
    to: Vec<u8>,
    /// Twist added to the content leaving each slot.
    twist: Vec<u8>,
    /// Legal only while this class sits in this slot.
    guard: Option<(u8, u8)>,
}

/// The moves of a coded puzzle and their inverses.
pub struct CodedMoves {
    modulus: Vec<u8>,
    oriented: bool,
    forward: Vec<CodedMove>,
    inverse: Vec<CodedMove>,
}

impl CodedMoves {
    /// Prepares the moves of a coded puzzle.
    pub fn new(puzzle: &Puzzle) -> CodedMoves {
        let coding = puzzle.coding.as_ref().expect("a coded puzzle");
        let n = puzzle.slots;
        let modulus = coding.modulus.clone();
        let mut forward = Vec::new();
        let mut inverse = Vec::new();
        // Twists as full per-slot arrays (zero when a move has none).
        let twist_of = |m: &Move| -> Vec<u8> { (0..n).map(|s| m.twist.get(s).copied().unwrap_or(0)).collect() };
        for m in &puzzle.moves {
            let guard = m.guard.map(|g| (g.piece as u8, g.slot as u8));
            let back = m.undoing(Some(&modulus));
            forward.push(CodedMove {
                to: m.perm.images().to_vec(),
                twist: twist_of(m),
                guard,
            });
            inverse.push(CodedMove {
                to: back.perm.images().to_vec(),
                twist: twist_of(&back),
                guard,
            });
        }
        CodedMoves {
            oriented: modulus.iter().any(|&m| m > 1),
            modulus,
            forward,
            inverse,
        }
    }

    /// Number of moves.
    pub fn len(&self) -> usize {
        self.forward.len()
    }

    /// True when there are no moves.
    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }

    /// The shard holding the predecessors, under each move, of the states of
    /// `shard`.
    pub fn source_shards(&self, codec: &Codec, shard: u64) -> Vec<u64> {
        let key = codec.key_masks(shard);
        self.inverse
            .iter()
            .map(|inv| {
                let mapped: Vec<u64> = key
                    .iter()
                    .map(|&mask| {
                        let mut bits = mask;
                        let mut out = 0u64;
                        while bits != 0 {
                            out |= 1 << inv.to[bits.trailing_zeros() as usize];
                            bits &= bits - 1;
                        }
                        out
                    })
                    .collect();
                codec.shard_of_masks(&mapped)
            })
            .collect()
    }

    /// Writes `mv(cells, twists)` into `out`.
    #[inline]
    fn apply(&self, mv: &CodedMove, state: &State, out: &mut State) {
        let n = mv.to.len();
        for s in 0..n {
            out.cells[mv.to[s] as usize] = state.cells[s];
        }
        if self.oriented {
            for s in 0..n {
                let t = mv.to[s] as usize;
                out.twists[t] = (state.twists[s] + mv.twist[s]) % self.modulus[t];
            }
        }
    }
}

/// A state being worked on.
struct State {
    cells: [u8; MAX_CODED_SLOTS],
    twists: [u8; MAX_CODED_SLOTS],
    /// Scratch for ranking.
    masks: [u64; MAX_CODED_SLOTS],
}

impl State {
    fn new() -> State {
        State {
            cells: [0; MAX_CODED_SLOTS],
            twists: [0; MAX_CODED_SLOTS],
            masks: [0; MAX_CODED_SLOTS],
        }
    }

    /// True when `mv`'s guard holds here.
    #[inline]
    fn allows(&self, mv: &CodedMove) -> bool {
        mv.guard.is_none_or(|(class, slot)| self.cells[slot as usize] == class)
    }
}

/// Everything a coded task reads.
pub struct CodedTask<'a> {
    pub codec: &'a Codec,
    pub moves: &'a CodedMoves,
    /// Target shard `B`.
    pub shard: u64,
    /// `F_d` of the source shards.
    pub sources: &'a SourceBits<'a>,
    /// `F_{d-1}(B)` (all zero at level 0).
    pub previous: &'a [u64],
    /// `F_d(B)`.
    pub current: &'a [u64],
}

impl CodedTask<'_> {
    fn rank_in(&self, state: &mut State) -> (u64, u64) {
        self.codec
            .split(self.codec.rank_with(&state.cells, &state.twists, &mut state.masks))
    }

    fn unrank_into(&self, shard: u64, index: u64, state: &mut State) {
        let rank = shard * self.codec.shard_states() + index;
        self.codec.unrank(rank, &mut state.cells, &mut state.twists);
    }

    fn frontier_of(&self, shard: u64) -> &[u64] {
        self.sources.get(shard)
    }
}

/// Computes `F_{d+1}(B)` into `out` (fully overwritten); `on_unit` gets the
/// states found per unit of [`CODED_UNIT_STATES`].
pub fn expand_coded(task: &CodedTask, out: &mut [u64], on_unit: &(dyn Fn(u64) + Sync)) -> TaskStats {
    let states = task.codec.shard_states();
    let sources = task.moves.source_shards(task.codec, task.shard);
    let mut unseen: Vec<u64> = task.previous.iter().zip(task.current).map(|(p, c)| !(p | c)).collect();
    if states % 64 != 0 {
        *unseen.last_mut().expect("a shard has states") &= (1u64 << (states % 64)) - 1;
    }
    let unseen_count = crate::bits::popcount(&unseen);
    let frontier_count: u64 = sources
        .iter()
        .map(|&s| crate::bits::popcount(task.frontier_of(s)))
        .sum();
    let pass = Pass {
        task,
        sources: &sources,
        unseen: &unseen,
        on_unit,
    };
    let mut stats = if unseen_count == 0 || frontier_count == 0 {
        out.fill(0);
        TaskStats::default()
    } else if unseen_count * task.moves.len() as u64 <= 2 * frontier_count {
        bottom_up(&pass, out)
    } else {
        top_down(&pass, out)
    };
    stats.found = crate::bits::popcount(out);
    stats
}

/// One direction's inputs: the task, each move's source shard, the unseen
/// states of the target shard and the progress callback.
struct Pass<'a> {
    task: &'a CodedTask<'a>,
    sources: &'a [u64],
    unseen: &'a [u64],
    on_unit: &'a (dyn Fn(u64) + Sync),
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
        (pass.on_unit)(crate::bits::popcount(chunk));
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
        (pass.on_unit)(crate::bits::popcount(chunk));
    }
    TaskStats {
        evaluations: evaluations.into_inner(),
        top_down_blocks: 1,
        ..TaskStats::default()
    }
}
