//! Checkpoints fed damaged files and a full disk (docs/ARCHITECTURE.md, "Crash model"): the damage is
//! named, what can be recomputed is, and nothing computed is lost.
//!
//! Every table is compared with Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv.

use cayley_tests::checkpoint::*;
use cayley_tests::{read_json, stderr_text};
use std::path::Path;

/// Truncates a file to half its length.
fn truncate(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

/// Flips one byte in the middle of a chunk file's compressed payload
/// (docs/formats.md: after the 96-byte header, up to the index, whose
/// offset is the header's bytes 80–87).
fn flip_payload_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let (start, end) = (96, u64::from_le_bytes(bytes[80..88].try_into().unwrap()) as usize);
    assert!(end > start, "{} has no payload", path.display());
    let at = start + (end - start) / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

/// Chunks of `level` holding at least one state, most populous first.
fn populated_chunks(ck: &Path, level: usize) -> Vec<u64> {
    let mut records: Vec<(u64, u64)> = journal(ck, level).into_iter().filter(|r| r.1 > 0).collect();
    records.sort_by_key(|&(_, stored)| std::cmp::Reverse(stored));
    records.into_iter().map(|r| r.0).collect()
}

#[test]
fn damaged_inputs_are_named_and_recomputed() {
    // Stopped while computing level 6: level 5 is what the resumed job reads.
    let d = dirs();
    let plan = ["--shard-pieces", "2", "--chunk-shards", "1"];
    d.run_until_disk_full(6, 40, &plan);
    let chunks = populated_chunks(&d.ck, 5);
    let (truncated, flipped, swapped) = (d.chunk(5, chunks[0]), d.chunk(5, chunks[1]), d.chunk(5, chunks[2]));
    truncate(&truncated);
    flip_payload_byte(&flipped);
    // The same-named file of another job (STM, same shard plan).
    let other = dirs();
    let mut args = plan.to_vec();
    args.extend(["--metric", "stm", "--max-depth", "5"]);
    assert_success(&other.run(&args));
    std::fs::copy(chunk_file(&other.ck, 5, chunks[2]), &swapped).unwrap();

    let o = d.resume();
    let err = stderr_text(&o);
    assert_success(&o);
    for damaged in [&truncated, &flipped, &swapped] {
        assert!(err.contains(s(damaged)), "{} not named: {}", damaged.display(), err);
    }
    assert_published(&d.out);
    assert_manifest_consistent(&d.ck);
}

#[test]
fn recorded_outputs_of_the_running_level_are_verified_on_resume() {
    // With --keep-levels last2 a bad output of the running level can only be
    // recomputed while that level runs: later, its inputs are gone.
    let d = stopped_in_level_7_keeping_last2();
    let done = populated_chunks(&d.ck, 7);
    assert!(done.len() >= 2, "too few recorded tasks: {:?}", journal(&d.ck, 7));
    let (flipped, truncated) = (d.chunk(7, done[0]), d.chunk(7, done[1]));
    flip_payload_byte(&flipped);
    truncate(&truncated);
    let o = d.resume();
    let err = stderr_text(&o);
    assert_success(&o);
    for damaged in [&flipped, &truncated] {
        assert!(err.contains(s(damaged)), "{} not named: {}", damaged.display(), err);
    }
    assert_published(&d.out);
}

#[test]
fn a_damaged_output_whose_seen_chunk_was_retired_is_named_on_resume() {
    // Loopover 2×6 (12! states, tests/data/published.md) stopped in level
    // 11, whose seen level 9 is retired chunk by chunk: a recorded output
    // found damaged on resume cannot be recomputed, and resume says so
    // before any work, naming both files and keeping the checkpoint.
    let d = dirs();
    let mut args = LOOPOVER_2X6_IN_66_CHUNKS.to_vec();
    args.extend(["--keep-levels", "last2", "--checkpoint-dir", s(&d.ck)]);
    args.extend(d.output_args());
    let o = cayley_tests::cayley_env(&args, &[("CAYLEY_FAULT_DISK_FULL", "11:40")]);
    assert!(!o.status.success(), "the injected full disk went unnoticed");
    let retiring = &d.manifest()["running"]["retiring"];
    assert_eq!(retiring, &serde_json::json!([9]), "level 11 retires level 9");
    let chunk = populated_chunks(&d.ck, 11)[0];
    let (damaged, retired) = (d.chunk(11, chunk), d.chunk(9, chunk));
    assert!(!retired.exists(), "recorded, so its seen chunk went");
    flip_payload_byte(&damaged);
    let before = journal(&d.ck, 11);
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(!o.status.success(), "{}", err);
    assert!(
        err.contains(s(&damaged)) && err.contains(s(&retired)) && err.contains("cannot be recomputed"),
        "{}",
        err
    );
    assert!(damaged.exists(), "the damaged file is left for the user");
    assert_eq!(journal(&d.ck, 11), before, "nothing recorded or lost");
}

#[test]
fn damage_that_cannot_be_recomputed_stops_with_the_file_named() {
    // last2: level 6 needs levels 5 and 4 to be recomputed, and 4 is gone.
    let d = stopped_in_level_7_keeping_last2();
    let damaged = d.chunk(6, populated_chunks(&d.ck, 6)[0]);
    flip_payload_byte(&damaged);
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(!o.status.success(), "{}", err);
    assert!(
        err.contains(s(&damaged)) && err.contains("cannot be recomputed"),
        "{}",
        err
    );
    assert!(err.contains("error: "), "{}", err);
    assert!(!d.out.join("result.json").exists());
    assert_manifest_consistent(&d.ck);
}

#[test]
fn damaged_level_of_a_finished_job_is_named_and_walked_around() {
    // Rewriting the results walks back through the levels for the
    // antipodes' words. A damaged level in between is named and left out,
    // as a level the retention dropped: the words come from the others
    // (checked here against the intact run's), never from the damaged
    // file. It used to stop `resume` with a prompt to resume again, which
    // met the same file: a finished job's files are not recomputed.
    let d = dirs();
    assert_success(&d.run(&[]));
    let good = read_json(&d.out.join("result.json")).unwrap();
    let damaged = d.chunk(3, 0);
    flip_payload_byte(&damaged);
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(o.status.success(), "{}", err);
    assert!(err.contains(s(&damaged)) && err.contains("level 3"), "{}", err);
    assert_published(&d.out);
    let again = read_json(&d.out.join("result.json")).unwrap();
    assert_eq!(again["antipodes"], good["antipodes"]);
    assert!(!good["antipodes"].as_array().unwrap().is_empty());

    // The deepest level damaged: the table, from the manifest, is still
    // written, with no antipode listed and the reason on standard error.
    let deepest = good["depths"].as_array().unwrap().len() - 1;
    for chunk in populated_chunks(&d.ck, deepest) {
        flip_payload_byte(&d.chunk(deepest as u32, chunk));
    }
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(o.status.success(), "{}", err);
    assert!(err.contains("the antipodes cannot be listed"), "{}", err);
    assert_published(&d.out);
    let again = read_json(&d.out.join("result.json")).unwrap();
    assert_eq!(again["antipodes"].as_array().map(Vec::len), Some(0));
    let text = std::fs::read_to_string(d.out.join("antipodes.txt")).unwrap();
    assert!(text.trim_end().ends_with("none listed."), "{}", text);
}

#[test]
fn disk_full_stops_the_job_and_resume_finishes_it() {
    let d = dirs();
    let err = d.run_until_disk_full(5, 3, &["--shard-pieces", "1"]);
    assert!(err.contains("disk full"), "{}", err);
    assert!(err.contains(&format!("cayley resume {}", s(&d.ck))), "{}", err);
    assert!(!d.out.join("result.json").exists());
    assert_manifest_consistent(&d.ck);
    assert_eq!(levels_done(&d.ck), 5);
    assert!(!d.chunk(5, 3).exists());
    // What a writer killed mid-write leaves behind must be ignored.
    let level5 = d.chunk(5, 3).with_file_name("C00000003.chunk.tmp-4242-beef");
    std::fs::create_dir_all(level5.parent().unwrap()).unwrap();
    std::fs::write(&level5, b"CAYLEYCK half a file").unwrap();
    std::fs::write(d.chunk(4, 3).with_file_name("C00000003.chunk.tmp-4242-dead"), b"").unwrap();
    std::fs::write(d.ck.join("manifest.json.tmp"), b"{\"format_version\": 1, \"fingerpr").unwrap();

    assert_success(&d.resume());
    assert_published(&d.out);
    assert_manifest_consistent(&d.ck);
}

/// A `--keep-levels last2` run (one shard per task) stopped by a full disk
/// partway through level 7.
fn stopped_in_level_7_keeping_last2() -> Dirs {
    let d = dirs();
    d.run_until_disk_full(
        7,
        20,
        &["--shard-pieces", "2", "--chunk-shards", "1", "--keep-levels", "last2"],
    );
    d
}
