//! Chunks without a set bit (formats 5 and 6): their header alone, one at a time
//! or many together.

use super::*;

/// From version 5 a chunk without a set bit is its header alone; every
/// byte of it is checked, and the older form (a header and an index of
/// empty entries) still reads.
#[test]
fn empty_chunks_are_their_header_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let zeros = vec![0u64; 500];
    let (header, size) = write_chunk(
        &path,
        id(2, 3),
        [&zeros[..], &zeros[..], &zeros[..]],
        WriteOptions::DURABLE,
    )
    .unwrap();
    let good = std::fs::read(&path).unwrap();
    assert_eq!((size, good.len(), header.popcount), (HEADER_LEN as u64, HEADER_LEN, 0));
    let read_back = |path: &Path| -> Result<Vec<Vec<u64>>, FormatError> {
        let reader = ChunkReader::open(path, &id(2, 3))?;
        // No shard listed, from a header-only chunk or version 4's index of
        // empty entries.
        assert_eq!(reader.nonempty().count(), 0);
        assert_eq!(
            (0..3)
                .map(|i| (reader.entry(i), reader.popcount(i)))
                .collect::<Vec<_>>(),
            vec![(ShardEntry::default(), 0); 3]
        );
        let mut out = vec![1u64; 500];
        (0..3)
            .map(|i| reader.read_shard(i, &mut out).map(|_| out.clone()))
            .collect()
    };
    assert_eq!(read_back(&path).unwrap(), vec![zeros.clone(); 3]);
    assert_eq!(verify_chunk(&path, &id(2, 3)).unwrap(), header);
    for at in 0..HEADER_LEN {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        let err = read_back(&path).expect_err(&format!("flipped byte {} went unnoticed", at));
        assert!(
            err.is_corruption() && err.to_string().contains(path.to_str().unwrap()),
            "{}",
            err
        );
    }
    // An index after the header of an empty version 5 chunk is damage.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0u8; 3 * ENTRY_LEN]);
    std::fs::write(&path, &longer).unwrap();
    assert!(read_back(&path)
        .unwrap_err()
        .to_string()
        .contains("longer than its header"));
    // Version 4 wrote the index of an empty chunk: it still reads.
    longer[8..12].copy_from_slice(&4u32.to_le_bytes());
    let index = xxhash_rust::xxh3::xxh3_64(&[0u8; 3 * ENTRY_LEN]);
    longer[64..72].copy_from_slice(&index.to_le_bytes());
    // Before version 7 the header had no index offset.
    longer[80..96].fill(0);
    let own = xxhash_rust::xxh3::xxh3_64(&longer[..72]);
    longer[72..80].copy_from_slice(&own.to_le_bytes());
    std::fs::write(&path, &longer).unwrap();
    assert_eq!(read_back(&path).unwrap(), vec![zeros; 3]);
}

/// Many empty chunks at once read as the files their writers would
/// write, each a link to one shared file of its level and size; an
/// injected full disk fails exactly its chunk and leaves no file for it,
/// and a file already at a chunk's path is replaced.
#[test]
fn empty_chunks_written_together_share_one_file() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![0u64; 500];
    let alone = tempfile::tempdir().unwrap();
    let chunks: Vec<(PathBuf, ChunkId)> = (0..20)
        .map(|c| (dir.path().join(format!("c{}", c)), ChunkId { chunk: c, ..id(2, 3) }))
        .collect();
    std::fs::write(&chunks[5].0, b"an earlier attempt's file").unwrap();
    let options = WriteOptions {
        fail_disk_full_at: Some((2, 13)),
        ..WriteOptions::DURABLE
    };
    let results = write_empty_chunks(&chunks, options);
    for ((path, chunk), result) in chunks.iter().zip(&results) {
        if chunk.chunk == 13 {
            assert!(result.as_ref().unwrap_err().is_disk_full());
            assert!(!path.exists());
            continue;
        }
        // What a writer of this chunk alone writes and reports.
        let own = alone.path().join(format!("c{}", chunk.chunk));
        let written = write_chunk(
            &own,
            *chunk,
            [&zeros[..], &zeros[..], &zeros[..]],
            WriteOptions::DURABLE,
        )
        .unwrap();
        assert_eq!(*result.as_ref().unwrap(), written);
        assert_eq!(verify_chunk(path, chunk).unwrap(), written.0);
        let reader = ChunkReader::open(path, chunk).unwrap();
        assert_eq!(reader.header().id, *chunk, "the reader reports the chunk it expected");
        let mut out = vec![1u64; 500];
        reader.read_shard(2, &mut out).unwrap();
        assert_eq!(out, zeros);
        assert_eq!(
            std::fs::metadata(path).unwrap().nlink(),
            20,
            "19 chunks and the shared file"
        );
    }
    // The 19 chunks and their shared file; no temporary file is left.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 20);
}

/// The shared file stands only for empty chunks of its own job, level
/// and size; a header naming any chunk that holds a set bit, or of a
/// version before 6, is damage.
#[test]
fn a_shared_empty_file_reads_only_as_its_own_kind_of_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let chunk = id(2, 3);
    write_empty_chunks(&[(path.clone(), chunk)], WriteOptions::DURABLE)
        .pop()
        .unwrap()
        .unwrap();
    for other in [
        ChunkId { level: 3, ..chunk },
        ChunkId { shards: 4, ..chunk },
        ChunkId {
            shard_words: 501,
            ..chunk
        },
    ] {
        let err = ChunkReader::open(&path, &other).err().expect("another kind of chunk");
        assert!(matches!(err, FormatError::WrongChunk { .. }), "{}", err);
    }
    let other_job = ChunkId {
        fingerprint: 1,
        ..chunk
    };
    assert!(matches!(
        ChunkReader::open(&path, &other_job),
        Err(FormatError::OtherJob { .. })
    ));
    let good = std::fs::read(&path).unwrap();
    assert_eq!(
        &good[32..48],
        &[0xff; 16],
        "the chunk number and first shard are ANY_CHUNK"
    );
    let resealed = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        edit(&mut bytes);
        reseal(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        ChunkReader::open(&path, &chunk).err()
    };
    assert!(resealed(&|_| {}).is_none(), "resealed unchanged, it still reads");
    let set_bit = resealed(&|b| b[56..64].copy_from_slice(&1u64.to_le_bytes())).expect("a set bit");
    let version_5 = resealed(&|b| {
        b[8..12].copy_from_slice(&5u32.to_le_bytes());
        b[80..].fill(0);
    })
    .expect("version 5");
    let half_any = resealed(&|b| b[40..48].copy_from_slice(&21u64.to_le_bytes())).expect("a first shard");
    for err in [set_bit, version_5, half_any] {
        assert!(err.to_string().contains("shared empty chunk"), "{}", err);
    }
}

/// Where no link can be made to it, each chunk gets its own file.
#[test]
fn empty_chunks_get_their_own_files_where_nothing_can_be_shared() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let chunks: Vec<(PathBuf, ChunkId)> = (0..3)
        .map(|c| (dir.path().join(format!("c{}", c)), ChunkId { chunk: c, ..id(2, 3) }))
        .collect();
    // A directory where the shared file would go.
    std::fs::create_dir(dir.path().join("empty-3-shards.shared")).unwrap();
    for ((path, chunk), result) in chunks.iter().zip(write_empty_chunks(&chunks, WriteOptions::DURABLE)) {
        assert_eq!(verify_chunk(path, chunk).unwrap(), result.unwrap().0);
        assert_eq!(std::fs::metadata(path).unwrap().nlink(), 1);
    }
}
