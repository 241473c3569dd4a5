//! The coordinator's record of a job in its checkpoint directory.
//!
//! - `manifest.json` holds the job (including the text of a `perm:`/`tws:`
//!   definition, so `resume` needs nothing outside the checkpoint), every
//!   completed level's totals and timings, and which level is running. It
//!   stays small whatever the size of the space and is rewritten atomically
//!   (temp file, fsync, rename, fsync of the directory) when a level closes
//!   or the job stops.
//! - Each level's `done.jsonl` journal gets one line per completed chunk,
//!   written (unbuffered) as results are accepted and fsynced at most once a
//!   second: on an append or the server's clock once the last fsync is a
//!   second old, and when a level closes or the job stops. A killed process
//!   loses no record (the kernel has them); a power loss loses at most about
//!   the last second of records, whose chunks are recomputed. Per-chunk
//!   records of closed levels stay there (they check a recomputed file).
//!
//! A chunk is recorded only after its file is in place, so the records always
//! describe files that exist.

mod journal;

pub use journal::{read_journal, Journal, JOURNAL_SYNC_INTERVAL};

use anyhow::Context;
use cayley_shared::files::checkpoint::{CheckpointDir, KeepLevels, MANIFEST_FILE};
use cayley_shared::files::format::{FORMAT_VERSION, OLDEST_READABLE_VERSION};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::space::Space;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Refuses a checkpoint format version this build does not read.
fn check_version(version: Option<u64>, dir: &Path) -> anyhow::Result<()> {
    let readable = OLDEST_READABLE_VERSION as u64..=FORMAT_VERSION as u64;
    if !version.is_some_and(|v| readable.contains(&v)) {
        anyhow::bail!(
            "{}: checkpoint format version {}, this build reads versions {} to {}",
            dir.display(),
            version.map_or("unknown".into(), |v| v.to_string()),
            OLDEST_READABLE_VERSION,
            FORMAT_VERSION
        );
    }
    Ok(())
}

/// What identifies the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub puzzle: String,
    pub metric: String,
    pub shard_pieces: usize,
    pub low_pieces: usize,
    pub even: bool,
    pub shards: u64,
    /// Shards per chunk (task).
    pub chunk_shards: u64,
    pub chunks: u64,
    pub group_order: String,
    pub reachable_states: String,
    /// Text of the `perm:`/`tws:` definition file, so the job can be
    /// rebuilt after the file is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
}

/// The shortest level whose thread utilization is printed. Each task
/// reports the pool's CPU time since the worker's task before it ended, so
/// the first tasks of a level carry some of the level before: a level of
/// 50 ms is hundreds of tasks on the 4×4 Loopover, and its figure within a
/// few per cent. (Workers before the threads' clocks, which counted 10 ms
/// ticks, needed 0.2 s for 5 %.)
pub const MEASURABLE_LEVEL_SECONDS: f64 = 0.05;

/// Input statistics summed over tasks (fields missing from an older
/// record read as 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IoTotals {
    /// Compressed bytes read from the checkpoint.
    pub bytes_read: u64,
    /// Input shards asked of workers' caches, and how many they held.
    pub lookups: u64,
    pub hits: u64,
    /// Worker thread-seconds loading inputs, computing, and writing
    /// outputs (summed over each worker's threads).
    pub load_seconds: f64,
    pub compute_seconds: f64,
    pub write_seconds: f64,
    /// Seconds the tasks spent closing their files (index, header, fsync,
    /// rename), summed: off the workers' pools, overlapping other tasks'
    /// work. Records made before it was kept apart count it in
    /// `write_seconds`.
    pub close_seconds: f64,
    /// Worker thread-seconds working out which shards each target reads,
    /// and the rest of the tasks; with the three above, they add up to
    /// `busy_seconds` plus each task's start.
    pub sources_seconds: f64,
    pub other_seconds: f64,
    /// Of `other_seconds`, thread-seconds spent waiting for a worker's
    /// shared cache while another of its threads held it.
    pub wait_seconds: f64,
    /// Seconds of the tasks themselves, summed (worker-seconds of wall
    /// time; tasks of one worker may overlap).
    pub task_seconds: f64,
    /// Thread-seconds workers' threads spent on the level's shards.
    pub busy_seconds: f64,
    /// Seconds during which some worker computed no task of the level
    /// (summed over workers): reports, leases, the wait for the level
    /// before to close.
    pub idle_seconds: f64,
    /// Threads of the workers that computed the level (the sum over them
    /// once the level is closed; while it runs, the largest worker's).
    pub threads: u32,
    /// Shards (or blocks) expanded top-down and bottom-up, and the cheaper
    /// direction's cost bound summed over the kernels' choices (top-down:
    /// every source state; bottom-up: every legal move of every unseen
    /// state).
    pub top_down_units: u64,
    pub bottom_up_units: u64,
    pub cheaper_bound: u64,
}

