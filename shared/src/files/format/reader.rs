//! Reading chunk files: the header alone, or the header and index verified
//! once and then shards one at a time (each frame checked against its
//! index entry), or everything ([`verify_chunk`]).

use super::index::{decode_entries, ShardIndex};
use super::{
    list, ChunkHeader, ChunkId, FormatError, ShardEntry, ENTRY_LEN, HEADER_LEN, HEADER_ONLY_VERSION, LISTS_VERSION,
    SPARSE_INDEX_VERSION,
};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Reads only the header of `path` (no check of what it should hold).
pub fn read_chunk_header(path: &Path) -> Result<ChunkHeader, FormatError> {
    let mut file = File::open(path).map_err(|e| FormatError::io(path, e))?;
    read_header_from(path, &mut file)
}

fn read_header_from(path: &Path, file: &mut File) -> Result<ChunkHeader, FormatError> {
    let mut h = [0u8; HEADER_LEN];
    file.read_exact(&mut h).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FormatError::corrupt(path, "shorter than its header"),
        _ => FormatError::io(path, e),
    })?;
    ChunkHeader::decode(path, &h)
}

/// An open chunk file whose header and index have been verified; shards are
/// read (and verified) one at a time.
pub struct ChunkReader {
    path: PathBuf,
    file: File,
    header: ChunkHeader,
    /// The index, whatever the file's version: the sparse map opens every
    /// chunk of a level, and 1,618 zeroed entries and counts for each of
    /// the 4×4 Loopover's 300-odd empty chunks a level were 20 MB to
    /// allocate and clear (depths 2–4's indexes took 11.3, 11.8 and 6.6 ms
    /// with them, 3.5, 2.7 and 4.3 ms without, 1 thread); only the
    /// non-empty shards have entries now.
    index: ShardIndex,
    /// Bytes of the file.
    size: u64,
}

impl ChunkReader {
    /// Opens `path`, expecting the chunk `expected`: verifies the header, the
    /// index checksum and that every frame lies inside the file.
    pub fn open(path: &Path, expected: &ChunkId) -> Result<ChunkReader, FormatError> {
        let mut file = File::open(path).map_err(|e| FormatError::io(path, e))?;
        let mut header = read_header_from(path, &mut file)?;
        header.check(path, expected)?;
        // The same but for a shared empty file's chunk number and first
        // shard, which stand for any chunk's.
        header.id = *expected;
        let size = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
        if header.version >= HEADER_ONLY_VERSION && header.popcount == 0 {
            return Self::header_only(path, file, header, size);
        }
        let index = if header.version >= SPARSE_INDEX_VERSION {
            Self::sparse_index(path, &file, &header, size)?
        } else {
            Self::full_index(path, &mut file, &header, size)?
        };
        Ok(ChunkReader {
            path: path.into(),
            file,
            header,
            index,
            size,
        })
    }

    /// The index of a file of version 7 or later: after the frames, which
    /// follow each other in shard order from the header on and end where
    /// it starts.
    fn sparse_index(path: &Path, file: &File, header: &ChunkHeader, size: u64) -> Result<ShardIndex, FormatError> {
        let start = header.index_offset;
        if !(HEADER_LEN as u64..=size).contains(&start) {
            return Err(FormatError::corrupt(path, "index offset outside the file"));
        }
        let mut bytes = vec![0u8; (size - start) as usize];
        file.read_exact_at(&mut bytes, start)
            .map_err(|e| FormatError::io(path, e))?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != header.index_checksum {
            return Err(FormatError::corrupt(path, "index checksum mismatch"));
        }
        let index =
            ShardIndex::decode(header.id.shards as usize, &bytes).map_err(|why| FormatError::corrupt(path, why))?;
        Self::check_frames(path, header, index.entries(), HEADER_LEN as u64, start)?;
        Ok(index)
    }

