//! cayley worker library: used by the `cayley-worker` binary and by
//! `cayley run`, which embeds workers in the coordinator process.
//!
//! - [`runner`]: computes one `(level, shard)` task from checkpoint files.
//! - [`client`]: registers with a coordinator, leases tasks, streams
//!   progress and results.

pub mod client;
pub mod runner;

pub use client::{run_worker, WorkerConfig, WorkerSummary};
