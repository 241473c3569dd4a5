//! Top-down: every state of each source shard's `F_d` marks its successor
//! in the target shard; the marks not seen before are `F_{d+1}(B)`.

use super::{Expansion, Step};
use crate::kernel::task::TaskStats;
use crate::space::reduced::fiber::{FiberMap, MapForm, RowTable};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Rows handed to one thread at a time when a shard is split.
const ROWS_PER_TASK: usize = 16;

/// Source bits below which a shard is not split over the pool even when
/// it may be: a few thousand marks cost less than waking threads (on the
/// 4×4 Loopover's depth 8 a source shard holds about 74 states).
const SEQUENTIAL_SOURCE_BITS: u64 = 1 << 14;

/// Marks the successors of the `steps`' sources (`sources` bits in all)
/// and keeps those not seen before in `out`, with their count and, while
/// there are at most `task.inputs.list_up_to`, their positions.
pub(crate) fn expand(
    task: &Expansion,
    steps: &[(usize, Step, u64)],
    sources: u64,
    out: &mut [u64],
) -> (TaskStats, Option<Vec<u32>>) {
    let list_up_to = task.inputs.list_up_to;
    let (evaluations, (found, positions)) = if task.inputs.split && sources >= SEQUENTIAL_SOURCE_BITS {
        let evaluations = mark_pooled(task, steps, out);
        (evaluations, keep_unseen(task, out, list_up_to, None))
    } else {
        // Borrowed only here: the pooled marking may run another shard's
        // expansion on this thread while it waits.
        MARKED.with(|marked| {
            let mut marked = marked.borrow_mut();
            let evaluations = mark_here(task, steps, out, &mut marked);
            (evaluations, keep_unseen(task, out, list_up_to, Some(&marked)))
        })
    };
    let stats = TaskStats {
        found,
        evaluations,
        top_down_blocks: 1,
        ..TaskStats::default()
    };
    (stats, positions)
}

