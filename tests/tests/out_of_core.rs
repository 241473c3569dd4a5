//! Out of core beyond the Loopover (docs/ARCHITECTURE.md, "Out-of-core workers"): a budget of a few
//! shards, far below one level, still gives the published tables, for a
//! guarded puzzle served to a separate worker process and for a coded
//! (oriented) puzzle in `cayley run`; what did not fit is read back from
//! the checkpoint.
//!
//! Tables: the 3×4 sliding puzzle from tests/data/sliding-tables.csv (OEIS
//! A090166), the 3×3×3 corners from tests/data/cube-tables.csv (Bryan 1993).

use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::search::resources::requirements;
use cayley_tests::cube::cube_tws;
use cayley_tests::procs::{run_worker_within, Coordinator};
use cayley_tests::{json_u64s, published_table, read_json, run_complete, test_dir};
use std::time::Duration;

const TOKEN: &str = "out-of-core-test-token";
const LONG: Duration = Duration::from_secs(600);
/// Shards of room above the least a task needs.
const SPARE_SHARDS: u64 = 8;

/// A budget of a few shards for `spec`; asserts it is under half a level.
fn small_budget(spec: &str, shard_pieces: usize) -> u64 {
    let puzzle = parse_puzzle(spec, Metric::Mtm).expect("spec");
    let need = requirements(&Job::new(puzzle, Some(shard_pieces)).expect("job"));
    let budget = need.min_worker_bytes + SPARE_SHARDS * need.shard_bytes;
    let for_shards = budget - need.table_bytes;
    assert!(
        2 * u128::from(for_shards) < need.level_bytes,
        "{}: {} bytes of shards is not far below a level of {}",
        spec,
        for_shards,
        need.level_bytes
    );
    budget
}

/// The busiest level read shards back from the checkpoint.
fn assert_reread(result: &serde_json::Value, depths: &[u64]) {
    let densest = (1..depths.len()).max_by_key(|&d| depths[d]).expect("levels");
    let level = &result["level_io"][densest];
    assert!(level["bytes_read"].as_u64().expect("bytes_read") > 0, "{}", level);
    assert!(level["cache_hit_rate"].as_f64().expect("hit rate") < 1.0, "{}", level);
}

#[test]
fn sliding_3x4_in_a_worker_of_a_few_shards_gives_the_published_table() {
    let dir = tempfile::tempdir().unwrap();
    // 1,320 shards of 44 KiB; a level is 57 MiB raw.
    let budget = small_budget("sliding:3x4", 3);
    let coordinator = Coordinator::start(dir.path(), "sliding:3x4", TOKEN, &["--shard-pieces", "3"]);
    run_worker_within(&coordinator.url, TOKEN, dir.path(), budget);
    let out = coordinator.out.clone();
    let depths = coordinator.finish(LONG);
    assert_eq!(depths, published_table("sliding-tables.csv", "3x4"));
    assert_reread(&read_json(&out.join("result.json")).expect("result.json"), &depths);
}

#[test]
fn cube_corners_out_of_core_give_the_published_table() {
    let dir = test_dir();
    let file = dir.path().join("corners.tws");
    std::fs::write(&file, cube_tws(2, "URFDLB")).unwrap();
    let spec = format!("tws:{}", file.display());
    let budget = small_budget(&spec, 3);
    let out = dir.path().join("out");
    let result = run_complete(
        &out,
        &spec,
        &["--shard-pieces", "3", "--memory", &budget.to_string(), "--threads", "2"],
    );
    let depths = json_u64s(&result["depths"]);
    assert_eq!(depths, published_table("cube-tables.csv", "corners-htm"));
    assert_reread(&result, &depths);
}
