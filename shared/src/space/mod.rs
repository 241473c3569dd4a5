//! The state space of a job: how states are ranked and cut into shards.
//!
//! Three rankings share the engine, the files and the protocol:
//! - [`Layout`] for permutations of distinct pieces, with blocks that a
//!   move carries whole through one row of the low table (the fast path);
//! - [`Codec`] for identical or oriented pieces (partial puzzles, `.tws`
//!   files), and for groups far smaller than the permutations of their
//!   pieces (ranked by a stabiliser chain, `codec/grouped.rs`);
//! - [`ReducedSpace`] for distinct pieces reduced by the puzzle's
//!   symmetries: a shard is a class of keys, and each stored bit stands for
//!   a known number of states ([`Space::weight`]);
//! - [`OrientedSpace`] for distinct oriented pieces reduced by symmetries
//!   of slots and twists: a block of twists per class of arrangements.
//!
//! Either way a level is one bit array per shard ([`bits`]) and shard arrays
//! are whole 64-bit words; the job groups shards into chunks, and a task is
//! `(level, chunk)`.

pub mod bits;
pub mod codec;
pub mod colex;
pub mod layout;
pub mod oriented;
pub mod rank;
pub mod reduced;

use crate::space::codec::Codec;
use crate::space::layout::{Layout, StateIndex};
use crate::space::oriented::OrientedSpace;
use crate::space::reduced::ReducedSpace;

/// States per progress unit of a coded shard (64 words).
pub const CODED_UNIT_STATES: u64 = 4096;

/// How the states of a job are ranked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Space {
    /// Permutations of distinct pieces, in blocks.
    Blocks(Layout),
    /// Identical or oriented pieces, state by state.
    Coded(Codec),
    /// Distinct pieces, one shard per class of keys under the symmetries.
    Reduced(Box<ReducedSpace>),
    /// Distinct oriented pieces, one block of twists per class of
    /// arrangements under the symmetries.
    Oriented(Box<OrientedSpace>),
}

