//! Twisty puzzles through the coded kernel's low tables: the cube tables
//! of tests/data/cube-tables.csv (published, with their sources there),
//! reproduced by `cayley run` from `.tws` files built from the cube's
//! geometry (tests/src/cube.rs); and the `.tws` constructs twsearch's
//! sample files use (move sequences, `?` orientations, `--moves`,
//! `--omit`) against breadth-first searches written here from the rules.

use cayley_shared::space::Space;
use cayley_tests::cube::{cube_sticker_generators, cube_tws};
use cayley_tests::run::{assert_words_solve, run_complete, shard_pieces};
use cayley_tests::{published_table, reference_bfs, test_dir};

/// The published table `name` of tests/data/cube-tables.csv.
fn published(name: &str) -> Vec<u64> {
    published_table("cube-tables.csv", name)
}

/// Searches the cube with the given faces and metric (`mtm`, `stm`);
/// checks the words of a few antipodes and that the low tables were used.
fn cube_table(n: usize, faces: &str, metric: &str, k: Option<usize>) -> Vec<u64> {
    let dir = test_dir();
    let path = dir.path().join("cube.tws");
    std::fs::write(&path, cube_tws(n, faces)).unwrap();
    // --no-symmetry: the six-face cube is reduced by its 48 symmetries by
    // default (tests/tests/oriented_reduced.rs); these check the low tables.
    let run = run_complete(&format!(
        "tws:{} --metric {}{} --no-symmetry --antipodes 3",
        path.display(),
        metric,
        shard_pieces(k)
    ));
    let Space::Coded(codec) = &run.job.space else {
        panic!("oriented pieces are coded")
    };
    assert!(codec.low().states() > 1, "the twists are the low part");
    assert_eq!(run.result.depths.iter().sum::<u64>() as u128, run.job.group_order);
    assert_words_solve(&run);
    run.result.depths
}

#[test]
fn cube_corners_match_the_published_half_turn_table() {
    assert_eq!(cube_table(2, "URFDLB", "mtm", None), published("corners-htm"));
}

#[test]
fn cube_corners_match_the_published_quarter_turn_table() {
    assert_eq!(cube_table(2, "URFDLB", "stm", None), published("corners-qtm"));
}

#[test]
fn pocket_cube_matches_the_published_tables_in_any_shard_plan() {
    for k in [None, Some(1), Some(2)] {
        assert_eq!(cube_table(2, "URF", "mtm", k), published("cube2-htm"));
    }
    assert_eq!(cube_table(2, "URF", "stm", Some(1)), published("cube2-qtm"));
}

/// A twsearch move: position `j` receives the piece of position `perm[j]`,
/// whose orientation gains `ori[perm[j]]` (mod `k`); `wild` pieces keep no
/// orientation. Written here from twsearch's documented convention, not
/// from the reader.
fn tws_apply(state: &[(u8, u8)], perm: &[usize], ori: &[u8], k: u8, wild: &[u8]) -> Vec<(u8, u8)> {
    perm.iter()
        .map(|&from| {
            let (piece, o) = state[from];
            let o = if wild.contains(&piece) { 0 } else { (o + ori[from]) % k };
            (piece, o)
        })
        .collect()
}

/// Depth counts of a one-set puzzle from the rules: `moves` as (perm,
/// ori), generators as words of them applied first to last, every power of
/// a generator one move (the half-turn metric); solved = piece `i` at
/// position `i`, orientation 0.
fn reference_tws_bfs(n: usize, k: u8, moves: &[(Vec<usize>, Vec<u8>)], words: &[Vec<usize>], wild: &[u8]) -> Vec<u64> {
    let solved: Vec<(u8, u8)> = (0..n as u8).map(|p| (p, 0)).collect();
    let apply_word = |state: &[(u8, u8)], word: &[usize]| {
        word.iter()
            .fold(state.to_vec(), |s, &m| tws_apply(&s, &moves[m].0, &moves[m].1, k, wild))
    };
    cayley_tests::bfs_counts(solved.iter().flat_map(|&(p, o)| [p, o]).collect(), |flat| {
        let state: Vec<(u8, u8)> = flat.chunks(2).map(|c| (c[0], c[1])).collect();
        let mut out = Vec::new();
        for word in words {
            let mut s = apply_word(&state, word);
            while s != state {
                out.push(s.iter().flat_map(|&(p, o)| [p, o]).collect());
                s = apply_word(&s, word);
            }
        }
        out
    })
}

