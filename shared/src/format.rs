//! Frontier files: one `F_d(B)` per (level, shard), zstd-compressed, with a
//! header that makes every file self-checking.
//!
//! Layout: a 64-byte little-endian header, then the zstd stream of the
//! shard's words (little-endian `u64`s).
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `CAYLEYFR` |
//! | 8..12 | format version |
//! | 12..16 | header length (64) |
//! | 16..24 | job fingerprint |
//! | 24..28 | level |
//! | 28..32 | reserved (0) |
//! | 32..40 | shard |
//! | 40..48 | number of bits |
//! | 48..56 | popcount |
//! | 56..64 | xxh3-64 of the uncompressed payload |
//!
//! Files are written to a unique temporary name, fsynced, then renamed, so a
//! reader sees either nothing or the whole file.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// File magic.
pub const MAGIC: &[u8; 8] = b"CAYLEYFR";
/// Version of this layout; files of another version are refused.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
/// zstd level: level 1 already shrinks sparse frontiers to almost nothing and
/// keeps dense ones near one bit per state, at several hundred MB/s.
const ZSTD_LEVEL: i32 = 1;
/// Environment variable naming a `level:shard` whose write fails as if the
/// disk were full (fault injection for tests).
pub const FAULT_DISK_FULL_ENV: &str = "CAYLEY_FAULT_DISK_FULL";

/// A problem with a frontier file. Every variant names the file.
#[derive(Debug, Error)]
pub enum FormatError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: disk full while writing (free some space, then resume)")]
    DiskFull { path: PathBuf },
    #[error("{path}: not a cayley frontier file (bad magic)")]
    BadMagic { path: PathBuf },
    #[error("{path}: format version {found}, this build reads version {expected}")]
    Version { path: PathBuf, found: u32, expected: u32 },
    #[error("{path}: belongs to another job (fingerprint {found:016x}, expected {expected:016x})")]
    OtherJob { path: PathBuf, found: u64, expected: u64 },
    #[error("{path}: holds level {found_level} shard {found_shard} ({found_bits} bits), expected level {level} shard {shard} ({bits} bits)")]
    WrongSlot {
        path: PathBuf,
        level: u32,
        shard: u64,
        bits: u64,
        found_level: u32,
        found_shard: u64,
        found_bits: u64,
    },
    #[error("{path}: truncated or corrupt payload ({detail})")]
    Corrupt { path: PathBuf, detail: String },
}

impl FormatError {
    fn io(path: &Path, source: io::Error) -> FormatError {
        if source.kind() == io::ErrorKind::StorageFull || source.raw_os_error() == Some(28) {
            FormatError::DiskFull { path: path.into() }
        } else {
            FormatError::Io {
                path: path.into(),
                source,
            }
        }
    }

    /// True for a full disk.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, FormatError::DiskFull { .. })
    }

    /// True when the file exists but its contents cannot be trusted.
    pub fn is_corruption(&self) -> bool {
        !matches!(self, FormatError::Io { .. } | FormatError::DiskFull { .. })
    }
}

/// Which file a reader expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontierId {
    pub fingerprint: u64,
    pub level: u32,
    pub shard: u64,
    pub bits: u64,
}

/// A file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontierHeader {
    pub id: FrontierId,
    pub popcount: u64,
    pub checksum: u64,
}

impl FrontierHeader {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.id.fingerprint.to_le_bytes());
        h[24..28].copy_from_slice(&self.id.level.to_le_bytes());
        h[32..40].copy_from_slice(&self.id.shard.to_le_bytes());
        h[40..48].copy_from_slice(&self.id.bits.to_le_bytes());
        h[48..56].copy_from_slice(&self.popcount.to_le_bytes());
        h[56..64].copy_from_slice(&self.checksum.to_le_bytes());
        h
    }

    fn decode(path: &Path, h: &[u8; HEADER_LEN]) -> Result<FrontierHeader, FormatError> {
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        if &h[0..8] != MAGIC {
            return Err(FormatError::BadMagic { path: path.into() });
        }
        if u32_at(8) != FORMAT_VERSION {
            return Err(FormatError::Version {
                path: path.into(),
                found: u32_at(8),
                expected: FORMAT_VERSION,
            });
        }
        if u32_at(12) != HEADER_LEN as u32 || u32_at(28) != 0 {
            return Err(FormatError::Corrupt {
                path: path.into(),
                detail: "damaged header".into(),
            });
        }
        Ok(FrontierHeader {
            id: FrontierId {
                fingerprint: u64_at(16),
                level: u32_at(24),
                shard: u64_at(32),
                bits: u64_at(40),
            },
            popcount: u64_at(48),
            checksum: u64_at(56),
        })
    }

    /// Checks the header names the expected file.
    pub fn check(&self, path: &Path, expected: &FrontierId) -> Result<(), FormatError> {
        if self.id.fingerprint != expected.fingerprint {
            return Err(FormatError::OtherJob {
                path: path.into(),
                found: self.id.fingerprint,
                expected: expected.fingerprint,
            });
        }
        if self.id != *expected {
            return Err(FormatError::WrongSlot {
                path: path.into(),
                level: expected.level,
                shard: expected.shard,
                bits: expected.bits,
                found_level: self.id.level,
                found_shard: self.id.shard,
                found_bits: self.id.bits,
            });
        }
        Ok(())
    }
}

fn payload_bytes(words: &[u64]) -> &[u8] {
    // Frontier words are stored little-endian; this build targets
    // little-endian machines, where the in-memory bytes already are that.
    const _: () = assert!(
        cfg!(target_endian = "little"),
        "frontier files assume a little-endian host"
    );
    bytemuck::cast_slice(words)
}

