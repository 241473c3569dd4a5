//! A directory a command creates for its own use (the result folder, a
//! `--scratch` or `--checkpoint-dir` that did not exist), with the parents
//! it had to create for it, so that a run refused after the creation, or
//! a temporary checkpoint removed after success, leaves nothing behind.

use std::path::{Path, PathBuf};

/// A directory that exists, and which of its ancestors this process made.
#[derive(Debug)]
pub struct MadeDir {
    path: PathBuf,
    /// The outermost directory this process created for it, if any.
    created: Option<PathBuf>,
}

impl MadeDir {
    /// Creates `path` and its missing parents, noting which were missing.
    /// On an error, whatever was made is removed again.
    pub fn create(path: &Path) -> std::io::Result<MadeDir> {
        let created = path
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        let made = MadeDir {
            path: path.to_path_buf(),
            created,
        };
        match std::fs::create_dir_all(path) {
            Ok(()) => Ok(made),
            Err(e) => {
                made.remove_if_empty();
                Err(e)
            }
        }
    }

    /// Removes, deepest first, the directories [`MadeDir::create`] made,
    /// as long as they are empty; a directory that was there before, or
    /// that holds anything, stays.
    pub fn remove_if_empty(self) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_directories_it_made_go_and_only_while_empty() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a/b/c");
        MadeDir::create(&deep).unwrap().remove_if_empty();
        assert!(!root.path().join("a").exists());
        assert!(root.path().exists());

        std::fs::create_dir(root.path().join("a")).unwrap();
        let made = MadeDir::create(&deep).unwrap();
        std::fs::write(root.path().join("a/b/kept"), b"x").unwrap();
        made.remove_if_empty();
        assert!(!deep.exists());
        assert!(root.path().join("a/b/kept").exists());

        let existing = MadeDir::create(root.path()).unwrap();
        existing.remove_if_empty();
        assert!(root.path().exists());
    }
}
