//! The 3×3×3's corner and edge permutations (orientation ignored), reduced
//! by the cube's 48 symmetries with keys ranked only where each block's
//! pieces can go: `cayley run` on its perm files against a plain hash-set
//! BFS of generators written out here from the cube's face turns.

use cayley_shared::space::Space;
use cayley_tests::run::{assert_words_solve, run_complete, run_quietly};
use cayley_tests::{reference_bfs, reference_bfs_to};

/// `tests/data/puzzles/NAME` as a `perm:` spec.
fn spec(name: &str) -> String {
    format!("perm:{}/data/puzzles/{}", env!("CARGO_MANIFEST_DIR"), name)
}

/// Slots 1–8 corners, 9–20 edges, numbered as in twsearch's 3x3x3.tws.
const QUARTER_TURNS: [&str; 6] = [
    "(3,7,8,4)(12,15,20,16)",
    "(1,2,6,5)(9,14,17,13)",
    "(1,3,4,2)(9,10,12,11)",
    "(5,6,8,7)(17,19,20,18)",
    "(2,4,8,6)(11,16,19,14)",
    "(1,5,7,3)(10,13,18,15)",
];

/// The image list (0-based) of a permutation of 20 slots in 1-based cycles.
fn images(cycles: &str) -> Vec<u8> {
    let mut out: Vec<u8> = (0..20).collect();
    for cycle in cycles.trim_matches(|c| c == '(' || c == ')').split(")(") {
        let points: Vec<u8> = cycle.split(',').map(|p| p.parse::<u8>().unwrap() - 1).collect();
        for (i, &p) in points.iter().enumerate() {
            out[p as usize] = points[(i + 1) % points.len()];
        }
    }
    out
}

fn compose(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().map(|&x| b[x as usize]).collect()
}

/// Each face's quarter turn, half turn and inverse quarter turn.
fn face_turns() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for q in QUARTER_TURNS {
        let once = images(q);
        let twice = compose(&once, &once);
        let thrice = compose(&twice, &once);
        out.extend([once, twice, thrice]);
    }
    out
}

/// The order of the symmetry group a run reduced by (0: not reduced).
fn reduced_by(run: &cayley_coordinator::local::Finished) -> usize {
    match &run.job.space {
        Space::Reduced(r) => r.symmetries.order(),
        _ => 0,
    }
}

/// The squares group: five orbits of the moves (two corner tetrads, three
/// edge slices) inside the symmetries' two, so the keys of its corners
/// alone and edge slices are ranked within tetrads. Complete table, with
/// antipode words replayed.
#[test]
fn the_squares_group_reduced_by_48_matches_reference_bfs() {
    let halves: Vec<Vec<u8>> = face_turns().into_iter().skip(1).step_by(3).collect();
    let expected = reference_bfs(&halves);
    assert_eq!(expected.iter().sum::<u64>(), 663_552, "the squares group's order");
    let run = run_complete(&format!("{} --antipodes 4", spec("3x3x3-squares.perm")));
    assert_eq!(reduced_by(&run), 48);
    assert_eq!(run.result.depths, expected);
    assert!(!run.antipodes.is_empty());
    assert_words_solve(&run);
}

/// The whole permutation group to depth 5 (half-turn metric: 18 moves),
/// in the layout its full run uses: six edge pairs' keys, the corners'
/// 8! in each fiber.
#[test]
fn the_cube_permutations_to_depth_5_match_reference_bfs() {
    let expected = reference_bfs_to(&face_turns(), 5);
    let run = run_quietly(&format!(
        "{} --max-depth 5 --memory 2G",
        spec("3x3x3-permutations.perm")
    ));
    assert_eq!(reduced_by(&run), 48);
    assert_eq!(run.result.depths, expected);
}
