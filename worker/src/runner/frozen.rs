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
//! it begins, in a table by shard number, and tasks borrow them from it;
//! with the level's chunk files, whose indexes tell an empty shard (never
//! held) without the open files' lock, and a bit a shard saying which
//! those are.

use crate::cache::{Bits, ShardKey};
use cayley_shared::files::format::ChunkReader;
use cayley_shared::job::chunking::Chunking;
use std::sync::Arc;

/// The shards of one level the worker held when the level's tasks began,
/// by shard number.
pub(super) struct FrozenLevel {
    level: u32,
    /// `held[s]`: shard `s`, when held. One entry a shard of the space,
    /// 16 bytes (8 MB on the 4×4 Loopover), built only where that is at
    /// most a sixteenth of the budget ([`Self::bytes`]). A hash map of the
    /// held shards was as fast, but a lookup there has no address to
    /// prefetch before it is made ([`Self::prefetch`]).
    held: Vec<Option<Bits>>,
    /// Shards held.
    count: usize,
    /// The level's chunk files, by chunk, where they opened (kept open
    /// for the level's tasks, which read their shards through them).
    readers: Vec<Option<Arc<ChunkReader>>>,
    /// One bit per shard of the level, clear where its chunk file's index
    /// counts no state (set where the file did not open: unknown). Two in
    /// three of the 4×4 Loopover's sources at depth 8 are empty shards,
    /// never held: known empty here from 62 KB, which stays in a core's
    /// own cache, where the files' counts (8 bytes a shard, 4 MB) were a
    /// cache miss per source, a third of the time of looking sources up.
    nonempty: Vec<u64>,
}

impl FrozenLevel {
    /// The level of `shards` shards made of `parts`, one per stripe of
    /// the cache, in `table`: the last level's, emptied by
    /// [`Self::release`], or made here (cleared on the calling pool) when
    /// it is not of `shards` entries. A new table of 8 MB a level, first
    /// touched while the level's tasks waited, made the 4×4 Loopover's
    /// levels 1–7 start 2–5 ms later each at 2 threads.
    pub fn new(level: u32, shards: u64, table: Vec<Option<Bits>>, parts: Vec<Vec<(u64, Bits)>>) -> FrozenLevel {
        use rayon::prelude::*;
        let mut held = table;
        if held.len() as u64 != shards {
            held = (0..shards).into_par_iter().map(|_| None).collect();
        }
        debug_assert!(held.iter().all(Option::is_none), "a table handed on empty");
        let mut count = 0;
        for (shard, bits) in parts.into_iter().flatten() {
            held[shard as usize] = Some(bits);
            count += 1;
        }
        FrozenLevel {
            level,
            held,
            count,
            readers: Vec::new(),
            nonempty: Vec::new(),
        }
    }

    /// Bytes of the table of a level of `shards` shards.
    pub fn bytes(shards: u64) -> u64 {
        shards * std::mem::size_of::<Option<Bits>>() as u64
    }

    /// The level's chunk files (`None` where one did not open), grouped
    /// as `chunking` says, and which shards their indexes count states in
    /// (worked out on the calling pool, 64 shards a job), of those
    /// `may_hold` sets where it is given: a chunk left closed because no
    /// shard of it is there holds none.
    pub fn with_readers(
        self,
        readers: Vec<Option<Arc<ChunkReader>>>,
        chunking: &Chunking,
        may_hold: Option<&[u64]>,
    ) -> FrozenLevel {
        use rayon::prelude::*;
        let holds_some = |shard: u64| {
            let chunk = chunking.chunk_of(shard);
            match &readers[chunk as usize] {
                Some(reader) => reader.popcount((shard - chunk * chunking.per_chunk) as usize) > 0,
                None => true,
            }
        };
        let nonempty = (0..chunking.shards.div_ceil(64))
            .into_par_iter()
            .map(|word| {
                let shards = word * 64..(word * 64 + 64).min(chunking.shards);
                let listed = shards.fold(0u64, |bits, shard| bits | u64::from(holds_some(shard)) << (shard % 64));
                listed & may_hold.map_or(u64::MAX, |bits| bits[word as usize])
            })
            .collect();
        FrozenLevel {
            readers,
            nonempty,
            ..self
        }
    }