impl IoTotals {
    /// Adds another task's statistics.
    pub fn add(&mut self, o: &IoTotals) {
        self.bytes_read += o.bytes_read;
        self.lookups += o.lookups;
        self.hits += o.hits;
        self.load_seconds += o.load_seconds;
        self.compute_seconds += o.compute_seconds;
        self.write_seconds += o.write_seconds;
        self.close_seconds += o.close_seconds;
        self.sources_seconds += o.sources_seconds;
        self.other_seconds += o.other_seconds;
        self.wait_seconds += o.wait_seconds;
        self.task_seconds += o.task_seconds;
        self.busy_seconds += o.busy_seconds;
        self.idle_seconds += o.idle_seconds;
        self.threads = self.threads.max(o.threads);
        self.top_down_units += o.top_down_units;
        self.bottom_up_units += o.bottom_up_units;
        self.cheaper_bound += o.cheaper_bound;
    }

    /// Share of the workers' threads busy with the level's shards over
    /// `wall` seconds; `None` for records made before it was measured, and
    /// for levels shorter than [`MEASURABLE_LEVEL_SECONDS`], whose busy
    /// time is mostly the level before's (a level of 10 ms showed 0 % or
    /// 166 % by chance).
    pub fn utilization(&self, wall: f64) -> Option<f64> {
        (self.threads > 0 && wall >= MEASURABLE_LEVEL_SECONDS)
            .then(|| self.busy_seconds / (f64::from(self.threads) * wall))
    }

    /// Fraction of lookups served from memory.
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            1.0
        } else {
            self.hits as f64 / self.lookups as f64
        }
    }
}

/// One completed level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRecord {
    /// States at this depth.
    pub count: u64,
    /// Bits set in the level's files (equal to `count` without symmetry).
    pub stored: u64,
    /// Classes of states under the job's symmetries.
    pub classes: u64,
    pub seconds: f64,
    /// Bytes of the level's chunk files.
    pub bytes: u64,
    /// Neighbour evaluations the level's tasks performed.
    pub evaluations: u64,
    pub io: IoTotals,
}

/// One completed chunk of a level (a line of its journal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkRecord {
    pub chunk: u64,
    pub stored: u64,
    pub states: u64,
    pub classes: u64,
    /// Size of the chunk file.
    pub bytes: u64,
    /// Its index checksum.
    pub checksum: u64,
    pub evaluations: u64,
    pub seconds: f64,
    pub io: IoTotals,
}

/// The level being computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunningLevel {
    /// Tasks read level `from_level` and write level `from_level + 1`.
    pub from_level: u32,
    /// Seconds spent on this level before the last interruption.
    pub seconds_before: f64,
    /// Older levels retired chunk by chunk: chunk `c` of each is deleted
    /// once chunk `c` of this level is recorded durably (see the
    /// coordinator's `server/state/retire.rs`). Decided when the level
    /// starts and kept here so that a resumed level decides the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retiring: Vec<u32>,
}

/// The manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    /// Job fingerprint as 16 hex digits.
    pub fingerprint: String,
    pub job: JobRecord,
    pub keep_levels: KeepLevels,
    /// Completed levels, index = depth (level 0 = solved).
    pub levels: Vec<LevelRecord>,
    pub running: Option<RunningLevel>,
    /// True once the table is complete (or the depth limit was reached).
    pub finished: bool,
    /// Depth limit the job was started with.
    pub max_depth: Option<u32>,
    /// `--memory` the job was started with (all in-process workers
    /// together), which `resume` reuses unless given another: resuming a
    /// run made to fit a budget must not silently take 60% of the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Absolute result folder (`--out`) the job was started with, which
    /// `resume` and `serve --resume` write to unless given another: the
    /// printed `cayley resume DIR` then finishes what `run --out` began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out: Option<PathBuf>,
    /// True for the temporary checkpoint of a `cayley run` without
    /// `--checkpoint-dir`, which a failed run keeps: the `resume` that
    /// finishes it removes it, as the run would have.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub temporary: bool,
    /// Set by `cayley resume --max-depth` on a job that finished at its
    /// depth limit: the coordinator goes on from its last level (and
    /// clears it). A job that ended by itself never gets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub go_deeper: bool,
}

