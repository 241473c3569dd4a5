//! Shared library of cayley: the engine both the coordinator and the
//! workers run, in data-path order:
//!
//! puzzle → ranking → shard layout → transitions → kernel → task → file.
//!
//! - [`puzzle`]: slots, pieces, moves and metrics; spec parsing.
//! - [`perm`], [`rank`]: permutations and their perfect lexicographic ranking.
//! - [`group`]: group order by Schreier–Sims, the independent check of every table.
//! - [`bignat`], [`bound`]: exact big counts and the counting lower bound on the diameter.
//! - [`space`]: which ranking a job uses; a level is one bit array per shard.
//! - [`layout`]: how a rank of distinct pieces splits into shard, block and low part.
//! - [`lowtable`], [`transition`]: how a move carries a whole block.
//! - [`bits`], [`task`], [`kernel`]: bit arrays, what a task reads, the BFS kernel.
//! - [`codec`], [`coded_kernel`]: the same for identical or oriented pieces
//!   (partial puzzles, `.tws` files), state by state.
//! - [`context`]: the tables every task of a job shares, and kernel dispatch.
//! - [`job`], [`chunking`], [`resources`]: the plan of a job, its tasks, and
//!   the memory and disk it needs.
//! - [`format`], [`checkpoint`]: chunk files and the checkpoint directory.
//! - [`engine`], [`antipodes`]: the in-process level loop and the walk back
//!   from the farthest states.
//!
//! The protocol (`cayley-proto`), the manifest and the result files belong
//! to the coordinator and worker crates.

pub mod antipodes;
pub mod bignat;
pub mod bits;
pub mod bound;
pub mod checkpoint;
pub mod chunking;
pub mod codec;
pub mod coded_kernel;
pub mod colex;
pub mod context;
pub mod engine;
pub mod format;
pub mod group;
pub mod job;
pub mod kernel;
pub mod layout;
pub mod lowtable;
pub mod perm;
pub mod puzzle;
pub mod rank;
pub mod reduced;
pub mod resources;
pub mod space;
pub mod symmetry;
pub mod task;
pub mod transition;
