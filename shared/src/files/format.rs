//! Chunk files: the frontier `F_d` of a run of consecutive shards (one task's
//! output), zstd-compressed shard by shard, with a header and an index that
//! make every file self-checking and let a reader fetch one shard alone.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `CAYLEYCK` |
//! | 8..12 | format version |
//! | 12..16 | header length (96) |
//! | 16..24 | job fingerprint |
//! | 24..28 | level |
//! | 28..32 | number of shards in the chunk |
//! | 32..40 | chunk number |
//! | 40..48 | first shard |
//! | 48..56 | words per shard |
//! | 56..64 | popcount of the whole chunk |
//! | 64..72 | xxh3-64 of the index |
//! | 72..80 | xxh3-64 of bytes 0..72 (from version 7: and 80..96) |
//! | 80..88 | from version 7: offset of the index (before: 0) |
//! | 88..96 | reserved (0) |
//!
//! Then each non-empty shard's frames, in shard order, then the index.
//! The index is a bitmap of the chunk's non-empty shards (a little-endian
//! word per 64 shards) and 32 bytes for each of them (offset, length,
//! popcount, xxh3-64 of the shard's stored bytes when it is a list, else of
//! its uncompressed words). Up to version 6 the index came first, right
//! after the header, with 32 bytes for every shard, empty or not: on the
//! 15-puzzle's sparse levels (1,479 shards a chunk, about one in fifty
//! holding a state) that was most of each file, written, checked and read
//! again by every level. Each non-empty shard: from version 4, when at most one bit
//! in [`list::LIST_DENSITY`] is set, the list of its set bits (see
//! [`list`]); else zstd frames of at most [`FRAME_BYTES`] of its words, or,
//! when between a fifth and four fifths of its bits are set
//! ([`stored_raw`]) or whenever zstd does not make them smaller, the words
//! as they are: a length equal to the shard's size means raw words, and
//! compressed shards and lists are always shorter than that. An empty
//! shard has no frame (up to version 6: an entry of length 0).
//! From version 5 a chunk without a set bit is its header alone (no index;
//! the index checksum is that of no bytes): on the 4×4 Loopover's first
//! levels, 309 chunks of which at most 90 gain a state, each empty one
//! was 52 KB written and read twice (by the coordinator's check and the
//! next level's sparse map). From version 6 the empty chunks a coordinator
//! records together are hard links to one such file of their level and
//! size, whose chunk number and first shard are [`ANY_CHUNK`] (see
//! `empties.rs`): a reader checks the rest of its header and reports the
//! chunk it expected.
//!
//! Files are written to a unique temporary name, fsynced, renamed, and the
//! directory fsynced, so a reader sees either nothing or the whole file and
//! the rename survives a power loss (the fsyncs as [`WriteOptions`](crate::files::WriteOptions) say:
//! a temporary checkpoint skips them).

use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// File magic.
pub const MAGIC: &[u8; 8] = b"CAYLEYCK";
/// Version of this layout; files of a newer version, or older than
/// [`OLDEST_READABLE_VERSION`], are refused. Version 3 added shards stored
/// raw, version 4 sparse shards stored as lists, version 5 chunks without
/// a set bit stored as their header alone, version 6 one header-only file
/// shared by the empty chunks of a level ([`ANY_CHUNK`]), version 7 the
/// index after the frames, with entries for the non-empty shards alone.
pub const FORMAT_VERSION: u32 = 7;

/// Version 2 files (every shard compressed) and version 3 files (no lists)
/// still read: a checkpoint written by an earlier build resumes and gives
/// its result.
pub const OLDEST_READABLE_VERSION: u32 = 2;

/// The first version whose shards may be lists.
const LISTS_VERSION: u32 = 4;

/// The first version whose empty chunks have no index.
const HEADER_ONLY_VERSION: u32 = 5;

/// The first version whose empty chunks may share a file.
const SHARED_EMPTY_VERSION: u32 = 6;

/// The first version whose index follows the frames and lists only the
/// non-empty shards.
const SPARSE_INDEX_VERSION: u32 = 7;

/// The chunk number and first shard in the header of a file that empty
/// chunks of one level and size share as hard links: it stands for any of
/// them, and holds no set bit.
pub const ANY_CHUNK: u64 = u64::MAX;

/// Bytes of the header.
pub const HEADER_LEN: usize = 96;
/// Bytes of one index entry.
pub const ENTRY_LEN: usize = 32;
/// zstd level: level 1 already shrinks sparse frontiers to almost nothing and
/// keeps dense ones near one bit per state, at several hundred MB/s.
pub const ZSTD_LEVEL: i32 = 1;
/// Bytes of a shard compressed as one zstd frame: the frames of a shard
/// are compressed in parallel. Small enough that a 1.3 MiB shard (the
/// cube's corners) makes three, big enough that each compresses as well as
/// the whole.
pub const FRAME_BYTES: usize = 512 << 10;
/// Bytes a chunk writer gathers before a write system call.
const WRITE_BUFFER: usize = 1 << 20;