fn tws_file(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("t.tws");
    std::fs::write(&path, text).unwrap();
    format!("tws:{}", path.display())
}

/// Six pieces with two orientations: A turns three of them, flipping one,
/// B swaps two others.
const SIX: &str = "Name Six\nSet P 6 2\nSolved\nP\n1 2 3 4 5 6\n0 0 0 0 0 0\nEnd\n\
    Move A\nP\n2 3 1 4 5 6\n1 0 0 0 0 0\nEnd\n\
    Move B\nP\n1 2 4 3 5 6\n0 0 0 0 0 0\nEnd\n";

/// A and B of [`SIX`], as (perm, ori).
fn six_moves() -> Vec<(Vec<usize>, Vec<u8>)> {
    vec![
        (vec![1, 2, 0, 3, 4, 5], vec![1, 0, 0, 0, 0, 0]),
        (vec![0, 1, 3, 2, 4, 5], vec![0; 6]),
    ]
}

#[test]
fn move_sequences_are_moves_of_their_own() {
    // S = A B A, declared before B; only A and S are generators (B is
    // renamed to a rotation's name, usable in sequences only).
    let text = SIX
        .replace("Move B\n", "Move Bv\n")
        .replacen("End\nMove A", "End\nMoveSequence S A Bv A\nMove A", 1);
    assert!(text.contains("MoveSequence S A Bv A"));
    let dir = test_dir();
    let run = run_complete(&format!("{} --antipodes 2", tws_file(dir.path(), &text)));
    assert!(run.job.puzzle.moves.iter().all(|m| !m.name.starts_with("Bv")));
    let expected = reference_tws_bfs(6, 2, &six_moves(), &[vec![0], vec![0, 1, 0]], &[]);
    assert_eq!(run.result.depths, expected);
    // Distinct pieces: the positions are the group, whose order the
    // reference counts independently of Schreier–Sims.
    assert_eq!(run.job.group_order, expected.iter().sum::<u64>() as u128);
    assert_words_solve(&run);
}

#[test]
fn question_mark_orientations_are_ignored() {
    // Piece 1 ignores its orientation: fewer positions, not known in advance.
    let text = SIX.replacen("0 0 0 0 0 0\nEnd\n", "? 0 0 0 0 0\nEnd\n", 1);
    assert!(text.contains("? 0 0"));
    let dir = test_dir();
    let run = run_complete(&format!("{} --antipodes 2", tws_file(dir.path(), &text)));
    assert_eq!(run.job.reachable_states, None);
    let expected = reference_tws_bfs(6, 2, &six_moves(), &[vec![0], vec![1]], &[0]);
    assert_eq!(run.result.depths, expected);
    assert!(
        expected.iter().sum::<u64>()
            < reference_tws_bfs(6, 2, &six_moves(), &[vec![0], vec![1]], &[])
                .iter()
                .sum()
    );
    assert_words_solve(&run);
}

#[test]
fn moves_and_omit_options_match_the_cube_geometry() {
    let dir = test_dir();
    // --moves U,R2 on the 2x2x2: U, U2, U' and R2, from stickers.
    let cube = tws_file(dir.path(), &cube_tws(2, "URF"));
    let run = run_complete(&format!("{} --moves U,R2 --antipodes 2", cube));
    let stickers = cube_sticker_generators(2, "UR", true);
    // U, U2, U', then R, R2, R': keep R2 only.
    let kept: Vec<Vec<u8>> = vec![
        stickers[0].clone(),
        stickers[1].clone(),
        stickers[2].clone(),
        stickers[4].clone(),
    ];
    assert_eq!(run.result.depths, reference_bfs(&kept));
    // --omit EDGES on the 3x3x3 with U, R leaves its corners: the 2x2x2 <U, R>.
    let cube3 = tws_file(dir.path(), &cube_tws(3, "UR"));
    let run = run_complete(&format!("{} --omit EDGES --antipodes 2", cube3));
    assert_eq!(run.job.puzzle.slots, 8);
    assert_eq!(
        run.result.depths,
        reference_bfs(&cube_sticker_generators(2, "UR", true))
    );
}
