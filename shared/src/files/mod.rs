//! Stage 5, files: a level on disk.
//!
//! - [`format`](mod@format): the chunk file (header, per-shard index, zstd frames) and
//!   its checks.
//! - [`checkpoint`]: where each level's chunk files live in a checkpoint
//!   directory, how a finished file is made durable, and the file identity
//!   of a chunk of the job's [`crate::job::chunking`].
//! - [`reached`]: the counts file, each shard's states reached through a
//!   level, which a worker that joins after early levels were retired
//!   starts from.
//! - [`options`]: how this process writes them ([`WriteOptions`]: fsyncs
//!   on or off, and the test-only injected full disk).

pub mod checkpoint;
pub mod format;
pub mod options;
pub mod reached;

pub use options::WriteOptions;
