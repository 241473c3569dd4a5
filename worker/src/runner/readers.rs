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
use cayley_shared::job::chunking::MAX_CHUNKS;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// A full set of open files closes this fraction of them (the least
/// recently used) at once.
const EVICTED_PER_FULL: usize = 4;

/// Open chunk files, least recently used dropped first. Lookups take
/// `&self` (the marks of use are atomics), so that the worker's threads
/// look files up side by side under a read lock: every input of every
/// shard is one.
pub(super) struct Readers {
    /// Each file with the value of `opened` when it was last used.
    open: HashMap<(u32, u64), (Arc<ChunkReader>, AtomicU64), foldhash::fast::RandomState>,
    /// Files opened so far: the clock of the use marks.
    opened: u64,
    capacity: usize,
}

impl Readers {
    pub fn new() -> Readers {
        Readers::with_capacity(open_file_capacity())
    }

    fn with_capacity(capacity: usize) -> Readers {
        Readers {
            open: HashMap::default(),
            opened: 0,
            capacity,
        }
    }

    /// The reader of `(level, chunk)` if open.
    pub fn get(&self, level: u32, chunk: u64) -> Option<&Arc<ChunkReader>> {
        let (reader, used) = self.open.get(&(level, chunk))?;
        // Only the order of uses matters, and only roughly (which file
        // closes first when full): a file is marked with the number of
        // files opened when it was last used, written only when that
        // changed. Threads reading the same files then share their cache
        // lines; a counter bumped by every lookup (26 per shard) went back
        // and forth between the cores.
        if used.load(Ordering::Relaxed) != self.opened {
            used.store(self.opened, Ordering::Relaxed);
        }
        Some(reader)
    }

    /// Keeps `reader` open as `(level, chunk)`, closing the least recently
    /// used quarter of the files when full (at least one): one pass over
    /// the open files per quarter of them opened. Looking for the single
    /// oldest on every open was a pass per open, under the write lock that
    /// every lookup waits for: 16% of `cayley run sliding:4x4 --max-depth
    /// 12` when its plan had 20,808 chunk files a level, 4,096 open at most;
    /// a level now has at most as many chunks as may stay open, but a lower
    /// limit on open files, or a run reading two levels, still fills it.
    pub fn insert(&mut self, level: u32, chunk: u64, reader: ChunkReader) -> Arc<ChunkReader> {
        if self.open.len() >= self.capacity {
            let mut uses: Vec<(u64, (u32, u64))> = self
                .open
                .iter()
                .map(|(&key, (_, used))| (used.load(Ordering::Relaxed), key))
                .collect();
            let closing = (self.capacity / EVICTED_PER_FULL).clamp(1, uses.len());
            uses.select_nth_unstable(closing - 1);
            for (_, key) in &uses[..closing] {
                self.open.remove(key);
            }
        }
        self.opened += 1;
        let reader = Arc::new(reader);
        self.open
            .insert((level, chunk), (reader.clone(), AtomicU64::new(self.opened)));
        reader
    }

    /// Closes the files of levels below `level`.
    /// Files held open at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn retain_levels_from(&mut self, level: u32) {
        self.open.retain(|&(l, _), _| l >= level);
    }
}

/// Raises the process's limit on open files and grows its table of file
/// descriptors for the chunk files a worker keeps open. Called first thing
/// in `main`, while the process has one thread: growing the table then
/// costs nothing, while in a process of several threads each doubling
/// waits for an RCU grace period, every thread that opens or closes a
/// file blocked meanwhile. On the 4×4 Loopover (309 chunk files a level)
/// the 256th and the 512th descriptor stalled both threads 5–11 ms in
/// the maps of depths 1 and 2 (14–21 ms → 6–8 ms each with the table
/// grown first). Without the call (a library user) the workers still run,
/// and the table grows as files open.
pub fn prepare_open_files() {
    open_file_capacity();
}

/// Chunk files a worker may keep open: a quarter of the process's limit on
/// open files (the rest is for sockets, output files and the other workers
/// of the process), between 64 and the most chunks a level is cut into
/// ([`MAX_CHUNKS`], 4,096), so that with the usual limits a level's files
/// all stay open.
fn open_file_capacity() -> usize {
    static CAPACITY: OnceLock<u64> = OnceLock::new();
    *CAPACITY.get_or_init(|| {
        let limit = raise_open_file_limit();
        let capacity = (limit / 4).clamp(64, MAX_CHUNKS);
        reserve_descriptors((capacity + DESCRIPTORS_BESIDE_READERS).min(limit.saturating_sub(1)));
        capacity
    }) as usize
}

