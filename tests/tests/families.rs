//! The puzzle families searched by the engine, against published facts
//! (tests/data/published.md) and the independent BFS helpers.

use cayley_shared::job::Job;
use cayley_shared::puzzle::perm::Perm;
use cayley_shared::puzzle::{parse_puzzle, Metric, Puzzle};
use cayley_shared::search::engine::SearchOutcome;
use cayley_tests::engine::{assert_words_solve, run_complete};
use cayley_tests::{cube_adjacency, grid_adjacency, reference_bfs, reference_blank_bfs, reference_turnstyle_bfs};
use std::path::Path;

fn run(puzzle: Puzzle, antipodes: usize) -> (Job, SearchOutcome) {
    run_complete(puzzle, None, antipodes)
}

fn total(depths: &[u64]) -> u64 {
    depths.iter().sum()
}

/// Writes `text` to `name` in `dir` and returns the spec `family:path`.
fn spec_file(dir: &Path, family: &str, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("{}:{}", family, path.display())
}

#[test]
fn a5_from_a_perm_file_has_one_antipode_12_45() {
    // Seed 000 §5: A5 = <(1 2 3), (3 4 5)>, longest word 6, only (1 2)(4 5).
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "perm", "a5.txt", "# A5\na: (1 2 3)\nb: (3,4,5)\n");
    let puzzle = parse_puzzle(&spec, Metric::Mtm).unwrap();
    let names: Vec<&str> = puzzle.moves.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "a'", "b'"]);
    let (job, outcome) = run(puzzle, 10);
    assert_eq!(job.group_order, 60);
    assert_eq!(outcome.depths.len() - 1, 6);
    assert_eq!(*outcome.depths.last().unwrap(), 1);
    assert_eq!(outcome.antipodes.len(), 1);
    let antipode = Perm::from_images(outcome.antipodes[0].state.clone()).unwrap();
    assert_eq!(antipode.to_string(), "(1,2)(4,5)");
    assert_words_solve(&job, &outcome);
}

#[test]
fn a6_from_a_perm_file_has_46_antipodes_at_depth_5() {
    // Seed 000 §5: A6 = <(1 2 3), (3 4 5), (5 6 1)>, longest word 5, 46 of them.
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "perm", "a6.txt", "x: (1,2,3)\ny: (3,4,5)\nz: (5,6,1)\n");
    let (job, outcome) = run(parse_puzzle(&spec, Metric::Mtm).unwrap(), 3);
    assert_eq!(job.group_order, 360);
    assert_eq!(total(&outcome.depths), 360);
    assert_eq!(outcome.depths.len() - 1, 5);
    assert_eq!(*outcome.depths.last().unwrap(), 46);
    assert_words_solve(&job, &outcome);
}

#[test]
fn varikon_has_20160_states_and_diameter_19() {
    // Seed 000: 8!/2 reachable configurations, worst case 19 moves.
    let (job, outcome) = run(parse_puzzle("varikon", Metric::Mtm).unwrap(), 5);
    assert_eq!(job.reachable_states, Some(20_160));
    assert_eq!(total(&outcome.depths), 20_160);
    assert_eq!(outcome.depths.len() - 1, 19);
    assert_eq!(outcome.depths, reference_blank_bfs(&cube_adjacency()));
    assert_words_solve(&job, &outcome);
}

#[test]
fn sliding_puzzles_match_the_independent_bfs() {
    for (rows, cols) in [(2, 2), (2, 3), (3, 2), (3, 3), (2, 4)] {
        let spec = format!("sliding:{}x{}", rows, cols);
        let (job, outcome) = run(parse_puzzle(&spec, Metric::Mtm).unwrap(), 4);
        let expected = reference_blank_bfs(&grid_adjacency(rows, cols));
        assert_eq!(outcome.depths, expected, "{}", spec);
        // Seed 001's parity argument: half of all arrangements.
        let half: u64 = (1..=(rows * cols) as u64).product::<u64>() / 2;
        assert_eq!(total(&outcome.depths), half, "{}", spec);
        assert_words_solve(&job, &outcome);
    }
}

#[test]
fn eight_puzzle_has_181440_states() {
    let (job, outcome) = run(parse_puzzle("sliding:3x3", Metric::Mtm).unwrap(), 2);
    assert_eq!(job.reachable_states, Some(181_440));
    assert_eq!(total(&outcome.depths), 181_440);
}

#[test]
fn turnstyle_small_circles_match_the_independent_bfs() {
    for n in 4..=8 {
        let (job, outcome) = run(parse_puzzle(&format!("turnstyle:{}", n), Metric::Mtm).unwrap(), 3);
        assert_eq!(outcome.depths, reference_turnstyle_bfs(n), "turnstyle:{}", n);
        assert_words_solve(&job, &outcome);
    }
}

#[test]
fn turnstyle_12_has_11_factorial_states_and_diameter_15() {
    // Seed 003: rotation free, 11! = 39,916,800 states, longest solution 15 flips.
    let (job, outcome) = run(parse_puzzle("turnstyle:12", Metric::Mtm).unwrap(), 2);
    assert_eq!(job.group_order, 39_916_800);
    assert_eq!(total(&outcome.depths), 39_916_800);
    assert_eq!(outcome.depths.len() - 1, 15);
    assert_words_solve(&job, &outcome);
}

#[test]
fn turnstyle_cayley_graph_matches_plain_generators() {
    // rot+1, rot-1 and (1 2)(3 4) on 7 points, written out directly.
    let n = 7u8;
    let rot: Vec<u8> = (0..n).map(|s| (s + 1) % n).collect();
    let back: Vec<u8> = (0..n).map(|s| (s + n - 1) % n).collect();
    let swap: Vec<u8> = vec![1, 0, 3, 2, 4, 5, 6];
    let expected = reference_bfs(&[rot, back, swap]);
    let (_, outcome) = run(parse_puzzle("turnstyle-cayley:7", Metric::Mtm).unwrap(), 1);
    assert_eq!(outcome.depths, expected);
}

#[test]
fn a_plain_tws_file_runs_as_a_permutation_puzzle() {
    // Loopover 2×3 written as a .tws file: one set of six distinct pieces,
    // rows shifted right and columns swapped; every power is a move, as in
    // MTM. Published table (seed 002).
    let text = "Name Loopover2x3\nSet TILES 6 1\nSolved\nTILES\n1 2 3 4 5 6\nEnd\n\
        Move R1\nTILES\n3 1 2 4 5 6\nEnd\nMove R2\nTILES\n1 2 3 6 4 5\nEnd\n\
        Move C1\nTILES\n4 2 3 1 5 6\nEnd\nMove C2\nTILES\n1 5 3 4 2 6\nEnd\nMove C3\nTILES\n1 2 6 4 5 3\nEnd\n";
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "tws", "loopover.tws", text);
    let puzzle = parse_puzzle(&spec, Metric::Mtm).unwrap();
    assert_eq!(puzzle.moves.len(), 7);
    let (job, outcome) = run(puzzle, 3);
    assert_eq!(outcome.depths, vec![1, 7, 31, 115, 274, 253, 36, 3]);
    assert_words_solve(&job, &outcome);
}
