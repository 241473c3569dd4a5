//! Partial puzzles (`--track`), identical pieces and oriented pieces: the
//! coded state space, against independent hash-set BFS written here from
//! the rules, published counts (tests/data/published.md) and
//! counting identities.

use cayley_tests::cube::{corner_twist_moves, cube_sticker_generators, cube_tws};
use cayley_tests::run::{assert_words_solve, run_complete, shard_pieces, Finished};
use cayley_tests::{bfs_counts, grid_adjacency, loopover_generators, reference_bfs, reference_tracked_bfs, test_dir};

/// `cayley run SPEC` in `metric` (`mtm`, `stm`) with shard plan `k`,
/// which must report antipodes when asked for them.
fn run_spec(spec: &str, metric: &str, k: Option<usize>, antipodes: usize) -> Finished {
    let run = run_complete(&format!(
        "{} --metric {}{} --antipodes {}",
        spec,
        metric,
        shard_pieces(k),
        antipodes
    ));
    assert!(!run.antipodes.is_empty() || antipodes == 0);
    run
}

fn falling(n: u64, k: u64) -> u64 {
    (n - k + 1..=n).product()
}

#[test]
fn tracked_loopover_matches_a_bfs_over_the_tracked_places() {
    // loopover:3x3 moves are 3-cycles (the group is A9, 7-transitive), so
    // 4 tracked pieces reach all 9·8·7·6 placements.
    let gens = loopover_generators(3, 3, false);
    let expected = reference_tracked_bfs(&gens, &[0, 1, 2, 3]);
    assert_eq!(expected.iter().sum::<u64>(), falling(9, 4));
    for k in [None, Some(0), Some(2), Some(4)] {
        let run = run_spec("loopover:3x3 --track 1-4", "mtm", k, 4);
        assert_eq!(run.job.reachable_states, Some(falling(9, 4) as u128));
        assert_eq!(run.result.depths, expected, "shard plan {:?}", k);
        assert_words_solve(&run);
    }
}

#[test]
fn the_issue_example_shape_tracked_4x4_loopover() {
    // `loopover:4x4 --track 1-8` has 16!/8! states (a benchmark); the same
    // coset shape with 4 tracked pieces: 16·15·14·13.
    let gens = loopover_generators(4, 4, false);
    for (list, tracked) in [("1-4", vec![0u8, 1, 2, 3]), ("1,6,11,16", vec![0u8, 5, 10, 15])] {
        let run = run_spec(&format!("loopover:4x4 --track {}", list), "mtm", None, 3);
        assert_eq!(run.result.depths, reference_tracked_bfs(&gens, &tracked));
        assert_eq!(run.result.depths.iter().sum::<u64>(), falling(16, 4));
        assert_words_solve(&run);
    }
    let stm = run_spec("loopover:2x4 --track 1,2,8", "stm", Some(1), 0);
    assert_eq!(
        stm.result.depths,
        reference_tracked_bfs(&loopover_generators(2, 4, true), &[0, 1, 7])
    );
}

#[test]
fn tracked_sliding_puzzle_keeps_its_blank() {
    // sliding:3x3 with tiles 1-3 tracked: the blank is tracked too. A state
    // is (blank cell, cells of tiles 1..3); a move swaps the blank with a
    // neighbouring cell, carrying a tracked tile if one is there.
    let adjacent = grid_adjacency(3, 3);
    let start = vec![8u8, 0, 1, 2];
    let expected = bfs_counts(start, |s| {
        adjacent[s[0] as usize]
            .iter()
            .map(|&c| {
                let mut next = s.to_vec();
                next[0] = c as u8;
                for tile in next.iter_mut().skip(1).filter(|t| **t as usize == c) {
                    *tile = s[0];
                }
                next
            })
            .collect()
    });
    // Five untracked tiles make parity invisible: all 9·8·7·6 placements.
    assert_eq!(expected.iter().sum::<u64>(), falling(9, 4));
    let run = run_spec("sliding:3x3 --track 1-3", "mtm", None, 2);
    assert_eq!(run.job.reachable_states, None, "guarded moves: counted by searching");
    assert_eq!(run.result.depths, expected);
    assert_words_solve(&run);
}

/// Writes a `.tws` file and returns its spec.
fn tws_spec(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("tws:{}", path.display())
}

