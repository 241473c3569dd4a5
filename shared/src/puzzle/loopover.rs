//! Loopover R×C (the "two-dimensional magic cube"): every row and column is a
//! loop that can be shifted cyclically.

use super::{Metric, Move, Puzzle};
use crate::puzzle::perm::Perm;

/// Builds Loopover with `rows × cols` tiles under `metric`.
///
/// Slot `r*cols + c` is row `r`, column `c`. Row moves are named `R<r>` and
/// column moves `C<c>` (1-based) followed by the signed shift: `R1+1` moves
/// row 1 one cell right, `C2-1` moves column 2 one cell up. In MTM every
/// non-zero shift is one move, written with the smaller absolute amount.
pub fn loopover(rows: usize, cols: usize, metric: Metric) -> Puzzle {
    let n = rows * cols;
    let mut moves: Vec<Move> = Vec::new();
    let mut push = |name: String, images: Vec<u8>| {
        let perm = Perm::from_images(images).expect("a line shift is a permutation");
        // STM on a line of length 2 shifts the same way both directions.
        if !moves.iter().any(|m| m.perm == perm) {
            moves.push(Move::unguarded(name, perm));
        }
    };
    for r in 0..rows {
        for shift in shifts(cols, metric) {
            let images = (0..n)
                .map(|s| {
                    let (sr, sc) = (s / cols, s % cols);
                    let c = if sr == r { (sc + shift) % cols } else { sc };
                    (sr * cols + c) as u8
                })
                .collect();
            push(format!("R{}{}", r + 1, signed(shift, cols)), images);
        }
    }
    for c in 0..cols {
        for shift in shifts(rows, metric) {
            let images = (0..n)
                .map(|s| {
                    let (sr, sc) = (s / cols, s % cols);
                    let r = if sc == c { (sr + shift) % rows } else { sr };
                    (r * cols + sc) as u8
                })
                .collect();
            push(format!("C{}{}", c + 1, signed(shift, rows)), images);
        }
    }
    Puzzle {
        spec: format!("loopover:{}x{}", rows, cols),
        metric,
        slots: n,
        moves,
        grid: Some((rows, cols)),
        labels: (1..=n).map(|i| i.to_string()).collect(),
        solved: Perm::identity(n).images().to_vec(),
        reachable_states: None,
        coding: None,
        symmetries: board_symmetries(rows, cols),
    }
}

/// The board's symmetries: the two unit translations and the mirror images
/// (left–right, top–bottom), plus the transpose on square boards. They
/// generate `R·C` translations times 4 (8 on square boards) reflections;
/// on two rows the top–bottom mirror is also a translation.
fn board_symmetries(rows: usize, cols: usize) -> Vec<(String, Perm)> {
    let map = |f: &dyn Fn(usize, usize) -> (usize, usize)| {
        let images = (0..rows * cols)
            .map(|s| {
                let (r, c) = f(s / cols, s % cols);
                (r * cols + c) as u8
            })
            .collect();
        Perm::from_images(images).expect("a board symmetry is a permutation")
    };
    let mut out = vec![
        ("shift-right".to_string(), map(&|r, c| (r, (c + 1) % cols))),
        ("shift-down".to_string(), map(&|r, c| ((r + 1) % rows, c))),
        ("mirror-left-right".to_string(), map(&|r, c| (r, cols - 1 - c))),
        ("mirror-top-bottom".to_string(), map(&|r, c| (rows - 1 - r, c))),
    ];
    if rows == cols {
        out.push(("transpose".to_string(), map(&|r, c| (c, r))));
    }
    out
}

/// Shift amounts (in `1..len`) that count as one move.
fn shifts(len: usize, metric: Metric) -> Vec<usize> {
    match metric {
        Metric::Mtm => (1..len).collect(),
        Metric::Stm => vec![1, len - 1],
    }
}

/// `+k` for shifts up to half the line, `-k` for the rest.
fn signed(shift: usize, len: usize) -> String {
    if 2 * shift <= len {
        format!("+{}", shift)
    } else {
        format!("-{}", len - shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_counts_match_the_seed_formula() {
        for rows in 2..=5 {
            for cols in 2..=5 {
                let p = loopover(rows, cols, Metric::Mtm);
                assert_eq!(p.moves.len(), rows * (cols - 1) + cols * (rows - 1));
                assert!(p.is_undirected());
                assert_eq!(p.all_moves_even(), rows % 2 == 1 && cols % 2 == 1);
            }
        }
    }

    #[test]
    fn stm_has_two_shifts_per_line_except_length_two() {
        assert_eq!(loopover(3, 3, Metric::Stm).moves.len(), 12);
        assert_eq!(loopover(2, 3, Metric::Stm).moves.len(), 2 * 2 + 3);
        assert_eq!(loopover(2, 2, Metric::Stm).moves.len(), 4);
    }

    #[test]
    fn row_shift_moves_tiles_right() {
        let p = loopover(2, 3, Metric::Mtm);
        let r1 = p.moves.iter().find(|m| m.name == "R1+1").unwrap();
        assert_eq!(r1.perm.images(), &[1, 2, 0, 3, 4, 5]);
    }
}
