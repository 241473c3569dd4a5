//! The worker's shards and open chunk files, shared by its threads.
//!
//! Every thread of a task fetches its own shard's inputs. The cache is cut
//! into **stripes** by shard number, each behind its own lock, and the open
//! files sit behind a read-write lock that lookups take for reading; reading
//! and decompressing (the slow part of a miss) run outside every lock, on
//! as many threads as miss at once. A shard that one thread is loading is
//! not loaded again by another: that one waits for it (the sources of
//! neighbouring target shards are mostly the same shards).
//!
//! Why stripes: with one lock for the cache and the files, the 4×4
//! Loopover's depth 8 on 16 threads spent 72.7 thread-seconds of its 173
//! outside the kernel, against 11.2 on 2 threads (docs/history.md, "Every
//! core at work"): a shard's 26 lookups took the one lock in turn with
//! every other thread's.

use super::frozen::FrozenLevel;
use super::readers::Readers;
use super::{input_error, TaskError, TaskRunner};
use crate::cache::{Bits, CacheStats, ShardCache, ShardKey};
use crate::slab::{Slab, Slot};
use cayley_shared::files::format::ChunkReader;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, TryLockError};
use std::time::Instant;

/// Stripes hold at least this many shards each, so that each stripe's
/// least-recently-used order stays close to the whole cache's.
const SHARDS_PER_STRIPE: u64 = 256;

/// At most this many stripes: with 4 per thread, 16 threads rarely meet.
const MAX_STRIPES: usize = 64;

/// The cache's stripes and the open files.
pub(super) struct Store {
    stripes: Box<[Stripe]>,
    files: RwLock<Readers>,
    /// Nanoseconds threads waited for a stripe while another thread held
    /// it, since the last [`Store::take_waited`]: the part of a level's
    /// "other" time that is contention, not work (counted only when a
    /// thread waits).
    waited: AtomicU64,
}

/// One stripe: the shards `s` with `s % stripes == i`.
struct Stripe {
    inner: Mutex<Held>,
    /// Signalled whenever loads are kept (see [`Held::loading`]).
    loaded: Condvar,
}

/// A stripe's cache and the loads under way of its shards.
pub(super) struct Held {
    pub cache: ShardCache,
    /// Shards some thread is reading from the checkpoint right now.
    loading: HashSet<ShardKey, foldhash::fast::RandomState>,
}

