//! Symmetries of puzzles with oriented pieces, found by search
//! (shared/src/puzzle/symmetry/oriented.rs), on 2×2×2 cube definitions
//! written from the cube's geometry (`cayley_tests::cube`):
//! - how many there are, against the cube's symmetry group: the 48
//!   rotations and mirror images map the six faces onto themselves; those
//!   keeping {U, R, F} are the 6 fixing the URF corner (3 rotations about
//!   its diagonal, 3 mirror planes through it), and those keeping {U, R}
//!   the 4 fixing the UR edge;
//! - that every one keeps the distance from solved of every state, with
//!   distances from a plain breadth-first search written here.

use cayley_shared::puzzle::symmetry::oriented::{find_oriented_symmetries, OrientedSymmetries};
use cayley_shared::puzzle::{parse_puzzle, Metric, Puzzle};
use cayley_tests::cube::cube_tws;
use std::collections::HashMap;

fn corners(faces: &str) -> Puzzle {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("cube-{faces}.tws"));
    std::fs::write(&path, cube_tws(2, faces)).unwrap();
    parse_puzzle(&format!("tws:{}", path.display()), Metric::Mtm).expect("the definition parses")
}

fn symmetries(faces: &str) -> OrientedSymmetries {
    find_oriented_symmetries(&corners(faces)).expect("searched")
}

#[test]
fn the_cube_has_its_48_symmetries_and_its_corner_and_edge_stabilisers() {
    assert_eq!(symmetries("URFDLB").order(), 48);
    assert_eq!(symmetries("URF").order(), 6);
    assert_eq!(symmetries("UR").order(), 4);
}

/// Distance of every state from solved, by breadth-first search over the
/// moves as `Puzzle::apply` makes them.
fn distances(p: &Puzzle) -> HashMap<Vec<u8>, u32> {
    let mut depth = HashMap::from([(p.solved.clone(), 0u32)]);
    let mut frontier = vec![p.solved.clone()];
    let mut d = 0;
    while !frontier.is_empty() {
        d += 1;
        let mut next = Vec::new();
        for state in &frontier {
            for m in &p.moves {
                let moved = p.apply(m, state).expect("unguarded");
                if !depth.contains_key(&moved) {
                    depth.insert(moved.clone(), d);
                    next.push(moved);
                }
            }
        }
        frontier = next;
    }
    depth
}

#[test]
fn every_symmetry_keeps_every_distance() {
    let p = corners("UR");
    let found = find_oriented_symmetries(&p).unwrap();
    let depth = distances(&p);
    // The two-generator group of the 2×2×2 cube has 29,160 elements
    // (5! arrangements of the six corners U and R move, with the twists of
    // five of them: 120 · 3⁵), so the search saw every state.
    assert_eq!(depth.len() as u64, 29_160, "|<U, R>| on the 2×2×2 cube");
    assert!(found.elements[0].slots.is_identity(), "the identity comes first");
    for k in 0..found.order() {
        assert_eq!(found.conjugate(k, &p.solved), p.solved, "symmetry {k} keeps solved");
        for (state, &d) in &depth {
            let image = found.conjugate(k, state);
            assert_eq!(depth.get(&image), Some(&d), "symmetry {k} on {state:?}");
        }
    }
    // A mirror image turns twists the other way: some element has unit 2.
    assert!(found.elements.iter().any(|e| e.unit.contains(&2)));
}

#[test]
fn conjugates_of_distinct_symmetries_differ() {
    let p = corners("URF");
    let found = find_oriented_symmetries(&p).unwrap();
    let one_move: Vec<Vec<u8>> = p.moves.iter().map(|m| p.apply(m, &p.solved).unwrap()).collect();
    let mut images: Vec<Vec<Vec<u8>>> = (0..found.order())
        .map(|k| one_move.iter().map(|s| found.conjugate(k, s)).collect())
        .collect();
    images.sort();
    images.dedup();
    assert_eq!(images.len(), found.order(), "two symmetries act alike on the moves");
}

#[test]
fn puzzles_without_oriented_distinct_pieces_are_not_searched() {
    let p = parse_puzzle("loopover:2x3", Metric::Mtm).unwrap();
    assert!(find_oriented_symmetries(&p).unwrap_err().contains("no oriented pieces"));
}