/// Clears from the marks in `out` the states seen before; returns the
/// states left and, while they are at most `list_up_to`, their positions.
/// `marked`, when given, has a bit for each word of `out` holding a mark:
/// only those words are visited. Otherwise every word is tested.
///
/// One pass does all three: only marked words need the earlier levels (on
/// a sparse level most words of the output are zero, and reading
/// `F_{d-1}(B)` and `F_d(B)` whole for them was 6% of the 4×4's time to
/// depth 8), and the words left are counted and listed as they are kept.
/// Counting and listing them in passes of their own read the shard twice
/// more: listing alone was 8% of a 1-thread 4×4 run's depth 8 (`perf`),
/// where a shard of 5,184 words gains about 70 states.
///
/// Testing every word for a mark was then most of this pass: a third of
/// the words of a shard at the 4×4's depth 8 hold one, so the test's
/// branch went either way at random. With the marked words' bits, depth
/// 8's compute took 4.45–4.78 thread-s instead of 5.67–5.87 (1 thread).
///
/// The list grows in a buffer of the thread's and is copied out at its
/// size: a list grown in place keeps its last doubling's room (the
/// allocator shrinks a block in place), and the cache holds these lists,
/// 40 MiB more at the peak of the 4×4 to depth 8.
fn keep_unseen(task: &Expansion, out: &mut [u64], list_up_to: u64, marked: Option<&[u64]>) -> (u64, Option<Vec<u32>>) {
    LISTED.with(|listed| {
        let mut listed = listed.borrow_mut();
        listed.clear();
        let mut found = 0u64;
        let mut listing = list_up_to > 0;
        let mut keep = |w: usize, o: &mut u64| {
            *o &= task.unseen_word(w);
            found += u64::from(o.count_ones());
            listing &= found <= list_up_to;
            if listing {
                let mut bits = *o;
                while bits != 0 {
                    listed.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        };
        match marked {
            Some(marked) => {
                for (i, &m) in marked.iter().enumerate() {
                    let mut words = m;
                    while words != 0 {
                        let w = i * 64 + words.trailing_zeros() as usize;
                        keep(w, &mut out[w]);
                        words &= words - 1;
                    }
                }
            }
            None => {
                for (w, o) in out.iter_mut().enumerate() {
                    if *o != 0 {
                        keep(w, o);
                    }
                }
            }
        }
        (found, listing.then(|| listed.to_vec()))
    })
}

thread_local! {
    /// Each thread's buffer for the list [`keep_unseen`] makes.
    static LISTED: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Each thread's bits of the words [`mark_here`] marked (one bit a
    /// word: a 64th of a shard).
    static MARKED: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Marks on this thread, straight into `out`, and the words marked into
/// `marked` (a bit for each word of `out`).
fn mark_here(task: &Expansion, steps: &[(usize, Step, u64)], out: &mut [u64], marked: &mut Vec<u64>) -> u64 {
    if !task.inputs.output_zeroed {
        out.fill(0);
    }
    marked.clear();
    marked.resize(out.len().div_ceil(64), 0);
    let rw = task.space.fiber().row_words();
    let mut evaluations = 0u64;
    for &(g, step, count) in steps {
        let mut mark = |t: u64| {
            let w = (t >> 6) as usize;
            out[w] |= 1u64 << (t & 63);
            marked[w >> 6] |= 1u64 << (w & 63);
        };
        if let Some(positions) = task.inputs.sources.positions(step.source) {
            let map = task.moves.forward_map(task.space, &task.key, g, step, MapForm::Digits);
            evaluations += mark_words(&map, rw, listed_words(positions), &mut mark);
            continue;
        }
        let source = task.inputs.sources.get(step.source);
        if count * SPARSE_WORDS_PER_BIT < source.len() as u64 {
            let map = task.moves.forward_map(task.space, &task.key, g, step, MapForm::Digits);
            evaluations += mark_words(&map, rw, nonzero_words(source), &mut mark);
            continue;
        }
        let map = task.moves.forward_map(task.space, &task.key, g, step, MapForm::Rows);
        for ((base, table), words) in map.rows().zip(source.chunks(rw)) {
            let table = whole(table);
            for (w, &word) in words.iter().enumerate() {
                evaluations += for_each_successor(base, |c| table[c], w, word, &mut mark);
            }
        }
    }
    evaluations
}

/// A source with fewer set bits than one per this many words, and no list
/// of them, is walked a cache line at a time, skipping zero lines, instead
/// of row by row.
const SPARSE_WORDS_PER_BIT: u64 = 16;

/// The nonzero words of a sparse source as `(index, word)`, a cache line
/// at a time: zero lines are skipped with one test. On the 4×4 Loopover's
/// sparse levels (a few set bits per source shard) the row-by-row walk of
/// all 576 rows of 24 sources per target was a fifth of the worker's time.
fn nonzero_words(source: &[u64]) -> impl Iterator<Item = (usize, u64)> + '_ {
    const LINE: usize = 8;
    source
        .chunks(LINE)
        .enumerate()
        .filter(|(_, line)| line.iter().fold(0, |acc, &w| acc | w) != 0)
        .flat_map(|(l, line)| line.iter().enumerate().map(move |(i, &w)| (l * LINE + i, w)))
        .filter(|&(_, w)| w != 0)
}

/// The words of a source given as the positions of its set bits, as
/// `(index, word)`, in order: only the listed bits are read.
fn listed_words(positions: &[u32]) -> impl Iterator<Item = (usize, u64)> + '_ {
    positions.chunk_by(|a, b| a / 64 == b / 64).map(|same| {
        (
            (same[0] / 64) as usize,
            same.iter().fold(0u64, |w, p| w | 1 << (p % 64)),
        )
    })
}

/// Marks the successors of the states of `words` (`(index, word)` in
/// order of index); only rows holding a set bit get their map row.
fn mark_words(map: &FiberMap, rw: usize, words: impl Iterator<Item = (usize, u64)>, mark: &mut impl FnMut(u64)) -> u64 {
    let mut evaluations = 0u64;
    let mut current_row = usize::MAX;
    let mut row_map: Option<(u64, RowTable)> = None;
    for (index, word) in words {
        let row = index / rw;
        if row != current_row {
            row_map = Some(map.row(row as u64));
            current_row = row;
        }
        let (base, table) = row_map.expect("set at the first word");
        evaluations += for_each_successor(base, |c| table.at(c), index % rw, word, &mut *mark);
    }
    evaluations
}

/// Bytes of mark buffers one pooled marking takes at most, all threads
/// together (a shard's words each): 16 threads on shards up to 2 MiB
/// each have their own; on larger shards threads share them.
const POOLED_MARK_BYTES: usize = 32 << 20;

/// Words of `out` each thread ORs the buffers into at a time.
const OR_WORDS: usize = 4096;

/// Marks on the whole pool: rows of each source are split over the
/// threads, each marking into a buffer of its own, ORed into `out` at the
/// end. Why not atomic ORs into one shard: each is a full barrier, so a
/// mark's cache miss could not overlap the next, and two cores' marks
/// bounce the shard's lines (a spread shard of `cyclic-coxeter:12` cost
/// 2 threads 60 % more CPU than 1 thread its whole shard).
fn mark_pooled(task: &Expansion, steps: &[(usize, Step, u64)], out: &mut [u64]) -> u64 {
    let rw = task.space.fiber().row_words();
    let words = out.len();
    let buffers = (POOLED_MARK_BYTES / (words * 8).max(1)).clamp(1, rayon::current_num_threads());
    let marks: Vec<Mutex<Vec<u64>>> = (0..buffers).map(|_| Mutex::new(Vec::new())).collect();
    // The calling thread's buffer, made at its first mark. A job of rows
    // holds it to its end and calls into no other job meanwhile, so a
    // thread waits at most for another's job where threads share one.
    let buffer_here = || {
        let i = rayon::current_thread_index().unwrap_or(0) % buffers;
        let mut buffer = marks[i].lock().unwrap_or_else(|e| e.into_inner());
        if buffer.is_empty() {
            buffer.resize(words, 0);
        }
        buffer
    };
    let evaluations = AtomicU64::new(0);
    for &(g, step, _) in steps {
        if let Some(positions) = task.inputs.sources.positions(step.source) {
            // A listed source is a few thousand states at most: one thread.
            let map = task.moves.forward_map(task.space, &task.key, g, step, MapForm::Digits);
            let mut buffer = buffer_here();
            let mut mark = |t: u64| buffer[(t >> 6) as usize] |= 1u64 << (t & 63);
            let applied = mark_words(&map, rw, listed_words(positions), &mut mark);
            evaluations.fetch_add(applied, Ordering::Relaxed);
            continue;
        }
        let map = task.moves.forward_map(task.space, &task.key, g, step, MapForm::Rows);
        let source = task.inputs.sources.get(step.source);
        source
            .par_chunks(rw)
            .enumerate()
            .with_min_len(ROWS_PER_TASK)
            .for_each_init(
                || None,
                |buffer, (row, words)| {
                    if words.iter().all(|&w| w == 0) {
                        return;
                    }
                    let buffer = buffer.get_or_insert_with(buffer_here);
                    let (base, table) = map.row(row as u64);
                    let table = whole(table);
                    let mut applied = 0u64;
                    for (w, &word) in words.iter().enumerate() {
                        applied += for_each_successor(
                            base,
                            |c| table[c],
                            w,
                            word,
                            |t| buffer[(t >> 6) as usize] |= 1u64 << (t & 63),
                        );
                    }
                    evaluations.fetch_add(applied, Ordering::Relaxed);
                },
            );
    }
    let marked: Vec<Vec<u64>> = marks
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .filter(|m| !m.is_empty())
        .collect();
    out.par_chunks_mut(OR_WORDS).enumerate().for_each(|(c, part)| {
        let first = c * OR_WORDS;
        for (w, o) in part.iter_mut().enumerate() {
            *o = marked.iter().fold(0, |word, m| word | m[first + w]);
        }
    });
    evaluations.into_inner()
}

/// Calls `mark` with the successor of each state set in `word`, word `w`
/// of a source row whose map row has base `base` and inner contributions
/// `inner`; returns how many.
#[inline]
fn for_each_successor(base: u64, inner: impl Fn(usize) -> u64, w: usize, word: u64, mut mark: impl FnMut(u64)) -> u64 {
    let mut bits = word;
    while bits != 0 {
        mark(base + inner(w * 64 + bits.trailing_zeros() as usize));
        bits &= bits - 1;
    }
    u64::from(word.count_ones())
}

/// The whole-row table of a map built as [`MapForm::Rows`], which every
/// row of such a map has.
#[inline]
fn whole<'a>(table: RowTable<'a>) -> &'a [u64] {
    table.whole().expect("a map of whole rows")
}
