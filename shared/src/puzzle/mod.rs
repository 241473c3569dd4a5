//! The puzzle model: slots, pieces, a solved arrangement, moves and a metric.
//!
//! A puzzle has `n` slots holding `n` distinct pieces; when solved, piece `i`
//! sits in slot `i`. A move is a permutation of slots, optionally guarded by a
//! [`Guard`] (the move is legal only while a given piece sits in a given slot).
//! Guards are how sliding puzzles fit the same model: the blank is a piece, a
//! slide is a transposition legal only when the blank is at one end of it, and
//! guarded pieces are put first in the ranking so every block of states shares
//! the guard's truth value (see `layout`).

mod columns;
pub mod group;
mod loopover;
pub mod perm;
mod perm_file;
mod sliding;
mod sn_families;
mod spec;
mod spec_text;
pub mod symmetry;
mod track;
mod turnstyle;
mod tws;
mod varikon;

pub use columns::MoveColumns;
pub use spec::{check_metric_applies, known_families, parse_puzzle, parse_puzzle_with_file, spec_file_text};
pub use spec_text::{
    job_spec, job_spec_with, split_options, split_track, strip_no_symmetry, SpecError, DIRECTED_FLAG, NO_SYMMETRY_FLAG,
    TRACK_SEPARATOR,
};
pub use track::UNTRACKED_LABEL;
pub use tws::{split_tws_args, tws_file, tws_point_group, PointGroup, TwsOptions};

use crate::puzzle::perm::Perm;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How moves are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Multi-tile metric: shifting one line by any amount is one move (the
    /// "manipulation" of the Loopover source in tests/data/published.md).
    #[default]
    Mtm,
    /// Single-tile metric: shifting one line by one cell either way is one move.
    Stm,
}

impl Metric {
    /// Lower-case name used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mtm => "mtm",
            Metric::Stm => "stm",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        match s.to_ascii_lowercase().as_str() {
            "mtm" => Ok(Metric::Mtm),
            "stm" => Ok(Metric::Stm),
            other => Err(format!("unknown metric '{}' (known: mtm, stm)", other)),
        }
    }
}

/// A move is legal only while `piece` sits in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub piece: usize,
    pub slot: usize,
}

/// One generator of the puzzle.
#[derive(Clone, Debug)]
pub struct Move {
    /// Name in the puzzle's own notation, used in shortest words.
    pub name: String,
    /// Slot permutation: the content of slot `s` goes to `perm[s]`.
    pub perm: Perm,
    /// Optional legality condition. In a coded puzzle `guard.piece` is a
    /// class: the move is legal while that class's piece sits in `slot`.
    pub guard: Option<Guard>,
    /// Twist added to the content leaving each slot (coded puzzles with
    /// orientation only; empty = none).
    pub twist: Vec<u8>,
}

impl Move {
    /// The unguarded move that undoes this one: the inverse permutation,
    /// taking back from each piece the twist it gained (`modulus` per slot,
    /// needed only when the move twists).
    pub fn undoing(&self, modulus: Option<&[u8]>) -> Move {
        let mut back = Move::unguarded(self.name.clone(), self.perm.inverse());
        if let (Some(modulus), false) = (modulus, self.twist.is_empty()) {
            back.twist = vec![0; self.perm.degree()];
            for (s, &gained) in self.twist.iter().enumerate() {
                let t = self.perm[s] as usize;
                back.twist[t] = (modulus[t] - gained % modulus[t]) % modulus[t];
            }
        }
        back
    }

    /// A move legal everywhere, without twists.
    pub fn unguarded(name: String, perm: Perm) -> Move {
        Move {
            name,
            perm,
            guard: None,
            twist: Vec::new(),
        }
    }
}

/// A puzzle ready for the engine.
#[derive(Clone, Debug)]
pub struct Puzzle {
    /// The spec string the user gave, e.g. `loopover:2x6`.
    pub spec: String,
    /// How moves are counted.
    pub metric: Metric,
    /// Number of slots (= number of pieces).
    pub slots: usize,
    /// The generators.
    pub moves: Vec<Move>,
    /// Rows and columns when the slots form a grid (for printing states).
    pub grid: Option<(usize, usize)>,
    /// Display label of each piece.
    pub labels: Vec<String>,
    /// The solved state: in position notation (`solved[piece] = slot`), or
    /// for a coded puzzle in coded notation (see [`Coding`]).
    pub solved: Vec<u8>,
    /// Number of states reachable from solved, when the family knows it and
    /// it differs from the group order (sliding puzzles: moves depend on the
    /// blank, so the reachable set is not a group). `None` = group order.
    pub reachable_states: Option<u128>,
    /// Present when states are not permutations of distinct pieces:
    /// identical pieces (partial puzzles) or oriented pieces.
    pub coding: Option<Coding>,
    /// Generators of the puzzle's symmetries (slot permutations that map
    /// the moves onto themselves; see [`crate::puzzle::symmetry`]), named. Empty
    /// when the family knows none.
    pub symmetries: Vec<(String, Perm)>,
}

