//! The BFS kernel: one task `(level d, target shard B)` computes
//! `F_{d+1}(B) = ⋃_m m(F_d(m⁻¹B)) \ (F_{d-1}(B) ∪ F_d(B))`
//! from immutable inputs, block by block, in parallel.
//!
//! Each block chooses its direction, as direction-optimising BFS does:
//! top-down walks the set bits of the source blocks and marks their images;
//! bottom-up walks the still-unseen states of the target block and probes
//! their predecessors, dropping a state at its first hit. Top-down costs one
//! lookup per source state, bottom-up at most one per unseen state and move,
//! so the cheaper estimate wins.

use crate::kernel::lowtable::LowTable;
use crate::kernel::occupancy::{has, occupied_word_blocks, OccupancyCache};
use crate::kernel::task::SourceBits;
pub use crate::kernel::task::TaskStats;
use crate::kernel::transition::{ShardTransitions, Transition, NO_SOURCE};
use crate::space::layout::{Layout, BLOCKS_PER_UNIT};
use rayon::prelude::*;
use std::sync::Arc;

/// Largest block in words (`7! = 5040` states → 79 words).
pub const MAX_BLOCK_WORDS: usize = 80;

/// The frontier `F_d` as the block kernel sees it: the source shards of one
/// target shard, addressed by global block number, with which of their
/// blocks hold states.
pub struct Frontier<'a> {
    sources: &'a SourceBits<'a>,
    /// One bit per block of each source, in the sources' shard order.
    occupied: Vec<Arc<Vec<u64>>>,
    /// The layout's blocks per shard and words per block, worked out once:
    /// the layout computes them from factorials in 128 bits, which had
    /// been a tenth of the kernel's time on small blocks (60 states).
    blocks_per_shard: u64,
    block_words: usize,
}

impl<'a> Frontier<'a> {
    /// Wraps the source shards of one task; which of their blocks hold
    /// states comes from `occupancy` (the level's, worked out there once
    /// per shard).
    pub fn new(layout: &Layout, sources: &'a SourceBits<'a>, occupancy: &OccupancyCache) -> Frontier<'a> {
        let block_words = layout.block_words();
        let blocks = layout.blocks_per_shard() as usize;
        // Empty sources (most of them on the first levels) are not read,
        // and share one map.
        let empty = Arc::new(vec![0; blocks.div_ceil(64)]);
        let occupied = sources
            .iter()
            .map(|(shard, words, count)| {
                if count == 0 {
                    return empty.clone();
                }
                occupancy.get(shard, count, || occupied_word_blocks(words, block_words))
            })
            .collect();
        Frontier {
            sources,
            occupied,
            blocks_per_shard: layout.blocks_per_shard(),
            block_words,
        }
    }

    /// The words of one block.
    #[inline]
    pub fn block(&self, block: u64) -> &'a [u64] {
        let words = self.sources.get(block / self.blocks_per_shard);
        let at = (block % self.blocks_per_shard) as usize * self.block_words;
        &words[at..at + self.block_words]
    }

    /// The words of one block when it holds a state; `None`, unread, when
    /// it holds none.
    #[inline]
    pub fn occupied_block(&self, block: u64) -> Option<&'a [u64]> {
        let source = self.sources.position(block / self.blocks_per_shard);
        let within = (block % self.blocks_per_shard) as usize;
        if !has(&self.occupied[source], within) {
            return None;
        }
        let at = within * self.block_words;
        Some(&self.sources.words_at(source)[at..at + self.block_words])
    }
}

/// Everything a task reads.
pub struct TaskInputs<'a> {
    pub layout: &'a Layout,
    pub table: &'a LowTable,
    pub transitions: &'a ShardTransitions,
    /// `F_d` of every source shard.
    pub frontier: &'a Frontier<'a>,
    /// `F_{d-1}(B)` (all zero at level 0).
    pub previous: &'a [u64],
    /// `F_d(B)`.
    pub current: &'a [u64],
    /// True when the output arrives all zero (see
    /// [`ShardInputs::output_zeroed`](crate::kernel::task::ShardInputs::output_zeroed)):
    /// blocks that gain nothing are then not written at all.
    pub output_zeroed: bool,
}

/// Computes `F_{d+1}(B)` into `out` (fully overwritten). `on_unit` is called
/// after each unit of [`BLOCKS_PER_UNIT`] blocks with the states it found,
/// for progress reporting.
pub fn expand_shard(inputs: &TaskInputs, out: &mut [u64], on_unit: &(dyn Fn(u64) + Sync)) -> TaskStats {
    let bw = inputs.layout.block_words();
    assert!(bw <= MAX_BLOCK_WORDS);
    assert_eq!(out.len(), inputs.layout.shard_words());
    out.par_chunks_mut(bw * BLOCKS_PER_UNIT)
        .enumerate()
        .map(|(u, out_unit)| {
            let mut stats = TaskStats::default();
            for (j, out_block) in out_unit.chunks_mut(bw).enumerate() {
                let i = u * BLOCKS_PER_UNIT + j;
                let at = i * bw;
                stats = stats.plus(expand_block(
                    inputs,
                    inputs.transitions.of_block(i),
                    &inputs.previous[at..at + bw],
                    &inputs.current[at..at + bw],
                    out_block,
                ));
            }
            on_unit(stats.found);
            stats
        })
        .reduce(TaskStats::default, TaskStats::plus)
}

