use super::*;
use crate::files::WriteOptions;

fn id(level: u32, shards: u32) -> ChunkId {
    ChunkId {
        fingerprint: 0xfeed,
        level,
        chunk: 7,
        first_shard: 21,
        shards,
        shard_words: 500,
    }
}

/// Three shards: sparse, empty, dense-ish.
fn sample() -> Vec<Vec<u64>> {
    let mut sparse = vec![0u64; 500];
    sparse[17] = 0b1011;
    let empty = vec![0u64; 500];
    let dense: Vec<u64> = (0..500u64).map(|i| i.wrapping_mul(0x9e3779b97f4a7c15)).collect();
    vec![sparse, empty, dense]
}

fn write_sample(path: &Path) -> (ChunkHeader, u64) {
    let shards = sample();
    write_chunk(path, id(2, 3), shards.iter().map(|s| &s[..]), WriteOptions::DURABLE).unwrap()
}

/// Writes the header's own checksum again, as its version computes it.
fn reseal(bytes: &mut [u8]) {
    let header: [u8; HEADER_LEN] = bytes[..HEADER_LEN].try_into().unwrap();
    let own = own_checksum(&header, u32_at(&header, 8));
    bytes[72..80].copy_from_slice(&own.to_le_bytes());
}

/// The file `bytes` (this version's layout) in the layout of `version`
/// (2 to 6): an entry for every shard right after the header, then the
/// frames, moved along by that index.
fn in_old_layout(bytes: &[u8], version: u32) -> Vec<u8> {
    let shards = u32_at(bytes, 28) as usize;
    let index_offset = u64_at(bytes, 80) as usize;
    let words = shards.div_ceil(64);
    let index = &bytes[index_offset..];
    let moved = (shards * ENTRY_LEN) as u64;
    let mut listed = index[words * 8..].chunks_exact(ENTRY_LEN);
    let mut full = Vec::new();
    for shard in 0..shards {
        let present = u64_at(index, shard / 64 * 8) >> (shard % 64) & 1 == 1;
        let mut entry = [0u8; ENTRY_LEN];
        if present {
            entry.copy_from_slice(listed.next().unwrap());
            let offset = u64_at(&entry, 0) + moved;
            entry[..8].copy_from_slice(&offset.to_le_bytes());
        }
        full.extend_from_slice(&entry);
    }
    let mut old = bytes[..HEADER_LEN].to_vec();
    old[8..12].copy_from_slice(&version.to_le_bytes());
    old[64..72].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(&full).to_le_bytes());
    old[80..].fill(0);
    reseal(&mut old);
    old.extend_from_slice(&full);
    old.extend_from_slice(&bytes[HEADER_LEN..index_offset]);
    old
}

#[test]
fn roundtrip_shard_by_shard() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let shards = sample();
    let (header, size) = write_sample(&path);
    assert_eq!(size, std::fs::metadata(&path).unwrap().len());
    let expected: u64 = shards.iter().map(|s| crate::space::bits::popcount(s)).sum();
    assert_eq!(header.popcount, expected);
    let reader = ChunkReader::open(&path, &id(2, 3)).unwrap();
    assert_eq!(reader.entry(1), ShardEntry::default(), "an empty shard has no frame");
    let mut out = vec![1u64; 500];
    // Any order, one at a time.
    for i in [2usize, 0, 1] {
        reader.read_shard(i, &mut out).unwrap();
        assert_eq!(out, shards[i]);
        read_words_agree(&reader, i, &shards[i]);
    }
    // Through one frame buffer that grows (dense after sparse) and shrinks
    // (sparse after dense): a stale tail must not reach the decompressor.
    let mut frame = Vec::new();
    for i in [0usize, 2, 0, 1, 2] {
        out.fill(1);
        reader.read_shard_via(i, &mut out, &mut frame).unwrap();
        assert_eq!(out, shards[i]);
    }
    assert_eq!(verify_chunk(&path, &id(2, 3)).unwrap(), header);
    assert_eq!(read_chunk_header(&path).unwrap(), header);
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A shard of at most one set bit in 64 is stored as its list: it reads
/// back whole or word by word, verifies, and a flipped bit of the list is
/// caught by its checksum; one bit more and it is compressed.
#[test]
fn sparse_shards_are_stored_as_lists() {
    let dir = tempfile::tempdir().unwrap();
    let words = 500;
    let bits = words as u64 * 64;
    let chunk = ChunkId {
        shard_words: words as u64,
        ..id(1, 2)
    };
    let mut most = vec![0u64; words];
    for p in (0..bits).step_by(64).take((bits / list::LIST_DENSITY) as usize) {
        let p = p + p % 61;
        most[(p / 64) as usize] |= 1 << (p % 64);
    }
    let mut over = most.clone();
    over[3] |= 1 << 40;
    let path = dir.path().join("c");
    write_and_read_back(&path, chunk, &[&most[..], &over[..]]);
    let stored = |i: usize| {
        let reader = ChunkReader::open(&path, &chunk).unwrap();
        let e = reader.entry(i);
        std::fs::read(&path).unwrap()[e.offset as usize..(e.offset + e.length) as usize].to_vec()
    };
    assert!(list::is_list(&stored(0)), "one bit in 64: a list");
    assert!(!list::is_list(&stored(1)), "one more: compressed");
    let mut out = vec![0u64; words];
    PreparedShard::new(&most)
        .map(|mut p| assert_eq!(p.take_positions().unwrap().len(), 500))
        .unwrap();
    // A list cannot take a wrong count for the shard's (a reader, checking
    // the list against the count, would not see the difference).
    if !cfg!(debug_assertions) {
        let err = PreparedShard::counted(&most, 499).err().expect("a count one short");
        assert!(err.to_string().contains("counted 499 set bits holds 500"), "{}", err);
    }
    let reader = ChunkReader::open(&path, &chunk).unwrap();
    let at = reader.entry(0).offset as usize + list::LIST_MAGIC.len() + 7;
    let mut bad = std::fs::read(&path).unwrap();
    bad[at] ^= 0x01;
    std::fs::write(&path, &bad).unwrap();
    let err = reader.read_shard(0, &mut out).unwrap_err();
    assert!(err.to_string().contains("checksum mismatch"), "{}", err);
    assert!(reader.read_words(0, &[1]).is_err());
}

