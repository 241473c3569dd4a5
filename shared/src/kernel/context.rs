//! The read-only machinery a search needs besides the bits: the low table
//! and block transitions of the block layout, or the prepared moves of a
//! coded puzzle. One [`SearchContext`] serves every task of a job in a
//! worker (and the calibration that measures its speed).

use crate::job::{Job, TRANSITION_CACHE_BYTES};
use crate::kernel::blocks::{expand_shard, Frontier, TaskInputs};
use crate::kernel::coded::{expand_coded, held_source_table_bytes, CodedMoves, CodedTask};
use crate::kernel::lowtable::LowTable;
use crate::kernel::occupancy::OccupancyCache;
use crate::kernel::oriented::{expand_oriented, OrientedMoves};
use crate::kernel::reduced::{expand_reduced, ReducedMoves};
use crate::kernel::task::{ShardInputs, TaskStats};
use crate::kernel::transition::{PreparedMoves, ShardTransitions, Transition};
use crate::space::layout::Layout;
use crate::space::Space;
use std::sync::{Arc, Mutex, OnceLock};

/// Shared, read-only machinery of a search.
pub struct SearchContext {
    pub job: Job,
    kernel: KernelData,
}

/// What each ranking's kernel reads besides the bits.
enum KernelData {
    Blocks {
        table: LowTable,
        moves: PreparedMoves,
        /// Transitions of every shard, kept across levels when they fit
        /// [`TRANSITION_CACHE_BYTES`] (rebuilt per shard otherwise).
        cache: Option<Vec<OnceLock<Arc<ShardTransitions>>>>,
        /// The last uncached shard's transitions, whose allocation the next
        /// shard reuses (counted in the worker's tables, see
        /// [`held_transition_bytes`]).
        spare: Mutex<Vec<Transition>>,
        /// Which blocks of the level's source shards hold states.
        occupancy: OccupancyCache,
    },
    Coded(CodedMoves),
    Reduced(ReducedMoves),
    Oriented(OrientedMoves),
}

impl SearchContext {
    /// Builds the low table (block layout) or prepares the moves (coded).
    pub fn new(job: Job) -> SearchContext {
        let kernel = match &job.space {
            Space::Blocks(layout) => KernelData::Blocks {
                table: LowTable::new(layout.low_pieces, layout.even),
                moves: PreparedMoves::new(&job.puzzle),
                cache: (transition_bytes(&job) <= TRANSITION_CACHE_BYTES)
                    .then(|| (0..layout.shards()).map(|_| OnceLock::new()).collect()),
                spare: Mutex::new(Vec::new()),
                occupancy: OccupancyCache::default(),
            },
            Space::Coded(_) => KernelData::Coded(CodedMoves::new(&job.puzzle)),
            Space::Reduced(space) => KernelData::Reduced(ReducedMoves::new(&job.puzzle, space)),
            Space::Oriented(_) => KernelData::Oriented(OrientedMoves::new(&job.puzzle)),
        };
        SearchContext { job, kernel }
    }

    /// Memory of the tables this context holds once every shard has been
    /// seen (the low table and the transitions, cached or one shard's).
    pub fn table_bytes(&self) -> u64 {
        match &self.kernel {
            KernelData::Blocks { table, .. } => match &self.job.space {
                Space::Blocks(layout) => {
                    table.bytes() as u64 + held_transition_bytes(&self.job) + block_occupancy_bytes(layout)
                }
                _ => unreachable!("the kernel data matches the space"),
            },
            KernelData::Coded(_) => match &self.job.space {
                Space::Coded(codec) => held_source_table_bytes(codec, self.job.puzzle.moves.len()),
                _ => unreachable!("the kernel data matches the space"),
            },
            // The fiber-map tables are shared and bounded, not per shard.
            KernelData::Reduced(_) => match &self.job.space {
                Space::Reduced(space) => space.table_bytes(self.job.puzzle.moves.len()),
                _ => unreachable!("the kernel data matches the space"),
            },
            KernelData::Oriented(_) => match &self.job.space {
                Space::Oriented(space) => space.table_bytes(),
                _ => unreachable!("the kernel data matches the space"),
            },
        }
    }

    /// Transitions of `shard` (block layout only).
    fn transitions(&self, layout: &Layout, shard: u64) -> Arc<ShardTransitions> {
        let KernelData::Blocks {
            table,
            moves,
            cache,
            spare,
            ..
        } = &self.kernel
        else {
            unreachable!("transitions belong to the block layout")
        };
        match cache {
            Some(slots) => slots[shard as usize]
                .get_or_init(|| Arc::new(ShardTransitions::build(layout, table, moves, shard)))
                .clone(),
            None => {
                let entries = std::mem::take(&mut *spare.lock().unwrap_or_else(|e| e.into_inner()));
                Arc::new(ShardTransitions::build_into(layout, table, moves, shard, entries))
            }
        }
    }

    /// Keeps the allocation of an uncached shard's transitions for the next
    /// shard (cached ones are still held by the cache and stay there).
    fn recycle(&self, transitions: Arc<ShardTransitions>) {
        if let (KernelData::Blocks { spare, .. }, Ok(done)) = (&self.kernel, Arc::try_unwrap(transitions)) {
            *spare.lock().unwrap_or_else(|e| e.into_inner()) = done.into_entries();
        }
    }