    /// True when `key`'s shard is of this level and its chunk file's index
    /// counts no state in it.
    #[inline]
    pub fn holds_none(&self, (level, shard): ShardKey) -> bool {
        level == self.level
            && self
                .nonempty
                .get((shard / 64) as usize)
                .is_some_and(|word| word >> (shard % 64) & 1 == 0)
    }

    /// The shards of `level` that may hold states (every shard of a chunk
    /// whose file did not open), in order, when it is this level and its
    /// files were listed.
    pub fn nonempty_shards(&self, level: u32) -> Option<impl Iterator<Item = u64> + '_> {
        (level == self.level && !self.nonempty.is_empty())
            .then(|| cayley_shared::space::bits::set_bits(&self.nonempty).map(|shard| shard as u64))
    }

    /// True when the level's chunk files count no state in `shards`;
    /// false where that is not known (another level, or no files listed).
    pub fn holds_none_in(&self, level: u32, shards: std::ops::Range<u64>) -> bool {
        level == self.level && !self.nonempty.is_empty() && !cayley_shared::space::bits::any_in(&self.nonempty, shards)
    }

    /// Starts reading `shard`'s entry when the level may hold states
    /// there, so that a target's lookups of its sources wait for their
    /// misses together, not one after another: the 4×4 Loopover to depth
    /// 8 at 1 thread, four interleaved pairs, 9.18–9.39 → 8.70–8.96 s.
    #[inline]
    pub fn prefetch(&self, shard: u64) {
        if !self.holds_none((self.level, shard)) {
            if let Some(entry) = self.held.get(shard as usize) {
                crate::prefetch::prefetch(entry);
            }
        }
    }

    /// The shard of `key`, when it is of this level and was held.
    #[inline]
    pub fn get(&self, (level, shard): ShardKey) -> Option<&Bits> {
        if level != self.level {
            return None;
        }
        self.held.get(shard as usize)?.as_ref()
    }

    /// Lets go of the shards on the calling pool's threads: every handle
    /// is a count lowered, and the last of a shard gives its buffer back to
    /// the slab (165,729 shards at the 4×4 Loopover's depth 7), while the
    /// next level's tasks wait. Returns the table, empty, for the next
    /// level's.
    pub fn release(mut self) -> Vec<Option<Bits>> {
        use rayon::prelude::*;
        self.held.par_chunks_mut(4096).for_each(|entries| {
            entries.iter_mut().filter(|e| e.is_some()).for_each(|e| *e = None);
        });
        self.held
    }

    /// Chunk files held.
    pub fn readers(&self) -> usize {
        self.readers.iter().flatten().count()
    }

    /// Shards held.
    pub fn len(&self) -> usize {
        self.count
    }
}

/// What the start of a level knows of the empty shards of the level it
/// reads without opening its chunk files: the last level's sparse map
/// (`may_hold`: every other shard was written empty) and the indexes of
/// the files the frozen level opened.
#[derive(Clone, Copy, Default)]
pub(super) struct KnownEmpty<'a> {
    level: u32,
    may_hold: Option<&'a [u64]>,
    frozen: Option<&'a FrozenLevel>,
}

impl<'a> KnownEmpty<'a> {
    /// What is known of `level`'s empty shards from the last level's
    /// sparse map and from the level held still.
    pub fn new(level: u32, may_hold: Option<&'a [u64]>, frozen: Option<&'a FrozenLevel>) -> KnownEmpty<'a> {
        KnownEmpty {
            level,
            may_hold,
            frozen,
        }
    }

    /// True when no shard of `shards` holds a state of `level`, as far as
    /// is known without reading (false where it is not known).
    pub fn none_in(&self, level: u32, shards: std::ops::Range<u64>) -> bool {
        level == self.level
            && (self
                .may_hold
                .is_some_and(|map| !cayley_shared::space::bits::any_in(map, shards.clone()))
                || self.frozen.is_some_and(|f| f.holds_none_in(level, shards)))
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
