//! The coded kernel by blocks and low tables.
//!
//! A rank is `block · W + low` ([`crate::space::codec`]). Under a move `m` every
//! state of target block `b` has its predecessor in one source block
//! `m⁻¹(b)`, at low index `backward(m)[low]`; a source state at low index
//! `x` has its successor at `forward(m)[x]`. So, per target block:
//! - the source blocks are looked up once per move (cached per shard);
//! - bottom-up walks the unseen states and probes `backward(m)` move after
//!   move, dropping a state at its first hit;
//! - top-down walks the set bits of each source block and marks
//!   `forward(m)` of each, then keeps the unseen ones.
//!
//! The direction is chosen per task. Top-down costs one evaluation per
//! frontier state and move, known from the counts; bottom-up costs one per
//! unseen state and move until a hit, and "unseen" includes every state
//! found two or more levels ago and not in `previous`, which never hits.
//! So when top-down is not clearly cheaper, a few blocks are computed
//! bottom-up to estimate its cost, and the whole shard follows the cheaper
//! estimate.
//! Blocks are processed in parallel in groups whose bits are whole words,
//! so no two threads write one word and no atomics are needed.

use super::bitrange::{extract, or_into, popcount_or};
use super::occupied::Occupied;
use super::units::Units;
use super::{CodedTask, State};
use crate::kernel::task::TaskStats;
use crate::space::bits::popcount;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Budget for cached source blocks (all shards together).
pub(super) const BLOCK_CACHE_BYTES: usize = 256 << 20;

/// Source blocks of the shards computed so far, kept across levels while
/// they fit [`BLOCK_CACHE_BYTES`].
#[derive(Default)]
pub(super) struct BlockCache {
    bytes: usize,
    shards: HashMap<u64, Arc<SourceBlocks>>,
}

/// The source blocks of a shard's blocks, `moves` entries per block, and
/// the labels (the low tables' rows, [`crate::space::codec::LowTables`]):
/// one per block, one per block and move when the low tables say so, or
/// none when the codec has one label.
///
/// A label per block and move is packed with its source block into one
/// entry, `source · labels + label` (below the shard's state count, so it
/// fits 32 bits: [`fits_packed`]): on 233 the tables went from 172 to 86 MiB,
/// less than half of one level's 194 MiB of bits.
pub(super) struct SourceBlocks {
    entries: Vec<u32>,
    /// Labels per block (empty when per move or when there is one).
    block_labels: Vec<u32>,
    /// The label count when labels are packed per move, else 1.
    packed: u32,
}

impl SourceBlocks {
    #[inline]
    fn row(&self, block: usize, moves: usize) -> &[u32] {
        &self.entries[block * moves..(block + 1) * moves]
    }

    /// The source block of a row's entry.
    #[inline]
    fn source(&self, entry: u32) -> usize {
        (entry / self.packed) as usize
    }

    /// The label of a row's entry into `block`.
    #[inline]
    fn label(&self, block: usize, entry: u32) -> usize {
        if self.packed > 1 {
            (entry % self.packed) as usize
        } else {
            self.block_labels.get(block).map_or(0, |&l| l as usize)
        }
    }

    fn bytes(&self) -> usize {
        (self.entries.len() + self.block_labels.len()) * 4
    }
}

/// Whether a shard's table entries fit 32 bits, [`NO_SOURCE`] kept free.
pub(super) fn fits_packed(shard_blocks: u64, labels_per_move: Option<u64>) -> bool {
    shard_blocks.saturating_mul(labels_per_move.unwrap_or(1)) < NO_SOURCE as u64
}

/// Marks a move that is illegal for every state of a block.
const NO_SOURCE: u32 = u32::MAX;

/// Bits per parallel group, at least (a group is whole blocks and whole words).
const GROUP_BITS: usize = 1 << 14;

/// Blocks computed bottom-up (and dropped) to estimate its cost. Sampling
/// whole groups, whose results were kept, cost up to 60% of a level's
/// top-down work on the corners: a group is 64 blocks there (2187-bit
/// blocks align with words only every 64), and most unseen states of an
/// early level probe every move without a hit.
const SAMPLE_BLOCKS: usize = 32;

