//! Symmetries of a puzzle: slot permutations σ that map the move set onto
//! itself and keep the solved state. Conjugating a state by σ relabels its
//! slots and its pieces alike and keeps its distance from solved:
//! `d(σ g σ⁻¹) = d(g)`, since a word `m₁ … m_k` for `g` gives the word
//! `σm₁σ⁻¹ … σm_kσ⁻¹` of the same length for `σgσ⁻¹`.
//!
//! States are in position notation, `p[piece] = slot`, and a piece is named
//! by its home slot (`solved[piece]`). σ acts on pieces through their homes:
//! piece `i` becomes the piece whose home is `σ(solved[i])`. Conjugation is
//! `c_σ(p)[π(i)] = σ(p[i])` with that piece map `π`; it fixes the solved
//! state by construction, and a move `m` (with guard "piece `q` in slot
//! `s`") becomes `σmσ⁻¹` with guard "piece `π(q)` in slot `σ(s)`".

pub mod oriented;
mod refine;
pub mod search;

use crate::puzzle::perm::Perm;
use crate::puzzle::Puzzle;
use std::collections::HashMap;

pub use search::{find_symmetries, FoundGroup};

/// Largest symmetry group handled (the 8×8 Loopover has 512 board symmetries).
pub const MAX_ORDER: usize = 4096;

/// A group of symmetries of a puzzle, every element listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetries {
    /// Every element acting on slots; the identity first.
    pub slots: Vec<Perm>,
    /// The same elements acting on pieces (through the pieces' homes).
    pub pieces: Vec<Perm>,
    /// Names of the generators the group was made from.
    pub generators: Vec<String>,
}

impl Symmetries {
    /// The trivial group of a puzzle with `n` slots.
    pub fn trivial(n: usize) -> Symmetries {
        Symmetries {
            slots: vec![Perm::identity(n)],
            pieces: vec![Perm::identity(n)],
            generators: Vec::new(),
        }
    }

    /// Checks every generator (naming the first that fails) and closes them
    /// into a group.
    pub fn generate(puzzle: &Puzzle, generators: &[(String, Perm)]) -> Result<Symmetries, String> {
        let n = puzzle.slots;
        for (name, sigma) in generators {
            verify(puzzle, name, sigma)?;
        }
        let mut slots = vec![Perm::identity(n)];
        let mut index: HashMap<Vec<u8>, usize> = HashMap::from([(slots[0].images().to_vec(), 0)]);
        let mut next = 0;
        while next < slots.len() {
            for (_, g) in generators {
                let product = g.after(&slots[next]);
                if !index.contains_key(product.images()) {
                    if slots.len() == MAX_ORDER {
                        return Err(format!("the symmetries generate more than {} elements", MAX_ORDER));
                    }
                    index.insert(product.images().to_vec(), slots.len());
                    slots.push(product);
                }
            }
            next += 1;
        }
        let pieces = slots.iter().map(|s| piece_map(puzzle, s)).collect();
        Ok(Symmetries {
            slots,
            pieces,
            generators: generators.iter().map(|(n, _)| n.clone()).collect(),
        })
    }

    /// Number of elements.
    pub fn order(&self) -> usize {
        self.slots.len()
    }

    /// True for the group of the identity alone.
    pub fn is_trivial(&self) -> bool {
        self.slots.len() == 1
    }

    /// `c_σ(state)` for element `k` (position notation).
    pub fn conjugate(&self, k: usize, state: &[u8]) -> Vec<u8> {
        let (sigma, pi) = (&self.slots[k], &self.pieces[k]);
        let mut out = vec![0u8; state.len()];
        for (piece, &slot) in state.iter().enumerate() {
            out[pi[piece] as usize] = sigma[slot as usize];
        }
        out
    }

    /// The orbit of `state`: its distinct conjugates.
    pub fn orbit(&self, state: &[u8]) -> Vec<Vec<u8>> {
        let mut images: Vec<Vec<u8>> = (0..self.order()).map(|k| self.conjugate(k, state)).collect();
        images.sort_unstable();
        images.dedup();
        images
    }
}

/// How σ acts on pieces: piece `i` goes to the piece whose home is
/// `σ(solved[i])`.
pub fn piece_map(puzzle: &Puzzle, sigma: &Perm) -> Perm {
    let n = puzzle.slots;
    let mut piece_at_home = vec![0u8; n];
    for (piece, &home) in puzzle.solved[..n].iter().enumerate() {
        piece_at_home[home as usize] = piece as u8;
    }
    let images = (0..n)
        .map(|piece| piece_at_home[sigma[puzzle.solved[piece] as usize] as usize])
        .collect();
    Perm::from_images(images).expect("the solved state is a bijection")
}

/// Checks that `sigma` is a symmetry of `puzzle`: a permutation of its
/// slots that maps every move (with its guard) to a move.
pub fn verify(puzzle: &Puzzle, name: &str, sigma: &Perm) -> Result<(), String> {
    let n = puzzle.slots;
    if sigma.degree() != n {
        return Err(format!(
            "symmetry '{}' moves {} points but the puzzle has {} slots",
            name,
            sigma.degree(),
            n
        ));
    }
    if puzzle.coding.is_some() {
        return Err(format!(
            "symmetry '{}': symmetry reduction needs distinct pieces without orientation",
            name
        ));
    }
    let pi = piece_map(puzzle, sigma);
    let inverse = sigma.inverse();
    for m in &puzzle.moves {
        let image = sigma.after(&m.perm).after(&inverse);
        let guard = m.guard.map(|g| (pi[g.piece] as usize, sigma[g.slot] as usize));
        let found = puzzle
            .moves
            .iter()
            .any(|o| o.perm == image && o.guard.map(|g| (g.piece, g.slot)) == guard);
        if !found {
            return Err(format!(
                "'{}' is not a symmetry of {}: it maps move {} to {}, which is not a move",
                name, puzzle.spec, m.name, image
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::{parse_puzzle, Metric};

    #[test]
    fn conjugation_keeps_solved_and_distance_one() {
        let p = parse_puzzle("loopover:3x4", Metric::Mtm).unwrap();
        let sym = Symmetries::generate(&p, &p.symmetries).unwrap();
        assert_eq!(sym.order(), 12 * 4);
        for k in 0..sym.order() {
            assert_eq!(sym.conjugate(k, &p.solved), p.solved);
            // A state one move from solved stays one move from solved.
            for m in &p.moves {
                let moved = p.apply(m, &p.solved).unwrap();
                let image = sym.conjugate(k, &moved);
                assert!(p.moves.iter().any(|o| p.apply(o, &p.solved).unwrap() == image));
            }
        }
    }

    #[test]
    fn a_permutation_that_does_not_normalise_the_moves_is_named() {
        let p = parse_puzzle("loopover:2x3", Metric::Mtm).unwrap();
        let swap = Perm::from_images(vec![1, 0, 2, 3, 4, 5]).unwrap();
        let err = Symmetries::generate(&p, &[("swap".into(), swap)]).unwrap_err();
        assert!(err.contains("'swap' is not a symmetry"), "{}", err);
    }
}