/// Descriptors a worker's process holds beside its open chunk files:
/// output files, sockets, the runtime's own.
const DESCRIPTORS_BESIDE_READERS: u64 = 256;

/// Grows the process's table of file descriptors at once to hold numbers
/// up to `highest` (see [`prepare_open_files`]).
fn reserve_descriptors(highest: u64) {
    let Ok(null) = std::fs::File::open("/dev/null") else {
        return;
    };
    use std::os::fd::AsRawFd;
    let Ok(highest) = libc::c_int::try_from(highest) else {
        return;
    };
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (the lowest free one
    // at or above `highest`) for the open /dev/null, touching no other
    // descriptor; it is closed at once, and `null` outlives both calls.
    unsafe {
        let high = libc::fcntl(null.as_raw_fd(), libc::F_DUPFD_CLOEXEC, highest);
        if high >= 0 {
            libc::close(high);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use cayley_shared::files::format::{write_empty_chunks, ChunkId};
    use cayley_shared::files::WriteOptions;
    use std::path::Path;

    /// The kernel's own figure: `FDSize` in /proc/self/status, the slots
    /// of the process's descriptor table.
    fn descriptor_slots() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("FDSize:")).unwrap();
        line["FDSize:".len()..].trim().parse().unwrap()
    }

    #[test]
    fn the_descriptor_table_is_grown_ahead_of_the_files() {
        let before = descriptor_slots();
        let limit = raise_open_file_limit();
        let wanted = (2 * before + 1).min(limit - 1);
        reserve_descriptors(wanted);
        assert!(
            descriptor_slots() > wanted,
            "{} slots after reserving {}",
            descriptor_slots(),
            wanted
        );
    }

    /// `count` empty chunk files of level 1 in `dir`, and a function that
    /// opens one.
    fn chunk_files(dir: &Path, count: u64) -> impl Fn(u64) -> ChunkReader {
        let id = |chunk| ChunkId {
            fingerprint: 7,
            level: 1,
            chunk,
            first_shard: chunk * 4,
            shards: 4,
            shard_words: 8,
        };
        let chunks: Vec<_> = (0..count).map(|c| (dir.join(format!("{c}")), id(c))).collect();
        for written in write_empty_chunks(&chunks, WriteOptions::default()) {
            written.unwrap();
        }
        move |c: u64| ChunkReader::open(&chunks[c as usize].0, &id(c)).unwrap()
    }

    #[test]
    fn a_full_set_closes_a_file_not_used_since_the_others_were_opened() {
        let dir = tempfile::tempdir().unwrap();
        let reader = chunk_files(dir.path(), 5);
        let mut readers = Readers::with_capacity(3);
        for c in 0..3 {
            readers.insert(1, c, reader(c));
        }
        // 0 and 2 used after the last file was opened: 1 goes.
        assert_eq!(readers.get(1, 0).unwrap().header().id.chunk, 0);
        assert!(readers.get(1, 2).is_some());
        readers.insert(1, 3, reader(3));
        assert!(readers.get(1, 1).is_none());
        // 0 was not used since 3 was opened, 2 and 3 were: 0 goes.
        assert!(readers.get(1, 2).is_some() && readers.get(1, 3).is_some());
        readers.insert(1, 4, reader(4));
        assert!(readers.get(1, 0).is_none());
        assert!([2, 3, 4].iter().all(|&c| readers.get(1, c).is_some()));
        readers.retain_levels_from(2);
        assert!(readers.get(1, 4).is_none());
    }

    #[test]
    fn a_full_set_closes_its_least_recently_used_quarter() {
        let dir = tempfile::tempdir().unwrap();
        let reader = chunk_files(dir.path(), 10);
        let mut readers = Readers::with_capacity(8);
        // Files 0..8 are marked 1..=8 as they open; 3 and 6, used after
        // the last, take the newest mark.
        for c in 0..8 {
            readers.insert(1, c, reader(c));
        }
        for c in [3, 6] {
            assert!(readers.get(1, c).is_some());
        }
        readers.insert(1, 8, reader(8));
        // A quarter of 8: the two oldest marks, files 0 and 1, go.
        let open: Vec<u64> = (0..9).filter(|&c| readers.get(1, c).is_some()).collect();
        assert_eq!(open, vec![2, 3, 4, 5, 6, 7, 8]);
        // Not full again until one more: nothing else closes.
        readers.insert(1, 9, reader(9));
        assert_eq!(readers.open.len(), 8);
    }
}
