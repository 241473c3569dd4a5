//! Stage 5, files: a level on disk.
//!
//! - [`format`](mod@format): the chunk file (header, per-shard index, zstd frames) and
//!   its checks.
//! - [`checkpoint`]: where each level's chunk files live in a checkpoint
//!   directory, how a finished file is made durable, and the file identity
//!   of a chunk of the job's [`crate::job::chunking`].

pub mod checkpoint;
pub mod format;
