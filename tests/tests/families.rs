//! The puzzle families searched by `cayley run`, against published facts
//! (tests/data/published.md) and the independent BFS helpers.

use cayley_shared::job::chunking::{MAX_CHUNKS, TARGET_CHUNK_BYTES};
use cayley_shared::puzzle::perm::Perm;
use cayley_tests::run::{assert_words_solve, run_complete, run_quietly, Finished};
use cayley_tests::{
    cube_adjacency, grid_adjacency, published_table, reference_bfs, reference_blank_bfs, reference_turnstyle_bfs,
};
use std::path::Path;

/// `cayley run SPEC`, keeping up to `antipodes` antipodes.
fn run(spec: &str, antipodes: usize) -> Finished {
    run_complete(&format!("{} --antipodes {}", spec, antipodes))
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
    // D'Eon and Nehaniv, §5 (tests/data/published.md): A5 = <(1 2 3), (3 4 5)>, longest word 6, only (1 2)(4 5).
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "perm", "a5.txt", "# A5\na: (1 2 3)\nb: (3,4,5)\n");
    let r = run(&spec, 10);
    let names: Vec<&str> = r.job.puzzle.moves.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "a'", "b'"]);
    assert_eq!(r.job.group_order, 60);
    assert_eq!(r.result.depths.len() - 1, 6);
    assert_eq!(*r.result.depths.last().unwrap(), 1);
    assert_eq!(r.antipodes.len(), 1);
    let antipode = Perm::from_images(r.antipodes[0].state.clone()).unwrap();
    assert_eq!(antipode.to_string(), "(1,2)(4,5)");
    assert_words_solve(&r);
}

#[test]
fn a6_from_a_perm_file_has_46_antipodes_at_depth_5() {
    // D'Eon and Nehaniv, §5: A6 = <(1 2 3), (3 4 5), (5 6 1)>, longest word 5, 46 of them.
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "perm", "a6.txt", "x: (1,2,3)\ny: (3,4,5)\nz: (5,6,1)\n");
    let r = run(&spec, 3);
    assert_eq!(r.job.group_order, 360);
    assert_eq!(total(&r.result.depths), 360);
    assert_eq!(r.result.depths.len() - 1, 5);
    assert_eq!(*r.result.depths.last().unwrap(), 46);
    assert_words_solve(&r);
}

#[test]
fn varikon_has_20160_states_and_diameter_19() {
    // D'Eon and Nehaniv: 8!/2 reachable configurations, worst case 19 moves.
    let r = run("varikon", 5);
    assert_eq!(r.job.reachable_states, Some(20_160));
    assert_eq!(total(&r.result.depths), 20_160);
    assert_eq!(r.result.depths.len() - 1, 19);
    assert_eq!(r.result.depths, reference_blank_bfs(&cube_adjacency()));
    assert_words_solve(&r);
}

#[test]
fn sliding_puzzles_match_the_independent_bfs() {
    for (rows, cols) in [(2, 2), (2, 3), (3, 2), (3, 3), (2, 4)] {
        let spec = format!("sliding:{}x{}", rows, cols);
        let r = run(&spec, 4);
        let expected = reference_blank_bfs(&grid_adjacency(rows, cols));
        assert_eq!(r.result.depths, expected, "{}", spec);
        // The parity argument of "The 15-puzzle groupoid" (tests/data/published.md): half of all arrangements.
        let half: u64 = (1..=(rows * cols) as u64).product::<u64>() / 2;
        assert_eq!(total(&r.result.depths), half, "{}", spec);
        assert_words_solve(&r);
    }
}

#[test]
fn the_15_puzzle_in_chunks_past_their_target_size_gives_the_published_first_levels() {
    // 1.3 TiB a level: 20,808 chunks of 64 MiB, cut into at most MAX_CHUNKS
    // larger ones instead (`job/chunking.rs`).
    let r = run_quietly("sliding:4x4 --max-depth 12 --antipodes 2");
    let chunking = r.job.chunking;
    assert!(chunking.chunks() <= MAX_CHUNKS, "{:?}", chunking);
    assert!(
        chunking.per_chunk * r.job.space.shard_bytes() > 4 * TARGET_CHUNK_BYTES,
        "{:?}",
        chunking
    );
    let published = published_table("sliding-tables.csv", "4x4-to-16");
    assert_eq!(r.result.depths, published[..=12]);
    assert_words_solve(&r);
}

#[test]
fn eight_puzzle_has_181440_states() {
    let r = run("sliding:3x3", 2);
    assert_eq!(r.job.reachable_states, Some(181_440));
    assert_eq!(total(&r.result.depths), 181_440);
}

#[test]
fn turnstyle_small_circles_match_the_independent_bfs() {
    for n in 4..=8 {
        let r = run(&format!("turnstyle:{}", n), 3);
        assert_eq!(r.result.depths, reference_turnstyle_bfs(n), "turnstyle:{}", n);
        assert_words_solve(&r);
    }
}

#[test]
fn turnstyle_12_has_11_factorial_states_and_diameter_15() {
    // The Turnstyle post (tests/data/published.md): rotation free, 11! = 39,916,800 states, longest solution 15 flips.
    let r = run("turnstyle:12", 2);
    assert_eq!(r.job.group_order, 39_916_800);
    assert_eq!(total(&r.result.depths), 39_916_800);
    assert_eq!(r.result.depths.len() - 1, 15);
    assert_words_solve(&r);
}

#[test]
fn turnstyle_cayley_graph_matches_plain_generators() {
    // rot+1, rot-1 and (1 2)(3 4) on 7 points, written out directly.
    let n = 7u8;
    let rot: Vec<u8> = (0..n).map(|s| (s + 1) % n).collect();
    let back: Vec<u8> = (0..n).map(|s| (s + n - 1) % n).collect();
    let swap: Vec<u8> = vec![1, 0, 3, 2, 4, 5, 6];
    let expected = reference_bfs(&[rot, back, swap]);
    let r = run("turnstyle-cayley:7", 1);
    assert_eq!(r.result.depths, expected);
}

#[test]
fn a_plain_tws_file_runs_as_a_permutation_puzzle() {
    // Loopover 2×3 written as a .tws file: one set of six distinct pieces,
    // rows shifted right and columns swapped; every power is a move, as in
    // MTM. Published table (Jia, Zhang and Xiang; tests/data/published.md).
    let text = "Name Loopover2x3\nSet TILES 6 1\nSolved\nTILES\n1 2 3 4 5 6\nEnd\n\
        Move R1\nTILES\n3 1 2 4 5 6\nEnd\nMove R2\nTILES\n1 2 3 6 4 5\nEnd\n\
        Move C1\nTILES\n4 2 3 1 5 6\nEnd\nMove C2\nTILES\n1 5 3 4 2 6\nEnd\nMove C3\nTILES\n1 2 6 4 5 3\nEnd\n";
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "tws", "loopover.tws", text);
    let r = run(&spec, 3);
    assert_eq!(r.job.puzzle.moves.len(), 7);
    assert_eq!(r.result.depths, vec![1, 7, 31, 115, 274, 253, 36, 3]);
    assert_words_solve(&r);
}
