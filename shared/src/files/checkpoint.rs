//! The layout of a job's checkpoint directory, which coordinator and
//! workers share: level directories of chunk files, each level's journal of
//! completed chunks, and `manifest.json` (owned by the coordinator).
//!
//! ```text
//! CHECKPOINT/
//!   owner.lock                      flock(2) of the coordinator that owns it
//!   manifest.json
//!   levels/L0003/C00000012.chunk    F_3 of the shards of chunk 12
//!   levels/L0003/done.jsonl         chunks of level 3 recorded as complete
//! ```

use crate::search::job::Job;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// File name of the manifest inside a checkpoint directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// File name of the owner lock inside a checkpoint directory: the
/// coordinator (`run`, `resume`, `serve`) holds an exclusive flock on it for
/// its whole life, and its text says who holds it. Workers never touch it.
pub const LOCK_FILE: &str = "owner.lock";

/// File name of a level's journal of completed chunks.
pub const JOURNAL_FILE: &str = "done.jsonl";

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
    /// The option's value on the command line.
    pub fn name(self) -> &'static str {
        match self {
            KeepLevels::All => "all",
            KeepLevels::Last2 => "last2",
        }
    }

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

/// A job's checkpoint directory.
#[derive(Clone, Debug)]
pub struct CheckpointDir {
    root: PathBuf,
}

impl CheckpointDir {
    /// Wraps `root`, creating it (and `levels/`) if needed.
    pub fn create(root: &Path) -> std::io::Result<CheckpointDir> {
        std::fs::create_dir_all(root.join("levels"))?;
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

    /// The chunk file of `(level, chunk)`.
    pub fn chunk_path(&self, level: u32, chunk: u64) -> PathBuf {
        self.level_dir(level).join(format!("C{:08}.chunk", chunk))
    }

    /// The journal of completed chunks of `level`.
    pub fn journal_path(&self, level: u32) -> PathBuf {
        self.level_dir(level).join(JOURNAL_FILE)
    }

    /// Path of the manifest.
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join(MANIFEST_FILE)
    }

    /// Path of the owner lock.
    pub fn lock_path(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }

    /// Deletes the files of `level` (retention).
    pub fn remove_level(&self, level: u32) {
        let _ = std::fs::remove_dir_all(self.level_dir(level));
    }
}