#[test]
fn sparse_chunks_are_tiny() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let mut words = vec![0u64; 100_000];
    words[5] = 1;
    let zeros = vec![0u64; 100_000];
    let chunk = ChunkId {
        shard_words: 100_000,
        ..id(1, 2)
    };
    let (_, size) = write_chunk(&path, chunk, [&words[..], &zeros[..]], WriteOptions::DURABLE).unwrap();
    assert!(size < 300, "sparse chunk takes {} bytes", size);
}

#[test]
fn every_damaged_byte_is_caught_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    write_sample(&path);
    let good = std::fs::read(&path).unwrap();
    let mut out = vec![0u64; 500];
    let step = good.len() / 211 + 1;
    // The header and the first frame's start, some bytes of the frames,
    // and the whole index (a bitmap word and two entries) at the end.
    let index = good.len() - (8 + 2 * ENTRY_LEN);
    let bytes = (0..HEADER_LEN + 3 * ENTRY_LEN)
        .chain((HEADER_LEN + 3 * ENTRY_LEN..index).step_by(step))
        .chain(index..good.len());
    for at in bytes {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        let err = ChunkReader::open(&path, &id(2, 3)).and_then(|r| {
            for i in 0..3 {
                r.read_shard(i, &mut out)?;
            }
            Ok(())
        });
        // Reading a few words checks less (no checksum), but a damaged
        // frame never panics.
        if let Ok(r) = ChunkReader::open(&path, &id(2, 3)) {
            for i in 0..3 {
                let _ = r.read_words(i, &[0, 17, 499]);
            }
        }
        let err = err.expect_err(&format!("flipped byte {} went unnoticed", at));
        assert!(err.to_string().contains(path.to_str().unwrap()), "{}", err);
        assert!(err.is_corruption(), "byte {}: {}", at, err);
    }
}

#[test]
fn truncation_other_jobs_and_other_chunks_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    write_sample(&path);
    let good = std::fs::read(&path).unwrap();
    for len in [0, 10, HEADER_LEN, HEADER_LEN + 40, good.len() - 1] {
        std::fs::write(&path, &good[..len]).unwrap();
        let err = verify_chunk(&path, &id(2, 3)).unwrap_err();
        assert!(err.is_corruption(), "truncated to {}: {}", len, err);
    }
    std::fs::write(&path, &good).unwrap();
    let other = ChunkId {
        fingerprint: 1,
        ..id(2, 3)
    };
    assert!(matches!(verify_chunk(&path, &other), Err(FormatError::OtherJob { .. })));
    assert!(matches!(
        verify_chunk(&path, &id(3, 3)),
        Err(FormatError::WrongChunk { .. })
    ));
    assert!(verify_chunk(&dir.path().join("missing"), &id(2, 3))
        .unwrap_err()
        .is_missing());
}