    /// The shards whose `F_d` the task of `shard` reads, `shard` included,
    /// in order and each once (sorted in a vector: a set's nodes, 25
    /// inserts a shard, were 1.5% of a 1-thread 4×4 run to depth 8).
    pub fn source_shards(&self, shard: u64) -> Vec<u64> {
        let mut sources = match (&self.job.space, &self.kernel) {
            (Space::Blocks(layout), KernelData::Blocks { moves, .. }) => moves.source_shards(layout, shard),
            (Space::Coded(codec), KernelData::Coded(moves)) => moves.source_shards(codec, shard),
            (Space::Reduced(space), KernelData::Reduced(moves)) => moves.source_shards(space, shard),
            (Space::Oriented(space), KernelData::Oriented(moves)) => moves.source_shards(space, shard),
            _ => unreachable!("the kernel data matches the space"),
        };
        sources.push(shard);
        sources.sort_unstable();
        sources.dedup();
        sources
    }

    /// A superset of the shards whose tasks read `source`, where the space
    /// can say as cheaply as it works out one shard's sources (the reduced
    /// space; the oriented one when its moves are closed under undoing);
    /// `None` otherwise.
    /// When a level holds few states, the shards that can gain any at the
    /// next level are these of its non-empty shards, and every other task
    /// is known empty without working out its own sources.
    pub fn target_shards(&self, source: u64) -> Option<Vec<u64>> {
        match (&self.job.space, &self.kernel) {
            (Space::Reduced(space), KernelData::Reduced(moves)) => Some(moves.target_shards(space, source)),
            (Space::Oriented(space), KernelData::Oriented(moves)) => moves.target_shards(space, source),
            _ => None,
        }
    }

    /// A new level begins: what the kernel measured on the last one (the
    /// costs of its two directions) no longer applies, nor what it derived
    /// from the last level's shards.
    pub fn begin_level(&self) {
        if let KernelData::Reduced(moves) = &self.kernel {
            moves.costs.reset();
        }
        self.sources_changed();
    }

    /// The source shards' contents changed (a new level, or calibration's
    /// random sources): the coded kernel's occupancy of source shards,
    /// kept for the level, no longer applies.
    pub fn sources_changed(&self) {
        match &self.kernel {
            KernelData::Coded(moves) => moves.begin_level(),
            KernelData::Blocks { occupancy, .. } => occupancy.clear(),
            _ => {}
        }
    }

    /// The most set bits of a source shard whose positions are worth
    /// listing for this kernel (0: it never reads them). Only the reduced
    /// kernel's top-down walk reads lists; see
    /// [`SourceBits::with_counts`](crate::kernel::task::SourceBits::with_counts).
    pub fn position_limit(&self) -> u64 {
        match &self.kernel {
            KernelData::Reduced(_) => crate::kernel::task::position_limit(self.job.space.shard_words()),
            _ => 0,
        }
    }

    /// Computes `F_{d+1}(shard)` into `out`. `on_unit` gets the states found
    /// per unit of progress. Also gives the positions of the states found
    /// when the kernel listed them on the way (while they are at most
    /// `inputs.list_up_to`; the reduced space's top-down pass does): a
    /// caller that stores a sparse shard as its list then need not scan
    /// the words for them.
    pub fn expand(
        &self,
        shard: u64,
        inputs: &ShardInputs,
        out: &mut [u64],
        on_unit: &(dyn Fn(u64) + Sync),
    ) -> (TaskStats, Option<Vec<u32>>) {
        let stats = match (&self.job.space, &self.kernel) {
            (Space::Blocks(layout), KernelData::Blocks { table, occupancy, .. }) => {
                let transitions = self.transitions(layout, shard);
                let frontier = Frontier::new(layout, &inputs.sources, occupancy);
                let task = TaskInputs {
                    layout,
                    table,
                    transitions: &transitions,
                    frontier: &frontier,
                    previous: inputs.previous,
                    current: inputs.current,
                    output_zeroed: inputs.output_zeroed,
                };
                let stats = expand_shard(&task, out, on_unit);
                self.recycle(transitions);
                stats
            }
            (Space::Coded(codec), KernelData::Coded(moves)) => {
                let task = CodedTask {
                    codec,
                    moves,
                    shard,
                    sources: &inputs.sources,
                    previous: inputs.previous,
                    current: inputs.current,
                };
                expand_coded(&task, out, on_unit)
            }
            (Space::Reduced(space), KernelData::Reduced(moves)) => {
                return expand_reduced(space, moves, shard, inputs, out, on_unit);
            }
            (Space::Oriented(space), KernelData::Oriented(moves)) => {
                expand_oriented(space, moves, shard, inputs, out, on_unit)
            }
            _ => unreachable!("the kernel data matches the space"),
        };
        (stats, None)
    }
}

/// Bytes of the transitions of every shard of a block-layout job (0 otherwise).
pub fn transition_bytes(job: &Job) -> u64 {
    match &job.space {
        Space::Blocks(l) => l.blocks() * job.puzzle.moves.len() as u64 * std::mem::size_of::<Transition>() as u64,
        Space::Coded(_) | Space::Reduced(_) | Space::Oriented(_) => 0,
    }
}

/// Bytes of the level's block occupancy a [`SearchContext`] of a block
/// layout holds at most: one bit per block of a level.
pub fn block_occupancy_bytes(layout: &Layout) -> u64 {
    layout.shards() * layout.blocks_per_shard().div_ceil(64) * 8
}

/// Bytes of transitions a [`SearchContext`] holds: every shard's when they
/// fit [`TRANSITION_CACHE_BYTES`], else one shard's (the one in use, then
/// kept for the next).
pub fn held_transition_bytes(job: &Job) -> u64 {
    let all = transition_bytes(job);
    if all <= TRANSITION_CACHE_BYTES {
        all
    } else {
        all / job.space.shards()
    }
}
