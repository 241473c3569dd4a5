//! Chunks without a set bit (format 5): their header alone, one at a time
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
        assert_eq!(reader.entries(), &[ShardEntry::default(); 3]);
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
    let own = xxhash_rust::xxh3::xxh3_64(&longer[..72]);
    longer[72..80].copy_from_slice(&own.to_le_bytes());
    std::fs::write(&path, &longer).unwrap();
    assert_eq!(read_back(&path).unwrap(), vec![zeros; 3]);
}

/// Many empty chunks at once are the files their writers would write;
/// an injected full disk fails exactly its chunk and leaves no file.
#[test]
fn empty_chunks_written_together_are_each_writers_file() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![0u64; 500];
    let alone = dir.path().join("alone");
    write_chunk(
        &alone,
        id(2, 3),
        [&zeros[..], &zeros[..], &zeros[..]],
        WriteOptions::DURABLE,
    )
    .unwrap();
    let chunks: Vec<(PathBuf, ChunkId)> = (0..20)
        .map(|c| (dir.path().join(format!("c{}", c)), ChunkId { chunk: c, ..id(2, 3) }))
        .collect();
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
        let (header, size) = result.as_ref().unwrap();
        assert_eq!((header.popcount, *size), (0, HEADER_LEN as u64));
        assert_eq!(verify_chunk(path, chunk).unwrap(), *header);
        let mut expected = std::fs::read(&alone).unwrap();
        let mut written = std::fs::read(path).unwrap();
        // The chunk number and the header's own checksum differ.
        expected[32..40].fill(0);
        written[32..40].fill(0);
        expected[72..80].fill(0);
        written[72..80].fill(0);
        assert_eq!(written, expected);
    }
    // Nothing else (no temporary file) is left.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 20);
}
