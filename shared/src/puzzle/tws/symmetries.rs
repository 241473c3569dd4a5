//! Symmetries a `.tws` file declares (`Symmetry NAME … End`, cayley's own
//! block; twsearch does not know it), to reduce the search by (see
//! [`crate::puzzle::symmetry`]).
//!
//! A Symmetry block is written like a Move block and read by the same
//! rules: per set, a permutation line (position `j` receives the content of
//! position `perm[j]`) and optionally an orientation line; a set left out
//! is fixed, an omitted set is skipped. It becomes a permutation of
//! `(position, orientation)` points exactly as a move does
//! ([`super::moves::point_perm`]).
//!
//! Reduction works on puzzles of distinct pieces without orientation, where
//! points are slots, so that point permutation *is* the slot permutation σ.
//! There an orientation line can only hold zeros, and no twist can arise.
//! A definition with orientations or identical pieces becomes a coded
//! puzzle, which the reduction does not handle: a symmetry there would need
//! its twists (or, for a mirror image, orientations counted the other way
//! round) carried through conjugation, which a slot permutation cannot
//! express. Such a block is refused with its name and line rather than used
//! without its twists.
//!
//! Every symmetry is checked against the moves actually searched, after
//! `--moves`, `--omit` and the metric: a restriction that breaks it (e.g.
//! `--moves U,R` with a symmetry taking U to F) makes the file refused, not
//! the symmetry trusted. Leaving sets out cannot break one (σ restricted to
//! the kept sets still conjugates the restricted moves into each other), but
//! it may leave it the identity, which is then dropped.

use super::moves::point_perm;
use super::options::TwsOptions;
use super::parse::Definition;
use crate::puzzle::group::points::is_identity;
use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::verify;
use crate::puzzle::{Puzzle, SpecError};

/// The declared symmetries of `def`, each checked on `puzzle` (built from
/// `def` under `options`), as named slot permutations.
pub(super) fn declared(
    path: &str,
    def: &Definition,
    puzzle: &Puzzle,
    options: &TwsOptions,
) -> Result<Vec<(String, Perm)>, SpecError> {
    let mut out = Vec::new();
    for s in &def.symmetries {
        let bad = |why: String| SpecError::BadFile {
            path: path.to_string(),
            line: Some(s.line),
            why,
        };
        // A power of a move (`U2`) is named only once moves are built; a
        // symmetry of that name would make messages ambiguous.
        if puzzle.moves.iter().any(|m| m.name == s.name) {
            return Err(bad(format!(
                "the name {} is already a move's (a power of a Move block); rename the symmetry",
                s.name
            )));
        }
        let points = point_perm(&def.sets, &s.sets);
        if is_identity(&points) {
            if options.omits_any() {
                // It moved only sets that are left out: nothing to reduce by.
                continue;
            }
            return Err(bad(format!("symmetry {} changes nothing", s.name)));
        }
        if puzzle.coding.is_some() {
            return Err(bad(format!(
                "symmetry {} cannot be used: symmetry reduction needs distinct pieces without orientation, and {}; \
                 remove the Symmetry block or leave such sets out (--omit)",
                s.name,
                why_coded(def)
            )));
        }
        // Without orientation a point is a position, and positions are the
        // puzzle's slots in the same order.
        let images = points.iter().map(|&p| p as u8).collect();
        let sigma = Perm::from_images(images).expect("a symmetry block permutes positions");
        verify(puzzle, &s.name, &sigma).map_err(|why| match &options.moves {
            Some(kept) => bad(format!(
                "{} (--moves {} keeps only some moves, and a symmetry must map those onto themselves)",
                why,
                kept.join(",")
            )),
            None => bad(why),
        })?;
        out.push((s.name.clone(), sigma));
    }
    Ok(out)
}

/// Why `def` makes a coded puzzle: a set with orientations, or one whose
/// Solved line repeats a piece.
fn why_coded(def: &Definition) -> String {
    if let Some(set) = def.sets.iter().find(|s| s.orientations > 1) {
        return format!("set {} has {} orientations", set.name, set.orientations);
    }
    let repeated = def.sets.iter().zip(&def.solved).find(|(_, pos)| {
        let mut seen = vec![false; pos.perm.len()];
        pos.perm.iter().any(|&p| std::mem::replace(&mut seen[p], true))
    });
    match repeated {
        Some((set, _)) => format!("set {} has identical pieces in the Solved block", set.name),
        None => "the pieces are coded".to_string(),
    }
}
