//! Bounded worker memory (docs/ARCHITECTURE.md, "Out-of-core workers"): a worker whose budget is smaller than
//! one level still computes the whole table, reads what does not fit again
//! from the checkpoint, and its peak resident memory, as the kernel
//! measures it, stays within the budget plus a fixed allowance.
//!
//! The table is checked against facts independent of this program: Loopover
//! 2×6 has 12! states and diameter 14 (tests/data/published.md).

use cayley_tests::procs::{run_worker_within, Coordinator};
use std::time::Duration;

const TOKEN: &str = "memory-test-token";
const LONG: Duration = Duration::from_secs(600);
/// 12!
const STATES_2X6: u64 = 479_001_600;

#[test]
fn a_worker_smaller_than_a_level_finishes_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    // Unreduced: 132 shards of 453 KiB; a level is 57 MiB raw.
    let coordinator = Coordinator::start(
        dir.path(),
        "loopover:2x6",
        TOKEN,
        &["--no-symmetry", "--shard-pieces", "2"],
    );
    // The low table (48 MiB) and cached transitions (26 MiB) come out of the
    // budget, which leaves 38 MiB of shards: less than one level.
    let budget: u64 = 112 << 20;
    run_worker_within(&coordinator.url, TOKEN, dir.path(), budget);
    let out = coordinator.out.clone();
    let depths = coordinator.finish(LONG);
    assert_eq!(depths.iter().sum::<u64>(), STATES_2X6);
    assert_eq!(depths.len() - 1, 14, "tests/data/published.md: diameter 14");
    // What did not fit was read again: every dense level misses the cache.
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    let io = result["level_io"].as_array().unwrap();
    let densest = (1..depths.len()).max_by_key(|&d| depths[d]).unwrap();
    let level = &io[densest];
    assert!(level["cache_hit_rate"].as_f64().unwrap() < 1.0, "{}", level);
    assert!(level["bytes_read"].as_u64().unwrap() > 0, "{}", level);
    // Every level's tasks closed their files, timed apart from writing
    // (reported by the worker, summed by the coordinator).
    for (depth, level) in io.iter().enumerate().skip(1) {
        assert!(
            level["close_seconds"].as_f64().unwrap() > 0.0,
            "depth {}: {}",
            depth,
            level
        );
    }
}

/// A reduced job whose sparse levels are held as lists (docs/guide.md,
/// "Memory and disk"): the 4×4 Loopover to depth 9, whose 499,961 shards
/// hold about 70 stored states each at depth 8 and 1,000 at depth 9, so
/// the cache holds lists on the heap beside the slab's slots. Freed lists
/// and slots left resident once took the worker past its budget (here
/// 572–574 MiB under 500 MiB at 0074c7b, two runs; 538–540 MiB since
/// 8b167c8, three runs); the worker now reads its resident memory and
/// trims the cache and the free slots while it is over.
///
/// Depths 0–5 are checked against a plain BFS over the 4×4's generators
/// written out here (`reference_bfs_to`).
#[test]
fn a_worker_holding_lists_stays_within_its_budget() {
    use cayley_tests::{loopover_generators, reference_bfs_to};
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), "loopover:4x4", TOKEN, &["--max-depth", "9"]);
    // The kernel's tables take 110 MiB of it; the whole of depth 9 held
    // would take about 600 MiB.
    let budget: u64 = 500 << 20;
    run_worker_within(&coordinator.url, TOKEN, dir.path(), budget);
    let depths = coordinator.finish_partial(LONG);
    assert_eq!(depths.len(), 10, "{depths:?}");
    assert_eq!(depths[..6], reference_bfs_to(&loopover_generators(4, 4, false), 5)[..]);
}

/// The antipodes listed are bounded by the memory the run was given:
/// `--antipodes 1000000000` on Loopover 3×4 unreduced to depth 9 grew to
/// 24 GB listing its 286 million antipodes, and was killed. Here pancake:10,
/// whose 73,232 antipodes (CayleyPy's growth table) take about 1.6 KiB each
/// while listed, is given 20 MiB: fewer are listed, with a warning saying
/// how many, and they are the first of the full listing.
#[test]
fn antipodes_listed_fit_the_memory_given() {
    use cayley_tests::{cayley, json_u64s, read_json, stderr_text, test_dir};
    let dir = test_dir();
    let run = |memory: &str, out: &str| {
        let out = dir.path().join(out);
        let args = [
            "run",
            "pancake:10",
            "--antipodes",
            "100000",
            "--memory",
            memory,
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--scratch",
            dir.path().to_str().unwrap(),
        ];
        let o = cayley(&args);
        assert!(o.status.success(), "{}", stderr_text(&o));
        (stderr_text(&o), read_json(&out.join("result.json")).unwrap())
    };
    let (quiet, full) = run("1G", "full");
    let (warned, capped) = run("20M", "capped");
    let published = cayley_tests::published::published_table("cayleypy-growth.csv", "pancake:10");
    assert_eq!(json_u64s(&full["depths"]), published);
    assert_eq!(json_u64s(&capped["depths"]), published);
    let (full, capped) = (
        full["antipodes"].as_array().unwrap(),
        capped["antipodes"].as_array().unwrap(),
    );
    assert_eq!(full.len() as u64, *published.last().unwrap(), "{quiet}");
    assert!(!quiet.contains("listing the first"), "{quiet}");
    assert!((1000..full.len()).contains(&capped.len()), "{}", capped.len());
    assert_eq!(capped[..], full[..capped.len()]);
    let said = format!("listing the first {} antipodes, not 100000", capped.len());
    assert!(warned.contains(&said) && warned.contains("--memory"), "{warned}");
}
