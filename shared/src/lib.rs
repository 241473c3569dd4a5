//! Shared library of cayley: the engine both the coordinator and the
//! workers run. Its modules are the stages of the data path, in order; a
//! stage uses only the stages before it (`.ci/stage-order.py`, run by `.ci/run`,
//! fails on an import the other way; tests may reach anywhere):
//!
//! units → puzzle → space (ranking, shards) → job (the plan) → kernel →
//! files → search (results).
//!
//! - [`units`]: sizes as people write and read them (`8G`, `1.5 GiB`).
//! - [`puzzle`]: slots, pieces, moves and metrics; spec, perm-file and
//!   `.tws` parsing; permutations ([`puzzle::perm`]), the group order by
//!   Schreier–Sims ([`puzzle::group`], the independent check of every
//!   table) and the puzzle's symmetries ([`puzzle::symmetry`]).
//! - [`space`]: which ranking a job uses and how a rank splits into shard,
//!   block and low part ([`space::rank`], [`space::layout`],
//!   [`space::codec`]), or into classes under the symmetries
//!   ([`space::reduced`]); a level is one bit array per shard
//!   ([`space::bits`]).
//! - [`job`]: the plan of a job — a puzzle with its space, group order and
//!   [`job::chunking`] — fixed when it starts and stored with its
//!   checkpoint. It is made of a puzzle and a space, so it sits just above
//!   them, below every stage that works on a job.
//! - [`kernel`]: what a task reads and how it computes `F_{d+1}` of a shard.
//! - [`files`]: chunk files and the checkpoint directory.
//! - [`search`]: the memory and disk a job needs, the in-process level
//!   loop, the antipodes and the diameter bound.
//!
//! The protocol (`cayley-proto`), the manifest and the result files belong
//! to the coordinator and worker crates.

pub mod files;
pub mod job;
pub mod kernel;
pub mod puzzle;
pub mod search;
pub mod space;
pub mod units;
