//! The counting lower bound on the diameter (the published bounds are in
//! tests/data/published.md, "Counting lower bounds").
//!
//! Every state has a shortest word; take the lexicographically smallest one
//! (generators ordered as the puzzle lists them). That word never contains
//! two adjacent moves `a b` such that
//! - `b` undoes `a` or `a b` equals a single move (the word would not be
//!   shortest; in MTM this is "two shifts of the same line"), or
//! - `a` and `b` commute and `b` comes before `a` in the order (swapping them
//!   gives a smaller word of the same length).
//!
//! Words free of such pairs are *canonical*. There are at least as many
//! canonical words of length at most `L` as states within distance `L`, so the
//! first `L` where the cumulative count of canonical words reaches the number
//! of states is a lower bound on the diameter.
//!
//! The counts come from a transfer matrix over the class of the last move:
//! moves with the same set of allowed successors are one class, so 8×8
//! Loopover MTM (112 moves) needs only its 16 lines as classes.
//!
//! Against tests/data/published.md: for 4×4 Loopover the counts are the
//! published canonical-sequence counts exactly, and the published bounds agree for every square board and every board with both sides at
//! least 4 (37 of its 49 entries). For 2×6, 2×7, 2×8, 3×5, 3×7, 3×8 and
//! their transposes the published table lists smaller bounds. All 49 entries are
//! reproduced by this same count when an R×C board is taken as R lines of
//! R − 1 shifts and C lines of C − 1 shifts, whereas the real board has R
//! rows of C − 1 shifts and C columns of R − 1 (the two agree only when
//! R = C). Both are valid lower bounds; this module counts the real moves, so
//! for those twelve boards it gives the sharper bound
//! (tests/tests/bounds.rs checks both readings).

use crate::puzzle::group::bignat::BigNat;
use crate::puzzle::group::puzzle_group_order;
use crate::puzzle::perm::Perm;
use crate::puzzle::Puzzle;
use std::collections::{HashMap, HashSet};
use thiserror::Error;

/// Longest word length the bound looks at before giving up.
pub const MAX_BOUND_LENGTH: usize = 10_000;

/// Why no bound could be computed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BoundError {
    #[error("canonical words run out at length {length} with {count} words, fewer than the {states} states; the state count is wrong for these generators")]
    WordsRunOut {
        length: usize,
        count: String,
        states: String,
    },
    #[error("no bound below length {0}")]
    TooLong(usize),
    #[error("'{0}' has guarded moves (legal only in some states), so its graph is not a Cayley graph; the counting bound does not apply")]
    Guarded(String),
    #[error("'{0}': the number of states is unknown ({1})")]
    StatesUnknown(String, String),
}

/// The counting bound of a puzzle: its moves in the puzzle's order, and its
/// states from the family (`reachable_states`) or the group order
/// (Schreier–Sims, exact at any size, so 8×8 Loopover needs no ranking).
pub fn puzzle_bound(puzzle: &Puzzle) -> Result<CountingBound, BoundError> {
    if puzzle.moves.iter().any(|m| m.guard.is_some()) {
        return Err(BoundError::Guarded(puzzle.spec.clone()));
    }
    let (generators, _) = puzzle.point_generators();
    let order = puzzle_group_order(puzzle);
    let states = match &puzzle.coding {
        None => puzzle.reachable_states.map_or(order, BigNat::from),
        Some(_) => order
            .to_u128()
            .and_then(|o| crate::job::coded_reachable(puzzle, o))
            .map(BigNat::from)
            .ok_or_else(|| {
                BoundError::StatesUnknown(
                    puzzle.spec.clone(),
                    "identical pieces with orientation are not counted in advance; `cayley run` counts them".into(),
                )
            })?,
    };
    counting_bound(&generators, &states)
}

/// The counting bound and the numbers behind it.
#[derive(Clone, Debug)]
pub struct CountingBound {
    /// Number of states the words must cover.
    pub states: BigNat,
    /// Distinct non-identity generators counted (duplicates and identities
    /// never appear in a shortest word, so they are dropped).
    pub generators: usize,
    /// Number of classes of the transfer matrix.
    pub classes: usize,
    /// `cumulative[l]` = canonical words of length at most `l`.
    pub cumulative: Vec<BigNat>,
    /// The first length whose cumulative count reaches `states`.
    pub bound: usize,
}