impl Manifest {
    /// A fresh manifest for `job`: level 0 (the solved state) done.
    pub fn new(job: &Job, keep_levels: KeepLevels, max_depth: Option<u32>, definition: Option<String>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            fingerprint: format!("{:016x}", job.fingerprint()),
            job: JobRecord {
                puzzle: job.puzzle.spec.clone(),
                metric: job.puzzle.metric.name().to_string(),
                shard_pieces: job.space.shard_pieces(),
                low_pieces: match &job.space {
                    Space::Blocks(l) => l.low_pieces,
                    Space::Coded(_) | Space::Reduced(_) | Space::Oriented(_) => 0,
                },
                even: matches!(&job.space, Space::Blocks(l) if l.even),
                shards: job.space.shards(),
                chunk_shards: job.chunking.per_chunk,
                chunks: job.chunking.chunks(),
                group_order: job.group_order.to_string(),
                reachable_states: job.reachable_text(),
                definition,
            },
            keep_levels,
            levels: vec![LevelRecord {
                count: 1,
                stored: 1,
                classes: 1,
                seconds: 0.0,
                bytes: 0,
                evaluations: 0,
                io: IoTotals::default(),
            }],
            running: Some(RunningLevel {
                from_level: 0,
                seconds_before: 0.0,
                retiring: Vec::new(),
            }),
            finished: false,
            max_depth,
            memory: None,
            out: None,
            temporary: false,
            go_deeper: false,
        }
    }

    /// Whether `level` stays on disk once two newer levels are done
    /// ([`KeepLevels::keeps_given`] with this job's level files), for a
    /// space whose raw level takes `raw_level_bytes`.
    pub fn keeps_level(&self, level: u32, raw_level_bytes: u128) -> bool {
        let bytes: Vec<u64> = self.levels.iter().map(|l| l.bytes).collect();
        self.keep_levels.keeps_given(level, &bytes, raw_level_bytes)
    }

    /// Refuses a manifest of another format version or another job.
    pub fn check_matches(&self, job: &Job, dir: &Path) -> anyhow::Result<()> {
        check_version(Some(self.format_version as u64), dir)?;
        let expected = format!("{:016x}", job.fingerprint());
        if self.fingerprint != expected {
            anyhow::bail!(
                "{}: the checkpoint belongs to another job (fingerprint {}, this job has {})",
                dir.display(),
                self.fingerprint,
                expected
            );
        }
        // The fingerprint covers the job, not the plan's numbers recorded
        // beside it (shards, chunks), which bound every loop over files.
        let record = Manifest::new(job, self.keep_levels, self.max_depth, self.job.definition.clone()).job;
        if self.job != record {
            anyhow::bail!(
                "{}: {} describes job {} with another plan than this build makes for it; was it edited?",
                dir.display(),
                MANIFEST_FILE,
                self.job.puzzle
            );
        }
        Ok(())
    }

    /// Checks what every reader of the manifest relies on: level 0 (the
    /// solved state, one state) is recorded, and a job is either finished or
    /// computing the level after its last recorded one.
    pub fn check_consistent(&self) -> Result<(), String> {
        if self.levels.first().map(|l| l.count) != Some(1) {
            return Err("level 0 (the solved state) is not recorded as one state".into());
        }
        match (&self.running, self.finished) {
            (None, true) => Ok(()),
            // Every level tasks read is the frontier's or the one written:
            // a retired level must be older than both.
            (Some(r), false) if r.retiring.iter().any(|&l| l == 0 || l >= r.from_level) => Err(format!(
                "the running level reads level {} but retires levels {:?} chunk by chunk",
                r.from_level, r.retiring
            )),
            (Some(r), false) if r.from_level as usize + 1 == self.levels.len() => Ok(()),
            (Some(r), false) => Err(format!(
                "the running level reads level {}, but levels 0 to {} are recorded",
                r.from_level,
                self.levels.len() - 1
            )),
            (Some(_), true) => Err("a finished job with a running level".into()),
            (None, false) => Err("an unfinished job without a running level".into()),
        }
    }

    /// Total states of the completed levels.
    pub fn states(&self) -> u128 {
        self.levels.iter().map(|l| l.count as u128).sum()
    }

    /// The deepest level recorded.
    pub fn depth_reached(&self) -> u32 {
        self.levels.len().saturating_sub(1) as u32
    }

    /// True for a finished job whose table ended by itself (a level with no
    /// state), not at its depth limit: nothing lies deeper.
    pub fn ended(&self) -> bool {
        self.finished && self.max_depth.is_none_or(|m| self.depth_reached() < m)
    }

    /// Refuses `--max-depth depth` given again (`resume`, `serve --resume`)
    /// for a job that cannot go there: one whose table ended by itself, or
    /// a depth it has reached already.
    pub fn check_deeper(&self, depth: u32) -> anyhow::Result<()> {
        let reached = self.depth_reached();
        if self.ended() {
            anyhow::bail!(
                "--max-depth {}: the job is complete, its table ended at depth {}; there is nothing deeper",
                depth,
                reached
            );
        }
        if depth <= reached {
            anyhow::bail!(
                "--max-depth {}: the job has reached depth {} already; give a deeper limit, or leave --max-depth out {}",
                depth,
                reached,
                self.max_depth
                    .map_or("to run it to its end".to_string(), |m| format!("to keep its limit of {}", m))
            );
        }
        Ok(())
    }

    /// Takes `depth` (checked by [`Self::check_deeper`]) as the job's limit;
    /// a job that finished at its old one goes on from its last level.
    pub fn deepen(&mut self, depth: u32) {
        self.go_deeper = self.finished;
        self.max_depth = Some(depth);
    }
}

