//! The Varikon box 2×2×2 (tests/data/published.md): seven cubies and one empty cell in a
//! 2×2×2 box; a move slides the cubie next to the empty cell into it.

use super::sliding::{blank_puzzle, Slide};
use super::{Metric, Puzzle};

/// Move names by axis: cell `x + 2y + 4z` has exactly one neighbour along
/// each axis, the cell whose index differs in that axis's bit.
const AXES: [(usize, &str); 3] = [(1, "X"), (2, "Y"), (4, "Z")];

/// Builds the Varikon box.
///
/// Slots are the cells `x + 2y + 4z` (`x, y, z ∈ {0, 1}`). Solved: cubies
/// `1..=7` in cells `0..=6` and the empty cell at `(1, 1, 1)`, the last
/// cell, as in the sliding puzzles. `X`, `Y` and `Z` swap the empty cell
/// with its neighbour along that axis; each is legal everywhere, so a word is
/// replayable from any state. D'Eon and Nehaniv, "Algebraic Structure of the Varikon Box" (tests/data/published.md): `8!/2 = 20,160` reachable states
/// (the cube's cell graph is bipartite, so parity halves them).
pub fn varikon(metric: Metric) -> Puzzle {
    let slides: Vec<Slide> = (0..8)
        .flat_map(|blank| {
            AXES.iter().map(move |&(bit, name)| Slide {
                blank,
                tile: blank ^ bit,
                name,
            })
        })
        .collect();
    let mut puzzle = blank_puzzle("varikon".to_string(), 8, &slides, metric);
    // Exchanging two axes keeps the empty cell's home (1,1,1) and maps
    // slides to slides: the box's symmetries that fix that corner.
    let swap_bits = |a: usize, b: usize| {
        let images = (0..8usize)
            .map(|cell| {
                let (x, y) = ((cell >> a) & 1, (cell >> b) & 1);
                (cell & !(1 << a) & !(1 << b) | y << a | x << b) as u8
            })
            .collect();
        crate::puzzle::perm::Perm::from_images(images).expect("an axis exchange is a permutation")
    };
    puzzle.symmetries = vec![
        ("swap-x-y".to_string(), swap_bits(0, 1)),
        ("swap-y-z".to_string(), swap_bits(1, 2)),
    ];
    puzzle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_legal_moves_everywhere() {
        let p = varikon(Metric::Mtm);
        assert_eq!(p.moves.len(), 24);
        assert!(p.is_undirected());
        assert_eq!(p.reachable_states, Some(20_160));
        assert_eq!(super::super::sliding::legal_from_solved(&p), ["X", "Y", "Z"]);
        assert_eq!(p.render(&p.solved), "1 2 3 4 5 6 7 .");
    }
}
