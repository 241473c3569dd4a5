//! Stage 4, the kernel: how one task computes `F_{d+1}` of a shard from the
//! bit arrays of level `d`.
//!
//! - [`task`]: what a task reads (its source shards, `F_{d-1}`, `F_d`) and
//!   the statistics it reports.
//! - [`lowtable`], [`transition`], [`blocks`]: the block kernel for distinct
//!   pieces, where a move carries a whole block through one table row.
//! - [`coded`]: the kernel for identical or oriented pieces, state by state
//!   through precomputed tables.
//! - [`reduced`]: the kernel of the space reduced by symmetry, through
//!   fiber maps.
//! - [`oriented`]: the kernel of oriented pieces reduced by symmetry,
//!   through affine maps of each block's twists.
//! - [`context`]: the tables every task of a job shares, and the dispatch to
//!   the kernel of the job's space.

pub mod blocks;
pub mod coded;
pub mod context;
pub mod lowtable;
pub mod occupancy;
pub mod oriented;
pub mod reduced;
pub mod task;
pub mod transition;