/// Loads the manifest of `dir`, if there is one.
pub fn load_manifest(dir: &CheckpointDir) -> anyhow::Result<Option<Manifest>> {
    let path = dir.manifest_path();
    match std::fs::read(&path) {
        Ok(bytes) => {
            // The version first: a manifest of another format is refused as
            // such, not as an unreadable file.
            let value: serde_json::Value =
                serde_json::from_slice(&bytes).with_context(|| format!("{}: unreadable manifest", path.display()))?;
            let version = value.get("format_version").and_then(|v| v.as_u64());
            check_version(version, dir.root())?;
            let manifest: Manifest =
                serde_json::from_value(value).with_context(|| format!("{}: unreadable manifest", path.display()))?;
            manifest
                .check_consistent()
                .map_err(|why| anyhow::anyhow!("{}: inconsistent manifest: {}", path.display(), why))?;
            Ok(Some(manifest))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Rewrites the manifest atomically (temp file, fsync, rename, fsync dir;
/// the fsyncs only when `write` is durable).
pub fn save_manifest(dir: &CheckpointDir, manifest: &Manifest, write: WriteOptions) -> anyhow::Result<()> {
    let path = dir.manifest_path();
    let tmp = dir.root().join(format!("{}.tmp", MANIFEST_FILE));
    let bytes = serde_json::to_vec_pretty(manifest)?;
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        write.sync_file(&f)?;
        std::fs::rename(&tmp, &path)?;
        write.sync_parent_dir(&path)
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}

/// Refuses a manifest that is not the one of the level files around it
/// (say, `manifest.json` copied from another checkpoint): its own
/// fingerprint check passes, and every file would then look damaged and be
/// deleted and recomputed, turning this job's work into the other's. Judged
/// on the headers of the newest level's files: refused when none of them is
/// this job's and some are another job's. A few foreign files among this
/// job's are damage, which resuming repairs.
pub fn check_files_belong(dir: &CheckpointDir, manifest: &Manifest, fingerprint: u64) -> anyhow::Result<()> {
    let newest = match &manifest.running {
        Some(r) => r.from_level + 1,
        None => manifest.levels.len() as u32 - 1,
    };
    let mut foreign = None;
    for level in (1..=newest).rev().take(2) {
        for chunk in 0..manifest.job.chunks {
            let path = dir.chunk_path(level, chunk);
            match cayley_shared::files::format::read_chunk_header(&path) {
                Ok(h) if h.id.fingerprint == fingerprint => return Ok(()),
                Ok(h) => foreign = foreign.or(Some((path, h.id.fingerprint))),
                Err(_) => {}
            }
        }
    }
    match foreign {
        Some((path, found)) => anyhow::bail!(
            "{}: the level files belong to another job than manifest.json describes ({} has fingerprint {:016x}, the manifest {:016x}); was manifest.json copied from another checkpoint?",
            dir.root().display(),
            path.display(),
            found,
            fingerprint
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod fuzz_tests;

/// A setting `resume` (or `serve --resume`) takes from the command line
/// when given (recording it for the next resume), else from the manifest,
/// saying so unless quiet; `(what, option)` name it in that message.
/// `None` when neither has one.
pub fn kept_or_given<T: Clone>(
    given: Option<T>,
    recorded: &mut Option<T>,
    (what, option): (&str, &str),
    quiet: bool,
    show: impl Fn(&T) -> String,
) -> Option<T> {
    match given {
        Some(value) => {
            *recorded = Some(value.clone());
            Some(value)
        }
        None => {
            if let (Some(value), false) = (recorded.as_ref(), quiet) {
                eprintln!(
                    "{} {}, as the job was started ({} changes it)",
                    what,
                    show(value),
                    option
                );
            }
            recorded.clone()
        }
    }
}
