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

mod fetch;

use super::frozen::FrozenLevel;
use super::readers::Readers;
use crate::cache::{Bits, ShardCache, ShardKey};
use crate::slab::Slab;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, TryLockError};
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
