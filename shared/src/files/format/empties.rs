//! Writing many chunks without a set bit at once: each a hard link to one
//! header-only file of its directory and size whose header names no chunk
//! ([`ANY_CHUNK`]), made durable by one fsync of the directory.
//!
//! Why links: the coordinator records most chunks of a sparse level empty
//! without their tasks (309 chunks a level on the 4×4 Loopover, of which
//! 219–307 at depths 1–4). Written as files of their own, each fsynced,
//! they took 41–53 ms of each of those levels on a journaled ext4 (2
//! cores), and every thread waited for them: a level's own tasks were done
//! in 8 ms. A link is a directory entry alone, made durable with the
//! directory's fsync, so a level's empty chunks cost one file's fsync and
//! one directory's (306 links and both fsyncs: 5 ms in the same place).
//!
//! A reader checks the shared header against the chunk it expected on
//! everything but the chunk's number and first shard
//! ([`ChunkHeader::check`]), and then reports the chunk it expected.

use super::writer::{temporary_name, ChunkWriter};
use super::{read_chunk_header, ChunkHeader, ChunkId, FormatError, ANY_CHUNK, HEADER_LEN};
use crate::files::WriteOptions;
use std::io;
use std::path::{Path, PathBuf};

/// Writes the files of chunks without a set bit, as [`ChunkWriter`] would
/// with `options`, but each as a link to one shared header-only file of
/// its directory and size. The directory is fsynced once, after every link
/// is made; a directory whose fsync fails fails each of its chunks. A
/// chunk whose link cannot be made (a filesystem without hard links, a file
/// at its links' limit) gets a file of its own, as before links.
///
/// Returns each chunk's header (naming the chunk) and file size, or why it
/// could not be written. The chunk [`WriteOptions::fail_disk_full_at`]
/// names fails as a full disk would, and nothing is made for it.
pub fn write_empty_chunks(
    chunks: &[(PathBuf, ChunkId)],
    options: WriteOptions,
) -> Vec<Result<(ChunkHeader, u64), FormatError>> {
    let mut shared: Vec<(PathBuf, bool)> = Vec::new();
    let mut results: Vec<Result<(ChunkHeader, u64), FormatError>> = chunks
        .iter()
        .map(|(path, id)| {
            if options.fails_disk_full_at(id.level, id.chunk) {
                // ENOSPC, as the kernel reports a full disk.
                return Err(FormatError::io(path, io::Error::from_raw_os_error(28)));
            }
            let source = shared_path(path, id);
            let ready = match shared.iter().find(|(s, _)| *s == source) {
                Some(&(_, ready)) => ready,
                None => {
                    let ready = ensure_shared(&source, id, options);
                    shared.push((source.clone(), ready));
                    ready
                }
            };
            if ready && link_into_place(&source, path).is_ok() {
                Ok((ChunkHeader::empty(*id), HEADER_LEN as u64))
            } else {
                own_file(path, id, options)
            }
        })
        .collect();
    let mut synced: Vec<(PathBuf, Option<String>)> = Vec::new();
    for ((path, _), result) in chunks.iter().zip(results.iter_mut()) {
        if result.is_err() {
            continue;
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let failed = match synced.iter().find(|(d, _)| *d == dir) {
            Some((_, failed)) => failed.clone(),
            None => {
                let failed = options.sync_parent_dir(path).err().map(|e| e.to_string());
                synced.push((dir, failed.clone()));
                failed
            }
        };
        if let Some(why) = failed {
            *result = Err(FormatError::io(path, io::Error::other(why)));
        }
    }
    results
}

/// The shared file the empty chunk `id` at `path` links to: beside it,
/// one per size of chunk (a job's last chunk may be shorter).
fn shared_path(path: &Path, id: &ChunkId) -> PathBuf {
    path.with_file_name(format!("empty-{}-shards.shared", id.shards))
}

/// The header of the shared file for chunks like `id`.
fn shared_id(id: &ChunkId) -> ChunkId {
    ChunkId {
        chunk: ANY_CHUNK,
        first_shard: ANY_CHUNK,
        ..*id
    }
}

/// Makes sure `source` is the shared empty file for chunks like `id`
/// (an earlier call's is kept; a damaged or foreign one is written again,
/// fsynced and renamed into place); false when it cannot be.
fn ensure_shared(source: &Path, id: &ChunkId, options: WriteOptions) -> bool {
    let any = shared_id(id);
    // A header naming any chunk holds no set bit, or it does not read.
    if read_chunk_header(source).is_ok_and(|h| h.id == any) {
        return true;
    }
    own_file(source, &any, options).is_ok()
}

/// Links `source` to `path`. A file already at `path` (an earlier
/// attempt's, or the chunk's task's) is replaced as a writer's rename
/// replaces it, through a temporary name; only then, as a link and a
/// rename took 8–10 ms for 306 chunks where a link alone took 3.6 ms
/// (ext4, 2 cores).
fn link_into_place(source: &Path, path: &Path) -> io::Result<()> {
    match std::fs::hard_link(source, path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        done => return done,
    }
    let tmp = temporary_name(path);
    std::fs::hard_link(source, &tmp)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The chunk's own header-only file, fsynced and renamed into place (its
/// directory's fsync is the caller's).
fn own_file(path: &Path, id: &ChunkId, options: WriteOptions) -> Result<(ChunkHeader, u64), FormatError> {
    let mut writer = ChunkWriter::create(path, *id, options)?;
    for _ in 0..id.shards {
        writer.push_empty();
    }
    writer.finish_but_directory()
}
