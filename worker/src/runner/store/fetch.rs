//! How a task's input shards are found: in the cache, through the open
//! chunk files' indexes, or read from the checkpoint (outside every lock,
//! one thread per shard, the others waiting for it; see the parent
//! module's notes).

use super::Held;
use crate::cache::{Bits, CacheStats, ShardKey};
use crate::runner::{input_error, TaskError, TaskRunner};
use crate::slab::Slot;
use cayley_shared::files::format::ChunkReader;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

thread_local! {
    /// Compressed frames are read through one buffer per thread, which
    /// keeps its capacity (see [`ChunkReader::read_shard_listing`]).
    static FRAME: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Where `shard` is among the shards of `reader`'s chunk file.
fn place_in(reader: &ChunkReader, shard: u64) -> usize {
    (shard - reader.header().id.first_shard) as usize
}

/// The shard of a lookup known to be ready.
fn ready(found: Option<Found>) -> Bits {
    match found {
        Some(Found::Ready(bits)) => bits,
        _ => unreachable!("checked ready"),
    }
}

/// The load of `entry`, taken out of it; `None` (and `entry` untouched)
/// for anything else.
fn take_load(entry: &mut Option<Found>) -> Option<Found> {
    match entry {
        Some(Found::Load { .. }) => entry.take(),
        _ => None,
    }
}

/// Where a key's shard is in its chunk file, and its set bits (from the
/// file's index).
#[derive(Clone, Copy)]
struct Indexed<'r> {
    reader: &'r Arc<ChunkReader>,
    index: usize,
    count: u64,
}

/// What a lookup found for one key.
enum Found {
    Ready(Bits),
    /// To be read from `reader`'s shard `index` (`count` set bits) into `slot`.
    Load {
        reader: Arc<ChunkReader>,
        index: usize,
        count: u64,
        slot: Slot,
    },
    /// Another thread is reading it.
    Awaited,
}

impl TaskRunner {
    /// The verified readers of `keys`' chunk files (`None` at level 0),
    /// opening those not open yet outside the lock.
    pub(in crate::runner) fn readers_of(&self, keys: &[ShardKey]) -> Result<Vec<Option<Arc<ChunkReader>>>, TaskError> {
        let chunk_of = |&(level, shard): &ShardKey| (level, self.ctx.job.chunking.chunk_of(shard));
        let mut readers = vec![None; keys.len()];
        let mut missing = Vec::new();
        {
            let files = self.store.files();
            for (i, key) in keys.iter().enumerate().filter(|(_, k)| k.0 > 0) {
                let (level, chunk) = chunk_of(key);
                match files.get(level, chunk) {
                    Some(reader) => readers[i] = Some(reader.clone()),
                    None => missing.push(i),
                }
            }
        }
        if missing.is_empty() {
            return Ok(readers);
        }
        let mut opened: Vec<((u32, u64), ChunkReader)> = Vec::new();
        for &i in &missing {
            let (level, chunk) = chunk_of(&keys[i]);
            if !opened.iter().any(|(at, _)| *at == (level, chunk)) {
                let path = self.checkpoint.chunk_path(level, chunk);
                let reader =
                    ChunkReader::open(&path, &self.id(level, chunk)).map_err(|e| input_error(level, chunk, e))?;
                opened.push(((level, chunk), reader));
            }
        }
        let mut files = self.store.files_mut();
        let opened: Vec<((u32, u64), Arc<ChunkReader>)> = opened
            .into_iter()
            .map(|((level, chunk), reader)| ((level, chunk), files.insert(level, chunk, reader)))
            .collect();
        drop(files);
        for &i in &missing {
            let at = chunk_of(&keys[i]);
            readers[i] = opened.iter().find(|(k, _)| *k == at).map(|(_, r)| r.clone());
        }
        Ok(readers)
    }

