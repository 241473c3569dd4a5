//! Stage 4, files: a level on disk.
//!
//! - [`chunking`]: which shards share one chunk file, so a level of the 4×4
//!   Loopover is tens of thousands of files, not hundreds of thousands.
//! - [`format`]: the chunk file (header, per-shard index, zstd frames) and
//!   its checks.
//! - [`checkpoint`]: where each level's chunk files live in a checkpoint
//!   directory, and how a finished file is made durable.

pub mod checkpoint;
pub mod chunking;
pub mod format;
