//! Helpers of the tests of the reduced space and of its kernel.

use super::ReducedSpace;
use crate::puzzle::{parse_puzzle, Metric, Puzzle};

/// The 3×3×3's squares group on its corner and edge permutations: five
/// orbits of the moves, two of the 48 symmetries (block domains).
pub const SQUARES: &str = concat!(
    "perm:",
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/data/puzzles/3x3x3-squares.perm"
);

/// The 3×3×3's corner and edge permutations (9.66·10¹² positions).
pub const PERMUTATIONS: &str = concat!(
    "perm:",
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/data/puzzles/3x3x3-permutations.perm"
);

/// The puzzle of `spec` and its reduced space.
pub fn space(spec: &str, metric: Metric) -> (Puzzle, ReducedSpace) {
    let p = parse_puzzle(spec, metric).unwrap();
    let r = ReducedSpace::plan(&p, p.all_moves_even())
        .unwrap_or_else(|e| panic!("{}: {}", spec, e))
        .unwrap_or_else(|| panic!("{}: no symmetries", spec));
    (p, r)
}

/// A state of the puzzle's group from a seed: a random walk of moves.
pub fn walk(p: &Puzzle, mut seed: u64, steps: usize) -> Vec<u8> {
    let mut state = p.solved.clone();
    for _ in 0..steps {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let m = &p.moves[(seed >> 33) as usize % p.moves.len()];
        if let Some(next) = p.apply(m, &state) {
            state = next;
        }
    }
    state
}