impl Space {
    /// Number of shards.
    pub fn shards(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.shards(),
            Space::Coded(c) => c.shards(),
            Space::Reduced(r) => r.shards(),
            Space::Oriented(o) => o.shards(),
        }
    }

    /// Words of one shard's bit array.
    pub fn shard_words(&self) -> usize {
        match self {
            Space::Blocks(l) => l.shard_words(),
            Space::Coded(c) => c.shard_states().div_ceil(64) as usize,
            Space::Reduced(r) => r.shard_words(),
            Space::Oriented(o) => o.shard_words(),
        }
    }

    /// Bytes of one shard's bit array.
    pub fn shard_bytes(&self) -> u64 {
        self.shard_words() as u64 * 8
    }

    /// Bytes of one whole level (all shards).
    pub fn level_bytes(&self) -> u128 {
        self.shard_bytes() as u128 * self.shards() as u128
    }

    /// Bits of one level (every reachable state, or class of states, has one).
    pub fn states(&self) -> u128 {
        match self {
            Space::Blocks(l) => l.states(),
            Space::Coded(c) => c.states(),
            Space::Reduced(r) => r.states(),
            Space::Oriented(o) => o.states(),
        }
    }

    /// Most states one shard can hold.
    pub fn shard_capacity(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.blocks_per_shard() * l.block_states() as u64,
            Space::Coded(c) => c.shard_states(),
            Space::Reduced(r) => r.shard_capacity(),
            Space::Oriented(o) => o.shard_words() as u64 * 64,
        }
    }

    /// Pieces (or classes) whose places form the shard key.
    pub fn shard_pieces(&self) -> usize {
        match self {
            Space::Blocks(l) => l.shard_pieces,
            Space::Coded(c) => c.shard_classes,
            Space::Reduced(_) | Space::Oriented(_) => 0,
        }
    }

    /// Units of progress in one shard (runs of
    /// [`layout::BLOCKS_PER_UNIT`] blocks, runs of [`CODED_UNIT_STATES`]
    /// states, or a whole reduced shard).
    pub fn units_per_shard(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.units_per_shard(),
            Space::Coded(c) => c.shard_states().div_ceil(CODED_UNIT_STATES),
            // A shard: reduced shards are small (40.5 KiB on the 4×4), and a
            // progress call per row (576 per shard there) was 16% of a
            // worker's time on the 4×4's sparse levels.
            Space::Reduced(_) | Space::Oriented(_) => 1,
        }
    }

    /// Shard, word and bit of a state (position or coded notation).
    pub fn locate(&self, state: &[u8]) -> (u64, usize, u32) {
        match self {
            Space::Blocks(l) => l.bit_position(l.index_of(state)),
            Space::Coded(c) => {
                let n = c.slots();
                let (shard, index) = c.split(c.rank(&state[..n], &state[n..2 * n]));
                (shard, (index / 64) as usize, (index % 64) as u32)
            }
            Space::Reduced(r) => r.locate(state),
            Space::Oriented(o) => o.locate(state),
        }
    }

    /// The state at bit `bit` of shard `shard`'s array.
    pub fn state_at(&self, shard: u64, bit: usize) -> Vec<u8> {
        match self {
            Space::Blocks(l) => {
                let bw = l.block_words();
                let block = shard * l.blocks_per_shard() + (bit / (bw * 64)) as u64;
                l.state_at(StateIndex {
                    block,
                    low: bit % (bw * 64),
                })
            }
            Space::Coded(c) => {
                let n = c.slots();
                let mut state = vec![0u8; 2 * n];
                let (cells, twists) = state.split_at_mut(n);
                c.unrank(shard * c.shard_states() + bit as u64, cells, twists);
                state
            }
            Space::Reduced(r) => r.state_at(shard, bit),
            Space::Oriented(o) => o.state_at(shard, bit),
        }
    }

    /// States each stored bit of `shard` stands for (1 without reduction).
    pub fn weight(&self, shard: u64) -> u64 {
        match self {
            Space::Reduced(r) => r.weight(shard),
            Space::Oriented(o) => o.weight(shard),
            _ => 1,
        }
    }

    /// Classes of states under the symmetries among the `popcount` set
    /// bits `words` of `shard` (`popcount` itself without reduction).
    pub fn classes_in(&self, shard: u64, words: &[u64], popcount: u64) -> u64 {
        match self {
            Space::Reduced(r) => r.classes_in(shard, words, popcount),
            Space::Oriented(o) => o.classes_in(shard, words),
            _ => popcount,
        }
    }

    /// True when a stored bit of `shard` may share its class of symmetric
    /// states with other bits of the shard (its key or arrangement has a
    /// symmetry of its own).
    pub fn stores_classes_more_than_once(&self, shard: u64) -> bool {
        match self {
            Space::Reduced(r) => r.keys().stabilizer(shard as usize) > 1,
            Space::Oriented(o) => o.weight(shard) < o.order() as u64,
            _ => false,
        }
    }

    /// The class of symmetric states of `state`, ascending (the state
    /// alone without reduction).
    pub fn class_of(&self, state: &[u8]) -> Vec<Vec<u8>> {
        match self {
            Space::Reduced(r) => r.symmetries.orbit(state),
            Space::Oriented(o) => o.symmetries.orbit(state),
            _ => vec![state.to_vec()],
        }
    }

    /// The least state of the class of symmetric states of `state`.
    pub fn least_of_class(&self, state: &[u8]) -> Vec<u8> {
        self.class_of(state).swap_remove(0)
    }

    /// Order of the symmetry group reduced by (1 without reduction).
    pub fn symmetry_order(&self) -> usize {
        match self {
            Space::Reduced(r) => r.symmetries.order(),
            Space::Oriented(o) => o.order(),
            _ => 1,
        }
    }
}
