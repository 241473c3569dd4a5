//! The generators of a `.tws` definition as permutations of points
//! `(position, orientation)`: base moves, move sequences, twsearch's power
//! names, `--moves` and the metric.
//!
//! A move is first a permutation of points, `PIECES · ORIENTATIONS` per set:
//! a faithful action, so the group's order on those points is exactly the
//! number of positions when the pieces are distinct. As in twsearch, a
//! move's permutation line says, for each position, which position's
//! content comes to it, and its orientation line the twist added to the
//! piece that *leaves* each position. A `MoveSequence` is the product of
//! its moves, first to last, and then a move like any other. Moves named
//! as twsearch names whole-puzzle rotations (`x`, `y`, `z`, and capitals
//! ending in `v` such as `Fv` or `UFv`) are usable in sequences and
//! `--moves` but are not generators otherwise, as in twsearch.

use super::parse::{Definition, SetDef, SetPos};
use crate::puzzle::group::points::{compose, is_identity};
use crate::puzzle::{Metric, SpecError};
use std::collections::HashMap;

/// One generator: its name and its point permutation.
pub(super) type Generator = (String, Vec<u16>);

/// A base move (or sequence), before powers are taken.
struct Base {
    name: String,
    perm: Vec<u16>,
}

/// True for twsearch's names of whole-puzzle rotations: `x`, `y`, `z`
/// (also `x2`, `x'`), and one or more capitals or underscores then `v`.
pub(super) fn is_rotation(name: &str) -> bool {
    let b = name.as_bytes();
    if matches!(b.first(), Some(b'x' | b'y' | b'z')) && (b.len() == 1 || (b.len() == 2 && matches!(b[1], b'2' | b'\'')))
    {
        return true;
    }
    let capitals = b.iter().take_while(|&&c| c == b'_' || c.is_ascii_uppercase()).count();
    capitals > 0 && capitals + 1 == b.len() && b[capitals] == b'v'
}

/// The generators of `def` under `metric`, restricted to `keep` (twsearch's
/// `--moves`) when given. With sets omitted, moves left without effect are
/// dropped instead of refused.
pub(super) fn generators(
    path: &str,
    def: &Definition,
    metric: Metric,
    keep: Option<&[String]>,
    omitted: bool,
) -> Result<Vec<Generator>, SpecError> {
    let bad = |line: Option<usize>, why: String| SpecError::BadFile {
        path: path.to_string(),
        line,
        why,
    };
    let mut bases: Vec<Base> = Vec::new();
    for m in &def.moves {
        let perm = point_perm(&def.sets, &m.sets);
        if is_identity(&perm) && !omitted {
            return Err(bad(Some(m.line), format!("move {} changes nothing", m.name)));
        }
        let order = cycle_order(&perm);
        if order > MAX_POWERS {
            return Err(bad(
                Some(m.line),
                format!(
                    "move {} has order {}: its powers are moves (and are walked through to name them), at most {} are supported",
                    m.name, order, MAX_POWERS
                ),
            ));
        }
        bases.push(Base {
            name: m.name.clone(),
            perm,
        });
    }
    resolve_sequences(def, &mut bases).map_err(|(line, why)| bad(Some(line), why))?;
    bases.retain(|b| !is_identity(&b.perm));
    let exponents = match keep {
        Some(list) => kept_exponents(&bases, list).map_err(|why| bad(None, format!("--moves: {}", why)))?,
        None => bases.iter().map(|b| (!is_rotation(&b.name)).then_some(1)).collect(),
    };
    let mut out: Vec<Generator> = Vec::new();
    for (base, step) in bases.iter().zip(exponents) {
        let Some(step) = step else { continue };
        for (power, (name, perm)) in powers(&base.name, &base.perm).into_iter().enumerate() {
            let signed = signed_power(power + 1, order_of(&base.perm));
            let wanted = (power + 1) % step == 0
                && match metric {
                    Metric::Mtm => true,
                    Metric::Stm => signed.unsigned_abs() as usize == step,
                };
            if !wanted || out.iter().any(|(_, p)| *p == perm) {
                continue;
            }
            if out.iter().any(|(n, _)| *n == name) {
                return Err(bad(
                    None,
                    format!(
                        "the name {} (move {} or one of its powers) is already another move's; rename one of them",
                        name, base.name
                    ),
                ));
            }
            out.push((name, perm));
        }
    }
    Ok(out)
}

/// The move as a permutation of `(position, orientation)` points.
pub(super) fn point_perm(sets: &[SetDef], pos: &[SetPos]) -> Vec<u16> {
    let degree: usize = sets.iter().map(|s| s.pieces * s.orientations).sum();
    let mut images = vec![0u16; degree];
    let mut offset = 0;
    for (set, p) in sets.iter().zip(pos) {
        let k = set.orientations;
        for (to, &from) in p.perm.iter().enumerate() {
            for a in 0..k {
                images[offset + from * k + a] = (offset + to * k + (a + p.twist(from)) % k) as u16;
            }
        }
        offset += set.pieces * k;
    }
    images
}