/// How the states of a coded puzzle are written. A coded state is `2n`
/// bytes for `n` slots: the class of the piece in each slot (pieces of one
/// class are indistinguishable), then the twist of each slot's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coding {
    /// Display label of each class.
    pub class_labels: Vec<String>,
    /// Orientation modulus of each slot (1 = the slot has no orientation).
    pub modulus: Vec<u8>,
    /// Classes whose orientation is ignored (`?` in a `.tws` Solved block),
    /// indexed by class; empty when there are none. Their slots' twists
    /// are kept at 0.
    pub wild: Vec<bool>,
}

impl Coding {
    /// True when some slot has an orientation.
    pub fn has_orientation(&self) -> bool {
        self.modulus.iter().any(|&m| m > 1)
    }

    /// True when the pieces of `class` ignore their orientation.
    pub fn is_wild(&self, class: u8) -> bool {
        self.wild.get(class as usize).copied().unwrap_or(false)
    }
}

impl Puzzle {
    /// A plain permutation puzzle: one slot per label, solved = piece `i` in
    /// slot `i`, no grid, states = the group the moves generate.
    pub fn permutation(spec: &str, metric: Metric, moves: Vec<Move>, labels: Vec<String>) -> Puzzle {
        Puzzle {
            spec: spec.to_string(),
            metric,
            slots: labels.len(),
            moves,
            grid: None,
            // `0..len as u8` would be empty at 256 points.
            solved: Perm::identity(labels.len()).images().to_vec(),
            labels,
            reachable_states: None,
            coding: None,
            symmetries: Vec::new(),
        }
    }

    /// True when the inverse of every move is also a move, so the state
    /// graph is undirected and BFS may use `F_{d-1} ∪ F_d` as "seen".
    pub fn is_undirected(&self) -> bool {
        let (points, _) = self.point_generators();
        self.moves.iter().zip(&points).all(|(m, p)| {
            let inv = p.inverse();
            self.moves.iter().zip(&points).any(|(o, q)| {
                *q == inv
                    && match (m.guard, o.guard) {
                        (None, None) => true,
                        // A guarded move is undone by the move guarded on where
                        // the guarded piece went.
                        (Some(g), Some(h)) => h.piece == g.piece && h.slot == m.perm[g.slot] as usize,
                        _ => false,
                    }
            })
        })
    }

    /// The number of the first slot in cycle notation for people: 0 when
    /// the pieces are labelled from 0 (the S_N families, numbered as
    /// CayleyPy numbers them), otherwise 1 (`perm:` files, boards).
    pub fn first_point(&self) -> usize {
        usize::from(self.labels.first().is_none_or(|l| l != "0"))
    }

    /// True when the spec turns symmetry reduction off (`--no-symmetry`):
    /// then the puzzle has no symmetries and none are searched for.
    pub fn reduction_off(&self) -> bool {
        strip_no_symmetry(&self.spec).1
    }

    /// True when every move is an even permutation, so only even states are
    /// reachable and ranking can use half the bits.
    pub fn all_moves_even(&self) -> bool {
        self.moves.iter().all(|m| m.perm.is_even())
    }

    /// The moves as a player counts them: `24 moves`, or for a guarded
    /// puzzle the distinct move names and the guarded generators behind
    /// them (`4 moves (D L R U) as 24 guarded generators`: a sliding
    /// puzzle's `U` is one generator per cell the blank can be in).
    pub fn moves_text(&self) -> String {
        if self.moves.iter().all(|m| m.guard.is_none()) {
            return format!("{} moves", self.moves.len());
        }
        let mut names: Vec<&str> = self.moves.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        format!(
            "{} moves ({}) as {} guarded generators",
            names.len(),
            names.join(" "),
            self.moves.len()
        )
    }

    /// Pieces that guards refer to; the ranking puts them first.
    pub fn guarded_pieces(&self) -> Vec<usize> {
        let mut pieces: Vec<usize> = self.moves.iter().filter_map(|m| m.guard.map(|g| g.piece)).collect();
        pieces.sort_unstable();
        pieces.dedup();
        pieces
    }

    /// The generator permutations, for group computations.
    pub fn generator_perms(&self) -> Vec<Perm> {
        self.moves.iter().map(|m| m.perm.clone()).collect()
    }

    /// Applies move `m` to a state (position or coded notation), if it is
    /// legal there.
    pub fn apply(&self, m: &Move, state: &[u8]) -> Option<Vec<u8>> {
        match &self.coding {
            None => {
                if let Some(g) = m.guard {
                    if state[g.piece] as usize != g.slot {
                        return None;
                    }
                }
                Some(state.iter().map(|&s| m.perm[s as usize]).collect())
            }
            Some(coding) => {
                let n = self.slots;
                if let Some(g) = m.guard {
                    if state[g.slot] as usize != g.piece {
                        return None;
                    }
                }
                let mut next = vec![0u8; 2 * n];
                for s in 0..n {
                    let to = m.perm[s] as usize;
                    next[to] = state[s];
                    let twist = state[n + s] + m.twist.get(s).copied().unwrap_or(0);
                    next[n + to] = if coding.is_wild(state[s]) {
                        0
                    } else {
                        twist % coding.modulus[to]
                    };
                }
                Some(next)
            }
        }
    }

