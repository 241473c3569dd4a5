//! Reading the text of a `.tws` file into a [`Definition`].
//!
//! Keywords: `Name`, `Set NAME PIECES ORIENTATIONS`, one `Solved … End`
//! block, `Move NAME … End` blocks, `MoveSequence NAME MOVE…` lines and
//! `Symmetry NAME … End` blocks (cayley's own: a symmetry to reduce by,
//! written like a move; see [`super::symmetries`]); `#` starts a comment.
//! Inside a block each set name line is followed by its permutation line
//! (1-based) and optionally an orientation line; a set left out is
//! unchanged (solved: in order). In the Solved block an
//! orientation may be `?`: that piece's orientation is ignored. Sets the
//! options omit are skipped wherever they appear. Anything else (twsearch's
//! `Illegal`, `MoveAlias`, `MoveTransformation`, `StartState`, …) is
//! refused by name with its line.

use super::options::TwsOptions;
use crate::puzzle::SpecError;

/// Orientations and pieces per set are at most this (twsearch's limits are
/// 255 pieces and 127 orientations).
pub(super) const MAX_PIECES: usize = 255;
pub(super) const MAX_ORIENTATIONS: usize = 127;

/// A `Set` line.
pub(super) struct SetDef {
    pub name: String,
    pub pieces: usize,
    pub orientations: usize,
}

/// One set's part of a block: `perm[j]` = the 0-based piece in position `j`
/// (in a move: the position whose content comes to `j`), the orientation
/// line (`None` = `?`, Solved only) and the line it was on.
#[derive(Clone)]
pub(super) struct SetPos {
    pub perm: Vec<usize>,
    pub ori: Vec<Option<usize>>,
    pub line: usize,
}

impl SetPos {
    /// The orientation of position `j`, `?` read as 0.
    pub fn twist(&self, j: usize) -> usize {
        self.ori[j].unwrap_or(0)
    }
}

/// A `Move` block, or a `Symmetry` block (same shape).
pub(super) struct BaseMove {
    pub name: String,
    pub line: usize,
    pub sets: Vec<SetPos>,
}

/// A `MoveSequence NAME MOVE…` line.
pub(super) struct Sequence {
    pub name: String,
    pub line: usize,
    pub words: Vec<String>,
}

/// A parsed file.
pub(super) struct Definition {
    pub sets: Vec<SetDef>,
    pub solved: Vec<SetPos>,
    pub moves: Vec<BaseMove>,
    pub sequences: Vec<Sequence>,
    /// `Symmetry` blocks, in file order.
    pub symmetries: Vec<BaseMove>,
}

/// Non-empty lines as (line number, tokens), comments removed.
type Lines<'a> = [(usize, Vec<&'a str>)];

/// A set being read in a block: its index among the kept sets (`None`
/// for an omitted set, whose lines are skipped), the line naming it, and
/// its number lines.
type OpenSet<'a> = (Option<usize>, usize, Vec<(usize, &'a Vec<&'a str>)>);

