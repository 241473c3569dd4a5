//! Writing chunk files: shard by shard through [`ChunkWriter`] (the
//! index and header last, over a placeholder), a whole chunk at once
//! ([`write_chunk`]), or many empty chunks together
//! ([`write_empty_chunks`]). The layout is the parent module's.

use super::index::ShardIndex;
use super::{
    payload_bytes, ChunkHeader, ChunkId, FormatError, PreparedShard, ShardEntry, FORMAT_VERSION, HEADER_LEN,
    WRITE_BUFFER,
};
use crate::files::WriteOptions;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A unique name beside `path` for a file on its way there: the process,
/// the thread and the moment make it one no other writer picks.
pub(crate) fn temporary_name(path: &Path) -> PathBuf {
    let unique = format!(
        "{}.tmp-{}-{:x}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("chunk"),
        std::process::id(),
        xxhash_rust::xxh3::xxh3_64(
            format!("{:?}{:?}", std::thread::current().id(), std::time::Instant::now()).as_bytes()
        )
    );
    path.with_file_name(unique)
}

/// Writes one chunk file shard by shard, so a worker never holds more than
/// one shard of its output.
pub struct ChunkWriter {
    path: PathBuf,
    tmp: PathBuf,
    /// Buffered: one system call per shard (and one more for its
    /// position) was 2 s of the 4×4 Loopover's depth 8, 475,000 shards.
    file: Option<BufWriter<File>>,
    id: ChunkId,
    /// Whether [`Self::finish`] fsyncs.
    options: WriteOptions,
    entries: Vec<ShardEntry>,
    position: u64,
    popcount: u64,
}

impl ChunkWriter {
    /// Starts writing `path` (under a temporary name until [`finish`]),
    /// fsynced or not and with the injected fault as `options` say: a
    /// writer of the chunk named by [`WriteOptions::fail_disk_full_at`]
    /// fails here with [`FormatError::DiskFull`] and creates nothing.
    ///
    /// [`finish`]: ChunkWriter::finish
    pub fn create(path: &Path, id: ChunkId, options: WriteOptions) -> Result<ChunkWriter, FormatError> {
        let tmp = temporary_name(path);
        let io = |e| FormatError::io(path, e);
        if options.fails_disk_full_at(id.level, id.chunk) {
            // ENOSPC, as the kernel reports a full disk.
            return Err(io(io::Error::from_raw_os_error(28)));
        }
        let file = BufWriter::with_capacity(WRITE_BUFFER, File::create(&tmp).map_err(io)?);
        // Payloads start after the header, which is written last (over a
        // placeholder written with the first payload), and the index
        // follows them.
        let position = HEADER_LEN as u64;
        Ok(ChunkWriter {
            path: path.into(),
            tmp,
            file: Some(file),
            id,
            options,
            entries: Vec::with_capacity(id.shards as usize),
            position,
            popcount: 0,
        })
    }

    /// Appends the next shard's words; returns its popcount.
    pub fn push(&mut self, words: &[u64]) -> Result<u64, FormatError> {
        let prepared = PreparedShard::new(words).map_err(|e| FormatError::io(&self.path, e))?;
        self.push_prepared(Some(words), prepared)
    }

