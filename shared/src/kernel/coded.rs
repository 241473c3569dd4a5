//! The BFS kernel for coded states (identical or oriented pieces): the same
//! task `(level d, target shard B)` as [`crate::kernel::blocks`].
//!
//! Under a move `m`, the predecessors of every state of `B` lie in one
//! source shard (the key classes' slots mapped back by `m⁻¹`). Two ways to
//! compute the task, chosen by the codec's low part (see [`crate::space::codec`]):
//! - `blocks` when the low part is large: a move maps a whole block to one
//!   block and its low indices through one table row, so the inner loop is
//!   table lookups and bit tests, as in the block layout's kernel;
//! - `states` otherwise (tracked pieces without orientation): state by
//!   state, ranking and unranking in the inner loop.
//!
//! Every read of `F_d` goes through `CodedTask::frontier_of`.

mod bitrange;
mod blocks;
mod occupied;
mod states;
mod units;

use crate::kernel::occupancy::OccupancyCache;
use crate::kernel::task::{SourceBits, TaskStats};
use crate::puzzle::{Move, Puzzle};
use crate::space::codec::{Codec, MAX_CODED_SLOTS};
use std::sync::Mutex;

/// Smallest low part for which the table kernel beats the state kernel:
/// with fewer low states per block, its per-block work (one source block
/// per move, for every block of the shard whatever the frontier) dominates.
const MIN_TABLE_LOW_STATES: usize = 64;

/// One move in the form the kernel applies it.
struct CodedMove {
    /// Slot the content of each slot goes to.
    to: Vec<u8>,
    /// Twist added to the content leaving each slot.
    twist: Vec<u8>,
    /// Legal only while this class sits in this slot.
    guard: Option<(u8, u8)>,
}

/// The moves of a coded puzzle and their inverses, in the puzzle's order
/// (the codec's low tables are indexed the same way).
pub struct CodedMoves {
    modulus: Vec<u8>,
    oriented: bool,
    forward: Vec<CodedMove>,
    inverse: Vec<CodedMove>,
    /// Source block of every (block, move) pair of a shard, per shard, kept
    /// across levels while they fit [`BLOCK_CACHE_BYTES`].
    block_cache: Mutex<blocks::BlockCache>,
    /// Which blocks of each source shard hold frontier states, for the
    /// level being computed (cleared by [`CodedMoves::begin_level`]).
    occupancy: OccupancyCache,
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
            block_cache: Mutex::new(blocks::BlockCache::default()),
            occupancy: OccupancyCache::default(),
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

    /// A new level begins: the occupancy of the last level's shards no
    /// longer applies. Every caller that computes tasks of more than one
    /// level calls this between them.
    pub fn begin_level(&self) {
        self.occupancy.clear();
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

    /// Writes `mv(state)` into `out`.
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
    /// The words of `F_d` of a source shard: the only access to source bits.
    fn frontier_of(&self, shard: u64) -> &[u64] {
        self.sources.get(shard)
    }
}

/// True when the task kernel works by blocks (see [`expand_coded`]).
fn uses_block_tables(codec: &Codec) -> bool {
    // The group ranking's rank is a chain walk, dearer than the class
    // digits' popcounts, so its blocks pay at any size (master pyramorphix,
    // W = 8: 1.3 s against 3.9 s state by state, docs/history.md).
    (codec.low().states() >= MIN_TABLE_LOW_STATES || codec.is_group_ranked())
        && blocks::fits_packed(codec.shard_blocks(), labels_per_move(codec))
}

/// The label count packed into each table entry, when labels go per move.
fn labels_per_move(codec: &Codec) -> Option<u64> {
    codec.low().labels_per_move().then(|| codec.low().labels() as u64)
}

/// Memory the source-block tables of a coded job take at most: every
/// shard's (4 bytes per block and move, its label packed in when it has
/// one per move, and 4 per block when it has one per block) while they fit
/// the cache, then the cache and the table of the shard being computed;
/// and the level's occupied source blocks (one bit per block, kept for the
/// level: `1/W` of a level's bits). The worker counts them in its budget.
pub fn held_source_table_bytes(codec: &Codec, moves: usize) -> u64 {
    if !uses_block_tables(codec) {
        return 0;
    }
    let block_labels = labels_per_move(codec).is_none() && codec.low().labels() > 1;
    let per_shard = codec.shard_blocks() * (moves as u64 + u64::from(block_labels)) * 4;
    let occupancy = codec.shards() * codec.shard_blocks().div_ceil(64) * 8;
    (per_shard * codec.shards()).min(blocks::BLOCK_CACHE_BYTES as u64 + per_shard) + occupancy
}

/// Computes `F_{d+1}(B)` into `out` (fully overwritten); `on_unit` gets the
/// states found per unit of [`crate::space::CODED_UNIT_STATES`] (as many
/// calls as the shard has units).
pub fn expand_coded(task: &CodedTask, out: &mut [u64], on_unit: &(dyn Fn(u64) + Sync)) -> TaskStats {
    let sources = task.moves.source_shards(task.codec, task.shard);
    if uses_block_tables(task.codec) {
        blocks::expand(task, &sources, out, on_unit)
    } else {
        states::expand(task, &sources, out, on_unit)
    }
}