#[test]
fn an_unfinished_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    {
        let mut w = ChunkWriter::create(&path, id(2, 3), WriteOptions::DURABLE).unwrap();
        w.push(&sample()[0]).unwrap();
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A shard bigger than [`FRAME_BYTES`] is written as several frames that
/// read back as one.
#[test]
fn a_shard_of_several_frames_reads_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let words_per_shard = 3 * FRAME_BYTES / 8 + 100;
    let chunk = ChunkId {
        shard_words: words_per_shard as u64,
        shards: 2,
        ..id(2, 2)
    };
    let dense: Vec<u64> = (0..words_per_shard as u64)
        .map(|i| i.wrapping_mul(0x9e3779b97f4a7c15).rotate_left((i % 61) as u32))
        .collect();
    let mut sparse = vec![0u64; words_per_shard];
    sparse[words_per_shard - 1] = 1 << 63;
    write_and_read_back(&path, chunk, &[&dense[..], &sparse[..]]);
}

/// Writes `shards` as the chunk `chunk` at `path`, reads each back equal,
/// and verifies the whole file.
fn write_and_read_back(path: &Path, chunk: ChunkId, shards: &[&[u64]]) {
    write_chunk(path, chunk, shards.iter().copied(), WriteOptions::DURABLE).unwrap();
    let reader = ChunkReader::open(path, &chunk).unwrap();
    let mut out = vec![0u64; chunk.shard_words as usize];
    for (i, expected) in shards.iter().enumerate() {
        reader.read_shard(i, &mut out).unwrap();
        assert_eq!(&out[..], *expected, "{} words, shard {}", chunk.shard_words, i);
        assert_eq!(
            reader.popcount(i),
            crate::space::bits::popcount(expected),
            "shard {}'s count",
            i
        );
        read_words_agree(&reader, i, expected);
    }
    verify_chunk(path, &chunk).unwrap();
}

/// [`ChunkReader::read_words`] gives the words the whole shard holds: the
/// first and last, each side of every frame boundary, a word asked twice,
/// and none.
fn read_words_agree(reader: &ChunkReader, i: usize, expected: &[u64]) {
    let n = expected.len();
    let frame_words = FRAME_BYTES / 8;
    let mut at: Vec<u32> = vec![0, 0, (n / 2) as u32, (n - 1) as u32];
    for boundary in (frame_words..n).step_by(frame_words) {
        at.extend([boundary as u32 - 1, boundary as u32]);
    }
    at.sort_unstable();
    let words = reader.read_words(i, &at).unwrap();
    let whole: Vec<u64> = at.iter().map(|&w| expected[w as usize]).collect();
    assert_eq!(words, whole, "shard {} at {:?}", i, at);
    assert!(reader.read_words(i, &[]).unwrap().is_empty());
}

/// Shards between a fifth and four fifths set are stored as their raw
/// words, others compressed; both read back, and a changed byte of a raw
/// shard is caught by its checksum.
#[test]
fn half_set_shards_are_stored_raw_and_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let shards = sample();
    let (_, _) = write_sample(&path);
    let reader = ChunkReader::open(&path, &id(2, 3)).unwrap();
    let raw_bytes = 500 * 8;
    assert_eq!(reader.entry(2).length, raw_bytes, "the half-set shard is raw");
    assert!(reader.entry(0).length < 100, "the sparse one is compressed");
    assert!(stored_raw(raw_bytes / 2 * 8, raw_bytes * 8));
    assert!(!stored_raw(raw_bytes * 8 / 6, raw_bytes * 8));
    assert!(!stored_raw(raw_bytes * 8 * 9 / 10, raw_bytes * 8));
    let offset = reader.entry(2).offset + 100;
    drop(reader);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset as usize] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let reader = ChunkReader::open(&path, &id(2, 3)).unwrap();
    let mut out = vec![0u64; 500];
    reader.read_shard(0, &mut out).unwrap();
    assert_eq!(out, shards[0]);
    let err = reader.read_shard(2, &mut out).unwrap_err();
    assert!(err.is_corruption(), "{}", err);
}

/// Small shards whose zstd frame is no shorter than their words (a 72-byte
/// shard of the 2×4 Loopover compressed to exactly 72 bytes and was then
/// read as raw words) are stored raw: every shard of every density reads
/// back and verifies.
#[test]
fn shards_that_do_not_compress_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for words in [1usize, 2, 5, 9, 16] {
        let shards: Vec<Vec<u64>> = (0..200)
            .map(|s| {
                // Densities from one bit in 2^(s % 6) up to half.
                (0..words).map(|_| (0..s % 6).fold(next(), |w, _| w & next())).collect()
            })
            .collect();
        let chunk = ChunkId {
            shards: shards.len() as u32,
            shard_words: words as u64,
            ..id(1, 1)
        };
        let path = dir.path().join(format!("w{}", words));
        let slices: Vec<&[u64]> = shards.iter().map(|s| &s[..]).collect();
        write_and_read_back(&path, chunk, &slices);
    }
}

