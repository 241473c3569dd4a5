//! cayley worker library: used by the `cayley-worker` binary and by
//! `cayley run`, which embeds workers in the coordinator process.
//!
//! - [`cache`]: decompressed shards within a memory budget.
//! - [`runner`]: computes one `(level, chunk)` task from checkpoint files.
//! - [`client`]: registers with a coordinator, leases tasks, streams
//!   progress and results.
//! - [`args`]: command-line errors as one `error:` line (both binaries).

pub mod args;
pub mod cache;
pub mod client;
pub mod runner;

pub use client::{run_worker, WorkerConfig, WorkerSummary};

/// Peak resident memory of this process (`VmHWM`), when the kernel says.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Makes the allocator give every buffer of 1 MiB or more its own mapping,
/// returned to the kernel when freed. Shards are such buffers. Without
/// this, glibc raises its mmap threshold after the first free, serves
/// shards from its per-thread arenas, and each arena keeps what it once
/// held: a 2×7 run with `--memory 6G` reached 12.5 GB of RSS, half in the
/// main heap and half in 99 thread-arena heaps. Called by every
/// [`runner::TaskRunner`]; idempotent.
pub fn return_freed_shards_to_the_kernel() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only changes glibc's allocation parameters; it
        // takes the allocator's own locks, so other threads allocating at
        // the same time are fine, and M_MMAP_THRESHOLD = 1 MiB is within
        // the range glibc accepts (it returns 0 otherwise, changing nothing).
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        });
    }
}

/// Returns the allocator's free pages to the kernel. Shards under 1 MiB
/// (40.5 KiB on the 4×4 Loopover, 106 KiB on the 3×5) come from glibc's
/// arenas, where evicting and loading them in LRU order leaves free holes
/// that still count as resident: a 4×4 worker under `--memory 13G` held
/// 13.4 GiB of arena for 13.0 GiB in use. `malloc_trim` releases every
/// whole free page of every arena: called once in that worker (through a
/// debugger), it took its RSS from 13.50 GiB to 13.15 GiB, the budget plus
/// its 64 MiB of tables and 90 MiB. Called after each task; on a 3×5 run
/// to depth 10 under `--memory 200M` it cost 2% of the wall time.
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes each arena's lock while it walks its free
    // chunks and only advises the kernel about pages no allocation uses;
    // it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
