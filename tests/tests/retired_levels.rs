//! A `--keep-levels last2` checkpoint holds, besides the early levels kept
//! for words, the level being read and, chunk by chunk, either the level
//! before it or the level being written (docs/ARCHITECTURE.md, "Which
//! levels stay"): its disk is sampled while `cayley run` writes it, and its
//! peak must stay within that, which is less than the three whole levels
//! closing levels one at a time held. Loopover 2×6 has 12! states and
//! diameter 14 (tests/data/published.md).

use cayley_shared::files::checkpoint::KeepLevels;
use cayley_tests::checkpoint::LOOPOVER_2X6_IN_66_CHUNKS;
use cayley_tests::{cayley_bin, json_u64s, read_json, test_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Bytes of the files under `dir` now; files deleted while it is walked
/// count as gone.
fn bytes_now(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => bytes_now(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[test]
fn a_last2_checkpoint_holds_two_levels_at_its_peak() {
    let root = test_dir();
    let (ck, out) = (root.path().join("ck"), root.path().join("out"));
    // 66 chunks of 0.9 MiB raw, so that chunks in flight are a small part
    // of a level.
    let mut child = Command::new(cayley_bin())
        .args(LOOPOVER_2X6_IN_66_CHUNKS)
        .args(["--keep-levels", "last2", "--threads", "2", "-q", "--checkpoint-dir"])
        .arg(&ck)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cayley");
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        peak = peak.max(bytes_now(&ck));
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = child.wait_with_output().expect("cayley output");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = read_json(&out.join("result.json")).expect("result.json");
    let depths = json_u64s(&json["depths"]);
    assert_eq!(depths.iter().sum::<u64>(), 479_001_600, "12!");
    assert_eq!(depths.len() - 1, 14, "tests/data/published.md: diameter 14");

    let files: Vec<u64> = json["level_io"]
        .as_array()
        .expect("level_io")
        .iter()
        .map(|l| l["file_bytes"].as_u64().expect("file_bytes"))
        .collect();
    let raw_level = 479_001_600u64 / 8;
    let chunks = json["chunks"].as_u64().expect("chunks");
    let early: u64 = (1..files.len() as u32)
        .filter(|&l| KeepLevels::Last2.keeps_given(l, &files, raw_level as u128))
        .map(|l| files[l as usize])
        .sum();
    let at = |d: usize| files.get(d).copied().unwrap_or(0);
    // While level d is written: d - 1 whole, and per chunk d - 2 or d.
    let live = (2..files.len())
        .map(|d| at(d - 1) + at(d - 2).max(at(d)))
        .max()
        .unwrap();
    let whole = (2..files.len()).map(|d| at(d - 2) + at(d - 1) + at(d)).max().unwrap();
    // Each of the worker's tasks in flight writes its chunk (at most a raw
    // chunk and its index) before the one it replaces goes, and up to a
    // sixteenth of the level's recorded chunks wait for the journal sync.
    let in_flight = (8 + chunks.div_ceil(16)) * (raw_level / chunks + 4096);
    let bound = live + early + in_flight;
    assert!(
        whole > bound,
        "the case cannot tell: whole levels {} against {}",
        whole,
        bound
    );
    assert!(
        peak <= bound,
        "the checkpoint took {} bytes at its peak; two live levels, the early ones and the tasks in flight are {}",
        peak,
        bound
    );
    assert!(
        peak >= files.iter().copied().max().unwrap(),
        "the sampling missed the biggest level: {}",
        peak
    );
}
