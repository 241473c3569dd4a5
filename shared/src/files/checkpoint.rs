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
//!   levels/L0003/reached.counts     states per shard in levels 0..=3 (workers')
//! ```

use crate::files::format::ChunkId;
use crate::job::chunking::Chunking;
use crate::job::Job;
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
    /// Every level (antipodes get shortest words one move at a time).
    #[default]
    All,
    /// The two levels the next level reads, and the early levels while
    /// their files together take at most 1/[`EARLY_LEVELS_SHARE`] of one
    /// raw level (smallest disk; antipodes get words when the last kept
    /// early level is within [`MAX_KEEP_STRIDE`] moves of the deepest).
    Last2,
    /// Those two and every level whose depth is a multiple of `K`:
    /// antipodes still get shortest words, found up to `K` moves at a time,
    /// on about `1/K` of the disk `All` needs.
    Every(u32),
}

/// Largest `K` of [`KeepLevels::Every`]: the antipode walk tries up to
/// `moves^K` words per step.
pub const MAX_KEEP_STRIDE: u32 = 4;

/// `last2` keeps the early levels while their files together take at most
/// this fraction (1/8) of one raw level. On a big space they are sparse and
/// tiny (levels 1–9 of the 4×4 Loopover: 1.07 GB of files against 20.7 GB
/// raw), and with them the antipode walk can reach solved in jumps of a few
/// moves; the deleted middle levels are most of the disk.
pub const EARLY_LEVELS_SHARE: u128 = 8;

impl KeepLevels {
    /// The option's value on the command line.
    pub fn name(self) -> String {
        match self {
            KeepLevels::All => "all".to_string(),
            KeepLevels::Last2 => "last2".to_string(),
            KeepLevels::Every(k) => format!("every:{}", k),
        }
    }

    /// Whether `level` stays on disk once two newer levels are done (level
    /// 0, the solved state, is never stored: every reader makes it).
    pub fn keeps(self, level: u32) -> bool {
        match self {
            KeepLevels::All => true,
            KeepLevels::Last2 => level == 0,
            // (A hand-edited manifest's `every: 0` keeps every level.)
            KeepLevels::Every(k) => level % k.max(1) == 0,
        }
    }

    /// Whether `level` stays on disk once two newer levels are done, given
    /// the bytes of the level files so far (index = depth) and the raw
    /// bytes of a level: [`KeepLevels::keeps`], and under `last2` the early
    /// levels 1..=t whose files together stay within
    /// 1/[`EARLY_LEVELS_SHARE`] of a raw level. The answer for a level
    /// depends only on the bytes of the levels up to it, so the decision
    /// made when it is retired and the one made when the antipodes are
    /// walked agree.
    pub fn keeps_given(self, level: u32, file_bytes: &[u64], raw_level_bytes: u128) -> bool {
        if self.keeps(level) {
            return true;
        }
        if self != KeepLevels::Last2 || level as usize >= file_bytes.len() {
            return false;
        }
        let early: u128 = file_bytes[1..=level as usize].iter().map(|&b| b as u128).sum();
        early * EARLY_LEVELS_SHARE <= raw_level_bytes
    }

    /// Refuses a retention that would delete levels `job` still reads.
    pub fn check_for(self, job: &Job) -> anyhow::Result<()> {
        if job.directed && self != KeepLevels::All {
            anyhow::bail!(
                "'{}' has directed generators: every earlier level is read again to tell new states from seen ones, so --keep-levels {} cannot be used",
                job.puzzle.spec,
                self.name()
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
            other => match other.strip_prefix("every:").map(str::parse::<u32>) {
                Some(Ok(k)) if (2..=MAX_KEEP_STRIDE).contains(&k) => Ok(KeepLevels::Every(k)),
                Some(_) => Err(format!(
                    "'{}': K in every:K must be a whole number from 2 to {} (the antipode walk tries up to moves^K words per step)",
                    other, MAX_KEEP_STRIDE
                )),
                None => Err(format!(
                    "unknown retention '{}' (known: all, last2, every:K with K from 2 to {})",
                    other, MAX_KEEP_STRIDE
                )),
            },
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

    /// The counts file of `level` ([`crate::files::reached`]).
    pub fn reached_path(&self, level: u32) -> PathBuf {
        self.level_dir(level).join(crate::files::reached::REACHED_FILE)
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

    /// Deletes the whole directory (a finished job's temporary
    /// checkpoint), the level folders side by side on up to
    /// [`REMOVING_THREADS`] threads: unlinks in one folder wait for each
    /// other, in different folders much less. It is the last thing
    /// `cayley run` does, with nothing else left to overlap it. The 4×4
    /// Loopover to depth 8 leaves 8 folders of 2,482 files: on a journaled
    /// ext4 and 2 cores, its run's last result line to the process's exit
    /// took 86–95 ms with one `remove_dir_all`, 73–82 ms with this.
    pub fn remove_all(&self) -> std::io::Result<()> {
        let folders: Vec<PathBuf> = match std::fs::read_dir(self.root.join("levels")) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => Vec::new(),
        };
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..folders.len().min(REMOVING_THREADS) {
                s.spawn(|| {
                    while let Some(folder) = folders.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        // What is left (or a failure) meets the last call.
                        let _ = std::fs::remove_dir_all(folder);
                    }
                });
            }
        });
        std::fs::remove_dir_all(&self.root)
    }
}