    /// Appends the next shard, counted and compressed beforehand by
    /// [`PreparedShard::new`]; returns its popcount. Its `words` are read
    /// only when they are stored raw ([`PreparedShard::needs_words`]): a
    /// compressed shard's caller may have let go of them.
    pub fn push_prepared(&mut self, words: Option<&[u64]>, prepared: PreparedShard) -> Result<u64, FormatError> {
        assert_eq!(prepared.words as u64, self.id.shard_words, "shard size");
        assert!(
            words.is_none_or(|w| w.len() == prepared.words),
            "prepared from these words"
        );
        assert!(
            self.entries.len() < self.id.shards as usize,
            "more shards than the chunk holds"
        );
        let mut entry = ShardEntry {
            popcount: prepared.popcount,
            ..ShardEntry::default()
        };
        if prepared.popcount > 0 {
            let io = |e| FormatError::io(&self.path, e);
            let file = self.file.as_mut().expect("open until finished");
            if self.popcount == 0 {
                // The first payload: the header goes before it.
                file.write_all(&[0u8; HEADER_LEN]).map_err(io)?;
            }
            match &prepared.frames {
                Some(frames) => {
                    for frame in frames {
                        file.write_all(frame).map_err(io)?;
                    }
                }
                None => file
                    .write_all(payload_bytes(words.expect("the words of a shard stored raw")))
                    .map_err(io)?,
            }
            let end = self.position
                + prepared.frames.as_ref().map_or(prepared.words as u64 * 8, |frames| {
                    frames.iter().map(|f| f.len() as u64).sum()
                });
            entry.offset = self.position;
            entry.length = end - self.position;
            entry.checksum = prepared.checksum;
            self.position = end;
        }
        self.popcount += prepared.popcount;
        self.entries.push(entry);
        Ok(prepared.popcount)
    }

    /// Appends an empty shard: an index entry, no words (what [`Self::push`]
    /// writes for all-zero words, without reading them).
    pub fn push_empty(&mut self) {
        assert!(
            self.entries.len() < self.id.shards as usize,
            "more shards than the chunk holds"
        );
        self.entries.push(ShardEntry::default());
    }

    /// Writes the index and header, fsyncs, renames into place and fsyncs
    /// the directory (the fsyncs only when [`WriteOptions::durable`]).
    /// Returns the header and the file size.
    pub fn finish(self) -> Result<(ChunkHeader, u64), FormatError> {
        let path = self.path.clone();
        let options = self.options;
        let finished = self.finish_but_directory()?;
        options.sync_parent_dir(&path).map_err(|e| FormatError::io(&path, e))?;
        Ok(finished)
    }

    /// [`Self::finish`] but for the fsync of the directory, which the
    /// caller owes (once for many files).
    pub(super) fn finish_but_directory(mut self) -> Result<(ChunkHeader, u64), FormatError> {
        assert_eq!(
            self.entries.len(),
            self.id.shards as usize,
            "every shard of the chunk written"
        );
        // An empty chunk is its header alone (see the module's layout).
        let index = if self.popcount == 0 {
            Vec::new()
        } else {
            ShardIndex::from_entries(&self.entries).encode()
        };
        let header = ChunkHeader {
            version: FORMAT_VERSION,
            id: self.id,
            popcount: self.popcount,
            index_checksum: xxhash_rust::xxh3::xxh3_64(&index),
            index_offset: self.position,
        };
        let size = self.position + index.len() as u64;
        let file = self.file.take().expect("open until finished");
        let result = (|| -> io::Result<()> {
            let mut file = file.into_inner().map_err(|e| e.into_error())?;
            // After the last frame (the header alone: at its end, which
            // only the header's write below makes the file's).
            file.write_all_at(&index, self.position)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&header.encode())?;
            self.options.sync_file(&file)?;
            drop(file);
            std::fs::rename(&self.tmp, &self.path)
        })();
        result.map_err(|e| FormatError::io(&self.path, e))?;
        Ok((header, size))
    }
}

impl Drop for ChunkWriter {
    fn drop(&mut self) {
        // Not finished (an error or a panic on the way): leave nothing behind.
        if self.file.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes a whole chunk from its shards' words (small chunks: level 0,
/// tests), as [`ChunkWriter`] does with `options`.
pub fn write_chunk<'a>(
    path: &Path,
    id: ChunkId,
    shards: impl IntoIterator<Item = &'a [u64]>,
    options: WriteOptions,
) -> Result<(ChunkHeader, u64), FormatError> {
    let mut writer = ChunkWriter::create(path, id, options)?;
    for words in shards {
        writer.push(words)?;
    }
    writer.finish()
}
