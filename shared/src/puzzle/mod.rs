//! The puzzle model: slots, pieces, a solved arrangement, moves and a metric.
//!
//! A puzzle has `n` slots holding `n` distinct pieces; when solved, piece `i`
//! sits in slot `i`. A move is a permutation of slots, optionally guarded by a
//! [`Guard`] (the move is legal only while a given piece sits in a given slot).
//! Guards are how sliding puzzles fit the same model: the blank is a piece, a
//! slide is a transposition legal only when the blank is at one end of it, and
//! guarded pieces are put first in the ranking so every block of states shares
//! the guard's truth value (see `layout`).

mod loopover;
mod perm_file;
mod sliding;
mod spec;
mod turnstyle;
mod tws;
mod varikon;

pub use spec::{known_families, parse_puzzle, parse_puzzle_with_file, spec_file_text, SpecError};

use crate::perm::Perm;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How moves are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Multi-tile metric: shifting one line by any amount is one move (the
    /// seed paper's "manipulation").
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
    /// Optional legality condition.
    pub guard: Option<Guard>,
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
    /// The solved state in position notation (`solved[piece] = slot`).
    pub solved: Vec<u8>,
    /// Number of states reachable from solved, when the family knows it and
    /// it differs from the group order (sliding puzzles: moves depend on the
    /// blank, so the reachable set is not a group). `None` = group order.
    pub reachable_states: Option<u128>,
    /// Why the engine cannot search this puzzle yet, when it cannot for a
    /// reason other than size (`.tws` orientations, identical pieces).
    /// `cayley info` still shows its group; `Job::new` refuses it.
    pub unsupported: Option<Unsupported>,
}

/// A puzzle the engine cannot search yet, and whether its state count is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// What is not supported, for the user.
    pub reason: String,
    /// True when the states are exactly the elements of the group the moves
    /// generate (false with identical pieces: fewer states, count unknown).
    pub states_are_group: bool,
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
            solved: (0..labels.len() as u8).collect(),
            labels,
            reachable_states: None,
            unsupported: None,
        }
    }

    /// True when the inverse of every move is also a move, so the state
    /// graph is undirected and BFS may use `F_{d-1} ∪ F_d` as "seen".
    pub fn is_undirected(&self) -> bool {
        self.moves.iter().all(|m| {
            let inv = m.perm.inverse();
            self.moves.iter().any(|o| {
                o.perm == inv
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

    /// True when every move is an even permutation, so only even states are
    /// reachable and ranking can use half the bits.
    pub fn all_moves_even(&self) -> bool {
        self.moves.iter().all(|m| m.perm.is_even())
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

    /// Applies move `m` to a state in position notation, if it is legal there.
    pub fn apply(&self, m: &Move, state: &[u8]) -> Option<Vec<u8>> {
        if let Some(g) = m.guard {
            if state[g.piece] as usize != g.slot {
                return None;
            }
        }
        Some(state.iter().map(|&s| m.perm[s as usize]).collect())
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

    /// Slot contents (piece labels in slot order) of a state.
    pub fn slot_contents(&self, state: &[u8]) -> Vec<String> {
        let mut at_slot = vec![String::new(); self.slots];
        for (piece, &slot) in state.iter().enumerate() {
            at_slot[slot as usize] = self.labels[piece].clone();
        }
        at_slot
    }
}

/// Unguarded moves from names and permutations.
pub fn unguarded_moves(named: impl IntoIterator<Item = (String, Perm)>) -> Vec<Move> {
    named
        .into_iter()
        .map(|(name, perm)| Move {
            name,
            perm,
            guard: None,
        })
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
            moves.push(Move {
                name,
                perm: inv,
                guard: None,
            });
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
