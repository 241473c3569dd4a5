//! Contribution tables of [`FiberMap`](super::fiber::FiberMap)s, built once
//! and shared by every map that needs the same one.
//!
//! A map's tables depend only on each digit's position maps (μ, λ) and
//! target digit, not on the shard: on `loopover:3x5` a level needs 282,000
//! maps (12,841 shards × 22 moves) but only a few hundred distinct inner
//! tables of 14,400 entries. Building them per map cost 5–20 s per level
//! before any state was expanded; see docs/history.md.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Least bound on the bytes of tables kept. Past its bound the cache starts
/// over: the tables in use stay alive through their `Arc`s, and the next
/// maps rebuild what they need.
pub const TABLE_CACHE_BYTES: usize = 64 << 20;

/// Most bytes of tables kept, whatever the layout (see
/// [`TableCache::with_bound`]).
pub const MAX_TABLE_CACHE_BYTES: usize = 1 << 30;

/// Tables a thread keeps at hand in front of the shared cache: a 4×4
/// Loopover shard builds up to 24 maps of several tables each, and every
/// thread looking each one up under the shared lock made that lock the
/// one all threads queue on. Past this many the thread's front starts over.
const FRONT_ENTRIES: usize = 4096;

/// Shared, bounded cache of contribution tables, keyed by the bytes that
/// determine them (see `FiberMap::new`), with a front of recent tables per
/// thread that answers without the lock.
pub struct TableCache {
    state: Mutex<CacheState>,
    /// Tells this cache's tables apart from another's in a thread's front.
    id: u64,
    /// Counts the times the cache started over: a thread's front of an
    /// earlier generation is dropped, so no table outlives the bound for
    /// long.
    generation: AtomicU64,
    /// Bytes of tables kept before the cache starts over (raised once a
    /// worker knows its budget, [`TableCache::raise_bound`]).
    bound: AtomicUsize,
}

impl Default for TableCache {
    fn default() -> TableCache {
        TableCache::with_bound(TABLE_CACHE_BYTES)
    }
}

/// A thread's handle on a shared table.
///
/// Every map takes a handle on a table for each of its digits. With one
/// count of handles per table for all threads, that count's cache line
/// went back and forth between the cores: taking handles was 1.3% of a
/// 2-thread 4×4 run against 0.4% at 1 thread, and every added core meets
/// the others there. A `Local` is counted apart for each thread that
/// looked the table up (its front holds one per table), so the maps one
/// thread builds touch no count another thread's maps do. A digit's
/// table is a slice stored with its count, so that reaching its entries
/// through a `Local` takes as many steps as through the shared handle.
pub struct Local<T: ?Sized>(Arc<Arc<T>>);

