//! One owner per checkpoint directory.
//!
//! `cayley run` (with its checkpoint directory, temporary or not), `resume`
//! and `serve` each hold an exclusive flock(2) on `CHECKPOINT/owner.lock` for
//! as long as they run. Two coordinators writing one manifest and one set of
//! journals would interleave their records and delete each other's files, so
//! a second one is refused before it changes anything.
//!
//! The lock is the kernel's, not the file's existence: it is released
//! whenever the process ends, however it ends (SIGKILL, crash, power loss),
//! so it never goes stale and nobody ever needs to delete the file. The
//! file's text (pid, host name, start time) only tells a refused process who
//! holds the directory. Workers never take the lock: they read and write
//! chunk files while the coordinator owns the directory.
//!
//! On NFS, Linux clients implement flock with the server's byte-range locks
//! (since Linux 2.6.12), so the lock holds across machines when the server
//! supports locking.

use anyhow::Context;
use cayley_shared::files::checkpoint::{CheckpointDir, MANIFEST_FILE};
use fs4::{FileExt, TryLockError};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Who holds a checkpoint directory (the text of the lock file).
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Owner {
    pid: u32,
    host: String,
    /// When the owner took the lock, RFC 3339 in UTC.
    since: String,
}

/// Exclusive ownership of a checkpoint directory, held while this value
/// lives (the lock goes with the open file).
#[must_use = "the directory is owned only while the lock is held"]
pub struct OwnerLock {
    _file: File,
}

impl OwnerLock {
    /// Takes the directory's lock at once, or refuses with who holds it.
    /// A refused caller leaves the directory exactly as it found it.
    pub fn acquire(dir: &CheckpointDir) -> anyhow::Result<OwnerLock> {
        let path = dir.lock_path();
        // No truncation on open: a refused process must not erase the
        // owner's record.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        try_lock_or_refuse(dir, &mut file)?;
        let owner = Owner {
            pid: std::process::id(),
            host: host_name(),
            since: rfc3339_utc(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())),
        };
        let mut line = serde_json::to_string(&owner)?;
        line.push('\n');
        // The record is informational: a crash mid-write only makes the
        // next refusal less specific, so it is not fsynced.
        let record = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(line.as_bytes())
        };
        record(&mut file).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OwnerLock { _file: file })
    }
}

impl OwnerLock {
    /// Refuses, naming the owner, when another process holds the directory;
    /// otherwise changes nothing (no lock file is created, none is written).
    /// For callers about to refuse a directory for another reason: a run that
    /// owns a new directory but has not written its manifest yet is reported
    /// as the owner, not as a directory that is not a checkpoint.
    pub fn refuse_if_held(dir: &CheckpointDir) -> anyhow::Result<()> {
        let path = dir.lock_path();
        // flock(2) takes an exclusive lock through a read-only descriptor.
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("cannot open the lock file {}", path.display())),
        };
        // Released when `file` closes, at the end of this call.
        try_lock_or_refuse(dir, &mut file)
    }
}

/// Takes the lock on `file` at once, or refuses with the record of the
/// process that holds it.
fn try_lock_or_refuse(dir: &CheckpointDir, file: &mut File) -> anyhow::Result<()> {
    // Called through the trait: std's `File::try_lock` is newer than this
    // crate's minimum Rust version.
    match FileExt::try_lock(file) {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            // An unreadable record still leaves a clear refusal.
            let _ = file.read_to_string(&mut text);
            anyhow::bail!(
                "checkpoint directory {} is in use by {}",
                dir.root().display(),
                describe_owner(&text)
            )
        }
        Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {}", dir.lock_path().display())),
    }
}

/// `pid 1234 on host h since 2026-11-23T10:00:00Z`, from a lock file's text.
fn describe_owner(text: &str) -> String {
    match serde_json::from_str::<Owner>(text) {
        Ok(o) => format!("pid {} on host {} since {}", o.pid, o.host, o.since),
        // The owner took the lock but has not written its record yet.
        Err(_) => "another process (it has not recorded its pid yet)".into(),
    }
}

