//! The state space of a job: how states are ranked and cut into shards.
//!
//! Two rankings share the engine, the files and the protocol:
//! - [`Layout`] for permutations of distinct pieces, with blocks that a
//!   move carries whole through one row of the low table (the fast path);
//! - [`Codec`] for identical or oriented pieces (partial puzzles, `.tws`
//!   files), where the kernel ranks and unranks state by state.
//!
//! Either way a level is one bit array per shard, shard arrays are whole
//! 64-bit words, and a task is `(level, shard)`.

use crate::codec::Codec;
use crate::layout::{Layout, StateIndex};

/// States per progress unit of a coded shard (64 words).
pub const CODED_UNIT_STATES: u64 = 4096;

/// How the states of a job are ranked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Space {
    /// Permutations of distinct pieces, in blocks.
    Blocks(Layout),
    /// Identical or oriented pieces, state by state.
    Coded(Codec),
}

impl Space {
    /// Number of shards.
    pub fn shards(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.shards(),
            Space::Coded(c) => c.shards(),
        }
    }

    /// Words of one shard's bit array.
    pub fn shard_words(&self) -> usize {
        match self {
            Space::Blocks(l) => l.shard_words(),
            Space::Coded(c) => c.shard_states().div_ceil(64) as usize,
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

    /// Ranks in the whole space (every reachable state has one).
    pub fn states(&self) -> u128 {
        match self {
            Space::Blocks(l) => l.states(),
            Space::Coded(c) => c.states(),
        }
    }

    /// Most states one shard can hold.
    pub fn shard_capacity(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.blocks_per_shard() * l.block_states() as u64,
            Space::Coded(c) => c.shard_states(),
        }
    }

    /// Pieces (or classes) whose places form the shard key.
    pub fn shard_pieces(&self) -> usize {
        match self {
            Space::Blocks(l) => l.shard_pieces,
            Space::Coded(c) => c.shard_classes,
        }
    }

    /// Units of progress in one task (blocks, or runs of
    /// [`CODED_UNIT_STATES`] states).
    pub fn units_per_shard(&self) -> u64 {
        match self {
            Space::Blocks(l) => l.blocks_per_shard(),
            Space::Coded(c) => c.shard_states().div_ceil(CODED_UNIT_STATES),
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
        }
    }
}