/// Mask of valid bits in word `w` of a block of `states` bits.
#[inline]
fn valid_mask(w: usize, words: usize, states: usize) -> u64 {
    let tail = states % 64;
    if w + 1 == words && tail != 0 {
        (1u64 << tail) - 1
    } else {
        u64::MAX
    }
}

fn expand_block(inputs: &TaskInputs, trans: &[Transition], prev: &[u64], cur: &[u64], out: &mut [u64]) -> TaskStats {
    let bw = out.len();
    // A buffer known to be zero is not cleared again: on a sparse level
    // most blocks gain nothing, and their pages are then never touched
    // (the 2×6 unreduced's first levels wrote 60 MB of zeros a level, a
    // first touch of fresh memory for each of its first levels).
    if !inputs.output_zeroed {
        out.fill(0);
    }
    // Whether any source block holds a state, from the level's occupancy
    // alone: on a sparse level most blocks have none, and then their seen
    // words are not read at all (the 2×6 unreduced's first levels read
    // two shard-sized arrays a shard for nothing).
    let fed = trans
        .iter()
        .any(|t| t.src_block != NO_SOURCE && inputs.frontier.occupied_block(t.src_block).is_some());
    if !fed {
        return TaskStats::default();
    }
    let states = inputs.layout.block_states();
    let mut unseen = [0u64; MAX_BLOCK_WORDS];
    let mut unseen_count = 0u64;
    for w in 0..bw {
        unseen[w] = !(prev[w] | cur[w]) & valid_mask(w, bw, states);
        unseen_count += unseen[w].count_ones() as u64;
    }
    if unseen_count == 0 {
        return TaskStats::default();
    }
    let mut sources = 0u64;
    let mut legal = 0u64;
    // Moves whose source block holds no state (from move 128 on, every
    // move counts as holding some): both directions skip them.
    let mut empty = 0u128;
    for (m, t) in trans.iter().enumerate().filter(|(_, t)| t.src_block != NO_SOURCE) {
        let count = inputs
            .frontier
            .occupied_block(t.src_block)
            .map_or(0, crate::space::bits::popcount);
        if count == 0 && m < 128 {
            empty |= 1 << m;
        }
        sources += count;
        legal += 1;
    }
    // Bottom-up probes at most `legal` predecessors per unseen state and
    // usually far fewer, since a found state stops probing; weigh it at half.
    let mut stats = if unseen_count * legal < 2 * sources {
        bottom_up(inputs, trans, empty, &mut unseen[..bw], out)
    } else {
        top_down(inputs, trans, empty, &unseen[..bw], out, sources)
    };
    stats.found = crate::space::bits::popcount(out);
    stats.cheaper_bound = sources.min(unseen_count * legal);
    stats
}

/// Marks the images of the source blocks' states; `empty` has bit `m` set
/// when move `m`'s source block holds none.
fn top_down(
    inputs: &TaskInputs,
    trans: &[Transition],
    empty: u128,
    unseen: &[u64],
    out: &mut [u64],
    sources: u64,
) -> TaskStats {
    for t in holding_states(trans, empty) {
        let src = inputs.frontier.block(t.src_block);
        let row = inputs.table.row(t.top_down_row);
        for (w, &word) in src.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let x = w * 64 + bits.trailing_zeros() as usize;
                let y = row[x] as usize;
                out[y >> 6] |= 1u64 << (y & 63);
                bits &= bits - 1;
            }
        }
    }
    for (o, &u) in out.iter_mut().zip(unseen) {
        *o &= u;
    }
    TaskStats {
        evaluations: sources,
        top_down_blocks: 1,
        ..TaskStats::default()
    }
}

/// The transitions with a source block holding states; `empty` has bit `m`
/// set when move `m`'s source block holds none.
fn holding_states(trans: &[Transition], empty: u128) -> impl Iterator<Item = &Transition> {
    trans
        .iter()
        .enumerate()
        .filter(move |&(m, t)| t.src_block != NO_SOURCE && (m >= 128 || empty >> m & 1 == 0))
        .map(|(_, t)| t)
}

/// Probes the predecessors of the unseen states; `empty` as in [`top_down`].
fn bottom_up(
    inputs: &TaskInputs,
    trans: &[Transition],
    empty: u128,
    remaining: &mut [u64],
    out: &mut [u64],
) -> TaskStats {
    let mut evaluations = 0u64;
    for t in holding_states(trans, empty) {
        let src = inputs.frontier.block(t.src_block);
        let row = inputs.table.row(t.bottom_up_row);
        let mut left = 0u64;
        for (w, rem) in remaining.iter_mut().enumerate() {
            let mut bits = *rem;
            evaluations += bits.count_ones() as u64;
            let mut hit = 0u64;
            while bits != 0 {
                let b = bits.trailing_zeros();
                let x = row[w * 64 + b as usize] as usize;
                hit |= ((src[x >> 6] >> (x & 63)) & 1) << b;
                bits &= bits - 1;
            }
            *rem &= !hit;
            out[w] |= hit;
            left |= *rem;
        }
        if left == 0 {
            break;
        }
    }
    TaskStats {
        evaluations,
        bottom_up_blocks: 1,
        ..TaskStats::default()
    }
}
