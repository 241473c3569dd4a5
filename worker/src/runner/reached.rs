//! How many states of each shard the levels so far hold, summed from their
//! chunk indexes as the worker enters each level: a shard whose every
//! state is reached can gain nothing, and its task writes it empty without
//! running the kernel.
//!
//! Why: a level's kernel excludes the states already reached through the
//! shard's union of earlier levels, which the cache keeps only in free
//! room. Out of core the unions are the first to go, and the kernel then
//! excludes only `F_{d-1}` and `F_d` (and `F_{d-2}` when kept): the 4×4
//! Loopover's depth 14 (8,880 states, under `--memory 15G` on 2 cores)
//! expanded every one of depth 13's 5·10¹¹ states top-down, 643 of the
//! run's 3,320 CPU seconds, while all but 101 of its 499,961 shards had
//! no state left to find (with this map: 3.0 s instead of 333 s).
//!
//! Exact by construction: each bit of a shard is one state, set in exactly
//! one level, so the counts never pass the shard's capacity
//! ([`Space::shard_capacity`], at least the bits that can be set) and
//! reach it only when every state of the shard is reached. A capacity
//! that is larger than the states a shard can hold only means that the
//! shard never looks full.
//!
//! Bounded: four bytes a shard (2 MB on the 4×4), kept only where that is
//! at most a sixteenth of the cache's budget or 1 MiB.
//!
//! Saved: each level's counts go to a counts file in its folder
//! ([`cayley_shared::files::reached`]), written by the first worker to sum
//! them. A worker that starts later (a resumed job whose early levels were
//! retired, a worker added to a cluster) starts from the newest one and
//! sums only the levels after it. Without one, it sums from the first
//! level; where a level it needs is unreadable (retired, damaged) it stops
//! keeping counts for the job, and its levels run as before.
//!
//! [`Space::shard_capacity`]: cayley_shared::space::Space::shard_capacity

use super::frozen::KnownEmpty;
use super::{TaskError, TaskRunner};
use cayley_shared::files::reached::{read_counts, write_counts, CountsId};
use rayon::prelude::*;
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Bytes of counts kept whatever the budget: a budget of a few shards
/// (the tests', or a machine's smallest) still has room for them.
const MOST_WITHOUT_BUDGET: u64 = 1 << 20;

