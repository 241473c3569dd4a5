//! A shard made ready for its chunk file off the writer's thread: counted,
//! checksummed, and listed, compressed or left raw (see the parent module
//! for the layout).

use super::{list, payload_bytes, FRAME_BYTES, ZSTD_LEVEL};
use rayon::prelude::*;
use std::io;

thread_local! {
    /// Each thread's zstd compression context, made once: a fresh context
    /// per frame costs about 54 page faults (its tables are fresh memory)
    /// and 14% more time per 512 KiB frame.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Whether a shard of `bits` bits, `popcount` of them set, is stored as its
/// raw words rather than compressed: between a fifth and four fifths set,
/// zstd saves at most a few percent (the 4×4 Loopover's depths 11 and 12,
/// 31% and 62% set, compressed to 0.92 and 0.96 of their raw size) and
/// compressing and decompressing them was a fifth of a worker's time on
/// those levels (`perf`: `ZSTD_compressBlock_fast`, `ZSTD_decompressSequences`).
pub fn stored_raw(popcount: u64, bits: u64) -> bool {
    popcount * 5 >= bits && popcount * 5 <= bits * 4
}

/// One zstd frame of `piece`, compressed with this thread's context.
fn compress_frame(piece: &[u8]) -> io::Result<Vec<u8>> {
    COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let compressor = match slot.as_mut() {
            Some(compressor) => compressor,
            None => slot.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
        };
        compressor.compress(piece)
    })
}

/// What [`ChunkWriter::push`](super::ChunkWriter::push) works out from a shard's words before
/// writing them: the popcount, the checksum and the compressed frames.
/// Made apart from the writer so that the shards of a batch are prepared
/// on several threads while one writes (the 4×4 Loopover's depth 8 spent
/// 5.6 s of 36 s preparing shards on one thread while the other idled).
pub struct PreparedShard {
    /// Words of the shard it was made from.
    pub(super) words: usize,
    pub(super) popcount: u64,
    pub(super) checksum: u64,
    /// The zstd frames, or the list; `None` when the raw words are stored.
    pub(super) frames: Option<Vec<Vec<u8>>>,
    /// The positions of the set bits of a shard stored as their list.
    positions: Option<Vec<u32>>,
}

impl PreparedShard {
    /// True when the shard's words are stored raw, so that
    /// [`ChunkWriter::push_prepared`](super::ChunkWriter::push_prepared) needs them.
    pub fn needs_words(&self) -> bool {
        self.popcount > 0 && self.frames.is_none()
    }

    /// Counts, checksums and (unless stored raw) lists or compresses
    /// `words`, the frames in parallel on the caller's rayon pool.
    pub fn new(words: &[u64]) -> io::Result<PreparedShard> {
        PreparedShard::counted(words, crate::space::bits::popcount(words))
    }

    /// [`Self::new`] of `words` whose set bits the caller has counted:
    /// `popcount` (a kernel counts its output's). A wrong count fails here
    /// for a shard stored as its list (its positions are all listed and
    /// counted) and in every reader for the others (a reader checks the
    /// popcount of the words it reads).
    pub fn counted(words: &[u64], popcount: u64) -> io::Result<PreparedShard> {
        PreparedShard::counted_listed(words, popcount, None)
    }

    /// [`Self::counted`] of `words` whose set bits the caller has listed
    /// too (`positions`, ascending: a kernel lists a sparse output's as it
    /// makes them), used when the shard is stored as its list instead of
    /// listing the words again. A list of another length than `popcount`
    /// fails here, as a wrong count does.
    pub fn counted_listed(words: &[u64], popcount: u64, positions: Option<Vec<u32>>) -> io::Result<PreparedShard> {
        debug_assert_eq!(popcount, crate::space::bits::popcount(words));
        let mut prepared = PreparedShard {
            words: words.len(),
            popcount,
            checksum: 0,
            frames: None,
            positions: None,
        };
        if popcount == 0 {
            return Ok(prepared);
        }
        if list::listed(popcount, words.len() as u64 * 64) {
            let positions = match positions {
                Some(listed) => {
                    debug_assert_eq!(listed, crate::space::bits::positions(words, popcount));
                    listed
                }
                None => crate::space::bits::positions(words, popcount),
            };
            if positions.len() as u64 != popcount {
                return Err(io::Error::other(format!(
                    "a shard counted {} set bits holds {}",
                    popcount,
                    positions.len()
                )));
            }
            let bytes = list::encode(&positions);
            prepared.checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
            prepared.frames = Some(vec![bytes]);
            prepared.positions = Some(positions);
            return Ok(prepared);
        }
        let bytes = payload_bytes(words);
        prepared.checksum = xxhash_rust::xxh3::xxh3_64(bytes);
        if stored_raw(popcount, words.len() as u64 * 64) {
            return Ok(prepared);
        }
        // Frames of FRAME_BYTES, written one after the other: zstd
        // decompresses concatenated frames as one stream.
        let frames = bytes
            .par_chunks(FRAME_BYTES)
            .map(compress_frame)
            .collect::<io::Result<Vec<Vec<u8>>>>()?;
        // A reader takes a length equal to the shard's size for raw words,
        // so frames that are not smaller (a 72-byte shard of the 2×4
        // Loopover compressed to exactly 72 bytes) are not kept.
        let compressed: usize = frames.iter().map(Vec::len).sum();
        if compressed < bytes.len() {
            prepared.frames = Some(frames);
        }
        Ok(prepared)
    }

    /// Set bits of the shard.
    pub fn popcount(&self) -> u64 {
        self.popcount
    }

    /// Bytes the shard takes in its file (its list, its frames or its raw
    /// words; 0 when empty).
    pub fn stored_bytes(&self) -> u64 {
        match (&self.frames, self.popcount) {
            (_, 0) => 0,
            (Some(frames), _) => frames.iter().map(|f| f.len() as u64).sum(),
            (None, _) => self.words as u64 * 8,
        }
    }

    /// The positions of the shard's set bits, when it is stored as their
    /// list (taken: a caller keeps them as the shard's list instead of
    /// listing its words again).
    pub fn take_positions(&mut self) -> Option<Vec<u32>> {
        self.positions.take()
    }
}
