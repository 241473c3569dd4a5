//! cayley worker library: used by the `cayley-worker` binary and by
//! `cayley run`, which embeds workers in the coordinator process.
//!
//! - [`slab`]: one memory map of shard-sized slots, where every shard
//!   buffer of the worker lives.
//! - [`cache`]: decompressed shards within a memory budget.
//! - [`runner`]: computes one `(level, chunk)` task from checkpoint files.
//! - [`client`]: registers with a coordinator, leases tasks, streams
//!   progress and results.
//! - [`args`]: command-line errors as one `error:` line (both binaries).
//! - [`faults`]: the test-only fault injection both binaries take (hidden
//!   options, or their `CAYLEY_FAULT_*` variables).
//! - [`logging`]: the log subscriber (both binaries, `RUST_LOG`).

pub mod args;
pub mod cache;
pub mod client;
pub mod faults;
pub mod logging;
mod prefetch;
pub mod runner;
pub mod slab;

pub use client::{run_worker, WorkerConfig, WorkerSummary};

/// Peak resident memory of this process (`VmHWM`), when the kernel says.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}
