//! How this process writes checkpoint files: whether they are fsynced, and
//! a test-only fault that makes one chunk's write fail as if the disk were
//! full. Both are options handed to every writer (chunk files here, the
//! coordinator's manifest and journals) by the command that starts the
//! job, never globals or environment variables read on the way: a library
//! caller gets the durable default, and two jobs in one process can differ.

use std::fs::File;
use std::io;
use std::path::Path;

/// Options of the writers of a checkpoint's files.
///
/// The default is what every real job wants: durable, no fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Fsync each file and the directory it is renamed into.
    ///
    /// `cayley run` without `--checkpoint-dir` turns this off: its
    /// temporary checkpoint is deleted after success and kept only when the
    /// process ends early, which loses nothing the kernel's page cache holds;
    /// only a machine crash would need the fsyncs, and a temporary directory
    /// is not meant to outlive one. They were about a tenth of a small job's
    /// time (five per level on a 2×2×2 cube). Turning it off changes no byte
    /// of any file, only when the bytes reach the disk.
    pub durable: bool,
    /// `(level, chunk)` whose chunk file fails to be created with the
    /// disk-full error ([`FormatError::DiskFull`]), as a full disk would
    /// make it: fault injection for the tests of a job that stops and
    /// resumes. Set only from the binaries' hidden `--fault-disk-full` option
    /// (`cayley_worker::faults`); `None` in every real run.
    ///
    /// [`FormatError::DiskFull`]: crate::files::format::FormatError::DiskFull
    pub fail_disk_full_at: Option<(u32, u64)>,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions::DURABLE
    }
}

impl WriteOptions {
    /// Fsyncs on, no fault: the default.
    pub const DURABLE: WriteOptions = WriteOptions {
        durable: true,
        fail_disk_full_at: None,
    };

    /// Whether the chunk file of `(level, chunk)` is to fail as if the
    /// disk were full.
    pub fn fails_disk_full_at(&self, level: u32, chunk: u64) -> bool {
        self.fail_disk_full_at == Some((level, chunk))
    }

    /// Fsyncs `file` (data and metadata), unless not [`Self::durable`].
    pub fn sync_file(&self, file: &File) -> io::Result<()> {
        if self.durable {
            file.sync_all()
        } else {
            Ok(())
        }
    }

    /// Fsyncs the directory holding `path`, so a rename into it survives a
    /// power loss, unless not [`Self::durable`].
    pub fn sync_parent_dir(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && self.durable => File::open(dir)?.sync_all(),
            _ => Ok(()),
        }
    }
}