/// Computes the task by blocks (see the module doc).
pub(super) fn expand(task: &CodedTask, sources: &[u64], out: &mut [u64], on_unit: &(dyn Fn(u64) + Sync)) -> TaskStats {
    let w = task.codec.low().states();
    // Smallest number of blocks whose bits are whole words, times enough
    // to make a group worth scheduling.
    let aligned = 64 / gcd(w, 64);
    let group_blocks = aligned * GROUP_BITS.div_ceil(aligned * w);
    let group_words = group_blocks * w / 64;
    let occupied = Occupied::new(task, sources);
    let top_down_cost = occupied.frontier_evaluations();
    let pass = Pass {
        task,
        sources,
        table: source_blocks(task, sources),
        occupied,
        group_blocks,
        group_words,
        units: Units::new(out.len(), on_unit),
    };
    let unseen_in = |words: std::ops::Range<usize>| -> u64 {
        let seen = popcount_or(&task.previous[words.clone()], &task.current[words.clone()]);
        (words.len() as u64 * 64).min(task.codec.shard_states() - words.start as u64 * 64) - seen
    };
    let unseen = unseen_in(0..out.len());
    let mut groups: Vec<(usize, &mut [u64])> = out.chunks_mut(group_words).enumerate().collect();
    let blocks = task.codec.shard_blocks() as usize;
    let mut sampled = 0u64;
    // Bottom-up costs at least one evaluation per unseen state.
    let bottom_up = if unseen == 0 || top_down_cost <= unseen {
        false
    } else if blocks < 4 * SAMPLE_BLOCKS {
        unseen * task.moves.len() as u64 <= 2 * top_down_cost
    } else {
        // Estimated bottom-up cost of the whole shard against top-down's.
        let (sampled_unseen, sampled_cost) = pass.sample_bottom_up(SAMPLE_BLOCKS);
        sampled = sampled_cost;
        sampled_cost as u128 * unseen as u128 <= top_down_cost as u128 * sampled_unseen.max(1) as u128
    };
    let mut stats = pass.run(&mut groups, bottom_up);
    stats.evaluations += sampled;
    stats.cheaper_bound = top_down_cost.min(unseen * task.moves.len() as u64);
    stats.found = pass.units.finish();
    stats
}

/// What every group of a task shares.
struct Pass<'a> {
    task: &'a CodedTask<'a>,
    sources: &'a [u64],
    table: Arc<SourceBlocks>,
    occupied: Occupied,
    group_blocks: usize,
    group_words: usize,
    units: Units<'a>,
}