/// Parses the whole file, leaving out the sets `options` omit.
pub(super) fn parse(path: &str, text: &str, options: &TwsOptions) -> Result<Definition, SpecError> {
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
    let mut declared: Vec<String> = Vec::new();
    let mut solved: Option<Vec<SetPos>> = None;
    let mut moves: Vec<BaseMove> = Vec::new();
    let mut sequences: Vec<Sequence> = Vec::new();
    let mut symmetries: Vec<BaseMove> = Vec::new();
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
        // Moves, sequences and symmetries share one namespace, so that an
        // error naming one of them is never ambiguous.
        let taken = |name: &str| {
            let m = moves.iter().chain(&symmetries).map(|m| (&m.name, m.line));
            let s = sequences.iter().map(|s| (&s.name, s.line));
            m.chain(s).find(|(n, _)| *n == name).map(|(_, l)| l)
        };
        match toks[0] {
            "Name" => {
                arity(2, "Name NAME")?;
                if !declared.is_empty() {
                    return Err(bad(line, "Name must come before the sets".into()));
                }
            }
            "Set" => {
                arity(4, "Set NAME PIECES ORIENTATIONS")?;
                if solved.is_some() {
                    return Err(bad(line, "Set must come before Solved and the moves".into()));
                }
                if declared.iter().any(|s| s == toks[1]) {
                    return Err(bad(line, format!("set {} is declared twice", toks[1])));
                }
                declared.push(toks[1].to_string());
                let count = |t: &str, what: &str, max: usize| match t.parse::<usize>() {
                    Ok(n) if (1..=max).contains(&n) => Ok(n),
                    _ => Err(bad(
                        line,
                        format!("{} must be a number from 1 to {}, not '{}'", what, max, t),
                    )),
                };
                let set = SetDef {
                    name: toks[1].to_string(),
                    pieces: count(toks[2], "the number of pieces", MAX_PIECES)?,
                    orientations: count(toks[3], "the number of orientations", MAX_ORIENTATIONS)?,
                };
                if !options.omits(&set.name) {
                    sets.push(set);
                }
            }
            "Solved" => {
                arity(1, "Solved")?;
                if declared.is_empty() || solved.is_some() {
                    return Err(bad(line, "one Solved block must follow the Set lines".into()));
                }
                let (pos, next) = read_block(path, &lines, i, &sets, &declared, Block::Solved)?;
                solved = Some(pos);
                i = next;
            }
            "Move" | "MoveSequence" | "Symmetry" if solved.is_none() => {
                return Err(bad(line, format!("{} must follow the Solved block", toks[0])));
            }
            "Move" | "Symmetry" => {
                // A Symmetry block is read exactly like a Move block.
                let symmetry = toks[0] == "Symmetry";
                arity(2, if symmetry { "Symmetry NAME" } else { "Move NAME" })?;
                if let Some(first) = taken(toks[1]) {
                    let why = if symmetry {
                        format!("the name {} is already used on line {}", toks[1], first)
                    } else {
                        format!("move {} is already defined on line {}", toks[1], first)
                    };
                    return Err(bad(line, why));
                }
                let block = if symmetry {
                    Block::Symmetry(toks[1])
                } else {
                    Block::Move(toks[1])
                };
                let (pos, next) = read_block(path, &lines, i, &sets, &declared, block)?;
                let list = if symmetry { &mut symmetries } else { &mut moves };
                list.push(BaseMove {
                    name: toks[1].to_string(),
                    line,
                    sets: pos,
                });
                i = next;
            }
            "MoveSequence" => {
                if toks.len() < 3 {
                    return Err(bad(
                        line,
                        "expected 'MoveSequence NAME MOVE…' with at least one move".into(),
                    ));
                }
                if let Some(first) = taken(toks[1]) {
                    return Err(bad(
                        line,
                        format!("move {} is already defined on line {}", toks[1], first),
                    ));
                }
                sequences.push(Sequence {
                    name: toks[1].to_string(),
                    line,
                    words: toks[2..].iter().map(|w| w.to_string()).collect(),
                });
            }
            "End" => return Err(bad(line, "End without an open Solved, Move or Symmetry block".into())),
            other => {
                let known = "Name, Set, Solved, Move, MoveSequence, Symmetry and End";
                let why = format!("'{}' is not supported (this reader knows {})", other, known);
                return Err(bad(line, why));
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
    if let Some(name) = options.omitted_names().find(|n| !declared.contains(n)) {
        return Err(missing(&format!("--omit {}: there is no set of that name", name)));
    }
    Ok(Definition {
        sets,
        solved,
        moves,
        sequences,
        symmetries,
    })
}

/// The kind of block being read, for its rules and its messages.
#[derive(Clone, Copy)]
enum Block<'a> {
    Solved,
    Move(&'a str),
    Symmetry(&'a str),
}

impl Block<'_> {
    /// How messages name the block.
    fn label(self) -> String {
        match self {
            Block::Solved => "the Solved block".to_string(),
            Block::Move(name) => format!("move {}", name),
            Block::Symmetry(name) => format!("symmetry {}", name),
        }
    }

    /// Moves and symmetries are permutations of positions without `?`;
    /// only Solved may repeat pieces or ignore orientations.
    fn is_permutation(self) -> bool {
        !matches!(self, Block::Solved)
    }
}

/// Reads a block body from `lines[start]` through its `End`. `declared` lists every set, omitted ones included.
/// Returns the position of every kept set and the index of the line after
/// `End`.
fn read_block(
    path: &str,
    lines: &Lines,
    start: usize,
    sets: &[SetDef],
    declared: &[String],
    kind: Block,
) -> Result<(Vec<SetPos>, usize), SpecError> {
    let bad = |line: usize, why: String| SpecError::BadFile {
        path: path.to_string(),
        line: Some(line),
        why,
    };
    let block = kind.label();
    let mut given: Vec<Option<SetPos>> = vec![None; sets.len()];
    let mut named: Vec<&str> = Vec::new();
    let mut current: Option<OpenSet> = None;
    let mut i = start;
    loop {
        let Some((line, toks)) = lines.get(i) else {
            let opened = lines[start - 1].0;
            return Err(bad(opened, format!("{} has no End", block)));
        };
        let line = *line;
        i += 1;
        let is_numbers = toks[0].starts_with(|c: char| c.is_ascii_digit() || c == '?');
        if is_numbers {
            let Some((_, _, rows)) = current.as_mut() else {
                return Err(bad(line, format!("numbers before a set name in {}", block)));
            };
            rows.push((line, toks));
            continue;
        }
        if let Some((Some(s), named_on, rows)) = current.take() {
            given[s] = Some(
                read_set(&sets[s], &rows, named_on, &block, kind.is_permutation()).map_err(|(l, why)| bad(l, why))?,
            );
        }
        if toks[0] == "End" {
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
        if !declared.iter().any(|d| d == toks[0]) {
            return Err(bad(
                line,
                format!("unknown set '{}' (sets: {})", toks[0], declared.join(", ")),
            ));
        }
        if named.contains(&toks[0]) {
            return Err(bad(line, format!("set {} appears twice in {}", toks[0], block)));
        }
        named.push(toks[0]);
        current = Some((sets.iter().position(|s| s.name == toks[0]), line, Vec::new()));
    }
    let positions = given
        .into_iter()
        .zip(sets)
        .map(|(g, set)| {
            g.unwrap_or_else(|| SetPos {
                perm: (0..set.pieces).collect(),
                ori: vec![Some(0); set.pieces],
                line: lines[start - 1].0,
            })
        })
        .collect();
    Ok((positions, i))
}

/// One set's lines of a block: a permutation line and an optional
/// orientation line. Errors carry their line.
fn read_set(
    set: &SetDef,
    rows: &[(usize, &Vec<&str>)],
    named_on: usize,
    block: &str,
    permutes: bool,
) -> Result<SetPos, (usize, String)> {
    match rows.len() {
        0 => return Err((named_on, format!("set {} has no permutation line", set.name))),
        1 | 2 => {}
        _ => {
            return Err((
                rows[2].0,
                format!("set {} takes at most two lines (permutation, orientations)", set.name),
            ))
        }
    }
    for &(line, toks) in rows {
        if toks.len() != set.pieces {
            let why = format!(
                "set {} has {} pieces but this line has {} numbers",
                set.name,
                set.pieces,
                toks.len()
            );
            return Err((line, why));
        }
    }
    let (perm_line, perm_toks) = rows[0];
    let perm = read_permutation(perm_toks, set, permutes).map_err(|why| (perm_line, format!("{}: {}", block, why)))?;
    let ori = match rows.get(1) {
        Some(&(line, toks)) => {
            read_orientations(toks, set, permutes).map_err(|why| (line, format!("{}: {}", block, why)))?
        }
        None => vec![Some(0); set.pieces],
    };
    let line = rows.get(1).map_or(perm_line, |r| r.0);
    Ok(SetPos { perm, ori, line })
}

/// A permutation line, 0-based. Moves and symmetries (`permutes`) need a
/// permutation; Solved may repeat values (identical pieces) but must use
/// each of `1..=m`.
fn read_permutation(toks: &[&str], set: &SetDef, permutes: bool) -> Result<Vec<usize>, String> {
    if toks.contains(&"?") {
        return Err(format!("set {}: '?' is only allowed in orientation lines", set.name));
    }
    let values: Vec<usize> = read_numbers(toks, 1, set.pieces)?.into_iter().map(|v| v - 1).collect();
    let mut seen = vec![false; set.pieces];
    if permutes {
        if let Some(twice) = values.iter().find(|&&v| std::mem::replace(&mut seen[v], true)) {
            return Err(format!(
                "set {} is not a permutation: {} appears twice",
                set.name,
                twice + 1
            ));
        }
    } else {
        values.iter().for_each(|&v| seen[v] = true);
        let top = values.iter().copied().max().unwrap_or(0);
        if let Some(gap) = (0..=top).find(|&v| !seen[v]) {
            return Err(format!(
                "set {} skips piece {} (pieces must be numbered 1..m with none missing)",
                set.name,
                gap + 1
            ));
        }
    }
    Ok(values)
}

/// An orientation line: values below the set's number of orientations, or
/// `?` (Solved only) for a piece whose orientation does not matter.
fn read_orientations(toks: &[&str], set: &SetDef, permutes: bool) -> Result<Vec<Option<usize>>, String> {
    let why = |why: String| {
        format!(
            "orientations of set {} ({} of them): {}",
            set.name, set.orientations, why
        )
    };
    toks.iter()
        .map(|&t| match t {
            "?" if permutes => Err(why("'?' is only allowed in the Solved block".into())),
            "?" => Ok(None),
            _ => read_numbers(&[t], 0, set.orientations - 1)
                .map(|v| Some(v[0]))
                .map_err(why),
        })
        .collect()
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
