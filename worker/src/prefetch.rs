//! Asking the processor to start reading a cache line early.
//!
//! A target shard looks up each of its two dozen sources in the level
//! held still, then reads what the entry points to: a cache miss each,
//! and one after another the second waited for the first. Prefetching
//! every source's entry first, then every entry's contents, lets those
//! misses overlap (measured: `runner/frozen.rs`).

/// Starts reading the cache line at `at`; does nothing where the target
/// has no prefetch instruction.
#[inline]
pub fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint: it reads nothing into the program
        // and cannot fault, whatever the address (even a dangling or
        // unmapped one), so no pointer is dereferenced here. SSE, which
        // `_mm_prefetch` needs, is part of every x86_64 target.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
