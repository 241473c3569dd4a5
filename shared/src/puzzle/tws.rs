//! twsearch / ksolve puzzle definitions (`tws:FILE`).
//!
//! Supported: `Name`, `Set NAME PIECES ORIENTATIONS`, one `Solved … End`
//! block and `Move NAME … End` blocks; `#` starts a comment. Inside a block
//! each set name line is followed by its permutation line (1-based) and
//! optionally an orientation line; a set left out of a move is unchanged. As
//! in twsearch, a move's permutation line says, for each position, which
//! position's content comes to it, and its orientation line says, for each
//! position, the twist added to the piece that *leaves* it.
//!
//! Every move becomes a permutation of points `(position, orientation)`,
//! `PIECES · ORIENTATIONS` points per set. That action is faithful, so the
//! group's order on those points is exactly the number of positions when the
//! pieces are distinct (no division needed: the solved state's stabiliser is
//! trivial). Definitions without orientation or identical pieces become
//! plain permutation puzzles; the others become coded puzzles (one slot per
//! position, moves with twists, one class per distinct piece number of the
//! Solved block), ranked by [`crate::codec`].
//!
//! Metric: `mtm` (default, as in twsearch) makes every power of a move one
//! move (`U`, `U2`, `U'`); `stm` keeps each move and its inverse.

use super::perm_file::read_spec_file;
use super::{Coding, Metric, Move, Puzzle, SpecError};
use crate::perm::Perm;

/// Points are stored as bytes.
const MAX_POINTS: usize = 256;

/// Most powers one move may have in `mtm`, where each is a move: a move of
/// a few lines can have order 10^15, whose powers would never fit memory.
const MAX_POWERS: u128 = 1024;

/// A `Set` line.
struct SetDef {
    name: String,
    pieces: usize,
    orientations: usize,
}

/// One set's part of a position: `perm[j]` = the 0-based piece in position
/// `j` (in a move: the position whose content comes to `j`) and the
/// orientation line.
#[derive(Clone)]
struct SetPos {
    perm: Vec<usize>,
    ori: Vec<usize>,
}

/// A `Move` block.
struct BaseMove {
    name: String,
    line: usize,
    sets: Vec<SetPos>,
}

/// A parsed file.
struct Definition {
    sets: Vec<SetDef>,
    solved: Vec<SetPos>,
    moves: Vec<BaseMove>,
}

/// Non-empty lines as (line number, tokens), comments removed.
type Lines<'a> = [(usize, Vec<&'a str>)];

/// Reads `path` (unless its `text` is given) and builds the puzzle; `spec`
/// is what the user typed.
pub fn tws_puzzle(spec: &str, path: &str, metric: Metric, text: Option<&str>) -> Result<Puzzle, SpecError> {
    match text {
        Some(t) => from_text(spec, path, t, metric),
        None => from_text(spec, path, &read_spec_file(spec, path)?, metric),
    }
}

/// Builds the puzzle from the text of file `path`.
fn from_text(spec: &str, path: &str, text: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    let def = parse(path, text)?;
    let bad = |line: Option<usize>, why: String| SpecError::BadFile {
        path: path.to_string(),
        line,
        why,
    };
    let degree: usize = def.sets.iter().map(|s| s.pieces * s.orientations).sum();
    if degree > MAX_POINTS {
        return Err(bad(
            None,
            format!(
                "{} points (pieces × orientations); at most {} are supported",
                degree, MAX_POINTS
            ),
        ));
    }
    let mut moves: Vec<Move> = Vec::new();
    for base in &def.moves {
        let g = point_perm(&def.sets, &base.sets);
        if g.is_identity() {
            return Err(bad(Some(base.line), format!("move {} changes nothing", base.name)));
        }
        if metric == Metric::Mtm && g.order() > MAX_POWERS {
            return Err(bad(
                Some(base.line),
                format!(
                    "move {} has order {}: in mtm each of its powers is a move, at most {} are supported (use --metric stm)",
                    base.name,
                    g.order(),
                    MAX_POWERS
                ),
            ));
        }
        for (name, perm) in metric_moves(&base.name, &g, metric) {
            if moves.iter().any(|m| m.perm == perm) {
                continue;
            }
            // A power's name (`U2`, `U'`) can be another base move's: two
            // moves of one name would make printed words ambiguous.
            if moves.iter().any(|m| m.name == name) {
                return Err(bad(
                    Some(base.line),
                    format!(
                        "the name {} (move {} or one of its powers) is already another move's; rename one of them",
                        name, base.name
                    ),
                ));
            }
            moves.push(Move::unguarded(name, perm));
        }
    }
    let identical = def.solved.iter().any(|pos| !is_permutation(&pos.perm));
    let oriented = def.sets.iter().any(|s| s.orientations > 1);
    if identical || oriented {
        return Ok(coded_puzzle(spec, metric, &def, moves));
    }
    let mut puzzle = Puzzle::permutation(spec, metric, moves, point_labels(&def.sets));
    puzzle.solved = solved_slots(&def);
    Ok(puzzle)
}

