//! The result folder: named, created and proved writable before any level
//! is computed, so an hour-long job cannot fail on its output at the end.

use std::path::{Path, PathBuf};

/// A result folder that exists and takes files.
#[derive(Debug)]
pub struct OutDir {
    /// Absolute path (a later `resume` may run from another directory).
    pub path: PathBuf,
    /// The outermost directory this process created for it, if any, so a
    /// run refused afterwards leaves nothing behind.
    created: Option<PathBuf>,
}

impl OutDir {
    /// Creates `path` (and its parents) and writes and removes a probe file
    /// in it. Refuses, naming the folder and the system's reason, a path
    /// that cannot be created or written (`/proc/x`, a read-only mount, a
    /// file in the way).
    pub fn prepare(path: &Path) -> anyhow::Result<OutDir> {
        let path = std::path::absolute(path)
            .map_err(|e| anyhow::anyhow!("cannot use {} as the result folder: {}", path.display(), e))?;
        let created = path
            .ancestors()
            .take_while(|a| !a.exists())
            .last()
            .map(Path::to_path_buf);
        let refuse = |e: std::io::Error| {
            anyhow::anyhow!(
                "cannot write results to {}: {} (choose another folder with --out)",
                path.display(),
                e
            )
        };
        let out = OutDir {
            path: path.clone(),
            created,
        };
        if let Err(e) = std::fs::create_dir_all(&path) {
            out.discard();
            return Err(refuse(e));
        }
        let probe = tempfile::Builder::new().prefix(".cayley-probe-").tempfile_in(&path);
        match probe {
            Ok(file) => {
                drop(file); // removes it
                Ok(out)
            }
            Err(e) => {
                out.discard();
                Err(refuse(e))
            }
        }
    }

    /// Removes what [`OutDir::prepare`] created, if it is still empty.
    pub fn discard(self) {
        let Some(top) = self.created else {
            return;
        };
        for dir in self.path.ancestors() {
            // Fails, and so stops, at the first directory that is not empty.
            if std::fs::remove_dir(dir).is_err() || dir == top {
                break;
            }
        }
    }
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
        let deep = dir.path().join("x/y/z");
        let out = OutDir::prepare(&deep).unwrap();
        assert!(out.path.is_absolute() && deep.is_dir());
        assert_eq!(std::fs::read_dir(&deep).unwrap().count(), 0, "the probe file stayed");
        out.discard();
        assert!(!dir.path().join("x").exists(), "discard left the folders it made");
    }
}