/// This machine's host name (`unknown` if the system will not say).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is a live, writable buffer of the length passed;
    // gethostname writes at most that many bytes into it.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match String::from_utf8_lossy(&buf[..end]).trim() {
        name if rc == 0 && !name.is_empty() => name.to_string(),
        _ => "unknown".into(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `secs` seconds after the Unix epoch (UTC,
/// proleptic Gregorian calendar; days to dates as in H. Hinnant's
/// `civil_from_days`).
pub fn rfc3339_utc(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468; // days since 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of the 400-year era
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the year from March 1
    let mp = (5 * doy + 2) / 153; // month from March = 0
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        year,
        month,
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Refuses a `--checkpoint-dir` that holds files of something else: a run
/// would write its levels among them, and a later `rm -r` of the
/// checkpoint would take them too. An existing checkpoint is refused later
/// with the `resume` command that continues it.
pub fn refuse_unrelated_files(dir: &Path, out: Option<&Path>) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--checkpoint-dir {} is a file, not a directory; give a new or empty directory",
            dir.display()
        );
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    // A checkpoint (it has a manifest) is judged by the commands that
    // resume it or refuse to start over it.
    if dir.join(MANIFEST_FILE).exists() {
        return Ok(());
    }
    // A checkpoint's own names (a run stopped before its manifest was
    // written leaves the lock and the levels folder), and the result
    // folder, which may live inside the checkpoint as docs/cluster.md's
    // example puts it.
    let out = out.and_then(|o| std::path::absolute(o).ok());
    let ours = |path: &Path, name: &str| {
        name.starts_with(MANIFEST_FILE)
            || name == "owner.lock"
            || name == "levels"
            || out
                .as_deref()
                .is_some_and(|o| std::path::absolute(path).is_ok_and(|p| p == o))
    };
    let mut strangers: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !ours(&e.path(), &e.file_name().to_string_lossy()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if !strangers.is_empty() {
        strangers.sort_unstable();
        let more = if strangers.len() > 3 { ", ..." } else { "" };
        strangers.truncate(3);
        anyhow::bail!(
            "--checkpoint-dir {} holds files that are not a cayley checkpoint's ({}{}); give a new or empty directory",
            dir.display(),
            strangers.join(", "),
            more
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_the_calendar() {
        // Checked with `date -u -d @SECONDS`.
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_000_000_000, "2001-09-09T01:46:40Z"),
            (1_795_435_200, "2026-11-23T12:00:00Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ] {
            assert_eq!(rfc3339_utc(secs), text);
        }
    }

    #[test]
    fn a_second_owner_is_refused_with_the_first_ones_record() {
        let root = tempfile::tempdir().unwrap();
        let dir = CheckpointDir::create(root.path()).unwrap();
        let first = OwnerLock::acquire(&dir).unwrap();
        let record = std::fs::read(dir.lock_path()).unwrap();
        // flock conflicts between two opens even within one process.
        let err = OwnerLock::acquire(&dir)
            .err()
            .expect("second owner refused")
            .to_string();
        let expected = format!(
            "checkpoint directory {} is in use by pid {} on host {} since ",
            root.path().display(),
            std::process::id(),
            host_name()
        );
        assert!(err.starts_with(&expected), "{}", err);
        assert_eq!(
            std::fs::read(dir.lock_path()).unwrap(),
            record,
            "refusal changed the record"
        );
        drop(first);
        let _again = OwnerLock::acquire(&dir).unwrap();
    }

    #[test]
    fn a_probe_refuses_a_held_directory_and_changes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = CheckpointDir::create(root.path()).unwrap();
        OwnerLock::refuse_if_held(&dir).unwrap();
        assert!(!dir.lock_path().exists(), "a probe created the lock file");
        let first = OwnerLock::acquire(&dir).unwrap();
        let record = std::fs::read(dir.lock_path()).unwrap();
        let err = OwnerLock::refuse_if_held(&dir).expect_err("held directory refused");
        let expected = format!(
            "checkpoint directory {} is in use by pid {}",
            root.path().display(),
            std::process::id()
        );
        assert!(err.to_string().starts_with(&expected), "{}", err);
        drop(first);
        // Free again: the probe lets it through and leaves the old record.
        OwnerLock::refuse_if_held(&dir).unwrap();
        assert_eq!(std::fs::read(dir.lock_path()).unwrap(), record);
        let _again = OwnerLock::acquire(&dir).unwrap();
    }

    #[test]
    fn owner_records_are_described() {
        assert_eq!(describe_owner(""), "another process (it has not recorded its pid yet)");
        assert_eq!(
            describe_owner(r#"{"pid":7,"host":"h","since":"2026-11-23T10:00:00Z"}"#),
            "pid 7 on host h since 2026-11-23T10:00:00Z"
        );
    }
}