/// A problem with a chunk file. Every variant names the file.
#[derive(Debug, Error)]
pub enum FormatError {
    /// `error` is shown in the message and is not the error's `source`:
    /// as a source it was printed twice by `{:#}` ("…chunk: No such file
    /// or directory (os error 2): No such file or directory (os error 2)").
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    #[error("{path}: disk full while writing (free some space, then resume)")]
    DiskFull { path: PathBuf },
    #[error("{path}: not a cayley chunk file (bad magic)")]
    BadMagic { path: PathBuf },
    #[error("{path}: format version {found}, this build reads version {expected}")]
    Version { path: PathBuf, found: u32, expected: u32 },
    #[error("{path}: belongs to another job (fingerprint {found:016x}, expected {expected:016x})")]
    OtherJob { path: PathBuf, found: u64, expected: u64 },
    #[error("{path}: holds {found}, expected {expected}")]
    WrongChunk {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: truncated or corrupt ({detail})")]
    Corrupt { path: PathBuf, detail: String },
}

impl FormatError {
    fn io(path: &Path, source: io::Error) -> FormatError {
        if source.kind() == io::ErrorKind::StorageFull || source.raw_os_error() == Some(28) {
            FormatError::DiskFull { path: path.into() }
        } else {
            FormatError::Io {
                path: path.into(),
                error: source,
            }
        }
    }

    fn corrupt(path: &Path, detail: impl Into<String>) -> FormatError {
        FormatError::Corrupt {
            path: path.into(),
            detail: detail.into(),
        }
    }

    /// True for a full disk.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, FormatError::DiskFull { .. })
    }

    /// True when the file does not exist.
    pub fn is_missing(&self) -> bool {
        matches!(self, FormatError::Io { error, .. } if error.kind() == io::ErrorKind::NotFound)
    }

    /// True when the file exists but its contents cannot be trusted.
    pub fn is_corruption(&self) -> bool {
        !matches!(self, FormatError::Io { .. } | FormatError::DiskFull { .. })
    }
}

/// Which chunk a file holds (what a reader expects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkId {
    pub fingerprint: u64,
    pub level: u32,
    pub chunk: u64,
    pub first_shard: u64,
    /// Shards in the chunk.
    pub shards: u32,
    /// Words of every shard.
    pub shard_words: u64,
}

impl std::fmt::Display for ChunkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.chunk == ANY_CHUNK {
            return write!(
                f,
                "level {} any empty chunk of {} shards of {} words",
                self.level, self.shards, self.shard_words
            );
        }
        write!(
            f,
            "level {} chunk {} (shards {}..{}, {} words each)",
            self.level,
            self.chunk,
            self.first_shard,
            self.first_shard + self.shards as u64,
            self.shard_words
        )
    }
}

/// Where one shard's frame is and what it must hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardEntry {
    /// File offset of the frame (0 for an empty shard).
    pub offset: u64,
    /// Bytes of the frame (0 for an empty shard).
    pub length: u64,
    /// Set bits of the shard.
    pub popcount: u64,
    /// xxh3-64 of the shard's words as little-endian bytes (0 when empty).
    pub checksum: u64,
}

/// A file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub id: ChunkId,
    /// Set bits in the whole chunk.
    pub popcount: u64,
    /// xxh3-64 of the index: covers every shard's checksum and count.
    pub index_checksum: u64,
    /// Where the index starts: right after the header up to version 6,
    /// after the frames from version 7 (the header's length in a chunk
    /// without a set bit, which is its header alone).
    pub index_offset: u64,
    /// Format version the file was written in ([`OLDEST_READABLE_VERSION`]
    /// up to [`FORMAT_VERSION`]).
    pub version: u32,
}

fn u32_at(h: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"))
}

fn u64_at(h: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"))
}

/// The header's own checksum in `version`: of bytes 0..72, and from
/// version 7 also of 80..96 (the index's offset).
fn own_checksum(h: &[u8; HEADER_LEN], version: u32) -> u64 {
    if version < SPARSE_INDEX_VERSION {
        return xxhash_rust::xxh3::xxh3_64(&h[..72]);
    }
    let mut covered = [0u8; 88];
    covered[..72].copy_from_slice(&h[..72]);
    covered[72..].copy_from_slice(&h[80..]);
    xxhash_rust::xxh3::xxh3_64(&covered)
}