    /// The index of a file up to version 6: an entry for every shard, right
    /// after the header, and the frames after it up to the file's end.
    fn full_index(path: &Path, file: &mut File, header: &ChunkHeader, size: u64) -> Result<ShardIndex, FormatError> {
        let index_len = ENTRY_LEN as u64 * header.id.shards as u64;
        let data_start = HEADER_LEN as u64 + index_len;
        if data_start > size {
            return Err(FormatError::corrupt(path, "shorter than its index"));
        }
        let mut index = vec![0u8; index_len as usize];
        file.read_exact(&mut index).map_err(|e| FormatError::io(path, e))?;
        if xxhash_rust::xxh3::xxh3_64(&index) != header.index_checksum {
            return Err(FormatError::corrupt(path, "index checksum mismatch"));
        }
        let entries = decode_entries(&index);
        // An empty shard has no frame.
        if entries
            .iter()
            .any(|e| (e.length == 0) != (e.popcount == 0) || (e.length == 0 && e.offset != 0))
        {
            return Err(FormatError::corrupt(path, "index entry out of place"));
        }
        let index = ShardIndex::from_entries(&entries);
        Self::check_frames(path, header, index.entries(), data_start, size)?;
        Ok(index)
    }

    /// Checks that the non-empty shards' frames (`entries`, in shard
    /// order) follow each other from `start` to `end`, and that their set
    /// bits, each at most a shard's, add up to the header's.
    fn check_frames(
        path: &Path,
        header: &ChunkHeader,
        entries: &[ShardEntry],
        start: u64,
        end: u64,
    ) -> Result<(), FormatError> {
        let bits = header.id.shard_words.saturating_mul(64);
        let mut at = start;
        let mut total = 0u64;
        for e in entries {
            let placed = e.length > 0
                && e.offset == at
                && e.offset.checked_add(e.length).is_some_and(|x| x <= end)
                && (1..=bits).contains(&e.popcount);
            if !placed {
                return Err(FormatError::corrupt(path, "index entry out of place"));
            }
            at += e.length;
            total += e.popcount;
        }
        if total != header.popcount || at != end {
            return Err(FormatError::corrupt(
                path,
                "index does not match the header or the file size",
            ));
        }
        Ok(())
    }

    /// An empty chunk of version 5 or later: the header must be the whole
    /// file, and its index checksum that of no bytes.
    fn header_only(path: &Path, file: File, header: ChunkHeader, size: u64) -> Result<ChunkReader, FormatError> {
        if size != HEADER_LEN as u64 {
            return Err(FormatError::corrupt(path, "an empty chunk longer than its header"));
        }
        if header.index_checksum != xxhash_rust::xxh3::xxh3_64(&[]) {
            return Err(FormatError::corrupt(path, "index checksum mismatch"));
        }
        Ok(ChunkReader {
            path: path.into(),
            file,
            index: ShardIndex::empty(header.id.shards as usize),
            header,
            size,
        })
    }

    /// The verified header.
    pub fn header(&self) -> &ChunkHeader {
        &self.header
    }