/// Appends each `MoveSequence` as a base move, resolving sequences that
/// use later moves or other sequences as twsearch does: repeatedly, until
/// none is left or none can be resolved.
fn resolve_sequences(def: &Definition, bases: &mut Vec<Base>) -> Result<(), (usize, String)> {
    let mut pending: Vec<&super::parse::Sequence> = def.sequences.iter().collect();
    while !pending.is_empty() {
        let names: HashMap<String, Vec<u16>> = bases.iter().flat_map(|b| powers(&b.name, &b.perm)).collect();
        let before = pending.len();
        let mut unresolved = Vec::new();
        for seq in pending {
            match seq.words.iter().map(|w| names.get(w)).collect::<Option<Vec<_>>>() {
                Some(perms) => {
                    let degree = perms[0].len();
                    let product = perms
                        .iter()
                        .fold((0..degree as u16).collect::<Vec<u16>>(), |acc, p| compose(p, &acc));
                    bases.push(Base {
                        name: seq.name.clone(),
                        perm: product,
                    });
                }
                None => unresolved.push(seq),
            }
        }
        if unresolved.len() == before {
            let seq = unresolved[0];
            let known: Vec<String> = bases
                .iter()
                .flat_map(|b| powers(&b.name, &b.perm))
                .map(|(n, _)| n)
                .collect();
            let unknown = seq
                .words
                .iter()
                .find(|w| !known.contains(w))
                .expect("an unresolved word");
            return Err((
                seq.line,
                format!("move sequence {}: no move named '{}'", seq.name, unknown),
            ));
        }
        pending = unresolved;
    }
    Ok(())
}

/// For every base move, the step of the powers `--moves` keeps (`None` =
/// dropped): a listed base move keeps every power, a listed power `m^k`
/// the multiples of `k`, which must divide the move's order.
fn kept_exponents(bases: &[Base], list: &[String]) -> Result<Vec<Option<usize>>, String> {
    let mut steps: Vec<Option<usize>> = vec![None; bases.len()];
    for name in list {
        let found = bases.iter().enumerate().find_map(|(i, b)| {
            let order = order_of(&b.perm);
            powers(&b.name, &b.perm)
                .iter()
                .position(|(n, _)| n == name)
                .map(|j| (i, j + 1, order))
        });
        let Some((i, power, order)) = found else {
            return Err(format!("no move named '{}'", name));
        };
        if steps[i].is_some() {
            return Err(format!("move {} is listed twice (with its powers)", bases[i].name));
        }
        let step = signed_power(power, order).unsigned_abs() as usize;
        if order % step != 0 {
            return Err(format!(
                "'{}' does not divide the order {} of {}; list the simplest power",
                name, order, bases[i].name
            ));
        }
        steps[i] = Some(step);
    }
    Ok(steps)
}

/// Largest order a move may have: every power is enumerated, and a move of a
/// few lines can have order 10^15, whose powers would never fit memory.
const MAX_POWERS: u128 = 1024;

/// Order of a permutation from its cycle lengths (their lcm, saturating),
/// without walking through its powers.
fn cycle_order(perm: &[u16]) -> u128 {
    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let mut seen = vec![false; perm.len()];
    let mut order = 1u128;
    for start in 0..perm.len() {
        let mut len = 0u128;
        let mut p = start;
        while !seen[p] {
            seen[p] = true;
            p = perm[p] as usize;
            len += 1;
        }
        if len > 1 {
            order = (order / gcd(order, len)).saturating_mul(len);
        }
    }
    order
}

/// Order of a permutation (at most [`MAX_POWERS`]: checked when the move is read).
fn order_of(perm: &[u16]) -> usize {
    let mut p = perm.to_vec();
    let mut order = 1;
    while !is_identity(&p) {
        p = compose(perm, &p);
        order += 1;
    }
    order
}

/// Power `j` of a move of order `n`, written the short way round: `2` for
/// `U2`, `-1` for `U'`.
fn signed_power(j: usize, n: usize) -> i64 {
    let (j, n) = (j as i64, n as i64);
    if n - j < j {
        j - n
    } else {
        j
    }
}

/// Every non-identity power of a move with twsearch's names: `U`, `U2`,
/// `U'`, `U2'` for orders above four.
fn powers(name: &str, perm: &[u16]) -> Vec<Generator> {
    let order = order_of(perm);
    let mut out = Vec::new();
    let mut p = perm.to_vec();
    for j in 1..order {
        let twist = signed_power(j, order);
        let amount = if twist.abs() == 1 {
            String::new()
        } else {
            twist.abs().to_string()
        };
        let prime = if twist < 0 { "'" } else { "" };
        out.push((format!("{}{}{}", name, amount, prime), p.clone()));
        p = compose(perm, &p);
    }
    out
}