thread_local! {
    /// Compressed frames are read through one buffer per thread, which
    /// keeps its capacity (see [`ChunkReader::read_shard_via`]).
    static FRAME: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Store {
    /// A cache of `budget` bytes of shards of `shard_bytes`, its buffers
    /// from `slab`, cut into stripes for `threads` threads (one stripe for
    /// one thread, or where the budget holds few shards).
    pub fn new(budget: u64, shard_bytes: u64, slab: Slab, threads: usize) -> Store {
        let room = budget / shard_bytes.max(1);
        let stripes = if threads <= 1 {
            1
        } else {
            (4 * threads)
                .min(MAX_STRIPES)
                .min((room / SHARDS_PER_STRIPE) as usize)
                .max(1)
        };
        let share = budget / stripes as u64;
        Store {
            stripes: (0..stripes)
                .map(|_| Stripe {
                    inner: Mutex::new(Held {
                        cache: ShardCache::new(share, shard_bytes, slab.clone()),
                        loading: HashSet::default(),
                    }),
                    loaded: Condvar::new(),
                })
                .collect(),
            files: RwLock::new(Readers::new()),
            waited: AtomicU64::new(0),
        }
    }

    fn stripe(&self, shard: u64) -> &Stripe {
        &self.stripes[(shard % self.stripes.len() as u64) as usize]
    }

    /// The stripe holding `shard`'s entries (of every level). A panic while
    /// it was held cannot leave it half-changed in a way that matters: the
    /// cache only loses track of a shard, which is read again.
    pub fn lock(&self, shard: u64) -> MutexGuard<'_, Held> {
        let inner = &self.stripe(shard).inner;
        match inner.try_lock() {
            Ok(held) => held,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                let started = Instant::now();
                let held = inner.lock().unwrap_or_else(|e| e.into_inner());
                self.waited
                    .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                held
            }
        }
    }

    /// Runs `f` on each shard of `shards` with its stripe held, locking
    /// each stripe once for all of its shards in the range rather than once
    /// a shard (a sparse level's task passes over about 1,600 shards).
    pub fn each_held_in(&self, shards: std::ops::Range<u64>, mut f: impl FnMut(&mut Held, u64)) {
        let stripes = self.stripes.len() as u64;
        for first in shards.start..shards.end.min(shards.start + stripes) {
            let mut held = self.lock(first);
            for shard in (first..shards.end).step_by(stripes as usize) {
                f(&mut held, shard);
            }
        }
    }

    /// Runs `f` on every stripe in turn.
    pub fn each_stripe(&self, mut f: impl FnMut(&mut Held)) {
        for stripe in self.stripes.iter() {
            f(&mut stripe.inner.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }

    /// Carries over the unions of every shard of `shards` that gains
    /// nothing at level `below` (see [`ShardCache::carry_seen_past`]).
    pub fn carry_seen_past(&self, below: u32, targets: &[u64], shards: u64) {
        let stripes = self.stripes.len();
        for (i, stripe) in self.stripes.iter().enumerate() {
            let own = (i as u64..shards).step_by(stripes);
            let mut held = stripe.inner.lock().unwrap_or_else(|e| e.into_inner());
            held.cache.carry_seen_past(below, targets, own);
        }
    }

    /// Bytes the cache's stripes may hold together.
    pub fn budget(&self) -> u64 {
        let mut budget = 0;
        self.each_stripe(|held| budget += held.cache.budget());
        budget
    }

    /// Lets the stripes hold `limit` bytes together at most (each its share
    /// of it, as of the budget), evicting down to it
    /// ([`ShardCache::set_limit`]).
    pub fn set_limit(&self, limit: u64) {
        let budget = self.budget().max(1);
        self.each_stripe(|held| {
            let share = u128::from(limit) * u128::from(held.cache.budget()) / u128::from(budget);
            held.cache.set_limit(share as u64);
        });
    }

    /// Handles on every shard of `level` held, by stripe, when they are
    /// charged at most half the budget (`None` otherwise, or at level 0):
    /// held by the running level, they cannot be evicted until it ends, so
    /// the other half stays for what it loads and writes; and when a table
    /// of the job's `shards` takes at most a sixteenth of the budget (the
    /// last level's `table`, emptied, serves again). Each stripe is listed
    /// on a thread of the calling pool.
    pub fn freeze(&self, level: u32, shards: u64, table: Vec<Option<Bits>>) -> Option<FrozenLevel> {
        use rayon::prelude::*;
        if level == 0 {
            return None;
        }
        let budget = self.budget();
        let parts: Vec<(Vec<(u64, Bits)>, u64)> = self
            .stripes
            .par_iter()
            .map(|stripe| {
                let held = stripe.inner.lock().unwrap_or_else(|e| e.into_inner());
                held.cache.shards_of_level(level)
            })
            .collect();
        if parts.iter().map(|p| p.1).sum::<u64>() > budget / 2 || FrozenLevel::bytes(shards) > budget / 16 {
            return None;
        }
        Some(FrozenLevel::new(
            level,
            shards,
            table,
            parts.into_iter().map(|p| p.0).collect(),
        ))
    }

    /// Chunk files held open at most.
    pub fn file_capacity(&self) -> usize {
        self.files().capacity()
    }

    /// The open files, for looking up.
    fn files(&self) -> std::sync::RwLockReadGuard<'_, Readers> {
        self.files.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The open files, for opening and closing.
    pub fn files_mut(&self) -> std::sync::RwLockWriteGuard<'_, Readers> {
        self.files.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Stripes the cache is cut into.
    #[cfg(test)]
    pub fn stripes(&self) -> usize {
        self.stripes.len()
    }

    /// Seconds threads waited for a stripe since the last call.
    pub fn take_waited(&self) -> f64 {
        self.waited.swap(0, Ordering::Relaxed) as f64 * 1e-9
    }

    /// Shard buffers of the slab ever in use at once.
    pub fn slots_touched(&self) -> usize {
        self.lock(0).cache.slots_touched()
    }

    /// Highest bytes of shards held: the stripes' peaks summed (at least
    /// the peak of their sum).
    pub fn peak(&self) -> u64 {
        let mut peak = 0;
        self.each_stripe(|held| peak += held.cache.peak);
        peak
    }
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
    pub(super) fn readers_of(&self, keys: &[ShardKey]) -> Result<Vec<Option<Arc<ChunkReader>>>, TaskError> {
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
    pub(super) fn fetch(&self, keys: &[ShardKey], stats: &mut CacheStats) -> Result<Vec<Bits>, TaskError> {
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
    pub(super) fn indexed_count(&self, level: u32, shard: u64) -> Result<u64, TaskError> {
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
    pub(super) fn or_level_into(
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
    pub(super) fn union_of_levels(&self, below: u32, shard: u64, stats: &mut CacheStats) -> Result<Slot, TaskError> {
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
