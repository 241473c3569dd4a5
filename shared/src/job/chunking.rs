//! How a level's shards are grouped into tasks: a **chunk** is a run of
//! consecutive shards, computed by one task and written as one chunk file
//! (the `files` stage names and checks those files).
//!
//! Two sizes are decoupled this way. A shard is what a worker holds in
//! memory and what the kernel works on, so it stays a few MB; a chunk is what
//! the coordinator tracks and the filesystem stores, so it is tens of MB: the
//! 4×4 Loopover's 524,160 shards of 4.8 MiB (without symmetry reduction)
//! become 4,095 files per level (at most [`MAX_CHUNKS`]; 40,320 of 64 MiB)
//! instead of half a million, which shared filesystems handle badly.

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Raw bytes a chunk aims at (the last chunk of a level may be smaller).
pub const TARGET_CHUNK_BYTES: u64 = 64 << 20;

/// A level is cut into at least this many chunks when it has that many
/// shards, so small jobs still spread over several workers.
pub const MIN_CHUNKS: u64 = 16;

/// A level is cut into at most this many chunks; past it chunks grow beyond
/// [`TARGET_CHUNK_BYTES`]. It is the most chunk files a worker keeps open
/// (`worker/src/runner/readers.rs`), so a worker can hold a whole level's
/// files open, and it bounds the files, leases, journal lines and, on a
/// sparse level, the empty chunks the coordinator records one by one. The
/// 15-puzzle's levels (1.3 TiB raw) were 20,808 chunks of 64 MiB, and each
/// of its sparse levels took about 0.2 s, most of it the coordinator
/// linking, journaling and later removing about 20,800 empty chunk files
/// (`cayley run sliding:4x4 --max-depth 12`, 2 threads: 2.65 → 0.79 s of
/// levels in 4,095 chunks of 325 MiB).
pub const MAX_CHUNKS: u64 = 4096;

/// The grouping of shards into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunking {
    /// Shards in the level.
    pub shards: u64,
    /// Shards per chunk (the last chunk may hold fewer).
    pub per_chunk: u64,
}

impl Chunking {
    /// Groups `shards` shards of `shard_bytes` each; `per_chunk` overrides
    /// the automatic size.
    pub fn plan(shards: u64, shard_bytes: u64, per_chunk: Option<u64>) -> Chunking {
        let automatic = (TARGET_CHUNK_BYTES / shard_bytes.max(1))
            .max(shards.div_ceil(MAX_CHUNKS))
            .min(shards / MIN_CHUNKS);
        Chunking {
            shards,
            per_chunk: per_chunk.unwrap_or(automatic).clamp(1, shards.max(1)),
        }
    }

    /// Number of chunks (tasks and files) per level.
    pub fn chunks(&self) -> u64 {
        self.shards.div_ceil(self.per_chunk)
    }

    /// The chunk holding `shard`.
    pub fn chunk_of(&self, shard: u64) -> u64 {
        shard / self.per_chunk
    }

    /// The shards of `chunk`.
    pub fn shards_of(&self, chunk: u64) -> Range<u64> {
        let first = chunk * self.per_chunk;
        first..(first + self.per_chunk).min(self.shards)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_shard_once() {
        for (shards, bytes) in [
            (1u64, 1u64 << 30),
            (12, 5 << 20),
            (2184, 5 << 20),
            (524_160, 4_800_000),
            (7, 1),
        ] {
            let c = Chunking::plan(shards, bytes, None);
            let mut next = 0;
            for chunk in 0..c.chunks() {
                let r = c.shards_of(chunk);
                assert_eq!(r.start, next);
                assert!(!r.is_empty());
                assert!(r.clone().all(|s| c.chunk_of(s) == chunk));
                next = r.end;
            }
            assert_eq!(next, shards);
        }
    }

    #[test]
    fn the_4x4_plan_stays_within_a_worker_s_open_files() {
        // 16! states in 524,160 shards (5 shard pieces) of 11!/7! blocks of
        // 79 words: 4.8 MiB each, 13 to a chunk of 64 MiB, 40,320 chunks:
        // cut into at most MAX_CHUNKS instead, each as near that as whole
        // shards allow.
        let c = Chunking::plan(524_160, 7_920 * 79 * 8, None);
        assert!(
            c.chunks() <= MAX_CHUNKS && c.chunks() > MAX_CHUNKS * 99 / 100,
            "{} chunks",
            c.chunks()
        );
        // Levels of at most MAX_CHUNKS chunks of 64 MiB keep that size:
        // the reduced 4×4's 499,961 shards of 40.5 KiB, 1,618 to a chunk.
        assert_eq!(Chunking::plan(499_961, 41_472, None).per_chunk, (64 << 20) / 41_472);
        // Small jobs keep several tasks.
        assert_eq!(Chunking::plan(12, 5 << 20, None).chunks(), 12);
        // A size given is kept, whatever the count.
        assert_eq!(Chunking::plan(524_160, 7_920 * 79 * 8, Some(13)).chunks(), 40_320);
    }
}