#[test]
fn two_by_two_cube_has_3674160_positions_in_the_half_turn_metric() {
    // "Generalized Twisty Polyhedra" (tests/data/published.md): 3,674,160 positions with one corner fixed (U, R, F never
    // move DLB). Independent check: BFS over sticker permutations built from
    // the cube's geometry.
    let dir = test_dir();
    let spec = tws_spec(dir.path(), "cube2.tws", &cube_tws(2, "URF"));
    let run = run_spec(&spec, "mtm", None, 3);
    assert_eq!(run.job.reachable_states, Some(3_674_160));
    assert_eq!(run.result.depths.iter().sum::<u64>(), 3_674_160);
    assert_eq!(
        run.result.depths,
        reference_bfs(&cube_sticker_generators(2, "URF", true))
    );
    assert_words_solve(&run);
}

#[test]
fn two_by_two_cube_subgroups_in_the_quarter_turn_metric() {
    let dir = test_dir();
    for faces in ["UR", "URF"] {
        let spec = tws_spec(dir.path(), &format!("{}.tws", faces), &cube_tws(2, faces));
        for k in [None, Some(1), Some(3)] {
            let run = run_spec(&spec, "stm", k, 2);
            let expected = reference_bfs(&cube_sticker_generators(2, faces, false));
            assert_eq!(run.result.depths, expected, "{} shard plan {:?}", faces, k);
            assert_words_solve(&run);
            if faces == "URF" {
                break; // one plan of the full group is enough in CI
            }
        }
    }
}

#[test]
fn identical_pieces_make_a_multiset_space() {
    // Six positions holding 1 1 2 2 3 3: 6!/(2!·2!·2!) = 90 arrangements,
    // all reachable with a 6-cycle and a transposition. The job has no
    // count in advance (three classes share an orbit) and stops at the
    // first empty level.
    let text = "Name Multiset\nSet P 6 1\nSolved\nP\n1 1 2 2 3 3\nEnd\n\
        Move cycle\nP\n6 1 2 3 4 5\nEnd\nMove swap\nP\n2 1 3 4 5 6\nEnd\n";
    let dir = test_dir();
    let run = run_spec(&tws_spec(dir.path(), "multi.tws", text), "stm", None, 2);
    assert_eq!(run.job.reachable_states, None);
    // Reference: labels by position; position j receives position perm[j].
    let cycle = [5usize, 0, 1, 2, 3, 4];
    let cycle_back = [1usize, 2, 3, 4, 5, 0];
    let swap = [1usize, 0, 2, 3, 4, 5];
    let expected = bfs_counts(vec![1, 1, 2, 2, 3, 3], |s| {
        [&cycle[..], &cycle_back[..], &swap[..]]
            .iter()
            .map(|perm| perm.iter().map(|&from| s[from]).collect())
            .collect()
    });
    assert_eq!(expected.iter().sum::<u64>(), 90);
    assert_eq!(run.result.depths, expected);
    assert_words_solve(&run);
}

#[test]
fn identical_oriented_corners_count_twists_only() {
    // All eight corners identical, orientation kept: only twists are left.
    // U, R, F never move DLB and keep the twist sum, so 3⁶ = 729 states.
    let solved_line = "1 1 1 1 1 1 1 1";
    let text = cube_tws(2, "URF").replacen("1 2 3 4 5 6 7 8", solved_line, 1);
    assert!(text.contains(solved_line));
    let dir = test_dir();
    let run = run_spec(&tws_spec(dir.path(), "twists.tws", &text), "mtm", None, 1);
    assert_eq!(run.job.reachable_states, None);
    let moves = corner_twist_moves("URF");
    let expected = bfs_counts(vec![0u8; 8], |s| {
        let mut out = Vec::new();
        for (perm, ori) in &moves {
            let mut t = s.to_vec();
            for _ in 0..3 {
                // Position j receives the piece of perm[j], twisted by ori[perm[j]].
                t = (0..8)
                    .map(|j| ((t[perm[j]] as usize + ori[perm[j]]) % 3) as u8)
                    .collect();
                out.push(t.clone());
            }
        }
        out
    });
    assert_eq!(expected.iter().sum::<u64>(), 729);
    assert_eq!(run.result.depths, expected);
    assert_words_solve(&run);
}