impl Pass<'_> {
    /// Bottom-up over `count` evenly spread blocks, results dropped: the
    /// unseen states there and the evaluations it took.
    fn sample_bottom_up(&self, count: usize) -> (u64, u64) {
        let w = self.task.codec.low().states();
        let blocks = self.task.codec.shard_blocks() as usize;
        let moves = self.task.moves.len();
        (0..count)
            .into_par_iter()
            .map(|i| {
                let b = (2 * i + 1) * blocks / (2 * count);
                let mut scratch = Scratch::new(w, moves);
                let row = self.table.row(b, moves);
                let live = scratch.select_sources(&self.occupied, &self.table, row);
                if !scratch.load_unseen(self.task, b * w) {
                    return (0, 0);
                }
                let unseen = popcount(&scratch.unseen);
                let cost = if live {
                    scratch.bottom_up(self.task, self.sources, &self.table, b)
                } else {
                    0
                };
                (unseen, cost)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }

    /// Computes `groups` in one direction.
    fn run(&self, groups: &mut [(usize, &mut [u64])], bottom_up: bool) -> TaskStats {
        let w = self.task.codec.low().states();
        let blocks = self.task.codec.shard_blocks() as usize;
        let moves = self.task.moves.len();
        let evaluations = AtomicU64::new(0);
        groups.par_iter_mut().for_each(|(g, chunk)| {
            chunk.fill(0);
            let mut scratch = Scratch::new(w, moves);
            let mut count = 0u64;
            let first = *g * self.group_blocks;
            for b in first..(first + self.group_blocks).min(blocks) {
                let row = self.table.row(b, moves);
                let live = scratch.select_sources(&self.occupied, &self.table, row);
                if live && scratch.load_unseen(self.task, b * w) {
                    count += if bottom_up {
                        scratch.bottom_up(self.task, self.sources, &self.table, b)
                    } else {
                        scratch.top_down(self.task, self.sources, &self.table, b)
                    };
                    or_into(chunk, (b - first) * w, w, &scratch.found);
                }
            }
            evaluations.fetch_add(count, Ordering::Relaxed);
            self.units.done(*g * self.group_words, chunk);
        });
        let processed = groups
            .iter()
            .map(|(g, _)| (blocks - g * self.group_blocks).min(self.group_blocks));
        let processed = processed.sum::<usize>() as u64;
        TaskStats {
            evaluations: evaluations.into_inner(),
            top_down_blocks: if bottom_up { 0 } else { processed },
            bottom_up_blocks: if bottom_up { processed } else { 0 },
            ..TaskStats::default()
        }
    }
}

/// Per-thread buffers for one block at a time.
struct Scratch {
    w: usize,
    moves: usize,
    /// Unseen states of the target block, then those still without a predecessor.
    unseen: Vec<u64>,
    /// New states of the target block.
    found: Vec<u64>,
    /// Moves whose source block is legal and holds frontier states.
    live: Vec<bool>,
}

impl Scratch {
    fn new(w: usize, moves: usize) -> Scratch {
        let words = w.div_ceil(64);
        Scratch {
            w,
            moves,
            unseen: vec![0; words],
            found: vec![0; words],
            live: vec![false; moves],
        }
    }

    /// Marks the moves whose source block holds frontier states; false
    /// when there are none.
    fn select_sources(&mut self, occupied: &Occupied, table: &SourceBlocks, row: &[u32]) -> bool {
        let mut any = false;
        for (m, (live, &entry)) in self.live.iter_mut().zip(row).enumerate() {
            *live = entry != NO_SOURCE && occupied.has(m, table.source(entry));
            any |= *live;
        }
        any
    }

    /// Loads the unseen states of the target block at shard bit `at`;
    /// false when there are none.
    fn load_unseen(&mut self, task: &CodedTask, at: usize) -> bool {
        extract(task.previous, at, self.w, &mut self.unseen);
        extract(task.current, at, self.w, &mut self.found);
        let mut any = 0u64;
        for (u, &seen) in self.unseen.iter_mut().zip(&self.found) {
            *u = !(*u | seen);
            any |= *u;
        }
        if self.w % 64 != 0 {
            let last = self.unseen.len() - 1;
            self.unseen[last] &= (1u64 << (self.w % 64)) - 1;
            any = self.unseen.iter().fold(0, |a, &u| a | u);
        }
        self.found.fill(0);
        any != 0
    }

    /// New states of the block into `self.found`, by probing predecessors.
    fn bottom_up(&mut self, task: &CodedTask, sources: &[u64], table: &SourceBlocks, block: usize) -> u64 {
        let mut evaluations = 0u64;
        let row = table.row(block, self.moves);
        for m in (0..self.moves).filter(|&m| self.live[m]) {
            let back = task.codec.low().backward(m, table.label(block, row[m]));
            let src = task.frontier_of(sources[m]);
            let base = table.source(row[m]) * self.w;
            let mut left = 0u64;
            for (i, (rem, found)) in self.unseen.iter_mut().zip(self.found.iter_mut()).enumerate() {
                let mut bits = *rem;
                let mut hit = 0u64;
                while bits != 0 {
                    let b = bits.trailing_zeros();
                    let x = base + back[i * 64 + b as usize] as usize;
                    hit |= (src[x / 64] >> (x % 64) & 1) << b;
                    bits &= bits - 1;
                    evaluations += 1;
                }
                *rem &= !hit;
                *found |= hit;
                left |= *rem;
            }
            if left == 0 {
                break;
            }
        }
        evaluations
    }

    /// New states of the block into `self.found`, by marking successors.
    fn top_down(&mut self, task: &CodedTask, sources: &[u64], table: &SourceBlocks, block: usize) -> u64 {
        let mut evaluations = 0u64;
        let row = table.row(block, self.moves);
        for m in (0..self.moves).filter(|&m| self.live[m]) {
            let fwd = task.codec.low().forward(m, table.label(block, row[m]));
            let src = task.frontier_of(sources[m]);
            let base = table.source(row[m]) * self.w;
            let (first, last) = (base / 64, (base + self.w - 1) / 64);
            for (i, &word) in src[first..=last].iter().enumerate() {
                let mut bits = word;
                if i == 0 {
                    bits &= u64::MAX << (base % 64);
                }
                if first + i == last {
                    bits &= u64::MAX >> (63 - (base + self.w - 1) % 64);
                }
                while bits != 0 {
                    let x = (first + i) * 64 + bits.trailing_zeros() as usize - base;
                    let y = fwd[x] as usize;
                    self.found[y / 64] |= 1 << (y % 64);
                    bits &= bits - 1;
                    evaluations += 1;
                }
            }
        }
        for (f, &u) in self.found.iter_mut().zip(&self.unseen) {
            *f &= u;
        }
        evaluations
    }
}

/// The source block (index inside its source shard) of every block of the
/// task's shard under every move, `moves` entries per block, from the
/// cache when this shard's are there.
fn source_blocks(task: &CodedTask, sources: &[u64]) -> Arc<SourceBlocks> {
    let cache = &task.moves.block_cache;
    if let Some(table) = cache.lock().expect("cache lock").shards.get(&task.shard) {
        return table.clone();
    }
    let table = Arc::new(build_source_blocks(task, sources));
    let bytes = table.bytes();
    let mut cache = cache.lock().expect("cache lock");
    if cache.bytes + bytes <= BLOCK_CACHE_BYTES {
        cache.bytes += bytes;
        cache.shards.insert(task.shard, table.clone());
    }
    table
}

fn build_source_blocks(task: &CodedTask, sources: &[u64]) -> SourceBlocks {
    let codec = task.codec;
    let blocks = codec.shard_blocks();
    let moves = task.moves.len();
    // Labels of a block and a move are the low index of the block's first
    // state moved back (`codec/tail.rs`), packed with the source block; a
    // block's own label comes with the block.
    let per_move = codec.low().labels_per_move();
    let packed = if per_move { codec.low().labels() as u32 } else { 1 };
    assert!(
        fits_packed(blocks, per_move.then_some(u64::from(packed))),
        "a shard of {blocks} blocks is too large for the table kernel"
    );
    let block_labels = !per_move && codec.low().labels() > 1;
    let mut entries = vec![NO_SOURCE; blocks as usize * moves];
    let mut labels = vec![0u32; if block_labels { blocks as usize } else { 0 }];
    const CHUNK_BLOCKS: usize = 256;
    let mut label_chunks: Vec<&mut [u32]> = if labels.is_empty() {
        (0..entries.len().div_ceil(moves * CHUNK_BLOCKS))
            .map(|_| &mut [][..])
            .collect()
    } else {
        labels.chunks_mut(CHUNK_BLOCKS).collect()
    };
    entries
        .par_chunks_mut(moves * CHUNK_BLOCKS)
        .zip(label_chunks.par_iter_mut())
        .enumerate()
        .for_each(|(chunk, (rows, chunk_labels))| {
            let (mut y, mut x) = (State::new(), State::new());
            for (i, row) in rows.chunks_mut(moves).enumerate() {
                let block = task.shard * blocks + (chunk * CHUNK_BLOCKS + i) as u64;
                if per_move {
                    // The group ranking: no guards, every move has a source.
                    let inverses = task.moves.inverse.iter().map(|inv| (&inv.to[..], &inv.twist[..]));
                    let done = codec.sources_and_labels(block, inverses, |m, src, label| {
                        debug_assert_eq!(src / blocks, sources[m]);
                        debug_assert!((label as u32) < packed);
                        row[m] = (src - sources[m] * blocks) as u32 * packed + label as u32;
                    });
                    assert!(done, "labels per move come with their sources");
                    continue;
                }
                let label = codec.unrank_block_label(block, &mut y.cells, &mut y.twists);
                if block_labels {
                    chunk_labels[i] = label as u32;
                }
                for ((entry, inv), &shard) in row.iter_mut().zip(&task.moves.inverse).zip(sources) {
                    task.moves.apply(inv, &y, &mut x);
                    if !x.allows(inv) {
                        continue;
                    }
                    let src = codec.rank_block(&x.cells, &x.twists, &mut x.masks);
                    debug_assert_eq!(src / blocks, shard);
                    *entry = (src - shard * blocks) as u32;
                }
            }
        });
    SourceBlocks {
        entries,
        block_labels: labels,
        packed,
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
