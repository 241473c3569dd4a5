//! The level that a level's tasks read, held still for them: its shards'
//! handles, looked up without a lock and without a write.
//!
//! Through the cache, each of a target's 24 sources was a stripe's lock,
//! a tick written into the entry and a handle's count raised and lowered:
//! three cache lines written per lookup, 13 million lookups at the 4×4
//! Loopover's depth 8. Each of those lines moves between cores whenever
//! two threads take turns on it, which on 2 cores is half the time and on
//! 16 nearly always, while a source is read by 24 targets spread over the
//! whole level (a 56-shard window's sources are 90% distinct). The level
//! read does not change while it runs, so its shards are listed once when
//! it begins, and tasks borrow them from the list; with the level's chunk
//! files, whose indexes tell an empty shard (never held) without the open
//! files' lock.

use crate::cache::{Bits, ShardKey};
use cayley_shared::files::format::ChunkReader;
use std::collections::HashMap;
use std::sync::Arc;

/// Keys are shard numbers: a fast hash.
type Map = HashMap<u64, Bits, foldhash::fast::RandomState>;

/// The shards of one level the worker held when the level's tasks began,
/// by stripe (shard `s` in part `s % parts`).
pub(super) struct FrozenLevel {
    level: u32,
    parts: Vec<Map>,
    /// The level's chunk files, by chunk, where they opened: a shard's
    /// count of set bits is read from its file's index without the open
    /// files' lock, which every thread took once a target shard. Two in
    /// three of the 4×4 Loopover's sources at depth 8 are empty shards,
    /// never held, known empty from that count.
    readers: Vec<Option<Arc<ChunkReader>>>,
    /// Shards per chunk.
    per_chunk: u64,
}

impl FrozenLevel {
    /// The level made of `parts`, one per stripe of the cache, each made
    /// into its map on a thread of the calling pool: made one after the
    /// other, they held up the start of the 4×4 Loopover's depth 8 while
    /// its tasks waited (the list of depth 7's 165,729 shards and 309 files
    /// took 12.4 and 14.5 ms at 2 threads, now 9.8 and 11.4).
    pub fn new(level: u32, parts: Vec<Vec<(u64, Bits)>>) -> FrozenLevel {
        use rayon::prelude::*;
        FrozenLevel {
            level,
            parts: parts.into_par_iter().map(|part| part.into_iter().collect()).collect(),
            readers: Vec::new(),
            per_chunk: 1,
        }
    }

    /// The level's chunk files (`None` where one did not open), of
    /// `per_chunk` shards each.
    pub fn with_readers(self, readers: Vec<Option<Arc<ChunkReader>>>, per_chunk: u64) -> FrozenLevel {
        FrozenLevel {
            readers,
            per_chunk,
            ..self
        }
    }

    /// The set bits of `key`'s shard, from its chunk file's index, when
    /// it is of this level and the file opened.
    #[inline]
    pub fn count(&self, (level, shard): ShardKey) -> Option<u64> {
        if level != self.level {
            return None;
        }
        let reader = self.readers.get((shard / self.per_chunk) as usize)?.as_ref()?;
        Some(reader.popcount((shard - reader.header().id.first_shard) as usize))
    }

    /// The shard of `key`, when it is of this level and was held.
    #[inline]
    pub fn get(&self, (level, shard): ShardKey) -> Option<&Bits> {
        if level != self.level {
            return None;
        }
        self.parts[(shard % self.parts.len() as u64) as usize].get(&shard)
    }

    /// Lets go of the shards on the calling pool's threads, a stripe's at
    /// a time: every handle is a count lowered, and the last of a shard
    /// gives its buffer back to the slab (165,729 shards at the 4×4
    /// Loopover's depth 7), while the next level's tasks wait.
    pub fn release(self) {
        use rayon::prelude::*;
        self.parts.into_par_iter().for_each(drop);
    }

    /// Chunk files held.
    pub fn readers(&self) -> usize {
        self.readers.iter().flatten().count()
    }

    /// Shards held.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Map::len).sum()
    }
}

/// A source shard as a target's kernel reads it: borrowed from the frozen
/// level, or fetched (from the cache or the checkpoint).
pub(super) enum Source<'v> {
    Frozen(&'v Bits),
    Fetched(Bits),
}

impl std::ops::Deref for Source<'_> {
    type Target = Bits;

    fn deref(&self) -> &Bits {
        match self {
            Source::Frozen(bits) => bits,
            Source::Fetched(bits) => bits,
        }
    }
}