    /// `F_level(shard)` for each `(level, shard)` of `keys`, from the cache
    /// or the checkpoint, counted in `stats`.
    pub(in crate::runner) fn fetch(&self, keys: &[ShardKey], stats: &mut CacheStats) -> Result<Vec<Bits>, TaskError> {
        let chunk_of = |shard: u64| self.ctx.job.chunking.chunk_of(shard);
        let mut found = match self.look_up_in_open_files(keys, stats) {
            Some(found) => found,
            None => {
                let readers = self.readers_of(keys)?;
                let readers = readers.iter().map(Option::as_ref);
                self.look_up_all(keys, readers, stats)
            }
        };
        if found.iter().all(|f| matches!(f, Some(Found::Ready(_)))) {
            return Ok(found.into_iter().map(ready).collect());
        }
        // Loads outside the locks; on a failure, the marks of every load of
        // this call go, so that nobody waits for them.
        let mut loaded = Vec::new();
        let mut failure = None;
        for (i, entry) in found.iter_mut().enumerate() {
            let Some(Found::Load {
                reader,
                index,
                count,
                slot,
            }) = take_load(entry)
            else {
                continue;
            };
            if failure.is_some() {
                loaded.push((i, None));
                continue;
            }
            match self.load(&reader, index, slot, stats) {
                Ok((slot, listed)) => {
                    let limit = self.ctx.position_limit();
                    let bits = Bits::with_listed_positions(slot, count, limit, listed).list_only();
                    loaded.push((i, Some(bits)))
                }
                Err(e) => {
                    let (level, shard) = keys[i];
                    failure = Some(input_error(level, chunk_of(shard), e));
                    loaded.push((i, None));
                }
            }
        }
        for (i, bits) in loaded {
            let key = keys[i];
            let mut held = self.store.lock(key.1);
            held.loading.remove(&key);
            if let Some(bits) = bits {
                found[i] = Some(Found::Ready(held.cache.admit(key, bits)));
            }
            drop(held);
            self.store.stripe(key.1).loaded.notify_all();
        }
        if let Some(e) = failure {
            return Err(e);
        }
        // Shards another thread was reading: kept by now, or (evicted
        // already, or that thread failed) looked up again.
        let mut out = Vec::with_capacity(keys.len());
        for (i, entry) in found.into_iter().enumerate() {
            match entry {
                Some(Found::Ready(bits)) => out.push(bits),
                _ => out.push(self.fetch_awaited(keys[i], stats)?),
            }
        }
        Ok(out)
    }

    /// A shard another thread was loading when it was looked up: waits for
    /// it, or loads it if that thread gave up.
    fn fetch_awaited(&self, key: ShardKey, stats: &mut CacheStats) -> Result<Bits, TaskError> {
        let mut held = self.store.lock(key.1);
        while held.loading.contains(&key) {
            held = self
                .store
                .stripe(key.1)
                .loaded
                .wait(held)
                .unwrap_or_else(|e| e.into_inner());
        }
        if let Some(bits) = held.cache.lookup(key) {
            return Ok(bits);
        }
        drop(held);
        // Not kept (no room) or failed elsewhere: read it here.
        let bits = self.fetch(&[key], stats)?;
        Ok(bits.into_iter().next().expect("one key, one shard"))
    }

    /// [`Self::look_up_all`] under the open files' read lock, when every
    /// key's file is open (`None`, nothing looked up, otherwise). No handle
    /// on a file is taken but for a load: the files' counts of handles
    /// were shared by every thread, and changed 26 times per shard.
    fn look_up_in_open_files(&self, keys: &[ShardKey], stats: &mut CacheStats) -> Option<Vec<Option<Found>>> {
        let files = self.store.files();
        let readers: Option<Vec<Option<&Arc<ChunkReader>>>> = keys
            .iter()
            .map(|&(level, shard)| match level {
                0 => Some(None),
                _ => files.get(level, self.ctx.job.chunking.chunk_of(shard)).map(Some),
            })
            .collect();
        Some(self.look_up_all(keys, readers?.into_iter(), stats))
    }

