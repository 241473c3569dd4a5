//! The result folder: named, created and proved writable before any level
//! is computed, so an hour-long job cannot fail on its output at the end.

use crate::made_dir::MadeDir;
use std::path::{Path, PathBuf};

/// A result folder that exists and takes files.
#[derive(Debug)]
pub struct OutDir {
    /// Absolute path (a later `resume` may run from another directory).
    pub path: PathBuf,
    /// What this process created for it, so that a run refused
    /// afterwards leaves nothing behind.
    made: MadeDir,
    /// The folder itself, open and locked while this process will write
    /// its results there ([`OutDir::hold`]).
    held: Option<std::fs::File>,
}

impl OutDir {
    /// Creates `path` (and its parents) and writes and removes a probe file
    /// in it. Refuses, naming the folder and the system's reason, a path
    /// that cannot be created or written (`/proc/x`, a read-only mount, a
    /// file in the way).
    pub fn prepare(path: &Path) -> anyhow::Result<OutDir> {
        let path = std::path::absolute(path)
            .map_err(|e| anyhow::anyhow!("cannot use {} as the result folder: {}", path.display(), e))?;
        let refuse = |e: std::io::Error| {
            anyhow::anyhow!(
                "cannot write results to {}: {} (choose another folder with --out)",
                path.display(),
                e
            )
        };
        // Said as what it is: the system's reason for a file in the way,
        // "File exists", read as if the folder were taken.
        if path.exists() && !path.is_dir() {
            anyhow::bail!(
                "--out {} is a file, not a folder; choose a new or empty folder with --out",
                path.display()
            );
        }
        let made = MadeDir::create(&path).map_err(refuse)?;
        let probe = tempfile::Builder::new().prefix(".cayley-probe-").tempfile_in(&path);
        match probe {
            Ok(file) => {
                drop(file); // removes it
                Ok(OutDir { path, made, held: None })
            }
            Err(e) => {
                made.remove_if_empty();
                Err(refuse(e))
            }
        }
    }

    /// Holds the folder for this process until the value is dropped, or
    /// refuses it when another cayley process holds it: two jobs started
    /// with one `--out`, each checked while the folder was still empty,
    /// wrote their results over each other's, and the job that finished
    /// first lost its table without a word. The lock is an exclusive
    /// flock(2) on the folder itself: no file is made in it, and the
    /// kernel lets it go however the process ends. Where the filesystem
    /// takes no such lock (some network mounts), the folder is used
    /// without one, as before.
    pub fn hold(&mut self) -> anyhow::Result<()> {
        use fs4::{FileExt, TryLockError};
        let Ok(folder) = std::fs::File::open(&self.path) else {
            return Ok(());
        };
        match FileExt::try_lock(&folder) {
            Ok(()) => {
                self.held = Some(folder);
                Ok(())
            }
            Err(TryLockError::WouldBlock) => anyhow::bail!(
                "--out {} is in use: another cayley process is computing results to write there; choose another folder with --out, or wait until it ends",
                self.path.display()
            ),
            Err(TryLockError::Error(e)) => {
                tracing::debug!("result folder {} not locked: {}", self.path.display(), e);
                Ok(())
            }
        }
    }

    /// Removes what [`OutDir::prepare`] created, if it is still empty.
    pub fn discard(self) {
        self.made.remove_if_empty();
    }
}

/// What `result.json` says of the job that wrote it (the fields this reads).
#[derive(serde::Deserialize)]
struct EarlierResult {
    puzzle: String,
    metric: String,
    #[serde(default)]
    depth_reached: u32,
    complete: bool,
}

