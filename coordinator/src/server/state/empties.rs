//! Chunks of the running level that a worker's map of a sparse level shows
//! gaining no state: the coordinator makes their files (links to one
//! header-only file of the level, read as the file the chunk's own task
//! would write) and records them, instead of leasing
//! each as a task. On the 4×4 Loopover's depths 1–4 that is 219–307 of 309
//! chunks a level, each a lease, a report and a file check otherwise.
//!
//! Safe because the claim is the one the chunk's own task would act on:
//! a task reads the same level's indexes, works out the same map and writes
//! the same header-only file for such a chunk without computing a shard.
//! A task of the chunk already running finishes (its file holds the same
//! empty chunk, with the same index checksum) or stops, its result ignored
//! as already recorded.
//!
//! Like a result, in three steps so that no file is written under the
//! state lock: [`JobState::begin_empties`], [`write_empties`] (no lock),
//! [`JobState::finish_empties`].

use super::{JobState, Phase};
use crate::manifest::{ChunkRecord, IoTotals};
use cayley_shared::files::format::{write_empty_chunks, ChunkId};
use cayley_shared::files::WriteOptions;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Chunks of the running level to write empty and record.
#[derive(Clone, Debug)]
pub struct Empties {
    /// The level the chunks' tasks read.
    from_level: u32,
    chunks: Vec<(u64, PathBuf, ChunkId)>,
    write: WriteOptions,
}

/// A written empty chunk's file size and index checksum, or why it could
/// not be written.
pub type Written = Result<(u64, u64), String>;

impl Empties {
    /// What step 2 gives when it could not run at all: every chunk unwritten.
    pub fn unwritten(&self, why: &str) -> Vec<Written> {
        self.chunks.iter().map(|_| Err(why.to_string())).collect()
    }
}

/// Step 2, without the state lock: makes each chunk's file
/// ([`write_empty_chunks`]: links to one shared file, each directory
/// fsynced once).
pub fn write_empties(e: &Empties) -> Vec<Written> {
    let files: Vec<(PathBuf, ChunkId)> = e.chunks.iter().map(|(_, path, id)| (path.clone(), *id)).collect();
    write_empty_chunks(&files, e.write)
        .into_iter()
        .map(|r| {
            r.map(|(header, bytes)| (bytes, header.index_checksum))
                .map_err(|err| err.to_string())
        })
        .collect()
}

impl JobState {
    /// The level lease `lease_id`'s task reads, while it is current.
    pub fn leased_level(&self, lease_id: u64) -> Option<u32> {
        self.leases.get(&lease_id).map(|l| l.key.0)
    }

    /// All three steps at once, for callers that hold no lock to release.
    #[cfg(test)]
    pub fn record_empties_now(&mut self, from_level: u32, chunks: &[u64]) {
        if let Some(empties) = self.begin_empties(from_level, chunks) {
            let written = write_empties(&empties);
            self.finish_empties(empties, written);
        }
    }

    /// Step 1: of the chunks a task reading `from_level` reports gaining
    /// nothing, those of the running level still to do.
    pub fn begin_empties(&mut self, from_level: u32, chunks: &[u64]) -> Option<Empties> {
        let running = self.manifest.running.as_ref()?.from_level;
        if running != from_level || self.phase != Phase::Running {
            return None;
        }
        let level = from_level + 1;
        let chunks: Vec<(u64, PathBuf, ChunkId)> = chunks
            .iter()
            .copied()
            .filter(|&c| c < self.job.chunking.chunks() && !self.done.contains_key(&c))
            .collect::<BTreeSet<u64>>()
            .into_iter()
            .map(|c| (c, self.checkpoint.chunk_path(level, c), self.chunk_id(level, c)))
            .collect();
        // Not leased while their files are written: a lease of one would
        // be a task for nothing (those already leased run on, and end).
        for (chunk, _, _) in &chunks {
            self.pending.remove(&(from_level, *chunk));
        }
        if chunks.is_empty() {
            return None;
        }
        self.empties_writing += 1;
        Some(Empties {
            from_level,
            chunks,
            write: self.write,
        })
    }

    /// Step 3: records every chunk written and still not done. One that
    /// could not be written is queued again as a task (whose worker then
    /// meets the same problem and reports it).
    pub fn finish_empties(&mut self, e: Empties, written: Vec<Written>) {
        self.empties_writing -= 1;
        // The level may have closed meanwhile (its other tasks did every
        // chunk), or the job stopped: then there is nothing to record.
        let running = self.manifest.running.as_ref().map(|r| r.from_level);
        if self.phase != Phase::Running || running != Some(e.from_level) {
            return;
        }
        for ((chunk, path, _), result) in e.chunks.into_iter().zip(written) {
            let key = (e.from_level, chunk);
            match result {
                Err(why) => {
                    tracing::warn!("cannot write the empty chunk {}: {}", path.display(), why);
                    if !self.is_done(key) && !self.is_queued_or_leased(key) {
                        self.pending.insert(key);
                    }
                }
                Ok(_) if self.is_done(key) => {}
                Ok((bytes, checksum)) => {
                    let record = ChunkRecord {
                        chunk,
                        stored: 0,
                        states: 0,
                        classes: 0,
                        bytes,
                        checksum,
                        evaluations: 0,
                        seconds: 0.0,
                        io: IoTotals::default(),
                    };
                    if !self.record_chunk(key, record) {
                        return;
                    }
                    self.lease_stats.empties_recorded += 1;
                }
            }
        }
        tracing::debug!(
            "level {}: {} chunks recorded empty so far without a task",
            e.from_level + 1,
            self.lease_stats.empties_recorded
        );
        let (blocks, states) = self.level_progress();
        self.reporter.progress(blocks, states);
        self.maybe_complete_level();
    }
}