    /// The non-empty shards of the chunk (their numbers in the chunk, in
    /// order) with their index entries.
    pub fn nonempty(&self) -> impl Iterator<Item = (usize, ShardEntry)> + '_ {
        self.index.nonempty()
    }

    /// Index entry of shard `index` of the chunk (all zero for an empty
    /// shard).
    pub fn entry(&self, index: usize) -> ShardEntry {
        self.index.entry(index)
    }

    /// Set bits of shard `index` of the chunk (its index entry's).
    #[inline]
    pub fn popcount(&self, index: usize) -> u64 {
        self.index.popcount(index)
    }

    /// Bytes of the file.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads and verifies shard number `i` of the chunk into `out` (fully
    /// overwritten). Returns the compressed bytes read.
    pub fn read_shard(&self, i: usize, out: &mut [u64]) -> Result<u64, FormatError> {
        self.read_shard_via(i, out, &mut Vec::new())
    }

    /// [`ChunkReader::read_shard`] reading the compressed frame through
    /// `frame`, which keeps its capacity for the next call: a caller reading
    /// many shards then allocates (and page-faults) one frame buffer in all
    /// instead of one per shard.
    pub fn read_shard_via(&self, i: usize, out: &mut [u64], frame: &mut Vec<u8>) -> Result<u64, FormatError> {
        self.read_shard_listing(i, out, frame).map(|(read, _)| read)
    }

    /// [`ChunkReader::read_shard_via`] that also gives back the positions
    /// of a shard stored as their list, which a caller keeping the shard's
    /// list then need not make again from the words.
    pub fn read_shard_listing(
        &self,
        i: usize,
        out: &mut [u64],
        frame: &mut Vec<u8>,
    ) -> Result<(u64, Option<Vec<u32>>), FormatError> {
        let e = self.entry(i);
        assert_eq!(out.len() as u64, self.header.id.shard_words, "shard size");
        if e.length == 0 {
            out.fill(0);
            return Ok((0, None));
        }
        let shard = self.header.id.first_shard + i as u64;
        let corrupt = |detail: String| FormatError::corrupt(&self.path, format!("shard {}: {}", shard, detail));
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        if e.length == bytes.len() as u64 && self.header.version >= 3 {
            // Stored raw (the writer keeps frames only when shorter).
            self.file
                .read_exact_at(bytes, e.offset)
                .map_err(|err| FormatError::io(&self.path, err))?;
        } else {
            frame.resize(e.length as usize, 0);
            self.file
                .read_exact_at(frame, e.offset)
                .map_err(|err| FormatError::io(&self.path, err))?;
            if let Some(positions) = self.list_of(e, frame).map_err(corrupt)? {
                out.fill(0);
                crate::space::bits::set_positions(out, &positions);
                return Ok((e.length, Some(positions)));
            }
            let n = decompress_frame(frame, bytes).map_err(|err| corrupt(err.to_string()))?;
            if n != bytes.len() {
                return Err(corrupt(format!("{} bytes, expected {}", n, bytes.len())));
            }
        }
        if xxhash_rust::xxh3::xxh3_64(bytes) != e.checksum {
            return Err(corrupt("checksum mismatch".into()));
        }
        if crate::space::bits::popcount(out) != e.popcount {
            return Err(corrupt("popcount mismatch".into()));
        }
        Ok((e.length, None))
    }

    /// The positions a shard's stored bytes `stored` list, checked against
    /// its index entry `e`; `None` when the shard is not a list.
    fn list_of(&self, e: ShardEntry, stored: &[u8]) -> Result<Option<Vec<u32>>, String> {
        if self.header.version < LISTS_VERSION || !list::is_list(stored) {
            return Ok(None);
        }
        if xxhash_rust::xxh3::xxh3_64(stored) != e.checksum {
            return Err("checksum mismatch".into());
        }
        list::decode(stored, e.popcount, self.header.id.shard_words * 64).map(Some)
    }

    /// Words `at` (ascending word numbers) of shard number `i`, reading
    /// only the zstd frames that hold them (or, for a shard stored raw, the
    /// words alone). For a few membership tests (the antipode walk's) in
    /// shards of megabytes: a frame is at most [`super::FRAME_BYTES`] of
    /// words, so a test costs a tenth of a 5 MiB shard's decompression.
    ///
    /// The shard's checksum covers all its words and is not checked here,
    /// only that its frames add up to its size: a caller must tolerate a
    /// corrupt bit (the walk does: a wrong bit leads it to a state that
    /// does not end at solved, which it reports).
    pub fn read_words(&self, i: usize, at: &[u32]) -> Result<Vec<u64>, FormatError> {
        let e = self.entry(i);
        debug_assert!(at.windows(2).all(|w| w[0] <= w[1]), "word numbers in order");
        let shard_words = self.header.id.shard_words;
        assert!(
            at.last().is_none_or(|&w| (w as u64) < shard_words),
            "a word past the shard's {} words",
            shard_words
        );
        if e.length == 0 {
            return Ok(vec![0; at.len()]);
        }
        let shard = self.header.id.first_shard + i as u64;
        let corrupt = |detail: String| FormatError::corrupt(&self.path, format!("shard {}: {}", shard, detail));
        let io = |err| FormatError::io(&self.path, err);
        if e.length == shard_words * 8 && self.header.version >= 3 {
            let mut word = [0u8; 8];
            return at
                .iter()
                .map(|&w| {
                    self.file
                        .read_exact_at(&mut word, e.offset + 8 * w as u64)
                        .map_err(io)?;
                    Ok(u64::from_le_bytes(word))
                })
                .collect();
        }
        let mut frames = vec![0u8; e.length as usize];
        self.file.read_exact_at(&mut frames, e.offset).map_err(io)?;
        if let Some(positions) = self.list_of(e, &frames).map_err(corrupt)? {
            return Ok(words_of_list(&positions, at));
        }
        let mut values = Vec::with_capacity(at.len());
        let mut rest = &frames[..];
        // Word number of the current frame's first word.
        let mut first = 0u64;
        let mut raw: Vec<u64> = Vec::new();
        let mut wanted = at.iter().peekable();
        while !rest.is_empty() {
            let length =
                zstd::zstd_safe::find_frame_compressed_size(rest).map_err(|_| corrupt("an unreadable frame".into()))?;
            let frame = &rest[..length];
            rest = &rest[length..];
            let bytes = match zstd::zstd_safe::get_frame_content_size(frame) {
                Ok(Some(bytes)) if bytes % 8 == 0 => bytes,
                _ => return Err(corrupt("a frame without a size in whole words".into())),
            };
            let end = first + bytes / 8;
            if end > shard_words {
                return Err(corrupt("frames longer than the shard".into()));
            }
            if wanted.peek().is_some_and(|&&w| (w as u64) < end) {
                raw.resize((bytes / 8) as usize, 0);
                let n = decompress_frame(frame, bytemuck::cast_slice_mut(&mut raw))
                    .map_err(|err| corrupt(err.to_string()))?;
                if n as u64 != bytes {
                    return Err(corrupt(format!("a frame of {} bytes, expected {}", n, bytes)));
                }
                while let Some(w) = wanted.next_if(|&&w| (w as u64) < end) {
                    values.push(raw[(*w as u64 - first) as usize]);
                }
            }
            first = end;
        }
        if first != shard_words {
            return Err(corrupt(format!("frames of {} words, expected {}", first, shard_words)));
        }
        Ok(values)
    }

    /// Reads every shard once: the full verification of a file.
    pub fn verify_all(&self) -> Result<(), FormatError> {
        let mut words = vec![0u64; self.header.id.shard_words as usize];
        let mut frame = Vec::new();
        // An empty shard has nothing stored to check.
        for (i, _) in self.nonempty() {
            self.read_shard_via(i, &mut words, &mut frame)?;
        }
        Ok(())
    }
}

