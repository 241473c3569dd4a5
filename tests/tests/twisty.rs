//! Twisty puzzles through the coded kernel's low tables: the cube tables
//! of tests/data/cube-tables.csv (published, with their sources there),
//! reproduced by the engine from `.tws` files built from the cube's
//! geometry (tests/src/cube.rs).

use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::space::Space;
use cayley_tests::cube::cube_tws;
use cayley_tests::engine::{assert_words_solve, run_complete};
use cayley_tests::test_dir;

/// The published table `name` of tests/data/cube-tables.csv.
fn published(name: &str) -> Vec<u64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/cube-tables.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(','))
        .unwrap_or_else(|| panic!("no table {} in {}", name, path));
    line.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

/// Searches the cube with the given faces and metric; checks the words of
/// a few antipodes and that the low tables were used.
fn cube_table(n: usize, faces: &str, metric: Metric, shard_pieces: Option<usize>) -> Vec<u64> {
    let dir = test_dir();
    let path = dir.path().join("cube.tws");
    std::fs::write(&path, cube_tws(n, faces)).unwrap();
    let puzzle = parse_puzzle(&format!("tws:{}", path.display()), metric).unwrap();
    let (job, outcome) = run_complete(puzzle, shard_pieces, 3);
    let Space::Coded(codec) = &job.space else {
        panic!("oriented pieces are coded")
    };
    assert!(codec.low().states() > 1, "the twists are the low part");
    assert_eq!(outcome.depths.iter().sum::<u64>() as u128, job.group_order);
    assert_words_solve(&job, &outcome);
    outcome.depths
}

#[test]
fn cube_corners_match_the_published_half_turn_table() {
    assert_eq!(cube_table(2, "URFDLB", Metric::Mtm, None), published("corners-htm"));
}

#[test]
fn cube_corners_match_the_published_quarter_turn_table() {
    assert_eq!(cube_table(2, "URFDLB", Metric::Stm, None), published("corners-qtm"));
}

#[test]
fn pocket_cube_matches_the_published_tables_in_any_shard_plan() {
    for shard_pieces in [None, Some(1), Some(2)] {
        assert_eq!(cube_table(2, "URF", Metric::Mtm, shard_pieces), published("cube2-htm"));
    }
    assert_eq!(cube_table(2, "URF", Metric::Stm, Some(1)), published("cube2-qtm"));
}