/// Threads of [`CheckpointDir::remove_all`].
pub const REMOVING_THREADS: usize = 8;

/// The file identity of a chunk, which the job plan knows nothing of: it
/// lives here, with the files.
impl Chunking {
    /// The identity of the file of `(level, chunk)` for a job.
    pub fn id(&self, fingerprint: u64, level: u32, chunk: u64, shard_words: usize) -> ChunkId {
        let range = self.shards_of(chunk);
        ChunkId {
            fingerprint,
            level,
            chunk,
            first_shard: range.start,
            shards: (range.end - range.start) as u32,
            shard_words: shard_words as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_all_leaves_nothing_of_the_checkpoint() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ck");
        let dir = CheckpointDir::create(&root).unwrap();
        for level in 1..=12 {
            std::fs::create_dir_all(dir.level_dir(level)).unwrap();
            for chunk in 0..5 {
                std::fs::write(dir.chunk_path(level, chunk), [1u8; 96]).unwrap();
            }
        }
        std::fs::write(dir.manifest_path(), "{}").unwrap();
        dir.remove_all().unwrap();
        assert!(!root.exists());
        assert_eq!(std::fs::read_dir(outer.path()).unwrap().count(), 0);
    }

    #[test]
    fn retentions_parse_print_and_serialize() {
        for keep in [KeepLevels::All, KeepLevels::Last2, KeepLevels::Every(3)] {
            assert_eq!(keep.name().parse::<KeepLevels>(), Ok(keep));
            let json = serde_json::to_string(&keep).unwrap();
            assert_eq!(serde_json::from_str::<KeepLevels>(&json).unwrap(), keep);
        }
        // Manifests written before every:K existed still read.
        assert_eq!(
            serde_json::from_str::<KeepLevels>("\"last2\"").unwrap(),
            KeepLevels::Last2
        );
        for bad in ["every:1", "every:5", "every:", "every:x", "some"] {
            let e = bad.parse::<KeepLevels>().unwrap_err();
            assert!(e.contains(bad), "{}", e);
        }
    }

    #[test]
    fn every_k_keeps_the_multiples_of_k() {
        let kept: Vec<u32> = (0..10).filter(|&l| KeepLevels::Every(3).keeps(l)).collect();
        assert_eq!(kept, [0, 3, 6, 9]);
        assert!((0..10).all(|l| KeepLevels::All.keeps(l)));
        assert_eq!((0..10).filter(|&l| KeepLevels::Last2.keeps(l)).count(), 1);
    }

    #[test]
    fn last2_keeps_the_early_levels_within_an_eighth_of_a_raw_level() {
        // Files of 10, 20, 30, 500 and 5 bytes; a raw level of 480 bytes
        // allows 60: levels 1..=3 (10 + 20 + 30), never 4, nor 5 after it.
        let bytes = [0, 10, 20, 30, 500, 5];
        let kept: Vec<u32> = (0..6)
            .filter(|&l| KeepLevels::Last2.keeps_given(l, &bytes, 480))
            .collect();
        assert_eq!(kept, [0, 1, 2, 3]);
        // One byte less of room and level 3 goes too.
        assert!(!KeepLevels::Last2.keeps_given(3, &bytes, 479));
        // A level not yet recorded is not decided here.
        assert!(!KeepLevels::Last2.keeps_given(6, &bytes, 1 << 40));
        // The other retentions ignore the sizes.
        assert!((0..6).all(|l| KeepLevels::All.keeps_given(l, &bytes, 0)));
        let every: Vec<u32> = (0..6)
            .filter(|&l| KeepLevels::Every(2).keeps_given(l, &bytes, 1 << 40))
            .collect();
        assert_eq!(every, [0, 2, 4]);
    }
}