/// A definition with identical or oriented pieces as a coded puzzle: one
/// slot per position, moves as slot permutations with twists, and one class
/// per distinct (set, piece number) of the Solved block.
fn coded_puzzle(spec: &str, metric: Metric, def: &Definition, point_moves: Vec<Move>) -> Puzzle {
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
    let mut solved = vec![0u8; 2 * slots];
    let mut slot = 0;
    for (i, (set, pos)) in def.sets.iter().zip(&def.solved).enumerate() {
        for (&piece, &ori) in pos.perm.iter().zip(&pos.ori) {
            let class = class_keys.iter().position(|&k| k == (i, piece)).unwrap_or_else(|| {
                class_keys.push((i, piece));
                let set_name = if single { "" } else { set.name.as_str() };
                class_labels.push(format!("{}{}", set_name, piece + 1));
                class_keys.len() - 1
            });
            solved[slot] = class as u8;
            solved[slots + slot] = ori as u8;
            slot += 1;
        }
    }
    Puzzle {
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
        }),
        symmetries: Vec::new(),
    }
}

/// A base move's moves under `metric`, named as twsearch names powers: in
/// `mtm` every power (the caller bounds the order), in `stm` the move and
/// its inverse, found without walking through the powers between.
fn metric_moves(name: &str, g: &Perm, metric: Metric) -> Vec<(String, Perm)> {
    let order = g.order();
    // Power k is written the short way round: U2, or U' for U^(order-1).
    let name_of = |k: u128| {
        let (amount, prime) = if order - k < k { (order - k, "'") } else { (k, "") };
        let amount = if amount == 1 { String::new() } else { amount.to_string() };
        format!("{}{}{}", name, amount, prime)
    };
    match metric {
        Metric::Mtm => {
            let mut power = g.clone();
            let mut moves = Vec::new();
            for k in 1..order {
                let next = g.after(&power);
                moves.push((name_of(k), std::mem::replace(&mut power, next)));
            }
            moves
        }
        // An involution is its own inverse.
        Metric::Stm if order == 2 => vec![(name_of(1), g.clone())],
        Metric::Stm => vec![(name_of(1), g.clone()), (name_of(order - 1), g.inverse())],
    }
}