    /// The state `m` takes to `state`, if `m` is legal there: one step
    /// back along a move, for walking a directed graph back to solved.
    pub fn apply_backwards(&self, m: &Move, state: &[u8]) -> Option<Vec<u8>> {
        let modulus = self.coding.as_ref().map(|c| &c.modulus[..]);
        let before = self.apply(&m.undoing(modulus), state)?;
        self.apply(m, &before).map(|_| before)
    }

    /// True when `state` is the solved state.
    pub fn is_solved(&self, state: &[u8]) -> bool {
        state == self.solved.as_slice()
    }

    /// Renders a state (position notation) as a grid of piece labels, or as
    /// one line when the puzzle has no grid.
    pub fn render(&self, state: &[u8]) -> String {
        self.render_slots(&self.slot_contents(state))
    }

    /// Renders piece labels given slot by slot.
    pub fn render_slots(&self, labels: &[String]) -> String {
        let width = labels.iter().map(|l| l.len()).max().unwrap_or(1);
        let cell = |slot: usize| format!("{:>w$}", labels[slot], w = width);
        match self.grid {
            Some((rows, cols)) => (0..rows)
                .map(|r| (0..cols).map(|c| cell(r * cols + c)).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join("\n"),
            None => (0..labels.len()).map(cell).collect::<Vec<_>>().join(" "),
        }
    }

    /// Slot contents (piece labels in slot order) of a state; a twisted
    /// piece shows its twist after a `+`.
    pub fn slot_contents(&self, state: &[u8]) -> Vec<String> {
        match &self.coding {
            None => {
                let mut at_slot = vec![String::new(); self.slots];
                for (piece, &slot) in state.iter().enumerate() {
                    at_slot[slot as usize] = self.labels[piece].clone();
                }
                at_slot
            }
            Some(coding) => (0..self.slots)
                .map(|s| {
                    let label = &coding.class_labels[state[s] as usize];
                    match state[self.slots + s] {
                        0 => label.clone(),
                        t => format!("{}+{}", label, t),
                    }
                })
                .collect(),
        }
    }

    /// The generators as permutations of points, for group computations:
    /// slots, or `(slot, twist)` pairs when pieces have orientation (slot
    /// `s` owns points `offset[s] .. offset[s] + modulus[s]`). The second
    /// value is the number of points.
    pub fn point_generators(&self) -> (Vec<Perm>, usize) {
        let modulus = match &self.coding {
            Some(c) if c.has_orientation() => &c.modulus,
            _ => return (self.generator_perms(), self.slots),
        };
        let offset: Vec<usize> = modulus
            .iter()
            .scan(0usize, |sum, &m| {
                *sum += m as usize;
                Some(*sum - m as usize)
            })
            .collect();
        let degree: usize = modulus.iter().map(|&m| m as usize).sum();
        let perms = self
            .moves
            .iter()
            .map(|m| {
                let mut images = vec![0u8; degree];
                for s in 0..self.slots {
                    let to = m.perm[s] as usize;
                    let k = modulus[s] as usize;
                    for a in 0..k {
                        let twisted = (a + m.twist.get(s).copied().unwrap_or(0) as usize) % k;
                        images[offset[s] + a] = (offset[to] + twisted) as u8;
                    }
                }
                Perm::from_images(images).expect("a move maps (slot, twist) pairs one to one")
            })
            .collect();
        (perms, degree)
    }
}

/// Unguarded moves from names and permutations.
pub fn unguarded_moves(named: impl IntoIterator<Item = (String, Perm)>) -> Vec<Move> {
    named
        .into_iter()
        .map(|(name, perm)| Move::unguarded(name, perm))
        .collect()
}

/// Appends the inverse of every move whose inverse is not among the moves,
/// named `name'` (with more primes if that name is taken), so the graph is
/// undirected as the engine requires.
pub(crate) fn add_missing_inverses(moves: &mut Vec<Move>) {
    let mut i = 0;
    while i < moves.len() {
        let inv = moves[i].perm.inverse();
        if !moves.iter().any(|m| m.perm == inv) {
            let mut name = format!("{}'", moves[i].name);
            while moves.iter().any(|m| m.name == name) {
                name.push('\'');
            }
            moves.push(Move::unguarded(name, inv));
        }
        i += 1;
    }
}

/// Builds a puzzle from raw generator permutations (used by tests); names
/// are `g1`, `g2`, ….
pub fn from_generators(spec: &str, slots: usize, perms: Vec<Perm>) -> Puzzle {
    let moves = unguarded_moves(perms.into_iter().enumerate().map(|(i, p)| (format!("g{}", i + 1), p)));
    Puzzle::permutation(spec, Metric::Mtm, moves, number_labels(1..=slots))
}

/// Labels `first..=last` as decimal numbers.
pub(crate) fn number_labels(range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}