/// Computes the counting bound for generators `moves` (slot permutations,
/// in the order that defines canonical words) and `states` reachable states.
pub fn counting_bound(moves: &[Perm], states: &BigNat) -> Result<CountingBound, BoundError> {
    let gens = distinct_generators(moves);
    let growth = WordGrowth::canonical(&gens);
    let cumulative = cumulative_counts(&growth.sizes, &growth.matrix, states)?;
    Ok(CountingBound {
        states: states.clone(),
        generators: gens.len(),
        classes: growth.sizes.len(),
        bound: cumulative.len() - 1,
        cumulative,
    })
}

/// How many states each distance from solved can hold at most: the
/// canonical words of that length (one per state: its least shortest
/// word), counted by the transfer matrix over classes of last moves. A
/// puzzle with guarded moves is not a Cayley graph: there, the moves legal
/// at once, less the one undoing the last move when every move has one
/// (a sliding puzzle: 4·3^(k−1) words of k moves, not 48^k on the 4×4).
#[derive(Clone, Debug)]
pub struct WordGrowth {
    sizes: Vec<u64>,
    matrix: Vec<Vec<u64>>,
}

impl WordGrowth {
    /// The growth bound of `puzzle`'s moves.
    pub fn of(puzzle: &Puzzle) -> WordGrowth {
        if puzzle.moves.iter().any(|m| m.guard.is_some()) {
            let legal = legal_at_once(puzzle);
            let undone = u64::from(puzzle.is_undirected());
            return WordGrowth {
                sizes: vec![legal],
                matrix: vec![vec![legal.saturating_sub(undone)]],
            };
        }
        let (generators, _) = puzzle.point_generators();
        WordGrowth::canonical(&distinct_generators(&generators))
    }

    /// The canonical words of distinct non-identity generators `gens`.
    fn canonical(gens: &[Perm]) -> WordGrowth {
        let (sizes, matrix) = transfer_matrix(&allowed_successors(gens));
        WordGrowth { sizes, matrix }
    }

    /// Words of each length `0..=max_len` (saturating at `u128::MAX`).
    pub fn up_to(&self, max_len: usize) -> Vec<u128> {
        let mut out = vec![1u128];
        let mut counts: Vec<u128> = self.sizes.iter().map(|&s| s as u128).collect();
        while out.len() <= max_len {
            out.push(counts.iter().fold(0u128, |a, &c| a.saturating_add(c)));
            let mut next = vec![0u128; counts.len()];
            for (&count, row) in counts.iter().zip(&self.matrix) {
                for (slot, &m) in next.iter_mut().zip(row) {
                    *slot = slot.saturating_add(count.saturating_mul(m as u128));
                }
            }
            counts = next;
        }
        out
    }
}

/// Moves legal in one state at most: every unguarded move, and of those
/// guarded by a piece, the most guarded on any one slot (the piece is in
/// one slot). In a coded puzzle a guard names a class of identical pieces,
/// which may fill several slots: every move then counts.
fn legal_at_once(puzzle: &Puzzle) -> u64 {
    if puzzle.coding.is_some() {
        return puzzle.moves.len() as u64;
    }
    let mut guarded: HashMap<(usize, usize), u64> = HashMap::new();
    let mut unguarded = 0;
    for m in &puzzle.moves {
        match m.guard {
            Some(g) => *guarded.entry((g.piece, g.slot)).or_default() += 1,
            None => unguarded += 1,
        }
    }
    let mut most_per_piece: HashMap<usize, u64> = HashMap::new();
    for (&(piece, _), &count) in &guarded {
        let most = most_per_piece.entry(piece).or_default();
        *most = (*most).max(count);
    }
    unguarded + most_per_piece.values().sum::<u64>()
}

/// The transfer-matrix count itself, for any class structure: `sizes[c]`
/// moves are in class `c`, and `matrix[c][d]` moves of class `d` may follow a
/// move of class `c`. Returns the cumulative counts of words of length
/// `0, 1, …` up to the first that reaches `states` (that length is the bound).
pub fn cumulative_counts(sizes: &[u64], matrix: &[Vec<u64>], states: &BigNat) -> Result<Vec<BigNat>, BoundError> {
    let mut cumulative = vec![BigNat::one()];
    // counts[c] = words of the current length whose last move is in class c.
    let mut counts: Vec<BigNat> = sizes.iter().map(|&s| BigNat::from(s)).collect();
    while cumulative.last().expect("starts with length 0") < states {
        let length = cumulative.len();
        if length > MAX_BOUND_LENGTH {
            return Err(BoundError::TooLong(MAX_BOUND_LENGTH));
        }
        let mut total = cumulative[length - 1].clone();
        for c in &counts {
            total += c;
        }
        if counts.iter().all(BigNat::is_zero) {
            return Err(BoundError::WordsRunOut {
                length,
                count: total.to_string(),
                states: states.to_string(),
            });
        }
        cumulative.push(total);
        let mut next = vec![BigNat::zero(); counts.len()];
        for (count, row) in counts.iter().zip(matrix) {
            for (slot, &m) in next.iter_mut().zip(row) {
                slot.add_product(count, m);
            }
        }
        counts = next;
    }
    Ok(cumulative)
}

