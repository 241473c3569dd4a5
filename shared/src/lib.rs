//! Shared library of cayley: the engine both the coordinator and the
//! workers run. Its folders are the stages of the data path, in order:
//!
//! puzzle → space (ranking, shards) → kernel → files → search (results).
//!
//! - [`puzzle`]: slots, pieces, moves and metrics; spec, perm-file and
//!   `.tws` parsing; permutations ([`puzzle::perm`]), the group order by
//!   Schreier–Sims ([`puzzle::group`], the independent check of every
//!   table) and the puzzle's symmetries ([`puzzle::symmetry`]).
//! - [`space`]: which ranking a job uses and how a rank splits into shard,
//!   block and low part ([`space::layout`], [`space::codec`]), or into
//!   classes under the symmetries ([`space::reduced`]); a level is one bit
//!   array per shard.
//! - [`kernel`]: what a task reads and how it computes `F_{d+1}` of a shard.
//! - [`files`]: chunk files and the checkpoint directory.
//! - [`search`]: the plan of a job, the memory and disk it needs, the
//!   in-process level loop, the antipodes and the diameter bound.
//!
//! The protocol (`cayley-proto`), the manifest and the result files belong
//! to the coordinator and worker crates.

pub mod files;
pub mod kernel;
pub mod puzzle;
pub mod search;
pub mod space;