impl<T: ?Sized> Clone for Local<T> {
    fn clone(&self) -> Local<T> {
        Local(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> std::ops::Deref for Local<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A digit's contribution by full rank.
pub type DigitTable = [u64];

/// A row's inner tables, one per forced parity.
pub type RowTables = Vec<Vec<u64>>;

/// A map by table key (a few dozen bytes), hashed by foldhash as the
/// worker's cache maps are. With the standard hasher (SipHash, built
/// against chosen keys, which these are not) the threads' front lookups
/// were 4.9 % of a 1-thread 4×4 run to depth 8 (perf samples; 2.1 % of it
/// hashing), with foldhash 2.6 % (xxh3 through a hasher written for these
/// maps: 2.9 %).
type ByKey<V> = HashMap<Vec<u8>, V, foldhash::fast::RandomState>;

/// The two kinds of tables by key: handles `D` on digits' tables, `R` on rows'.
struct Tables<D, R> {
    digits: ByKey<D>,
    rows: ByKey<R>,
}

impl<D, R> Default for Tables<D, R> {
    fn default() -> Self {
        Tables {
            digits: ByKey::default(),
            rows: ByKey::default(),
        }
    }
}

/// The shared cache's tables.
type SharedTables = Tables<Arc<DigitTable>, Arc<RowTables>>;

/// A thread's tables at hand.
type LocalTables = Tables<Local<DigitTable>, Local<RowTables>>;

#[derive(Default)]
struct CacheState {
    tables: SharedTables,
    bytes: usize,
    hits: u64,
    misses: u64,
}

/// A thread's tables at hand: those of one cache and generation.
#[derive(Default)]
struct Front {
    id: u64,
    generation: u64,
    tables: LocalTables,
    entries: usize,
}

thread_local! {
    static FRONT: RefCell<Front> = RefCell::default();
}

impl std::fmt::Debug for TableCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (hits, misses) = self.hit_counts();
        write!(f, "TableCache {{ hits: {}, misses: {} }}", hits, misses)
    }
}

impl TableCache {
    /// A cache that keeps up to `bound` bytes of tables, clamped to
    /// [`TABLE_CACHE_BYTES`]..=[`MAX_TABLE_CACHE_BYTES`].
    ///
    /// Why a bound per layout: the 3×3×3's permutations (its 8! corners
    /// the row) need about 900 distinct maps of 645 KB of tables, one per
    /// move and symmetry; under the 64 MiB bound they were rebuilt for
    /// almost every shard, 72% of the time at depth 6 (122 s for 161,150
    /// stored states).
    pub fn with_bound(bound: usize) -> TableCache {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        TableCache {
            state: Mutex::default(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            bound: AtomicUsize::new(bound.clamp(TABLE_CACHE_BYTES, MAX_TABLE_CACHE_BYTES)),
        }
    }

    /// Bytes of tables kept before the cache starts over.
    pub fn bound(&self) -> usize {
        self.bound.load(Ordering::Relaxed)
    }

    /// Lets the cache keep up to `bytes` of tables if that is more than it
    /// may now, up to [`MAX_TABLE_CACHE_BYTES`].
    pub fn raise_bound(&self, bytes: usize) {
        self.bound
            .fetch_max(bytes.min(MAX_TABLE_CACHE_BYTES), Ordering::Relaxed);
    }

    /// One digit's contribution by full rank, built by `build` on a miss.
    pub fn digit(&self, key: &[u8], build: impl FnOnce() -> Vec<u64>) -> Local<DigitTable> {
        self.get_or_build(
            key,
            |t| &mut t.digits,
            |t| &mut t.digits,
            || Arc::from(build()),
            |t| t.len() * 8,
        )
    }

    /// A row's inner tables (one per forced parity), built by `build` on a miss.
    pub fn rows(&self, key: &[u8], build: impl FnOnce() -> RowTables) -> Local<RowTables> {
        self.get_or_build(
            key,
            |t| &mut t.rows,
            |t| &mut t.rows,
            || Arc::new(build()),
            |t| t.iter().map(|r| r.len() * 8).sum(),
        )
    }

    /// Lookups the shared cache answered and lookups that built a table
    /// (a thread's front answers before it, uncounted).
    pub fn hit_counts(&self) -> (u64, u64) {
        let s = self.lock();
        (s.hits, s.misses)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        // A panic while holding the lock cannot leave a half-inserted table:
        // the maps are only ever given whole entries.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get_or_build<T: ?Sized>(
        &self,
        key: &[u8],
        at_hand: impl Fn(&mut LocalTables) -> &mut ByKey<Local<T>>,
        shared: impl Fn(&mut SharedTables) -> &mut ByKey<Arc<T>>,
        build: impl FnOnce() -> Arc<T>,
        bytes: impl Fn(&T) -> usize,
    ) -> Local<T> {
        let generation = self.generation.load(Ordering::Acquire);
        let found = FRONT.with(|front| {
            let mut front = front.borrow_mut();
            if (front.id, front.generation) != (self.id, generation) {
                *front = Front {
                    id: self.id,
                    generation,
                    ..Front::default()
                };
            }
            at_hand(&mut front.tables).get(key).cloned()
        });
        if let Some(table) = found {
            return table;
        }
        let table = Local(Arc::new(self.shared(key, &shared, build, bytes)));
        FRONT.with(|front| {
            let mut front = front.borrow_mut();
            if front.entries >= FRONT_ENTRIES {
                front.tables = Tables::default();
                front.entries = 0;
            }
            front.entries += 1;
            at_hand(&mut front.tables).insert(key.to_vec(), table.clone());
        });
        table
    }

    /// The table from the shared cache, built on a miss.
    fn shared<T: ?Sized>(
        &self,
        key: &[u8],
        map: &impl Fn(&mut SharedTables) -> &mut ByKey<Arc<T>>,
        build: impl FnOnce() -> Arc<T>,
        bytes: impl Fn(&T) -> usize,
    ) -> Arc<T> {
        {
            let mut s = self.lock();
            if let Some(t) = map(&mut s.tables).get(key).cloned() {
                s.hits += 1;
                return t;
            }
            s.misses += 1;
        }
        // Built outside the lock so that other threads keep going; two threads
        // may build the same table once, which is harmless.
        let table = build();
        let size = bytes(&table) + key.len();
        let mut s = self.lock();
        if s.bytes + size > self.bound() {
            s.tables = Tables::default();
            s.bytes = 0;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        s.bytes += size;
        map(&mut s.tables).insert(key.to_vec(), Arc::clone(&table));
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_built_once_and_shared() {
        let cache = TableCache::default();
        let a = cache.digit(&[1, 2, 3], || vec![7; 10]);
        // The same thread finds it at hand, another in the shared cache.
        let b = cache.digit(&[1, 2, 3], || unreachable!("already cached"));
        let c = std::thread::scope(|s| {
            s.spawn(|| cache.digit(&[1, 2, 3], || unreachable!("already cached")))
                .join()
                .unwrap()
        });
        assert!(Arc::ptr_eq(&*a.0, &*b.0) && Arc::ptr_eq(&*a.0, &*c.0), "one table");
        assert!(
            Arc::ptr_eq(&a.0, &b.0),
            "the same thread's front answers with its own handle"
        );
        assert!(!Arc::ptr_eq(&a.0, &c.0), "another thread has a handle of its own");
        let d = cache.digit(&[1, 2, 4], || vec![8; 10]);
        assert_eq!(d[0], 8);
        assert_eq!(cache.hit_counts(), (1, 2));
        // Another cache's tables are not this one's, whatever the key.
        let other = TableCache::default();
        assert_eq!(other.digit(&[1, 2, 3], || vec![9; 10])[0], 9);
    }

    #[test]
    fn the_cache_starts_over_when_full() {
        let cache = TableCache::default();
        let big = TABLE_CACHE_BYTES / 8 / 2 + 1;
        let first = cache.rows(&[0], || vec![vec![1; big]]);
        cache.rows(&[1], || vec![vec![2; big]]);
        // The first entry was dropped from the cache but stays valid for its holder.
        assert_eq!(first[0][0], 1);
        let again = cache.rows(&[0], || vec![vec![3; 4]]);
        assert_eq!(again[0][0], 3);
    }
}
