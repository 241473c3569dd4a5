//! Shared library of cayley: everything the coordinator and the workers both
//! need, in data-path order:
//!
//! puzzle → ranking → shard layout → transitions → kernel → engine → result.
//!
//! - [`puzzle`]: slots, pieces, moves and metrics; spec parsing.
//! - [`perm`], [`rank`]: permutations and their perfect lexicographic ranking.
//! - [`group`]: group order by Schreier–Sims, the independent check of every table.
//! - [`bignat`], [`bound`]: exact big counts and the counting lower bound on the diameter.
//! - [`space`]: which ranking a job uses; a level is one bit array per shard.
//! - [`layout`]: how a rank of distinct pieces splits into shard, block and low part.
//! - [`lowtable`], [`transition`]: how a move carries a whole block.
//! - [`bits`], [`kernel`]: memory-mapped bit arrays and the BFS task.
//! - [`codec`], [`coded_kernel`]: the same for identical or oriented pieces
//!   (partial puzzles, `.tws` files), state by state.
//! - [`job`], [`engine`]: planning, resource checks and the level loop.
//! - [`result`]: `result.json`, `depths.csv`, printed tables.

pub mod antipodes;
pub mod bignat;
pub mod bits;
pub mod bound;
pub mod codec;
pub mod coded_kernel;
pub mod engine;
pub mod format;
pub mod group;
pub mod job;
pub mod kernel;
pub mod layout;
pub mod lowtable;
pub mod manifest;
pub mod perm;
pub mod puzzle;
pub mod rank;
pub mod result;
pub mod space;
pub mod svg;
pub mod transition;

/// Generated gRPC types and stubs of `proto/cayley.proto`.
pub mod proto {
    #![allow(missing_docs, clippy::all)]
    tonic::include_proto!("cayley.v1");

    /// Protocol version; coordinator and worker must agree exactly.
    /// Version 2: job specs may carry ` --directed` and ` --track LIST`, and
    /// coded puzzles (identical or oriented pieces) are searched.
    pub const PROTOCOL_VERSION: u32 = 2;
}