/// The generators in order without identities and later duplicates: the
/// smallest shortest word never uses either.
fn distinct_generators(moves: &[Perm]) -> Vec<Perm> {
    let mut seen = HashSet::new();
    moves
        .iter()
        .filter(|m| !m.is_identity() && seen.insert((*m).clone()))
        .cloned()
        .collect()
}

/// `allowed[i][j]`: move `j` may directly follow move `i` in a canonical word.
fn allowed_successors(gens: &[Perm]) -> Vec<Vec<bool>> {
    let singles: HashSet<&Perm> = gens.iter().collect();
    gens.iter()
        .enumerate()
        .map(|(i, a)| {
            gens.iter()
                .enumerate()
                .map(|(j, b)| {
                    // "a then b" is b ∘ a.
                    let ab = b.after(a);
                    let redundant = ab.is_identity() || singles.contains(&ab);
                    let out_of_order = j < i && ab == a.after(b);
                    !redundant && !out_of_order
                })
                .collect()
        })
        .collect()
}

/// Groups moves by their row of allowed successors (moves with equal rows
/// have equal futures, so only the class of the last move matters). Returns
/// the class sizes and `matrix[c][d]` = how many moves of class `d` may
/// follow a move of class `c`.
fn transfer_matrix(allowed: &[Vec<bool>]) -> (Vec<u64>, Vec<Vec<u64>>) {
    let mut index: HashMap<&Vec<bool>, usize> = HashMap::new();
    let mut representative = Vec::new();
    let class_of: Vec<usize> = allowed
        .iter()
        .enumerate()
        .map(|(i, row)| {
            *index.entry(row).or_insert_with(|| {
                representative.push(i);
                representative.len() - 1
            })
        })
        .collect();
    let classes = representative.len();
    let mut sizes = vec![0u64; classes];
    for &c in &class_of {
        sizes[c] += 1;
    }
    let matrix = representative
        .iter()
        .map(|&r| {
            let mut row = vec![0u64; classes];
            for (j, &ok) in allowed[r].iter().enumerate() {
                if ok {
                    row[class_of[j]] += 1;
                }
            }
            row
        })
        .collect();
    (sizes, matrix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(images: &[u8]) -> Perm {
        Perm::from_images(images.to_vec()).unwrap()
    }

    #[test]
    fn commuting_involutions_count_each_subset_once() {
        // Z2 × Z2 × Z2 by three commuting transpositions: the canonical words
        // are the increasing subsets, 1 + 3 + 3 + 1.
        let gens = [
            perm(&[1, 0, 2, 3, 4, 5]),
            perm(&[0, 1, 3, 2, 4, 5]),
            perm(&[0, 1, 2, 3, 5, 4]),
        ];
        let b = counting_bound(&gens, &BigNat::from(8u64)).unwrap();
        let cum: Vec<String> = b.cumulative.iter().map(|c| c.to_string()).collect();
        assert_eq!(cum, ["1", "4", "7", "8"]);
        assert_eq!(b.bound, 3);
        assert_eq!(b.classes, 3);
    }

    #[test]
    fn cyclic_group_powers_are_single_moves() {
        // Z5 with every power a move (MTM on one line): words of length 1 only.
        let r = perm(&[1, 2, 3, 4, 0]);
        let mut gens = vec![r.clone()];
        for _ in 0..3 {
            let next = r.after(gens.last().unwrap());
            gens.push(next);
        }
        let b = counting_bound(&gens, &BigNat::from(5u64)).unwrap();
        assert_eq!(b.bound, 1);
        assert_eq!(b.classes, 1);
        // A wrong state count is caught instead of looping forever.
        let err = counting_bound(&gens, &BigNat::from(6u64)).unwrap_err();
        assert!(matches!(err, BoundError::WordsRunOut { .. }), "{}", err);
    }

    #[test]
    fn duplicates_and_identities_are_dropped() {
        let a = perm(&[1, 0, 2]);
        let b = counting_bound(&[a.clone(), Perm::identity(3), a], &BigNat::from(2u64)).unwrap();
        assert_eq!(b.generators, 1);
        assert_eq!(b.bound, 1);
    }
}
