//! The checkpoint directory of a job and its `manifest.json`.
//!
//! The manifest records the job, the shard plan, every completed level with
//! its count and timing, and the completed tasks of the running level. It is
//! rewritten atomically (when a level closes, when the job stops, and at most
//! once a second as tasks complete), so after a crash at any moment it
//! describes a consistent prefix of the work, and every frontier file it
//! lists exists (files are renamed into place before they are recorded).

use crate::format::FORMAT_VERSION;
use crate::job::Job;
use crate::space::Space;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the manifest inside a checkpoint directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Which levels stay on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepLevels {
    /// Every level (needed to print shortest words for antipodes).
    #[default]
    All,
    /// Only the two levels the next level reads (smallest disk).
    Last2,
}

impl KeepLevels {
    /// Refuses a retention that would delete levels `job` still reads.
    pub fn check_for(self, job: &Job) -> anyhow::Result<()> {
        if job.directed && self == KeepLevels::Last2 {
            anyhow::bail!(
                "'{}' has directed generators: every earlier level is read again to tell new states from seen ones, so --keep-levels last2 cannot be used",
                job.puzzle.spec
            );
        }
        Ok(())
    }
}

impl std::str::FromStr for KeepLevels {
    type Err = String;
    fn from_str(s: &str) -> Result<KeepLevels, String> {
        match s {
            "all" => Ok(KeepLevels::All),
            "last2" => Ok(KeepLevels::Last2),
            other => Err(format!("unknown retention '{}' (known: all, last2)", other)),
        }
    }
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
    pub group_order: String,
    pub reachable_states: String,
}

/// One completed level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRecord {
    pub count: u64,
    pub seconds: f64,
    /// Bytes of the level's frontier files.
    pub bytes: u64,
    /// States of each shard (to validate a recomputed file).
    pub shard_counts: Vec<u64>,
    /// Neighbour evaluations the level's tasks performed.
    #[serde(default)]
    pub evaluations: u64,
}

/// One completed task of the running level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub count: u64,
    pub bytes: u64,
    pub evaluations: u64,
}

/// The level being computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunningLevel {
    /// Tasks read level `from_level` and write level `from_level + 1`.
    pub from_level: u32,
    /// Completed tasks by shard.
    pub done: BTreeMap<u64, ShardRecord>,
    /// Seconds spent on this level before the last interruption.
    pub seconds_before: f64,
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
}

impl Manifest {
    /// A fresh manifest for `job`.
    pub fn new(job: &Job, keep_levels: KeepLevels, max_depth: Option<u32>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            fingerprint: format!("{:016x}", job.fingerprint()),
            job: JobRecord {
                puzzle: job.puzzle.spec.clone(),
                metric: job.puzzle.metric.name().to_string(),
                shard_pieces: job.space.shard_pieces(),
                low_pieces: match &job.space {
                    Space::Blocks(l) => l.low_pieces,
                    Space::Coded(_) => 0,
                },
                even: matches!(&job.space, Space::Blocks(l) if l.even),
                shards: job.space.shards(),
                group_order: job.group_order.to_string(),
                reachable_states: job.reachable_text(),
            },
            keep_levels,
            levels: Vec::new(),
            running: None,
            finished: false,
            max_depth,
        }
    }

    /// Refuses a manifest of another format version or another job.
    pub fn check_matches(&self, job: &Job, dir: &Path) -> anyhow::Result<()> {
        if self.format_version != FORMAT_VERSION {
            anyhow::bail!(
                "{}: checkpoint format version {}, this build reads version {}",
                dir.display(),
                self.format_version,
                FORMAT_VERSION
            );
        }
        let expected = format!("{:016x}", job.fingerprint());
        if self.fingerprint != expected {
            anyhow::bail!(
                "{}: the checkpoint belongs to another job (fingerprint {}, this job has {})",
                dir.display(),
                self.fingerprint,
                expected
            );
        }
        Ok(())
    }

    /// Total states of the completed levels.
    pub fn states(&self) -> u128 {
        self.levels.iter().map(|l| l.count as u128).sum()
    }
}

/// A job's checkpoint directory.
#[derive(Clone, Debug)]
pub struct CheckpointDir {
    root: PathBuf,
}

impl CheckpointDir {
    /// Wraps `root` (created if needed).
    pub fn create(root: &Path) -> anyhow::Result<CheckpointDir> {
        std::fs::create_dir_all(root.join("levels"))
            .with_context(|| format!("cannot create checkpoint directory {}", root.display()))?;
        Ok(CheckpointDir { root: root.into() })
    }

    /// Wraps an existing directory without creating anything.
    pub fn existing(root: &Path) -> CheckpointDir {
        CheckpointDir { root: root.into() }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Directory of one level's files.
    pub fn level_dir(&self, level: u32) -> PathBuf {
        self.root.join("levels").join(format!("L{:04}", level))
    }

    /// The frontier file of `(level, shard)`.
    pub fn frontier_path(&self, level: u32, shard: u64) -> PathBuf {
        self.level_dir(level).join(format!("S{:08}.frontier", shard))
    }

    /// Path of the manifest.
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join(MANIFEST_FILE)
    }

    /// Loads the manifest, if there is one.
    pub fn load_manifest(&self) -> anyhow::Result<Option<Manifest>> {
        let path = self.manifest_path();
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(
                serde_json::from_slice(&bytes).with_context(|| format!("{}: unreadable manifest", path.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Rewrites the manifest atomically (temp file, fsync, rename, fsync dir).
    pub fn save_manifest(&self, manifest: &Manifest) -> anyhow::Result<()> {
        let path = self.manifest_path();
        let tmp = self.root.join(format!("{}.tmp", MANIFEST_FILE));
        let bytes = serde_json::to_vec_pretty(manifest)?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(&self.root)?.sync_all()
        };
        write().with_context(|| format!("cannot write {}", path.display()))
    }

    /// Refuses a manifest that is not the one of the level files around it
    /// (say, `manifest.json` copied from another checkpoint): its own
    /// fingerprint check passes, and every file would then look damaged and
    /// be deleted and recomputed, turning this job's work into the other's.
    /// Judged on the headers of the last recorded level and the running
    /// level's recorded outputs: refused when none of them is this job's
    /// and some are another job's. A few foreign files among this job's
    /// are damage, which resuming repairs.
    pub fn check_files_belong(&self, manifest: &Manifest, fingerprint: u64) -> anyhow::Result<()> {
        let last = manifest.levels.len().saturating_sub(1) as u32;
        let mut paths: Vec<PathBuf> = (0..manifest.job.shards)
            .map(|shard| self.frontier_path(last, shard))
            .collect();
        if let Some(r) = &manifest.running {
            paths.extend(r.done.keys().map(|&shard| self.frontier_path(r.from_level + 1, shard)));
        }
        let mut foreign = None;
        for path in &paths {
            match crate::format::read_header(path) {
                Ok(h) if h.id.fingerprint == fingerprint => return Ok(()),
                Ok(h) => foreign = foreign.or(Some((path, h.id.fingerprint))),
                Err(_) => {}
            }
        }
        match foreign {
            Some((path, found)) => anyhow::bail!(
                "{}: the level files belong to another job than manifest.json describes ({} has fingerprint {:016x}, the manifest {:016x}); was manifest.json copied from another checkpoint?",
                self.root.display(),
                path.display(),
                found,
                fingerprint
            ),
            None => Ok(()),
        }
    }

    /// Deletes the files of `level` (retention).
    pub fn remove_level(&self, level: u32) {
        let _ = std::fs::remove_dir_all(self.level_dir(level));
    }
}
