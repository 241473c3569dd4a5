//! twsearch / ksolve puzzle definitions (`tws:FILE`, with options after the
//! file name, see [`options`]).
//!
//! [`parse`] reads the file, [`moves`] turns its moves and move sequences
//! into permutations of `(position, orientation)` points. Definitions
//! without orientation or identical pieces become plain permutation
//! puzzles; the others become coded puzzles (one slot per position, moves
//! with twists, one class per distinct piece number of the Solved block,
//! `?` orientations as classes whose twist is ignored), ranked by
//! the space's codec. Definitions of more than 256 points cannot be built as
//! puzzles, but [`tws_point_group`] still gives their group for `cayley
//! info`.
//!
//! Metric: `mtm` (default, as in twsearch) makes every power of a move one
//! move (`U`, `U2`, `U'`); `stm` keeps each move and its inverse.
//!
//! `Symmetry` blocks declare symmetries to reduce by, checked against the
//! moves searched ([`symmetries`]).

mod moves;
mod options;
mod parse;
mod symmetries;

pub use options::{split_tws_args, TwsOptions};

use super::spec_text::read_spec_file;
use super::{Coding, Metric, Move, Puzzle, SpecError};
use crate::puzzle::perm::{Perm, MAX_POINTS};
use parse::{parse, Definition, SetDef};

/// A `.tws` definition's group: its generators on `(position, orientation)`
/// points, each position's points one piece.
pub struct PointGroup {
    pub degree: usize,
    /// Generator names and point permutations.
    pub generators: Vec<(String, Vec<u16>)>,
    /// Points of each piece (the set's orientations), in point order.
    pub piece_len: Vec<u16>,
    /// Moves named as rotations, which are not generators (see `moves`).
    pub rotations: Vec<String>,
}

/// Reads `args` (the file, then options) unless `text` is given, and
/// builds the puzzle; `spec` is what the user typed.
pub fn tws_puzzle(spec: &str, args: &str, metric: Metric, text: Option<&str>) -> Result<Puzzle, SpecError> {
    let (path, options) = split_tws_args(spec, args)?;
    let text = match text {
        Some(t) => t.to_string(),
        None => read_spec_file(spec, &path)?,
    };
    from_text(spec, &path, &text, metric, &options)
}

/// The group of a `.tws` spec, at any number of points.
pub fn tws_point_group(spec: &str, args: &str, metric: Metric) -> Result<PointGroup, SpecError> {
    let (path, options) = split_tws_args(spec, args)?;
    let text = read_spec_file(spec, &path)?;
    let def = parse(&path, &text, &options)?;
    Ok(PointGroup {
        degree: def.sets.iter().map(|s| s.pieces * s.orientations).sum(),
        generators: moves::generators(&path, &def, metric, options.moves.as_deref(), options.omits_any())?,
        piece_len: piece_lengths(&def.sets),
        rotations: def
            .moves
            .iter()
            .map(|m| &m.name)
            .chain(def.sequences.iter().map(|s| &s.name))
            .filter(|n| moves::is_rotation(n))
            .cloned()
            .collect(),
    })
}

/// The file name in a `tws:` argument (options stripped).
pub fn tws_file(args: &str) -> &str {
    args.split(" --").next().unwrap_or("").trim()
}

/// Builds the puzzle from the text of file `path`.
fn from_text(spec: &str, path: &str, text: &str, metric: Metric, options: &TwsOptions) -> Result<Puzzle, SpecError> {
    let def = parse(path, text, options)?;
    let degree: usize = def.sets.iter().map(|s| s.pieces * s.orientations).sum();
    if degree > MAX_POINTS {
        return Err(SpecError::TooManyPoints {
            spec: spec.to_string(),
            points: degree,
            max: MAX_POINTS,
        });
    }
    let gens = moves::generators(path, &def, metric, options.moves.as_deref(), options.omits_any())?;
    let moves: Vec<Move> = gens
        .into_iter()
        .map(|(name, images)| {
            let perm = Perm::from_images(images.into_iter().map(|x| x as u8).collect()).expect("moves permute points");
            Move::unguarded(name, perm)
        })
        .collect();
    if moves.is_empty() {
        return Err(SpecError::BadFile {
            path: path.to_string(),
            line: None,
            why: "no move is left (every move was left out or changes nothing)".into(),
        });
    }
    let identical = def.solved.iter().any(|pos| !is_permutation(&pos.perm));
    let oriented = def.sets.iter().any(|s| s.orientations > 1);
    let mut puzzle = if identical || oriented {
        coded_puzzle(spec, path, metric, &def, moves)?
    } else {
        let mut puzzle = Puzzle::permutation(spec, metric, moves, point_labels(&def.sets));
        puzzle.solved = solved_slots(&def);
        puzzle
    };
    // Checked on the puzzle as built: its moves are those searched.
    puzzle.symmetries = symmetries::declared(path, &def, &puzzle, options)?;
    Ok(puzzle)
}