/// The move as a permutation of `(position, orientation)` points.
fn point_perm(sets: &[SetDef], pos: &[SetPos]) -> Perm {
    let degree: usize = sets.iter().map(|s| s.pieces * s.orientations).sum();
    let mut images = vec![0u8; degree];
    let mut offset = 0;
    for (set, p) in sets.iter().zip(pos) {
        let k = set.orientations;
        for (to, &from) in p.perm.iter().enumerate() {
            for a in 0..k {
                images[offset + from * k + a] = (offset + to * k + (a + p.ori[from]) % k) as u8;
            }
        }
        offset += set.pieces * k;
    }
    Perm::from_images(images).expect("moves were checked to be permutations")
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

/// Parses the whole file.
fn parse(path: &str, text: &str) -> Result<Definition, SpecError> {
    let lines: Vec<(usize, Vec<&str>)> = text
        .lines()
        .enumerate()
        .map(|(i, raw)| (i + 1, raw.split('#').next().unwrap_or("").split_whitespace().collect()))
        .filter(|(_, toks): &(usize, Vec<&str>)| !toks.is_empty())
        .collect();
    let bad = |line: usize, why: String| SpecError::BadFile {
        path: path.to_string(),
        line: Some(line),
        why,
    };
    let mut sets: Vec<SetDef> = Vec::new();
    let mut solved: Option<Vec<SetPos>> = None;
    let mut moves: Vec<BaseMove> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line, toks) = (lines[i].0, &lines[i].1);
        i += 1;
        let arity = |n: usize, usage: &str| {
            if toks.len() == n {
                Ok(())
            } else {
                Err(bad(line, format!("expected '{}'", usage)))
            }
        };
        match toks[0] {
            "Name" => {
                arity(2, "Name NAME")?;
                if !sets.is_empty() {
                    return Err(bad(line, "Name must come before the sets".into()));
                }
            }
            "Set" => {
                arity(4, "Set NAME PIECES ORIENTATIONS")?;
                if solved.is_some() {
                    return Err(bad(line, "Set must come before Solved and the moves".into()));
                }
                if sets.iter().any(|s| s.name == toks[1]) {
                    return Err(bad(line, format!("set {} is declared twice", toks[1])));
                }
                let count = |t: &str, what: &str| match t.parse::<usize>() {
                    Ok(n) if (1..=MAX_POINTS).contains(&n) => Ok(n),
                    _ => Err(bad(
                        line,
                        format!("{} must be a number from 1 to {}, not '{}'", what, MAX_POINTS, t),
                    )),
                };
                sets.push(SetDef {
                    name: toks[1].to_string(),
                    pieces: count(toks[2], "the number of pieces")?,
                    orientations: count(toks[3], "the number of orientations")?,
                });
            }
            "Solved" => {
                arity(1, "Solved")?;
                if sets.is_empty() || solved.is_some() {
                    return Err(bad(line, "one Solved block must follow the Set lines".into()));
                }
                let (pos, next) = read_block(path, &lines, i, &sets, None)?;
                solved = Some(pos);
                i = next;
            }
            "Move" => {
                arity(2, "Move NAME")?;
                if solved.is_none() {
                    return Err(bad(line, "Move blocks must follow the Solved block".into()));
                }
                if let Some(m) = moves.iter().find(|m| m.name == toks[1]) {
                    return Err(bad(
                        line,
                        format!("move {} is already defined on line {}", toks[1], m.line),
                    ));
                }
                let (pos, next) = read_block(path, &lines, i, &sets, Some(toks[1]))?;
                moves.push(BaseMove {
                    name: toks[1].to_string(),
                    line,
                    sets: pos,
                });
                i = next;
            }
            "End" => return Err(bad(line, "End without an open Solved or Move block".into())),
            other => {
                return Err(bad(
                    line,
                    format!(
                        "unsupported keyword '{}' (this reader knows Name, Set, Solved, Move and End)",
                        other
                    ),
                ))
            }
        }
    }
    let missing = |why: &str| SpecError::BadFile {
        path: path.to_string(),
        line: None,
        why: why.to_string(),
    };
    let solved = solved.ok_or_else(|| missing("no Solved block (an empty file?)"))?;
    if moves.is_empty() {
        return Err(missing("no Move blocks"));
    }
    Ok(Definition { sets, solved, moves })
}

