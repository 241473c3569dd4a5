//! The chunk files a worker keeps open, header and index verified.
//!
//! A task reads the chunk files of two levels (its sources' level and the
//! one before); the 4×4 Loopover has 309 chunks per level. With room for
//! only 256 open files, and all of them dropped at once when full, a worker
//! reopened and re-verified files all the time (`ChunkReader::open` was 4.5%
//! of its time at depth 8). Now the limit follows the process's open-file
//! limit (raised to its hard limit once), and the least recently used file
//! is closed first.

use cayley_shared::files::format::ChunkReader;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Open chunk files, least recently used dropped first. Lookups take
/// `&self` (the ticks are atomics), so that the worker's threads look files
/// up side by side under a read lock: every input of every shard is one.
pub(super) struct Readers {
    open: HashMap<(u32, u64), (Arc<ChunkReader>, AtomicU64), foldhash::fast::RandomState>,
    tick: AtomicU64,
    capacity: usize,
}

impl Readers {
    pub fn new() -> Readers {
        Readers {
            open: HashMap::default(),
            tick: AtomicU64::new(0),
            capacity: open_file_capacity(),
        }
    }

    /// The reader of `(level, chunk)` if open.
    pub fn get(&self, level: u32, chunk: u64) -> Option<Arc<ChunkReader>> {
        let entry = self.open.get(&(level, chunk))?;
        // Only the order of uses matters, and only roughly (which file
        // closes first when full): relaxed ticks suffice.
        entry
            .1
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some(entry.0.clone())
    }

    /// Keeps `reader` open as `(level, chunk)`, closing the least recently
    /// used file when full.
    pub fn insert(&mut self, level: u32, chunk: u64, reader: ChunkReader) -> Arc<ChunkReader> {
        if self.open.len() >= self.capacity {
            let oldest = self
                .open
                .iter()
                .min_by_key(|(_, (_, tick))| tick.load(Ordering::Relaxed))
                .map(|(&key, _)| key);
            if let Some(key) = oldest {
                self.open.remove(&key);
            }
        }
        let tick = AtomicU64::new(self.tick.fetch_add(1, Ordering::Relaxed));
        let reader = Arc::new(reader);
        self.open.insert((level, chunk), (reader.clone(), tick));
        reader
    }

    /// Closes the files of levels below `level`.
    pub fn retain_levels_from(&mut self, level: u32) {
        self.open.retain(|&(l, _), _| l >= level);
    }
}

/// Chunk files a worker may keep open: a quarter of the process's limit on
/// open files (the rest is for sockets, output files and the other workers
/// of the process), between 64 and 4,096.
fn open_file_capacity() -> usize {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    let limit = *LIMIT.get_or_init(raise_open_file_limit);
    (limit / 4).clamp(64, 4096) as usize
}

/// Raises the soft limit on open files to the hard limit; returns the soft
/// limit in force.
fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed
    // by pointer, which lives on this stack frame for the calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 256;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur;
            }
        }
    }
    limit.rlim_cur
}