    /// Each key looked up in `readers[i]`'s file (`None` at level 0).
    ///
    /// Every key's count of set bits is read from its file's index first,
    /// before any lock is taken: these reads are independent, so their
    /// cache misses overlap, where the stripe's lock taken between two of
    /// them (a locked instruction) made each wait for the one before. A
    /// key the index shows empty then takes no lock at all.
    fn look_up_all<'r>(
        &self,
        keys: &[ShardKey],
        readers: impl Iterator<Item = Option<&'r Arc<ChunkReader>>>,
        stats: &mut CacheStats,
    ) -> Vec<Option<Found>> {
        let indexed: Vec<Option<Indexed>> = keys
            .iter()
            .zip(readers)
            .map(|(&(_, shard), reader)| {
                reader.map(|reader| {
                    let index = place_in(reader, shard);
                    Indexed {
                        reader,
                        index,
                        count: reader.popcount(index),
                    }
                })
            })
            .collect();
        keys.iter()
            .zip(indexed)
            .map(|(&key, indexed)| {
                Some(match indexed {
                    Some(Indexed { count: 0, .. }) => {
                        // Known empty from the index: nothing to read or keep.
                        stats.lookups += 1;
                        stats.hits += 1;
                        Found::Ready(self.zeros())
                    }
                    _ => self.look_up(&mut self.store.lock(key.1), key, indexed, stats),
                })
            })
            .collect()
    }

    /// One key looked up with its stripe held: ready (cached, level 0), or
    /// to be loaded by this thread (a buffer taken for it), or awaited.
    fn look_up(&self, held: &mut Held, key: ShardKey, indexed: Option<Indexed>, stats: &mut CacheStats) -> Found {
        let shard = key.1;
        let Some(Indexed { reader, index, count }) = indexed else {
            // Level 0: every shard but the solved state's is the empty
            // shard; that one goes through the cache so the task's
            // current level and its sources share one buffer.
            if shard != self.ctx.job.solved_shard() {
                return Found::Ready(self.zeros());
            }
            let job = &self.ctx.job;
            let bits = held.cache.get(key, stats, |mut words| {
                words.fill(0);
                job.level_zero(shard, &mut words);
                let count = cayley_shared::space::bits::popcount(&words);
                Ok::<_, TaskError>((words, count, 0))
            });
            return Found::Ready(bits.expect("level zero is made, not read"));
        };
        stats.lookups += 1;
        if let Some(bits) = held.cache.lookup(key) {
            stats.hits += 1;
            return Found::Ready(bits);
        }
        if !held.loading.insert(key) {
            return Found::Awaited;
        }
        let slot = held.cache.buffer_for_load();
        Found::Load {
            reader: reader.clone(),
            index,
            count,
            slot,
        }
    }

    /// Reads shard `index` of `reader` into `slot` (verified), with its
    /// positions when it is stored as their list.
    fn load(
        &self,
        reader: &ChunkReader,
        index: usize,
        mut slot: Slot,
        stats: &mut CacheStats,
    ) -> Result<(Slot, Option<Vec<u32>>), cayley_shared::files::format::FormatError> {
        let started = Instant::now();
        let (read, listed) =
            FRAME.with(|frame| reader.read_shard_listing(index, &mut slot, &mut frame.borrow_mut()))?;
        stats.load_seconds += started.elapsed().as_secs_f64();
        stats.bytes_read += read;
        Ok((slot, listed))
    }

    /// The reader of `F_level(shard)`'s chunk file (`level` above 0) and
    /// the shard's place in it.
    fn indexed(&self, level: u32, shard: u64) -> Result<(Arc<ChunkReader>, usize), TaskError> {
        let reader = self
            .readers_of(&[(level, shard)])?
            .pop()
            .flatten()
            .expect("a level above 0 has files");
        let index = place_in(&reader, shard);
        Ok((reader, index))
    }

    /// The set bits of `F_level(shard)` (`level` above 0), from its chunk
    /// file's index: under the open files' read lock when the file is open,
    /// which takes no handle on it (see [`Self::look_up_in_open_files`]).
    pub(in crate::runner) fn indexed_count(&self, level: u32, shard: u64) -> Result<u64, TaskError> {
        let chunk = self.ctx.job.chunking.chunk_of(shard);
        if let Some(reader) = self.store.files().get(level, chunk) {
            return Ok(reader.popcount(place_in(reader, shard)));
        }
        let (reader, index) = self.indexed(level, shard)?;
        Ok(reader.popcount(index))
    }

    /// ORs `F_level(shard)` into `into`, read past the cache (levels read
    /// only once); nothing is read when the chunk index says the shard is
    /// empty.
    pub(in crate::runner) fn or_level_into(
        &self,
        level: u32,
        shard: u64,
        into: &mut [u64],
        stats: &mut CacheStats,
    ) -> Result<(), TaskError> {
        let (reader, index) = self.indexed(level, shard)?;
        if reader.popcount(index) == 0 {
            return Ok(());
        }
        let buffer = self.store.lock(shard).cache.buffer();
        let chunk = self.ctx.job.chunking.chunk_of(shard);
        let (buffer, _) = self
            .load(&reader, index, buffer, stats)
            .map_err(|e| input_error(level, chunk, e))?;
        into.iter_mut().zip(buffer.iter()).for_each(|(u, w)| *u |= w);
        Ok(())
    }

    /// `F_0(shard) ∪ … ∪ F_{below-1}(shard)`, read level by level (a
    /// directed graph's "seen" set; most of these levels are read only
    /// here, so they bypass the cache).
    pub(in crate::runner) fn union_of_levels(
        &self,
        below: u32,
        shard: u64,
        stats: &mut CacheStats,
    ) -> Result<Slot, TaskError> {
        // Zeroed outside the lock: a slot's first use faults its pages in.
        let buffer = self.store.lock(shard).cache.zero_buffer();
        let mut union = buffer.into_zeroed();
        self.ctx.job.level_zero(shard, &mut union);
        for level in 1..below {
            self.or_level_into(level, shard, &mut union, stats)?;
        }
        Ok(union)
    }
}