/// Reads a block body from `lines[start]` through its `End`; `move_name` is
/// `None` for `Solved`. Returns the position of every set and the index of
/// the line after `End`.
fn read_block(
    path: &str,
    lines: &Lines,
    start: usize,
    sets: &[SetDef],
    move_name: Option<&str>,
) -> Result<(Vec<SetPos>, usize), SpecError> {
    let bad = |line: usize, why: String| SpecError::BadFile {
        path: path.to_string(),
        line: Some(line),
        why,
    };
    let block = move_name.map_or("the Solved block".to_string(), |m| format!("move {}", m));
    let mut given: Vec<Option<SetPos>> = vec![None; sets.len()];
    // The set being read: its index, the line naming it, its number lines.
    let mut current: Option<(usize, usize, Vec<Vec<usize>>)> = None;
    let mut i = start;
    loop {
        let Some((line, toks)) = lines.get(i) else {
            let opened = lines[start - 1].0;
            return Err(bad(opened, format!("{} has no End", block)));
        };
        let (line, toks) = (*line, toks);
        i += 1;
        let is_end = toks[0] == "End";
        let is_numbers = toks[0].starts_with(|c: char| c.is_ascii_digit());
        if is_numbers {
            let Some((s, _, rows)) = current.as_mut() else {
                return Err(bad(line, format!("numbers before a set name in {}", block)));
            };
            let set = &sets[*s];
            if rows.len() == 2 {
                return Err(bad(
                    line,
                    format!("set {} takes at most two lines (permutation, orientations)", set.name),
                ));
            }
            if toks.len() != set.pieces {
                return Err(bad(
                    line,
                    format!(
                        "set {} has {} pieces but this line has {} numbers",
                        set.name,
                        set.pieces,
                        toks.len()
                    ),
                ));
            }
            let row = if rows.is_empty() {
                read_permutation(toks, set, move_name.is_some())
            } else {
                read_orientations(toks, set)
            };
            rows.push(row.map_err(|why| bad(line, format!("{}: {}", block, why)))?);
            continue;
        }
        if let Some((s, named, rows)) = current.take() {
            let mut rows = rows.into_iter();
            let perm = rows
                .next()
                .ok_or_else(|| bad(named, format!("set {} has no permutation line", sets[s].name)))?;
            let ori = rows.next().unwrap_or_else(|| vec![0; sets[s].pieces]);
            given[s] = Some(SetPos { perm, ori });
        }
        if is_end {
            if toks.len() != 1 {
                return Err(bad(line, "expected 'End' alone on its line".into()));
            }
            break;
        }
        if toks.len() != 1 {
            return Err(bad(
                line,
                format!(
                    "expected a set name, a line of numbers or End in {}, found '{}'",
                    block,
                    toks.join(" ")
                ),
            ));
        }
        let s = sets.iter().position(|s| s.name == toks[0]).ok_or_else(|| {
            let known: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
            bad(line, format!("unknown set '{}' (sets: {})", toks[0], known.join(", ")))
        })?;
        if given[s].is_some() {
            return Err(bad(line, format!("set {} appears twice in {}", toks[0], block)));
        }
        current = Some((s, line, Vec::new()));
    }
    let positions = given
        .into_iter()
        .zip(sets)
        .map(|(g, set)| {
            g.unwrap_or_else(|| SetPos {
                perm: (0..set.pieces).collect(),
                ori: vec![0; set.pieces],
            })
        })
        .collect();
    Ok((positions, i))
}

/// A permutation line, 0-based. Moves need a permutation; Solved may repeat
/// values (identical pieces) but must use each of `1..=m`.
fn read_permutation(toks: &[&str], set: &SetDef, is_move: bool) -> Result<Vec<usize>, String> {
    let values = read_numbers(toks, 1, set.pieces)?;
    let values: Vec<usize> = values.into_iter().map(|v| v - 1).collect();
    if is_move {
        if !is_permutation(&values) {
            let mut seen = vec![false; set.pieces];
            let twice = values.iter().find(|&&v| std::mem::replace(&mut seen[v], true));
            return Err(format!(
                "set {} is not a permutation: {} appears twice",
                set.name,
                twice.map_or(0, |v| v + 1)
            ));
        }
    } else {
        let top = values.iter().copied().max().unwrap_or(0);
        if let Some(gap) = (0..=top).find(|v| !values.contains(v)) {
            return Err(format!(
                "set {} skips piece {} (pieces must be numbered 1..m with none missing)",
                set.name,
                gap + 1
            ));
        }
    }
    Ok(values)
}

/// An orientation line: values below the set's number of orientations.
fn read_orientations(toks: &[&str], set: &SetDef) -> Result<Vec<usize>, String> {
    read_numbers(toks, 0, set.orientations - 1).map_err(|why| {
        format!(
            "orientations of set {} ({} of them): {}",
            set.name, set.orientations, why
        )
    })
}

fn read_numbers(toks: &[&str], low: usize, high: usize) -> Result<Vec<usize>, String> {
    toks.iter()
        .map(|t| match t.parse::<usize>() {
            Ok(v) if (low..=high).contains(&v) => Ok(v),
            Ok(v) => Err(format!("{} is out of range {}..={}", v, low, high)),
            Err(_) => Err(format!("'{}' is not a number", t)),
        })
        .collect()
}

#[cfg(test)]
mod tests;