impl ChunkHeader {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.id.fingerprint.to_le_bytes());
        h[24..28].copy_from_slice(&self.id.level.to_le_bytes());
        h[28..32].copy_from_slice(&self.id.shards.to_le_bytes());
        h[32..40].copy_from_slice(&self.id.chunk.to_le_bytes());
        h[40..48].copy_from_slice(&self.id.first_shard.to_le_bytes());
        h[48..56].copy_from_slice(&self.id.shard_words.to_le_bytes());
        h[56..64].copy_from_slice(&self.popcount.to_le_bytes());
        h[64..72].copy_from_slice(&self.index_checksum.to_le_bytes());
        h[80..88].copy_from_slice(&self.index_offset.to_le_bytes());
        let own = own_checksum(&h, FORMAT_VERSION);
        h[72..80].copy_from_slice(&own.to_le_bytes());
        h
    }

    fn decode(path: &Path, h: &[u8; HEADER_LEN]) -> Result<ChunkHeader, FormatError> {
        if &h[0..8] != MAGIC {
            return Err(FormatError::BadMagic { path: path.into() });
        }
        let version = u32_at(h, 8);
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(FormatError::Version {
                path: path.into(),
                found: u32_at(h, 8),
                expected: FORMAT_VERSION,
            });
        }
        let reserved = if version >= SPARSE_INDEX_VERSION { 88 } else { 80 };
        let intact = u32_at(h, 12) == HEADER_LEN as u32
            && h[reserved..].iter().all(|&b| b == 0)
            && u64_at(h, 72) == own_checksum(h, version);
        if !intact {
            return Err(FormatError::corrupt(path, "damaged header"));
        }
        let header = ChunkHeader {
            id: ChunkId {
                fingerprint: u64_at(h, 16),
                level: u32_at(h, 24),
                shards: u32_at(h, 28),
                chunk: u64_at(h, 32),
                first_shard: u64_at(h, 40),
                shard_words: u64_at(h, 48),
            },
            popcount: u64_at(h, 56),
            index_checksum: u64_at(h, 64),
            index_offset: if version >= SPARSE_INDEX_VERSION {
                u64_at(h, 80)
            } else {
                HEADER_LEN as u64
            },
            version,
        };
        let shared = header.id.chunk == ANY_CHUNK || header.id.first_shard == ANY_CHUNK;
        let shared_ok =
            header.id.chunk == header.id.first_shard && version >= SHARED_EMPTY_VERSION && header.popcount == 0;
        if shared && !shared_ok {
            return Err(FormatError::corrupt(path, "damaged header of a shared empty chunk"));
        }
        Ok(header)
    }

    /// The header of an empty chunk's file (its header alone): what a
    /// writer of every shard of `id` empty writes.
    pub fn empty(id: ChunkId) -> ChunkHeader {
        ChunkHeader {
            version: FORMAT_VERSION,
            id,
            popcount: 0,
            index_checksum: xxhash_rust::xxh3::xxh3_64(&[]),
            index_offset: HEADER_LEN as u64,
        }
    }

    /// Checks the header names the expected chunk, or is that of a file
    /// the empty chunks of its level and size share ([`ANY_CHUNK`]).
    pub fn check(&self, path: &Path, expected: &ChunkId) -> Result<(), FormatError> {
        if self.id.fingerprint != expected.fingerprint {
            return Err(FormatError::OtherJob {
                path: path.into(),
                found: self.id.fingerprint,
                expected: expected.fingerprint,
            });
        }
        // A shared empty file stands for every chunk of its level and size.
        let same = if self.id.chunk == ANY_CHUNK {
            (self.id.level, self.id.shards, self.id.shard_words)
                == (expected.level, expected.shards, expected.shard_words)
        } else {
            self.id == *expected
        };
        if !same {
            return Err(FormatError::WrongChunk {
                path: path.into(),
                expected: expected.to_string(),
                found: self.id.to_string(),
            });
        }
        Ok(())
    }
}

fn payload_bytes(words: &[u64]) -> &[u8] {
    // Words are stored little-endian; this build targets little-endian
    // machines, where the in-memory bytes already are that.
    const _: () = assert!(
        cfg!(target_endian = "little"),
        "chunk files assume a little-endian host"
    );
    bytemuck::cast_slice(words)
}

mod empties;
mod index;
pub mod list;
mod prepared;
mod reader;
pub(crate) mod writer;
pub use empties::write_empty_chunks;
pub use prepared::{stored_raw, PreparedShard};
pub use reader::{read_chunk_header, verify_chunk, ChunkReader};
pub use writer::{write_chunk, ChunkWriter};

#[cfg(test)]
mod tests;