/// Words `at` (ascending word numbers) of the shard whose set bits are
/// `positions` (ascending).
fn words_of_list(positions: &[u32], at: &[u32]) -> Vec<u64> {
    let mut rest = positions;
    at.iter()
        .map(|&w| {
            // Positions before this word are skipped for good: `at` ascends.
            let start = rest.partition_point(|&p| p / 64 < w);
            rest = &rest[start..];
            let end = rest.partition_point(|&p| p / 64 == w);
            rest[..end].iter().fold(0u64, |word, &p| word | 1 << (p % 64))
        })
        .collect()
}

/// Opens and fully verifies a chunk file; returns its header.
pub fn verify_chunk(path: &Path, expected: &ChunkId) -> Result<ChunkHeader, FormatError> {
    let reader = ChunkReader::open(path, expected)?;
    reader.verify_all()?;
    Ok(reader.header)
}

thread_local! {
    /// Each thread's zstd decompression context, made once: creating one per
    /// shard read was 5% of a worker's time on the 4×4 Loopover's depth 8
    /// (`perf`: `ZSTD_createDCtx`), where most reads are frames of a few
    /// hundred bytes.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses one frame into `out` with this thread's context; returns
/// the bytes written.
fn decompress_frame(frame: &[u8], out: &mut [u8]) -> std::io::Result<usize> {
    DECOMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let decompressor = match slot.as_mut() {
            Some(decompressor) => decompressor,
            None => slot.insert(zstd::bulk::Decompressor::new()?),
        };
        decompressor.decompress_to_buffer(frame, out)
    })
}