/// Refuses a result folder whose `result.json` another job wrote (another
/// puzzle spec or metric), or this job to a greater depth than a run to
/// `max_depth` reaches: the files would be replaced, and a table that took
/// hours may exist nowhere else once its temporary checkpoint is gone. A
/// folder without `result.json` passes, and so does this job's own table
/// to no greater depth (a run again, a `resume`).
pub fn refuse_other_results(dir: &Path, puzzle: &str, metric: &str, max_depth: Option<u32>) -> anyhow::Result<()> {
    let path = dir.join("result.json");
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        // Nothing there, or a file in the way, which `OutDir::prepare` names.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(())
        }
        Err(e) => anyhow::bail!(
            "cannot read {}: {} (choose another folder with --out)",
            path.display(),
            e
        ),
    };
    let earlier: EarlierResult = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a cayley result ({}); choose another folder with --out, or move it away",
            path.display(),
            e
        )
    })?;
    if (earlier.puzzle.as_str(), earlier.metric.as_str()) != (puzzle, metric) {
        anyhow::bail!(
            "{} holds the results of another job, {} ({}); choose another folder with --out, or move them away",
            dir.display(),
            earlier.puzzle,
            earlier.metric
        );
    }
    if let Some(depth) = max_depth.filter(|&d| d < earlier.depth_reached) {
        anyhow::bail!(
            "{} holds the {} table of {} ({}) to depth {}, which --max-depth {} would replace with a shorter one; choose another folder with --out",
            dir.display(),
            if earlier.complete { "complete" } else { "partial" },
            puzzle,
            metric,
            earlier.depth_reached,
            depth
        );
    }
    Ok(())
}

/// `./cayley-out/<puzzle>-<metric>`, the spec made file-name safe: each run
/// of other characters becomes one `-` (`loopover:3x4 --no-symmetry` →
/// `loopover-3x4-no-symmetry-mtm`, not `loopover-3x4---no-symmetry-mtm`).
pub fn default_out_dir(spec: &str, metric: &str) -> PathBuf {
    let mut safe = String::new();
    for c in spec.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            safe.push(c);
        } else if !safe.is_empty() && !safe.ends_with('-') {
            safe.push('-');
        }
    }
    let safe = safe.trim_end_matches('-');
    PathBuf::from("cayley-out").join(format!("{}-{}", safe, metric))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_have_single_dashes() {
        let name = |spec: &str| {
            default_out_dir(spec, "mtm")
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(name("loopover:3x4 --no-symmetry"), "loopover-3x4-no-symmetry-mtm");
        assert_eq!(name("loopover:4x4 --track 1-8"), "loopover-4x4-track-1-8-mtm");
        assert_eq!(
            name("tws:/tmp/cube 2.tws --moves U,R"),
            "tws-tmp-cube-2.tws-moves-U-R-mtm"
        );
    }

    #[test]
    fn a_refused_folder_leaves_nothing_and_a_good_one_is_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let err = OutDir::prepare(&file.join("a/b")).unwrap_err().to_string();
        assert!(err.contains("cannot write results to"), "{}", err);
        let err = OutDir::prepare(&file).unwrap_err().to_string();
        assert!(err.contains("is a file, not a folder"), "{}", err);
        let deep = dir.path().join("x/y/z");
        let out = OutDir::prepare(&deep).unwrap();
        assert!(out.path.is_absolute() && deep.is_dir());
        assert_eq!(std::fs::read_dir(&deep).unwrap().count(), 0, "the probe file stayed");
        out.discard();
        assert!(!dir.path().join("x").exists(), "discard left the folders it made");
    }

    #[test]
    fn another_jobs_results_and_a_deeper_table_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let check = |puzzle: &str, metric: &str, max_depth: Option<u32>| {
            refuse_other_results(dir.path(), puzzle, metric, max_depth).map_err(|e| e.to_string())
        };
        assert!(check("loopover:2x3", "mtm", Some(1)).is_ok(), "no result.json yet");
        let complete = r#"{"puzzle": "loopover:2x3", "metric": "mtm", "depth_reached": 7, "complete": true}"#;
        std::fs::write(dir.path().join("result.json"), complete).unwrap();
        assert!(check("loopover:2x3", "mtm", None).is_ok());
        assert!(check("loopover:2x3", "mtm", Some(7)).is_ok());
        let err = check("loopover:2x3", "mtm", Some(6)).unwrap_err();
        assert!(
            err.contains("complete table of loopover:2x3 (mtm) to depth 7") && err.contains("--max-depth 6"),
            "{}",
            err
        );
        let err = check("loopover:2x4", "mtm", None).unwrap_err();
        assert!(err.contains("another job, loopover:2x3 (mtm)"), "{}", err);
        assert!(check("loopover:2x3", "stm", None).is_err(), "another metric");
        std::fs::write(dir.path().join("result.json"), "notes").unwrap();
        let err = check("loopover:2x3", "mtm", None).unwrap_err();
        assert!(err.contains("is not a cayley result"), "{}", err);
    }
}
