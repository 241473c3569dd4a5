//! The chunk-file reader on damaged files: valid files written by
//! `ChunkWriter`, then bytes flipped, inserted, deleted or cut, either as
//! they are or with the header's and index's checksums recomputed (so the
//! damage gets past them and reaches the index and frame checks). A file
//! the reader accepts must give back exactly the shards that were written.

use crate::edits::{apply, config, edits, Edit};
use cayley_shared::files::format::{read_chunk_header, verify_chunk, write_chunk, ChunkId, ChunkReader, HEADER_LEN};
use cayley_shared::files::WriteOptions;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// A valid file and what it holds.
struct Sample {
    id: ChunkId,
    shards: Vec<Vec<u64>>,
    bytes: Vec<u8>,
}

/// A fresh directory for fuzz files, in memory when `/dev/shm` is there,
/// removed when dropped (also when a test fails and unwinds). One per
/// sample set and per test case, never a static: statics are never
/// dropped, and a static directory was left behind by every run.
fn scratch() -> tempfile::TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix("cayley-fuzz-");
    builder
        .tempdir_in("/dev/shm")
        .or_else(|_| builder.tempdir())
        .expect("temp dir")
}

/// Valid files of one to four shards: empty, sparse and dense shards.
fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        // Written, read back and removed: only the bytes are kept.
        let dir = scratch();
        (1..=4u32)
            .map(|shards| {
                let id = ChunkId {
                    fingerprint: 0x5eed_0000 + shards as u64,
                    level: shards,
                    chunk: 3,
                    first_shard: 12,
                    shards,
                    shard_words: 40,
                };
                let words: Vec<Vec<u64>> = (0..shards as u64)
                    .map(|s| {
                        (0..40u64)
                            .map(|w| match s % 3 {
                                0 => 0,
                                1 => u64::from(w == 7) << 13,
                                _ => (w + s).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                            })
                            .collect()
                    })
                    .collect();
                let path = dir.path().join(format!("sample-{}", shards));
                write_chunk(&path, id, words.iter().map(|w| &w[..]), WriteOptions::DURABLE).expect("write a sample");
                let bytes = std::fs::read(&path).expect("read a sample");
                Sample {
                    id,
                    shards: words,
                    bytes,
                }
            })
            .collect()
    })
}

/// Recomputes the index checksum and the header's own checksum, as a
/// writer would, so the damage is judged by the checks behind them.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let shards = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
    let end = (HEADER_LEN + 32 * shards).min(bytes.len());
    let index = xxhash_rust::xxh3::xxh3_64(&bytes[HEADER_LEN..end]);
    bytes[64..72].copy_from_slice(&index.to_le_bytes());
    let own = xxhash_rust::xxh3::xxh3_64(&bytes[..72]);
    bytes[72..80].copy_from_slice(&own.to_le_bytes());
}

/// Reads `bytes` as the chunk `sample` names, from a file at `path`.
fn check_chunk(sample: &Sample, bytes: &[u8], path: &Path) {
    std::fs::write(path, bytes).expect("write the damaged file");
    let name = path.display().to_string();
    let outcome = ChunkReader::open(path, &sample.id).and_then(|reader| {
        let mut out = vec![0u64; sample.id.shard_words as usize];
        let mut read = Vec::new();
        for i in 0..sample.shards.len() {
            reader.read_shard(i, &mut out)?;
            read.push(out.clone());
        }
        Ok(read)
    });
    match outcome {
        // Accepted: exactly what was written (checksums cover every shard).
        Ok(read) => {
            assert_eq!(read, sample.shards, "accepted a changed file");
            verify_chunk(path, &sample.id).expect("read shard by shard, so verifiable whole");
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(&name), "{} does not name the file", message);
            assert!(message.len() > name.len() + 2, "{} says nothing", message);
            assert!(e.is_corruption(), "{} is not reported as damage", message);
        }
    }
    if bytes == sample.bytes {
        assert!(read_chunk_header(path).is_ok());
    }
}

proptest! {
    #![proptest_config(config(15_000))]

    #[test]
    fn damaged_chunk_files_are_refused_or_read_exactly(
        which in 0..4usize,
        edits in edits(),
        resealed in any::<bool>(),
        header_only in any::<bool>(),
    ) {
        let sample = &samples()[which];
        let mut bytes = sample.bytes.clone();
        if header_only {
            // Damage aimed at the header's fields, then resealed or not.
            let mut header = bytes[..HEADER_LEN].to_vec();
            let at = |e: &Edit| matches!(e, Edit::Flip(..));
            let flips: Vec<Edit> = edits.into_iter().filter(at).collect();
            apply(&mut header, &flips);
            bytes[..HEADER_LEN].copy_from_slice(&header);
        } else {
            apply(&mut bytes, &edits);
        }
        if resealed {
            reseal(&mut bytes);
        }
        let dir = scratch();
        check_chunk(sample, &bytes, &dir.path().join("mutated"));
    }
}

#[test]
fn every_truncation_is_refused() {
    let dir = scratch();
    let path = dir.path().join("truncated");
    for sample in samples() {
        for len in 0..sample.bytes.len() {
            for resealed in [false, true] {
                let mut bytes = sample.bytes[..len].to_vec();
                if resealed {
                    reseal(&mut bytes);
                }
                check_chunk(sample, &bytes, &path);
                assert!(
                    ChunkReader::open(&path, &sample.id).is_err(),
                    "{} of {} bytes accepted",
                    len,
                    sample.bytes.len()
                );
            }
        }
        check_chunk(sample, &sample.bytes, &path);
    }
}

#[test]
fn a_file_for_another_chunk_is_refused() {
    let dir = scratch();
    let path = dir.path().join("other");
    let sample = &samples()[2];
    std::fs::write(&path, &sample.bytes).unwrap();
    for change in 0..5 {
        let mut id = sample.id;
        match change {
            0 => id.fingerprint ^= 1,
            1 => id.level += 1,
            2 => id.chunk += 1,
            3 => id.first_shard += 1,
            _ => id.shard_words += 1,
        }
        let message = ChunkReader::open(&path, &id).err().expect("refused").to_string();
        assert!(message.starts_with(&path.display().to_string()), "{}", message);
    }
}