/// A definition with identical or oriented pieces as a coded puzzle: one
/// slot per position, moves as slot permutations with twists, one class
/// per distinct (set, piece number) of the Solved block, wild when its
/// orientation there is `?`.
fn coded_puzzle(
    spec: &str,
    path: &str,
    metric: Metric,
    def: &Definition,
    point_moves: Vec<Move>,
) -> Result<Puzzle, SpecError> {
    let slots: usize = def.sets.iter().map(|s| s.pieces).sum();
    // (first point, orientations) of every slot, in point order.
    let slot_points: Vec<(usize, usize)> = def
        .sets
        .iter()
        .scan(0usize, |point, set| {
            let first = *point;
            *point += set.pieces * set.orientations;
            Some((0..set.pieces).map(move |j| (first + j * set.orientations, set.orientations)))
        })
        .flatten()
        .collect();
    let slot_of_point = |point: usize| {
        slot_points
            .iter()
            .rposition(|&(first, _)| first <= point)
            .expect("point 0 starts slot 0")
    };
    let moves = point_moves
        .into_iter()
        .map(|m| {
            let mut perm = vec![0u8; slots];
            let mut twist = vec![0u8; slots];
            for (s, &(first, _)) in slot_points.iter().enumerate() {
                let image = m.perm[first] as usize;
                let to = slot_of_point(image);
                perm[s] = to as u8;
                twist[s] = (image - slot_points[to].0) as u8;
            }
            Move {
                name: m.name,
                perm: Perm::from_images(perm).expect("moves permute positions"),
                guard: None,
                twist,
            }
        })
        .collect();
    let single = def.sets.len() == 1;
    let mut class_labels: Vec<String> = Vec::new();
    let mut class_keys: Vec<(usize, usize)> = Vec::new();
    let mut wild: Vec<bool> = Vec::new();
    let mut solved = vec![0u8; 2 * slots];
    let mut slot = 0;
    for (i, (set, pos)) in def.sets.iter().zip(&def.solved).enumerate() {
        for (j, &piece) in pos.perm.iter().enumerate() {
            // An orientation is only ignored where there is one.
            let is_wild = pos.ori[j].is_none() && set.orientations > 1;
            let class = match class_keys.iter().position(|&k| k == (i, piece)) {
                Some(c) if wild[c] != is_wild => {
                    return Err(SpecError::BadFile {
                        path: path.to_string(),
                        line: Some(pos.line),
                        why: format!(
                            "set {}: identical pieces {} must all have '?' orientation or none",
                            set.name,
                            piece + 1
                        ),
                    })
                }
                Some(c) => c,
                None => {
                    class_keys.push((i, piece));
                    let set_name = if single { "" } else { set.name.as_str() };
                    class_labels.push(format!("{}{}", set_name, piece + 1));
                    wild.push(is_wild);
                    class_keys.len() - 1
                }
            };
            solved[slot] = class as u8;
            solved[slots + slot] = pos.twist(j) as u8;
            slot += 1;
        }
    }
    Ok(Puzzle {
        spec: spec.to_string(),
        metric,
        slots,
        moves,
        grid: None,
        labels: class_labels.clone(),
        solved,
        reachable_states: None,
        coding: Some(Coding {
            class_labels,
            modulus: slot_points.iter().map(|&(_, k)| k as u8).collect(),
            wild: if wild.contains(&true) { wild } else { Vec::new() },
        }),
        symmetries: Vec::new(),
    })
}

/// Points of each piece, in point order.
fn piece_lengths(sets: &[SetDef]) -> Vec<u16> {
    sets.iter()
        .flat_map(|s| std::iter::repeat_n(s.orientations as u16, s.pieces))
        .collect()
}

/// Solved state of a definition without orientation or identical pieces, in
/// position notation over all sets (`solved[piece] = slot`).
fn solved_slots(def: &Definition) -> Vec<u8> {
    let degree: usize = def.sets.iter().map(|s| s.pieces).sum();
    let mut solved = vec![0u8; degree];
    let mut offset = 0;
    for (set, pos) in def.sets.iter().zip(&def.solved) {
        for (slot, &piece) in pos.perm.iter().enumerate() {
            solved[offset + piece] = (offset + slot) as u8;
        }
        offset += set.pieces;
    }
    solved
}

/// `3` for a single plain set, else `CORNERS3`, with `:o` per orientation.
fn point_labels(sets: &[SetDef]) -> Vec<String> {
    let single = sets.len() == 1;
    sets.iter()
        .flat_map(|s| {
            (1..=s.pieces).flat_map(move |p| {
                (0..s.orientations).map(move |o| {
                    let set = if single { "" } else { s.name.as_str() };
                    if s.orientations == 1 {
                        format!("{}{}", set, p)
                    } else {
                        format!("{}{}:{}", set, p, o)
                    }
                })
            })
        })
        .collect()
}

fn is_permutation(values: &[usize]) -> bool {
    let mut seen = vec![false; values.len()];
    values
        .iter()
        .all(|&v| v < values.len() && !std::mem::replace(&mut seen[v], true))
}

#[cfg(test)]
mod tests;
