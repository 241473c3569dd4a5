//! Partial puzzles: `--track PIECES` keeps the listed pieces apart and makes
//! every other piece one class of identical pieces, so the search runs on
//! the coset space (for `loopover:4x4 --track 1-8`, the 16!/8! placements of
//! pieces 1 to 8).
//!
//! Pieces that a move's legality depends on (a sliding puzzle's blank) are
//! always tracked: without them the moves would not be defined.

use super::spec_text::TRACK_SEPARATOR;
use super::{Coding, Guard, Move, Puzzle, SpecError};

/// Label shown for a slot holding an untracked piece.
pub const UNTRACKED_LABEL: &str = "·";

/// Parses a list such as `1-8`, `1,2,5` or `A,B` into pieces, by label;
/// `A-B` ranges need numeric labels.
pub fn parse_track_list(puzzle: &Puzzle, list: &str) -> Result<Vec<usize>, SpecError> {
    let bad = |why: String| SpecError::BadArgument {
        spec: format!("{}{}{}", puzzle.spec, TRACK_SEPARATOR, list),
        why,
    };
    let piece_of = |label: &str| {
        puzzle.labels.iter().position(|l| l == label).ok_or_else(|| {
            bad(format!(
                "no piece is labelled '{}' (pieces: {})",
                label,
                puzzle.labels.join(" ")
            ))
        })
    };
    let mut pieces = Vec::new();
    for item in list.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(bad("empty item in the list of tracked pieces".into()));
        }
        match item.split_once('-').filter(|(a, b)| !a.is_empty() && !b.is_empty()) {
            Some((a, b)) => {
                let (from, to) = match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
                    (Ok(from), Ok(to)) if from <= to => (from, to),
                    _ => return Err(bad(format!("'{}' is not a range of piece numbers such as 1-8", item))),
                };
                for label in from..=to {
                    pieces.push(piece_of(&label.to_string())?);
                }
            }
            None => pieces.push(piece_of(item)?),
        }
    }
    pieces.sort_unstable();
    pieces.dedup();
    Ok(pieces)
}

impl Puzzle {
    /// The partial puzzle in which only `tracked` pieces (and guarded ones)
    /// are told apart; `list` is the text the user gave, kept in the spec.
    pub fn tracked(&self, tracked: &[usize], list: &str) -> Result<Puzzle, SpecError> {
        if self.coding.is_some() {
            return Err(SpecError::BadArgument {
                spec: self.spec.clone(),
                why: "--track applies to puzzles of distinct pieces; this one already has identical or oriented pieces (mark identical pieces in the Solved block instead)".into(),
            });
        }
        let guarded = self.guarded_pieces();
        let mut order = guarded.clone();
        order.extend(tracked.iter().filter(|p| !guarded.contains(p)));
        let mut partial = self.with_classes(&order);
        partial.spec = format!("{}{}{}", self.spec, TRACK_SEPARATOR, list);
        // The family's count is for all pieces; the job works out the
        // partial count (or searches to an empty level).
        partial.reachable_states = None;
        Ok(partial)
    }

    /// The same puzzle as a coded one of distinct pieces (every piece its
    /// own class), for the group ranking of a puzzle whose group is much
    /// smaller than the permutations the block layout ranks. The spec and
    /// the reachable count stay: the job rebuilds it from the spec.
    pub fn as_coded(&self) -> Puzzle {
        let order: Vec<usize> = (0..self.slots).collect();
        self.with_classes(&order)
    }

    /// The coded puzzle in which the pieces `order` are classes `0, 1, …`
    /// and every other piece is one more class.
    fn with_classes(&self, order: &[usize]) -> Puzzle {
        let mut class_of = vec![order.len() as u8; self.slots];
        for (class, &piece) in order.iter().enumerate() {
            class_of[piece] = class as u8;
        }
        let mut class_labels: Vec<String> = order.iter().map(|&p| self.labels[p].clone()).collect();
        if order.len() < self.slots {
            class_labels.push(UNTRACKED_LABEL.to_string());
        }
        let mut solved = vec![0u8; 2 * self.slots];
        for (piece, &slot) in self.solved.iter().enumerate() {
            solved[slot as usize] = class_of[piece];
        }
        let moves = self
            .moves
            .iter()
            .map(|m| Move {
                name: m.name.clone(),
                perm: m.perm.clone(),
                guard: m.guard.map(|g| Guard {
                    piece: class_of[g.piece] as usize,
                    slot: g.slot,
                }),
                twist: Vec::new(),
            })
            .collect();
        Puzzle {
            spec: self.spec.clone(),
            metric: self.metric,
            slots: self.slots,
            moves,
            grid: self.grid,
            labels: self.labels.clone(),
            solved,
            reachable_states: self.reachable_states,
            coding: Some(Coding {
                class_labels,
                modulus: vec![1; self.slots],
                wild: Vec::new(),
            }),
            // Symmetry reduction needs distinct pieces.
            symmetries: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::{parse_puzzle, split_track, Metric};

    #[test]
    fn lists_and_ranges_name_pieces_by_label() {
        let p = parse_puzzle("loopover:3x3", Metric::Mtm).unwrap();
        assert_eq!(parse_track_list(&p, "1-3").unwrap(), vec![0, 1, 2]);
        assert_eq!(parse_track_list(&p, "9, 2,2").unwrap(), vec![1, 8]);
        for bad in ["0-3", "3-1", "x", "1,,2", "1-"] {
            assert!(parse_track_list(&p, bad).is_err(), "{}", bad);
        }
        let err = parse_track_list(&p, "10").unwrap_err().to_string();
        assert!(err.contains("no piece is labelled '10'"), "{}", err);
    }

    #[test]
    fn untracked_pieces_become_one_class() {
        let p = parse_puzzle("loopover:2x3", Metric::Mtm).unwrap();
        let t = p.tracked(&[0, 4], "1,5").unwrap();
        assert_eq!(split_track(&t.spec), ("loopover:2x3", Some("1,5")));
        assert_eq!(&t.solved[..6], &[0, 2, 2, 2, 1, 2]);
        let coding = t.coding.as_ref().unwrap();
        assert_eq!(coding.class_labels, vec!["1", "5", UNTRACKED_LABEL]);
        assert!(t.tracked(&[0], "1").is_err());
    }

    #[test]
    fn the_blank_of_a_sliding_puzzle_is_always_tracked() {
        let p = parse_puzzle("sliding:2x3", Metric::Mtm).unwrap();
        let t = p.tracked(&[1], "1").unwrap();
        let coding = t.coding.as_ref().unwrap();
        assert_eq!(coding.class_labels.len(), 3);
        assert!(t.moves.iter().all(|m| m.guard.is_some_and(|g| g.piece == 0)));
    }
}