/// The counts, and the levels they sum.
#[derive(Default)]
pub(super) struct Reached {
    state: Mutex<Counts>,
    /// The thread writing the last counts file, apart from the level's
    /// tasks (see [`TaskRunner::save_counts`]); joined before the next is
    /// written and when the worker's runner goes.
    saving: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Reached {
    fn drop(&mut self) {
        let saving = self.saving.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = saving.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Default)]
struct Counts {
    /// States reached per shard in levels `0..=through`; empty until the
    /// first level is summed.
    per_shard: Vec<u32>,
    /// The last level summed, `None` before the first.
    through: Option<u32>,
    /// Shards whose count is their capacity.
    full: u64,
    /// A level could not be read (retired, damaged) or a shard counted
    /// more states than it holds: no more counting for this job.
    given_up: bool,
}

impl Reached {
    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskRunner {
    /// One bit per shard, set where the shard still has states to reach
    /// after level `level` and clear where every one is reached; `None`
    /// when no shard is full, or when that is not known (see the module's
    /// notes). Sums the levels not summed yet, up to `level` (a worker with
    /// no counts starts from the newest counts file), and saves the counts
    /// through `level`. `known` tells chunks of `level` empty unread.
    pub(super) fn open_shards(&self, level: u32, known: KnownEmpty) -> Option<Vec<u64>> {
        let capacity = u32::try_from(self.ctx.job.space.shard_capacity()).ok()?;
        let shards = self.ctx.job.space.shards();
        if shards * 4 > (self.store.budget() / 16).max(MOST_WITHOUT_BUDGET) {
            return None;
        }
        let mut counts = self.reached.lock();
        if counts.given_up {
            return None;
        }
        if counts.per_shard.is_empty() {
            *counts = self.saved_counts(level, capacity).unwrap_or_else(|| Counts {
                // Every page written now, on the pool. Zeroed pages left to
                // the kernel (`vec![0; n]`) were first read (a level's sum,
                // the counts file) and so mapped to its shared zero page;
                // the first store to each then flushed the TLB of every
                // core the process ran on: 45 of 4,000 samples a second of
                // a 2-thread 4×4 to depth 8 (docs/history.md, "The
                // Intel VM's figures").
                per_shard: self
                    .pool
                    .install(|| (0..shards).into_par_iter().map(|_| 0u32).collect()),
                ..Counts::default()
            });
        }
        let first = counts.through.map_or(0, |t| t + 1);
        if first > level + 1 {
            // A repair of an earlier level: the counts hold states of later
            // levels, which the shard's task must not take as reached.
            return None;
        }
        for summed in first..=level {
            match self.add_level(summed, &mut counts.per_shard, capacity, known) {
                Ok(filled) => counts.full += filled,
                Err(e) => {
                    tracing::debug!("not counting reached states per shard: level {}: {}", summed, e);
                    *counts = Counts {
                        given_up: true,
                        ..Counts::default()
                    };
                    return None;
                }
            }
            counts.through = Some(summed);
        }
        if first <= level {
            self.save_counts(level, &counts.per_shard);
        }
        if counts.full == 0 {
            return None;
        }
        let per_shard = &counts.per_shard;
        Some(self.pool.install(|| {
            per_shard
                .par_chunks(64)
                .map(|run| {
                    run.iter()
                        .enumerate()
                        .fold(0u64, |bits, (i, &n)| bits | u64::from(n != capacity) << i)
                })
                .collect()
        }))
    }

    /// The counts of the newest readable counts file through a level up to
    /// `level`; `None` where there is none (then the levels are summed from
    /// the first, as far as their files are there). A damaged file, or one
    /// that counts more states than a shard holds, is passed over and
    /// deleted, so that the next worker to sum its level writes it again.
    fn saved_counts(&self, level: u32, capacity: u32) -> Option<Counts> {
        (1..=level).rev().find_map(|through| {
            let path = self.checkpoint.reached_path(through);
            if !path.exists() {
                return None;
            }
            let read = read_counts(&path, self.counts_id(through)).and_then(|counts| {
                match counts.iter().position(|&n| n > capacity) {
                    Some(shard) => Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}: shard {} counts more states than it holds", path.display(), shard),
                    )),
                    None => Ok(counts),
                }
            });
            match read {
                Ok(per_shard) => Some(Counts {
                    full: per_shard.iter().filter(|&&n| n == capacity).count() as u64,
                    per_shard,
                    through: Some(through),
                    given_up: false,
                }),
                Err(e) => {
                    tracing::debug!("counts of reached states passed over: {}", e);
                    // (A file that could not be read now stays for the next.)
                    if e.kind() == std::io::ErrorKind::InvalidData {
                        let _ = std::fs::remove_file(&path);
                    }
                    None
                }
            }
        })
    }

    /// Writes the counts through `level` to its folder unless a worker
    /// already has (every worker's are the same), and deletes those
    /// through levels below `level - 1`: a worker that starts while level
    /// `level + 1` runs needs the counts through `level - 1` at most (a
    /// copy of a task of level `level`), so a job holds two files whatever
    /// its retention. Level 0 has no folder and nothing worth saving. A
    /// failure costs only a later worker's time: it is logged, never fatal.
    ///
    /// The file is written from a copy on a thread of its own, since every
    /// task of the level waits while its first task sums the counts: the
    /// 15-puzzle's 6,055,128 shards are a 24 MB file a level, which took a
    /// tenth of each of its sparse levels to hash and write (the copy:
    /// a few ms; the 4×4 Loopover's 2 MB, a fifth of a ms).
    fn save_counts(&self, level: u32, per_shard: &[u32]) {
        let path = self.checkpoint.reached_path(level);
        if level == 0 || path.exists() {
            return;
        }
        let mut saving = self.reached.saving.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = saving.take() {
            let _ = last.join();
        }
        let id = self.counts_id(level);
        let older: Vec<_> = (1..level.saturating_sub(1))
            .map(|older| self.checkpoint.reached_path(older))
            .collect();
        let counts = per_shard.to_vec();
        let save = move || {
            if let Err(e) = write_counts(&path, id, &counts) {
                tracing::debug!("counts of reached states not saved: {}: {}", path.display(), e);
                return;
            }
            for older in older {
                // Mostly gone already (or with their retired folders).
                let _ = std::fs::remove_file(older);
            }
        };
        match std::thread::Builder::new().name("cayley-counts".into()).spawn(save) {
            Ok(thread) => *saving = Some(thread),
            Err(e) => tracing::debug!("counts of reached states not saved: no thread: {}", e),
        }
    }

    /// Waits for the counts file being written, if any.
    #[cfg(test)]
    pub(super) fn counts_saved(&self) {
        let thread = self.reached.saving.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            thread.join().expect("the counts thread does not panic");
        }
    }

    fn counts_id(&self, through: u32) -> CountsId {
        CountsId {
            fingerprint: self.fingerprint,
            through,
            shards: self.ctx.job.space.shards(),
        }
    }

    /// Adds level `level`'s states per shard (from its chunk indexes, on
    /// the pool) to `per_shard`; returns how many shards it fills to
    /// `capacity`. A chunk without states (most of the first levels')
    /// is passed over, unopened where `known` tells it empty. A count
    /// above `capacity` is an error.
    fn add_level(&self, level: u32, per_shard: &mut [u32], capacity: u32, known: KnownEmpty) -> Result<u64, TaskError> {
        let job = &self.ctx.job;
        if level == 0 {
            let solved = &mut per_shard[job.solved_shard() as usize];
            *solved += 1;
            return Ok(u64::from(*solved == capacity));
        }
        let chunking = &job.chunking;
        self.pool.install(|| {
            per_shard
                .par_chunks_mut(chunking.per_chunk as usize)
                .enumerate()
                .map(|(chunk, counts)| {
                    let shards = chunking.shards_of(chunk as u64);
                    if known.none_in(level, shards.clone()) {
                        return Ok(0);
                    }
                    let first = shards.start;
                    let reader = self.readers_of(&[(level, first)])?.pop().flatten();
                    let reader = reader.expect("a level above 0 has files");
                    if reader.header().popcount == 0 {
                        return Ok(0);
                    }
                    let mut filled = 0;
                    for (i, count) in counts.iter_mut().enumerate() {
                        let added = reader.popcount(i);
                        if added == 0 {
                            continue;
                        }
                        *count = u32::try_from(added)
                            .ok()
                            .and_then(|n| count.checked_add(n))
                            .filter(|&n| n <= capacity)
                            .ok_or_else(|| {
                                TaskError::Other(format!("shard {} counts more states than it holds", first + i as u64))
                            })?;
                        filled += u64::from(*count == capacity);
                    }
                    Ok(filled)
                })
                .try_reduce(|| 0, |a, b| Ok(a + b))
        })
    }
}

/// The shards both maps let gain states: the sparse map's `targets` less
/// the full shards `open` leaves out (either may be unknown: `None`).
pub(super) fn only_open(targets: Option<Vec<u64>>, open: Option<Vec<u64>>) -> Option<Vec<u64>> {
    match (targets, open) {
        (Some(mut targets), Some(open)) => {
            targets.iter_mut().zip(&open).for_each(|(t, o)| *t &= o);
            Some(targets)
        }
        (targets, open) => targets.or(open),
    }
}
