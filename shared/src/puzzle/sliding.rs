//! Sliding puzzles (the 15-puzzle family, tests/data/published.md): tiles on a board with
//! one empty cell; a move slides a tile next to the blank into it.
//!
//! The blank is piece 0, so it is the one guarded piece the engine ranks
//! first: a slide is the transposition of the blank's cell and a neighbour,
//! legal only while the blank is in that cell. [`blank_puzzle`] builds any
//! such puzzle from its list of slides (the Varikon box uses it too).

use super::{Guard, Metric, Move, Puzzle};
use crate::puzzle::perm::Perm;

/// One slide: the tile in `tile` moves into the blank at `blank`.
pub(super) struct Slide {
    pub blank: usize,
    pub tile: usize,
    /// Move name, the direction the tile travels.
    pub name: &'static str,
}

/// Builds the `rows × cols` sliding puzzle.
///
/// Slots are cells in reading order. Solved: tiles `1..R·C` in reading
/// order and the blank in the last cell. Moves are named by the direction
/// the *tile* travels (`U`, `D`, `L`, `R`; the blank goes the other way):
/// from any position at most one tile can move in each direction, so a
/// printed word such as `R D L` replays unambiguously from its state.
/// Reachable states: `(R·C)!/2` (tests/data/published.md: the permutation's parity always
/// equals the parity of the blank's taxicab distance from its solved cell).
pub fn sliding(rows: usize, cols: usize, metric: Metric) -> Puzzle {
    let n = rows * cols;
    let mut slides = Vec::new();
    for blank in 0..n {
        let (r, c) = (blank / cols, blank % cols);
        if r + 1 < rows {
            slides.push(Slide {
                blank,
                tile: blank + cols,
                name: "U",
            });
        }
        if r > 0 {
            slides.push(Slide {
                blank,
                tile: blank - cols,
                name: "D",
            });
        }
        if c + 1 < cols {
            slides.push(Slide {
                blank,
                tile: blank + 1,
                name: "L",
            });
        }
        if c > 0 {
            slides.push(Slide {
                blank,
                tile: blank - 1,
                name: "R",
            });
        }
    }
    let mut puzzle = blank_puzzle(format!("sliding:{}x{}", rows, cols), n, &slides, metric);
    puzzle.grid = Some((rows, cols));
    // The one board symmetry that keeps the blank's home cell (the last)
    // and maps slides to slides: the transpose of a square board.
    if rows == cols {
        let images = (0..n).map(|s| ((s % cols) * cols + s / cols) as u8).collect();
        let transpose = Perm::from_images(images).expect("the transpose is a permutation");
        puzzle.symmetries = vec![("transpose".to_string(), transpose)];
    }
    puzzle
}

/// A puzzle of `slots` cells, one of them empty, moved by `slides`.
///
/// Piece 0 is the blank (label `.`), pieces `1..slots` are tiles labelled by
/// number. Solved: tile `t` in cell `t − 1`, the blank in the last cell. The
/// cell graph must be connected and bipartite with a parity argument giving
/// exactly half of all arrangements (true of grids and of the Varikon cube);
/// the engine checks the total on every complete run.
pub(super) fn blank_puzzle(spec: String, slots: usize, slides: &[Slide], metric: Metric) -> Puzzle {
    let moves = slides
        .iter()
        .map(|s| {
            let mut images: Vec<u8> = (0..slots as u8).collect();
            images.swap(s.blank, s.tile);
            Move {
                name: s.name.to_string(),
                perm: Perm::from_images(images).expect("a transposition is a permutation"),
                guard: Some(Guard {
                    piece: 0,
                    slot: s.blank,
                }),
                twist: Vec::new(),
            }
        })
        .collect();
    let mut solved = vec![(slots - 1) as u8];
    solved.extend(0..(slots - 1) as u8);
    let mut labels = vec![".".to_string()];
    labels.extend((1..slots).map(|t| t.to_string()));
    Puzzle {
        spec,
        metric,
        slots,
        moves,
        grid: None,
        labels,
        solved,
        reachable_states: Some((1..=slots as u128).product::<u128>() / 2),
        coding: None,
        symmetries: Vec::new(),
    }
}

/// Names of the moves legal in the solved state.
#[cfg(test)]
pub(super) fn legal_from_solved(p: &Puzzle) -> Vec<&str> {
    p.moves
        .iter()
        .filter(|m| p.apply(m, &p.solved).is_some())
        .map(|m| m.name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_puzzle_shape() {
        let p = sliding(4, 4, Metric::Mtm);
        // Each of the 24 adjacent cell pairs gives one slide per end.
        assert_eq!(p.moves.len(), 2 * 24);
        assert!(p.is_undirected());
        assert_eq!(p.guarded_pieces(), vec![0]);
        assert_eq!(p.solved[0], 15);
        assert_eq!(p.solved[1], 0);
        assert_eq!(p.reachable_states, Some(crate::space::rank::factorial(16) / 2));
        // Four moves a player sees, behind 48 guarded generators.
        assert_eq!(p.moves_text(), "4 moves (D L R U) as 48 guarded generators");
        assert_eq!(p.render(&p.solved).lines().last(), Some("13 14 15  ."));
    }

    #[test]
    fn a_word_replays_by_tile_direction() {
        // From solved (blank bottom right) the tiles left of and above the
        // blank can move: R and D only.
        let p = sliding(3, 3, Metric::Mtm);
        assert_eq!(legal_from_solved(&p), ["D", "R"]);
        let r = p
            .moves
            .iter()
            .find(|m| m.name == "R" && p.apply(m, &p.solved).is_some());
        let after = p.apply(r.unwrap(), &p.solved).unwrap();
        assert_eq!(p.render(&after), "1 2 3\n4 5 6\n7 . 8");
    }
}
