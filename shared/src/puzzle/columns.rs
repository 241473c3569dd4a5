//! Columns of a table with one entry per move that can lead to a state.
//!
//! A guarded move applies only while its piece sits in its slot, and so
//! leaves that piece in the slot's image: moves that leave one piece in
//! different slots never lead to the same state and can share an entry.
//! The 15-puzzle's 48 guarded slides fit 4 columns (the most that bring
//! the blank to one cell), which lets the reduced kernel keep every
//! shard's steps (one per move that leads into the shard) in 97 MB
//! instead of 1.16 GB.

use super::Puzzle;
use std::collections::BTreeMap;

/// Each move's column and the number of columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveColumns {
    /// The column of each move, in the puzzle's move order.
    pub of_move: Vec<usize>,
    /// Columns in all: the unguarded moves, then for each guarded piece the
    /// most moves that leave it in any one slot.
    pub width: usize,
}

impl MoveColumns {
    /// Whether some column holds more than one move.
    pub fn shared(&self) -> bool {
        self.width < self.of_move.len()
    }
}

impl Puzzle {
    /// Columns such that the moves that can lead to one state all have
    /// columns of their own: every unguarded move one, and the moves that
    /// leave a guarded piece in one slot numbered from their piece's first
    /// column, slot by slot.
    pub fn move_columns(&self) -> MoveColumns {
        let mut of_move = vec![0; self.moves.len()];
        let mut width = 0;
        // Per guarded piece, per slot it is left in: the moves.
        let mut guarded: BTreeMap<usize, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
        for (g, m) in self.moves.iter().enumerate() {
            match m.guard {
                None => {
                    of_move[g] = width;
                    width += 1;
                }
                Some(guard) => guarded
                    .entry(guard.piece)
                    .or_default()
                    .entry(m.perm[guard.slot] as usize)
                    .or_default()
                    .push(g),
            }
        }
        for slots in guarded.values() {
            for moves in slots.values() {
                for (i, &g) in moves.iter().enumerate() {
                    of_move[g] = width + i;
                }
            }
            width += slots.values().map(Vec::len).max().unwrap_or(0);
        }
        MoveColumns { of_move, width }
    }
}

#[cfg(test)]
mod tests {
    use crate::puzzle::{parse_puzzle, Metric};
    use crate::space::reduced::test_support::walk;

    /// The moves that lead to a state (each move's undoing, applied to the
    /// state, gives a state the move applies to and takes back: the
    /// puzzle's own `apply` says) have distinct columns, on states of
    /// random walks; unguarded puzzles keep a column per move.
    #[test]
    fn moves_that_lead_to_one_state_have_columns_of_their_own() {
        for (spec, width) in [
            ("sliding:4x4", 4),
            ("sliding:3x5", 4),
            ("varikon", 3),
            ("loopover:3x4", 3 * 3 + 4 * 2),
        ] {
            let p = parse_puzzle(spec, Metric::Mtm).unwrap();
            let columns = p.move_columns();
            assert_eq!(columns.width, width, "{}", spec);
            assert_eq!(columns.shared(), p.moves.iter().any(|m| m.guard.is_some()), "{}", spec);
            assert!(columns.of_move.iter().all(|&c| c < width), "{}", spec);
            for seed in 0..200 {
                let state = walk(&p, seed, seed as usize % 40);
                let mut used: Vec<usize> = (p.moves.iter().enumerate())
                    .filter(|(_, m)| {
                        let before = p.apply(&m.undoing(None), &state).expect("unguarded");
                        p.apply(m, &before).as_ref() == Some(&state)
                    })
                    .map(|(g, _)| columns.of_move[g])
                    .collect();
                let leading = used.len();
                assert!(leading > 0, "{}: no move leads to a state", spec);
                used.sort_unstable();
                used.dedup();
                assert_eq!(
                    used.len(),
                    leading,
                    "{}: two moves leading to a state share a column",
                    spec
                );
            }
        }
    }
}
