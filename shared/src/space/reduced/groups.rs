//! The groups a reduced space may be planned with: the declared (or built-in)
//! symmetries, or else the group the search finds
//! ([`crate::puzzle::symmetry::search`]), or the subgroups of it the layout
//! can carry.
//!
//! What the layout needs of a group: every element listed
//! ([`Symmetries`], at most [`MAX_ORDER`]), since canonicalising a key tries
//! them, Burnside's count sums over them and a step records one by index; and
//! a partition of the pieces into blocks that every element maps onto blocks,
//! with blocks of at most 9 pieces and keys and fibers of workable sizes
//! (checked by [`super::plan::choose`], which prices each candidate).
//!
//! A found group beyond [`MAX_ORDER`] (`star:N` has (N−1)!, `transpositions:N`
//! N!) is cut down to **point stabilisers** of its chain: `G_k`, the
//! symmetries fixing the first `k` base points, for the first few `k` whose
//! order is at most [`MAX_ORDER`]. They come with the search (their
//! generators are the chain's from level `k` on), they are the largest
//! subgroups the chain names that fit, and their orbits (the fixed base
//! points, and the points they still move) are the partitions the plan tries
//! first. Larger subgroups of other shapes (an imprimitive `S_3 ≀ S_3` in
//! `S_9`, whose blocks of 3 would make far more keys free) are not looked
//! for.

use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::{find_symmetries, Symmetries, MAX_ORDER};
use crate::puzzle::Puzzle;

/// Stabilisers tried below the largest that fits: smaller groups can allow
/// finer partitions.
const DEEPER_STABILISERS: usize = 2;

/// A group to plan with and the named generators it was made from.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub group: Symmetries,
    pub generators: Vec<(String, Perm)>,
}

/// The groups to try for `puzzle`: `Ok(None)` when it has no symmetry to
/// reduce by (none declared or built in, and the search is off, refused,
/// or finds only the identity); an error when the declared ones do not
/// form a group the layout can carry.
pub fn candidate_groups(puzzle: &Puzzle) -> Result<Option<Vec<Candidate>>, String> {
    if !puzzle.symmetries.is_empty() {
        let group = Symmetries::generate(puzzle, &puzzle.symmetries)?;
        return Ok(Some(vec![Candidate {
            group,
            generators: puzzle.symmetries.clone(),
        }]));
    }
    if puzzle.reduction_off() {
        return Ok(None);
    }
    let Ok(found) = find_symmetries(puzzle) else {
        return Ok(None);
    };
    let Some(first) = found.largest_stabilizer_within(MAX_ORDER as u128) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for k in first..(first + 1 + DEEPER_STABILISERS).min(found.base.len()) {
        let generators: Vec<(String, Perm)> = found
            .generators
            .iter()
            .enumerate()
            .filter(|(_, (level, _))| *level >= k)
            .map(|(i, (_, g))| (format!("found{}", i + 1), g.clone()))
            .collect();
        if generators.is_empty() {
            break;
        }
        out.push(Candidate {
            group: Symmetries::generate(puzzle, &generators)?,
            generators,
        });
    }
    Ok(Some(out))
}