/// Files of version 2 (before raw shards), 3 (before lists), 4 (before
/// header-only empty chunks) and 5 and 6 (before the sparse index) still
/// read; older and newer versions are refused by name.
#[test]
fn versions_2_to_6_read_and_others_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    // Shards an older writer wrote alike: compressed (one bit in 32 set:
    // not a list) and empty.
    let mut sparse = vec![0u64; 500];
    for (w, word) in sparse.iter_mut().enumerate() {
        *word = 0b101 << (w % 60);
    }
    let shards = [sparse, vec![0u64; 500]];
    write_chunk(&path, id(2, 2), shards.iter().map(|s| &s[..]), WriteOptions::DURABLE).unwrap();
    assert!(!list::is_list(&std::fs::read(&path).unwrap()[HEADER_LEN..]));
    let with_version = |version: u32| {
        let bytes = in_old_layout(&std::fs::read(&path).unwrap(), version);
        let other = dir.path().join(format!("v{}", version));
        std::fs::write(&other, &bytes).unwrap();
        other
    };
    for version in [2, 3, 4, 5, 6] {
        let old = with_version(version);
        let reader = ChunkReader::open(&old, &id(2, 2)).unwrap();
        assert_eq!(reader.header().version, version);
        let mut out = vec![0u64; 500];
        for (i, shard) in shards.iter().enumerate() {
            reader.read_shard(i, &mut out).unwrap();
            assert_eq!(&out, shard);
        }
    }
    for version in [1, FORMAT_VERSION + 1] {
        let Err(err) = ChunkReader::open(&with_version(version), &id(2, 2)) else {
            panic!("version {} was read", version);
        };
        assert!(
            err.to_string().contains(&format!("format version {}", version)),
            "{}",
            err
        );
    }
}

/// The injected full disk fails the writer of exactly the chunk it names,
/// with the error a full disk gives and no file left, and no other chunk
/// (another chunk of its level, the same chunk of another level).
#[test]
fn an_injected_full_disk_fails_exactly_its_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let shards = sample();
    let at = id(2, 3);
    let options = WriteOptions {
        fail_disk_full_at: Some((at.level, at.chunk)),
        ..WriteOptions::DURABLE
    };
    let path = dir.path().join("faulty");
    let err = write_chunk(&path, at, shards.iter().map(|s| &s[..]), options).unwrap_err();
    assert!(err.is_disk_full(), "{}", err);
    assert!(!err.is_corruption(), "{}", err);
    let text = err.to_string();
    // Named as a real full disk is: the file, then what to do.
    assert!(text.contains("faulty: disk full while writing"), "{}", text);
    assert!(matches!(
        ChunkWriter::create(&path, at, options),
        Err(FormatError::DiskFull { .. })
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    for other in [
        ChunkId {
            chunk: at.chunk + 1,
            ..at
        },
        ChunkId {
            chunk: at.chunk - 1,
            ..at
        },
        ChunkId {
            level: at.level + 1,
            ..at
        },
    ] {
        let path = dir.path().join(format!("L{}C{}", other.level, other.chunk));
        write_chunk(&path, other, shards.iter().map(|s| &s[..]), options).unwrap();
        verify_chunk(&path, &other).unwrap();
    }
    // Without the fault the same chunk writes.
    write_chunk(&path, at, shards.iter().map(|s| &s[..]), WriteOptions::DURABLE).unwrap();
    verify_chunk(&path, &at).unwrap();
}

/// Skipping the fsyncs changes when bytes reach the disk, never which
/// bytes: the file a non-durable writer leaves is the durable one's, byte
/// for byte, and reads back the same.
#[test]
fn a_non_durable_writer_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let shards = sample();
    let fast = WriteOptions {
        durable: false,
        ..WriteOptions::DURABLE
    };
    let (durable, quick) = (dir.path().join("durable"), dir.path().join("quick"));
    let written = write_chunk(&durable, id(2, 3), shards.iter().map(|s| &s[..]), WriteOptions::DURABLE).unwrap();
    // Shard by shard, as a worker writes, with the non-durable options.
    let mut writer = ChunkWriter::create(&quick, id(2, 3), fast).unwrap();
    for words in &shards {
        writer.push(words).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), written);
    let bytes = std::fs::read(&durable).unwrap();
    assert_eq!(bytes.len() as u64, written.1);
    assert_eq!(std::fs::read(&quick).unwrap(), bytes);
    assert_eq!(verify_chunk(&quick, &id(2, 3)).unwrap(), written.0);
    // Only the two files: the temporary names are gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

mod empty;