/// True when the fault-injection variable names this (level, shard).
fn injected_disk_full(level: u32, shard: u64) -> bool {
    std::env::var(FAULT_DISK_FULL_ENV).is_ok_and(|v| v == format!("{}:{}", level, shard))
}

/// Writes `words` as the frontier file `path` (atomically). Returns the
/// header and the file size.
pub fn write_frontier(path: &Path, id: FrontierId, words: &[u64]) -> Result<(FrontierHeader, u64), FormatError> {
    debug_assert_eq!(words.len() as u64 * 64, id.bits);
    let bytes = payload_bytes(words);
    let header = FrontierHeader {
        id,
        popcount: crate::bits::popcount(words),
        checksum: xxhash_rust::xxh3::xxh3_64(bytes),
    };
    let unique = format!(
        "{}.tmp-{}-{:x}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("frontier"),
        std::process::id(),
        xxhash_rust::xxh3::xxh3_64(
            format!("{:?}{:?}", std::thread::current().id(), std::time::Instant::now()).as_bytes()
        )
    );
    let tmp = path.with_file_name(unique);
    let result = (|| -> io::Result<u64> {
        if injected_disk_full(id.level, id.shard) {
            return Err(io::Error::from_raw_os_error(28));
        }
        let mut file = File::create(&tmp)?;
        file.write_all(&header.encode())?;
        let mut encoder = zstd::stream::Encoder::new(&mut file, ZSTD_LEVEL)?;
        encoder.write_all(bytes)?;
        encoder.finish()?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        drop(file);
        std::fs::rename(&tmp, path)?;
        Ok(size)
    })();
    match result {
        Ok(size) => Ok((header, size)),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(FormatError::io(path, e))
        }
    }
}

/// Reads only the header of `path`.
pub fn read_header(path: &Path) -> Result<FrontierHeader, FormatError> {
    let mut file = File::open(path).map_err(|e| FormatError::io(path, e))?;
    let mut h = [0u8; HEADER_LEN];
    file.read_exact(&mut h).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FormatError::Corrupt {
            path: path.into(),
            detail: "shorter than its header".into(),
        },
        _ => FormatError::io(path, e),
    })?;
    FrontierHeader::decode(path, &h)
}

/// Reads and fully verifies `path` into `out` (`bits / 64` words).
pub fn read_frontier(path: &Path, expected: &FrontierId, out: &mut [u64]) -> Result<FrontierHeader, FormatError> {
    let mut file = File::open(path).map_err(|e| FormatError::io(path, e))?;
    let mut h = [0u8; HEADER_LEN];
    file.read_exact(&mut h).map_err(|_| FormatError::Corrupt {
        path: path.into(),
        detail: "shorter than its header".into(),
    })?;
    let header = FrontierHeader::decode(path, &h)?;
    header.check(path, expected)?;
    let corrupt = |detail: String| FormatError::Corrupt {
        path: path.into(),
        detail,
    };
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
    let mut decoder = zstd::stream::Decoder::new(file).map_err(|e| corrupt(e.to_string()))?;
    decoder.read_exact(bytes).map_err(|e| corrupt(e.to_string()))?;
    let mut extra = [0u8; 1];
    if decoder.read(&mut extra).map_err(|e| corrupt(e.to_string()))? != 0 {
        return Err(corrupt("payload longer than the header says".into()));
    }
    if xxhash_rust::xxh3::xxh3_64(bytes) != header.checksum {
        return Err(corrupt("checksum mismatch".into()));
    }
    let popcount = crate::bits::popcount(out);
    if popcount != header.popcount {
        return Err(corrupt(format!("{} states, header says {}", popcount, header.popcount)));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(level: u32) -> FrontierId {
        FrontierId {
            fingerprint: 0xfeed,
            level,
            shard: 3,
            bits: 64 * 1000,
        }
    }

    #[test]
    fn roundtrip_and_sparse_files_are_tiny() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut words = vec![0u64; 1000];
        words[17] = 0b1011;
        let (header, size) = write_frontier(&path, id(2), &words).unwrap();
        assert_eq!(header.popcount, 3);
        assert!(size < 120, "sparse file takes {} bytes", size);
        let mut back = vec![0u64; 1000];
        read_frontier(&path, &id(2), &mut back).unwrap();
        assert_eq!(back, words);
        assert_eq!(read_header(&path).unwrap(), header);
    }

    #[test]
    fn corruption_is_detected_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let words: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x9e3779b97f4a7c15)).collect();
        write_frontier(&path, id(1), &words).unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut out = vec![0u64; 1000];
        // Every single flipped byte is caught.
        for at in (0..64).chain((64..good.len()).step_by(good.len() / 97 + 1)) {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            std::fs::write(&path, &bad).unwrap();
            let err = read_frontier(&path, &id(1), &mut out).unwrap_err();
            assert!(err.to_string().contains(path.to_str().unwrap()), "{}", err);
        }
        // Truncation.
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(read_frontier(&path, &id(1), &mut out).unwrap_err().is_corruption());
        // Another job's file, and the wrong level.
        std::fs::write(&path, &good).unwrap();
        let other = FrontierId {
            fingerprint: 1,
            ..id(1)
        };
        assert!(matches!(
            read_frontier(&path, &other, &mut out),
            Err(FormatError::OtherJob { .. })
        ));
        assert!(matches!(
            read_frontier(&path, &id(2), &mut out),
            Err(FormatError::WrongSlot { .. })
        ));
        read_frontier(&path, &id(1), &mut out).unwrap();
    }
}
