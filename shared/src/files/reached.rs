//! The counts file: how many states of each shard the levels up to one
//! level hold, kept beside that level's chunk files
//! (`levels/L0012/reached.counts`). A worker sums the counts from the chunk
//! indexes as it enters each level and leaves out the shards whose every
//! state is reached (the worker's `runner/reached.rs`). It can sum a level
//! only while the level's files are there, so a worker that starts after
//! the early levels were retired (a job resumed, a worker added) starts
//! from the newest counts file instead.
//!
//! The counts through a level are a fact of the job, not of the worker:
//! every worker that writes the file writes the same bytes, under a
//! temporary name renamed into place, so two writers at once are harmless.
//! The worker that writes one deletes those of the levels below the one
//! before it, so a job holds two, whatever its retention.
//!
//! Layout (integers little-endian): magic `CAYLEYRC` (8 bytes), version
//! (4), the level counted through (4), the job's fingerprint (8), the
//! number of shards (8), the xxh3-64 of the counts' bytes (8) and of the
//! header before it (8); then the counts, a `u32` per shard: 2 MB on the
//! 4×4 Loopover's 499,961 shards, against gigabytes of level files.
//!
//! Not compressed and not fsynced, because the worker writes it as it
//! enters a level, before any task of the level computes. On the 4×4 to
//! depth 8 zstd (level 1) took 0.3–4.5 ms a level and the bytes' copy for
//! it 0.6–1.4 ms, 14–20 ms a run, where the bytes as they are take under a
//! millisecond. A file the machine lost in a crash, renamed but not
//! written, fails its checksum and is summed again.

use crate::files::format::writer::temporary_name;
use std::io::{self, Write};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// File name of the counts in a level's folder.
pub const REACHED_FILE: &str = "reached.counts";

const MAGIC: &[u8; 8] = b"CAYLEYRC";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 48;

/// What a counts file is of: its job and the level it counts through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountsId {
    /// The job's fingerprint.
    pub fingerprint: u64,
    /// The counts sum levels `0..=through`.
    pub through: u32,
    /// The job's shards, one count each.
    pub shards: u64,
}

impl CountsId {
    fn header(&self, payload_checksum: u64) -> [u8; HEADER_LEN] {
        let mut header = [0u8; HEADER_LEN];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&self.through.to_le_bytes());
        header[16..24].copy_from_slice(&self.fingerprint.to_le_bytes());
        header[24..32].copy_from_slice(&self.shards.to_le_bytes());
        header[32..40].copy_from_slice(&payload_checksum.to_le_bytes());
        let checksum = xxh3_64(&header[..40]);
        header[40..48].copy_from_slice(&checksum.to_le_bytes());
        header
    }
}

/// The counts' bytes in the file: little-endian `u32`s, which on this
/// build's little-endian hosts are the bytes in memory.
fn counts_bytes(counts: &[u32]) -> &[u8] {
    const _: () = assert!(
        cfg!(target_endian = "little"),
        "counts files assume a little-endian host"
    );
    bytemuck::cast_slice(counts)
}

/// Writes `counts` (one per shard of `id`) to `path` under a temporary name
/// renamed into place. Creates no folder: a level folder already deleted
/// means the counts are no longer wanted.
pub fn write_counts(path: &Path, id: CountsId, counts: &[u32]) -> io::Result<()> {
    assert_eq!(counts.len() as u64, id.shards, "a count per shard");
    let raw = counts_bytes(counts);
    let tmp = temporary_name(path);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&id.header(xxh3_64(raw)))?;
        file.write_all(raw)?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Reads the counts of `id` from `path`, checking that the file is whole and
/// of that job, level and size.
pub fn read_counts(path: &Path, id: CountsId) -> io::Result<Vec<u32>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {}", path.display(), what));
    // The size first: a file of any other size is not read into memory.
    let expected = id.shards.checked_mul(4).and_then(|b| b.checked_add(HEADER_LEN as u64));
    if Some(std::fs::metadata(path)?.len()) != expected {
        return Err(bad("not the size of the job's counts"));
    }
    let bytes = std::fs::read(path)?;
    // (Checked again as read: the slices below rely on it.)
    if Some(bytes.len() as u64) != expected || &bytes[0..8] != MAGIC {
        return Err(bad("not a counts file"));
    }
    let payload_checksum = u64::from_le_bytes(bytes[32..40].try_into().expect("8 bytes"));
    if bytes[..HEADER_LEN] != id.header(payload_checksum) {
        return Err(bad("another version, job, level or size, or a damaged header"));
    }
    let raw = &bytes[HEADER_LEN..];
    if xxh3_64(raw) != payload_checksum {
        return Err(bad("the counts are damaged"));
    }
    Ok(raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: CountsId = CountsId {
        fingerprint: 0x1234_5678_9abc_def0,
        through: 7,
        shards: 1000,
    };

    fn counts() -> Vec<u32> {
        (0..1000u32)
            .map(|i| if i % 3 == 0 { 720 } else { i * 7 % 11 })
            .collect()
    }

    #[test]
    fn counts_come_back_as_written_and_only_for_their_job_level_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REACHED_FILE);
        write_counts(&path, ID, &counts()).unwrap();
        assert_eq!(read_counts(&path, ID).unwrap(), counts());
        // The temporary file was renamed: only the counts are left.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        for other in [
            CountsId { fingerprint: 1, ..ID },
            CountsId { through: 6, ..ID },
            CountsId { shards: 999, ..ID },
        ] {
            let e = read_counts(&path, other).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{}", e);
        }
    }

    #[test]
    fn a_damaged_cut_or_longer_counts_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REACHED_FILE);
        write_counts(&path, ID, &counts()).unwrap();
        let whole = std::fs::read(&path).unwrap();
        for at in [3, 20, 44, HEADER_LEN + 2, whole.len() - 1] {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x10;
            std::fs::write(&path, &damaged).unwrap();
            assert!(read_counts(&path, ID).is_err(), "a flipped bit at byte {}", at);
        }
        for len in [0, 10, HEADER_LEN, whole.len() - 3] {
            std::fs::write(&path, &whole[..len]).unwrap();
            assert!(read_counts(&path, ID).is_err(), "cut to {} bytes", len);
        }
        let longer = [whole.as_slice(), &[0u8; 4]].concat();
        std::fs::write(&path, longer).unwrap();
        assert!(read_counts(&path, ID).is_err(), "4 bytes more");
    }

    #[test]
    fn counts_are_not_written_into_a_folder_that_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("L0003").join(REACHED_FILE);
        assert!(write_counts(&path, ID, &counts()).is_err());
        assert!(!dir.path().join("L0003").exists());
    }
}
