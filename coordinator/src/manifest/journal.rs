//! A level's `done.jsonl`: one line per completed chunk, appended as
//! results are accepted and fsynced at most once a second (see the parent
//! module's notes).

use super::ChunkRecord;
use anyhow::Context;
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::WriteOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Appends chunk records to a level's journal.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    /// Whether [`Journal::sync`] fsyncs.
    write: WriteOptions,
    unsynced: bool,
    last_sync: Instant,
}

/// Journal lines are fsynced at most this often (and at level close and stop).
pub const JOURNAL_SYNC_INTERVAL: Duration = Duration::from_secs(1);

impl Journal {
    /// Opens the journal of `level` for appending; `fresh` empties it first
    /// (a level that is only now starting has no valid records). Its syncs
    /// fsync when `write` is durable.
    pub fn open(dir: &CheckpointDir, level: u32, fresh: bool, write: WriteOptions) -> anyhow::Result<Journal> {
        let path = dir.journal_path(level);
        std::fs::create_dir_all(dir.level_dir(level))
            .with_context(|| format!("cannot create {}", dir.level_dir(level).display()))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        if fresh {
            file.set_len(0)
                .with_context(|| format!("cannot reset {}", path.display()))?;
        }
        Ok(Journal {
            path,
            file,
            write,
            unsynced: false,
            last_sync: Instant::now(),
        })
    }

    /// Appends one record; fsyncs when the last fsync is a second old.
    pub fn append(&mut self, record: &ChunkRecord) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.unsynced = true;
        self.sync_if_due()
    }

    /// Fsyncs when records wait and the last fsync is a second old. The
    /// server also calls it on a clock, so a record appended just before a
    /// quiet spell (every worker busy with a long task) is durable a second
    /// later, not only when the next one arrives.
    pub fn sync_if_due(&mut self) -> anyhow::Result<()> {
        if self.unsynced && self.last_sync.elapsed() >= JOURNAL_SYNC_INTERVAL {
            self.sync()?;
        }
        Ok(())
    }

    /// True when every appended record is durable (synced, or nothing
    /// appended since the last sync).
    pub fn is_synced(&self) -> bool {
        !self.unsynced
    }

    /// Makes every appended record durable.
    pub fn sync(&mut self) -> anyhow::Result<()> {
        if self.unsynced {
            self.write
                .sync_file(&self.file)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
            self.unsynced = false;
        }
        self.last_sync = Instant::now();
        Ok(())
    }
}

/// The records of a level's journal (the last record of a chunk wins). A
/// torn or unreadable line, the trace of a crash mid-write, is skipped: its
/// chunk is simply recomputed.
pub fn read_journal(dir: &CheckpointDir, level: u32) -> anyhow::Result<std::collections::BTreeMap<u64, ChunkRecord>> {
    let path = dir.journal_path(level);
    let text = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut records = std::collections::BTreeMap::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(r) = serde_json::from_slice::<ChunkRecord>(line) {
            records.insert(r.chunk, r);
        }
    }
    Ok(records)
}
