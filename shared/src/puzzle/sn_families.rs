//! Generator families of Cayley graphs of the symmetric group that papers,
//! OEIS entries and CayleyPy study, built in so that a researcher names them
//! instead of writing the generators by hand.
//!
//! Points are numbered 0..N−1 in the generator names, as CayleyPy numbers
//! them (`cayleypy` `PermutationGroups`): the same generator sets, so the
//! growth tables compare directly. Every family's set is closed under
//! inverses, so the graph is undirected and its table does not depend on
//! whether generators act on positions or on values.
//!
//! | family | generators | count |
//! |---|---|---|
//! | `pancake:N` | `R1..R(N−1)`: `Ri` reverses positions 0..=i | N − 1 |
//! | `burnt-pancake:N` | `R1..RN`: `Ri` reverses pancakes 0..i−1 and turns each over | N |
//! | `reversals:N` | `R[i..j]`: reverses positions i..=j, for all i < j | N(N − 1)/2 |
//! | `lrx:N[:K]` | `L` (shift left), `R` (shift right), `X` = (0, K); K = 1 by default | 3 |
//! | `top-spin:N[:K]` | `L`, `R`, `T` reverses positions 0..K−1; K = 4 by default | 3 |
//! | `coxeter:N` | `(i,i+1)` for i < N − 1 | N − 1 |
//! | `cyclic-coxeter:N` | the Coxeter generators and `(0,N−1)` | N |
//! | `transpositions:N` | `(i,j)` for all i < j | N(N − 1)/2 |
//! | `star:N` | `(0,i)` for 0 < i < N | N − 1 |
//!
//! A burnt pancake has two sides: `burnt-pancake:N` is a coded puzzle of
//! N pieces with an orientation of 2 each (2^N·N! states), not a
//! permutation of 2N points as CayleyPy writes it (whose reachable part is
//! the same graph).

use super::{number_labels, Coding, Metric, Move, Puzzle, SpecError};
use crate::puzzle::perm::{Perm, MAX_RANKED_POINTS};

/// Most pancakes of `burnt-pancake:N`: 2^N·N! must fit a 64-bit rank
/// (16: 1.4·10¹⁸; 17: 4.7·10¹⁹).
pub const MAX_BURNT_PANCAKES: usize = 16;

/// The families of this module: name and usage (for the list of known
/// families).
pub const SN_FAMILIES: [(&str, &str); 9] = [
    ("pancake", "pancake:N, prefix reversals"),
    (
        "burnt-pancake",
        "burnt-pancake:N, signed prefix reversals, N at most 16",
    ),
    ("reversals", "reversals:N, all substring reversals"),
    ("lrx", "lrx:N[:K], shifts and the transposition (0,K)"),
    ("top-spin", "top-spin:N[:K], shifts and the reversal of the first K (4)"),
    ("coxeter", "coxeter:N, adjacent transpositions"),
    (
        "cyclic-coxeter",
        "cyclic-coxeter:N, adjacent transpositions and (0,N-1)",
    ),
    ("transpositions", "transpositions:N, all transpositions"),
    ("star", "star:N, the transpositions (0,i)"),
];

/// The puzzle of `family` with arguments `args` (the text after the first
/// colon), or `None` when `family` is not one of [`SN_FAMILIES`].
pub fn sn_family(spec: &str, family: &str, args: &str, metric: Metric) -> Option<Result<Puzzle, SpecError>> {
    let family = SN_FAMILIES.iter().find(|(name, _)| *name == family)?.0;
    Some(build(spec, family, args, metric))
}

fn build(spec: &str, family: &str, args: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    let (n_text, k_text) = match args.split_once(':') {
        Some((n, k)) => (n, Some(k)),
        None => (args, None),
    };
    let takes_k = matches!(family, "lrx" | "top-spin");
    if k_text.is_some() && !takes_k {
        return Err(bad(spec, format!("{}:N takes one number", family)));
    }
    let n = number(spec, n_text, family)?;
    let least = match family {
        "lrx" | "cyclic-coxeter" => 3,
        "burnt-pancake" => 1,
        _ => 2,
    };
    if n < least {
        return Err(SpecError::TooSmall {
            spec: spec.to_string(),
            why: format!("{}:N needs N of at least {}", family, least),
        });
    }
    let max = if family == "burnt-pancake" {
        MAX_BURNT_PANCAKES
    } else {
        MAX_RANKED_POINTS
    };
    if n > max {
        return Err(SpecError::TooManySlots {
            spec: spec.to_string(),
            limit: format!(
                "{}:N takes N up to {}, so that a state's rank fits in 64 bits",
                family, max
            ),
        });
    }
    let k = match (family, k_text) {
        (_, Some(k)) => number(spec, k, family)?,
        ("top-spin", None) => 4,
        _ => 1,
    };
    let moves = match family {
        "pancake" => (1..n).map(|i| named(format!("R{}", i), reversal(n, 0, i))).collect(),
        "burnt-pancake" => return Ok(burnt_pancake(spec, n, metric)),
        "reversals" => pairs(n)
            .map(|(i, j)| named(format!("R[{}..{}]", i, j), reversal(n, i, j)))
            .collect(),
        "lrx" if k == 0 || k >= n => {
            return Err(bad(
                spec,
                format!("lrx:N:K swaps positions 0 and K, so K runs from 1 to {}", n - 1),
            ))
        }
        "lrx" => vec![
            named("L".into(), shift(n, n - 1)),
            named("R".into(), shift(n, 1)),
            named("X".into(), transposition(n, 0, k)),
        ],
        "top-spin" if k < 2 || k > n => {
            return Err(bad(
                spec,
                format!("top-spin:N:K reverses the first K, so K runs from 2 to {}", n),
            ))
        }
        "top-spin" => vec![
            named("L".into(), shift(n, n - 1)),
            named("R".into(), shift(n, 1)),
            named("T".into(), reversal(n, 0, k - 1)),
        ],
        "coxeter" => coxeter(n),
        "cyclic-coxeter" => {
            let mut moves = coxeter(n);
            moves.push(named(format!("(0,{})", n - 1), transposition(n, 0, n - 1)));
            moves
        }
        "transpositions" => pairs(n)
            .map(|(i, j)| named(format!("({},{})", i, j), transposition(n, i, j)))
            .collect(),
        "star" => (1..n)
            .map(|i| named(format!("(0,{})", i), transposition(n, 0, i)))
            .collect(),
        _ => unreachable!("every family of SN_FAMILIES is built"),
    };
    Ok(Puzzle::permutation(spec, metric, moves, number_labels(0..=n - 1)))
}

/// The unsigned number of a family's argument.
fn number(spec: &str, text: &str, family: &str) -> Result<usize, SpecError> {
    text.trim()
        .parse()
        .map_err(|_| bad(spec, format!("expected a whole number, e.g. {}:8", family)))
}

fn bad(spec: &str, why: String) -> SpecError {
    SpecError::BadArgument {
        spec: spec.to_string(),
        why,
    }
}

fn named(name: String, images: Vec<u8>) -> Move {
    Move::unguarded(
        name,
        Perm::from_images(images).expect("the families' generators are permutations"),
    )
}

/// Pairs `i < j` of `0..n`, in order.
fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

/// The permutation reversing positions `i..=j` of `n`.
fn reversal(n: usize, i: usize, j: usize) -> Vec<u8> {
    (0..n)
        .map(|s| if (i..=j).contains(&s) { i + j - s } else { s } as u8)
        .collect()
}

/// Every position `s` to `s + by` (mod `n`).
fn shift(n: usize, by: usize) -> Vec<u8> {
    (0..n).map(|s| ((s + by) % n) as u8).collect()
}

fn transposition(n: usize, i: usize, j: usize) -> Vec<u8> {
    let mut images: Vec<u8> = (0..n as u8).collect();
    images.swap(i, j);
    images
}

fn coxeter(n: usize) -> Vec<Move> {
    (0..n - 1)
        .map(|i| named(format!("({},{})", i, i + 1), transposition(n, i, i + 1)))
        .collect()
}

/// `n` burnt pancakes: pancake `p` starts in slot `p`, burnt side down
/// (twist 0); `Ri` reverses slots `0..i` and turns each of those pancakes
/// over.
fn burnt_pancake(spec: &str, n: usize, metric: Metric) -> Puzzle {
    let moves: Vec<Move> = (1..=n)
        .map(|i| {
            let mut m = named(format!("R{}", i), reversal(n, 0, i - 1));
            m.twist = (0..n).map(|s| u8::from(s < i)).collect();
            m
        })
        .collect();
    let labels = number_labels(0..=n - 1);
    let mut solved: Vec<u8> = (0..n as u8).collect();
    solved.extend(std::iter::repeat_n(0, n));
    Puzzle {
        spec: spec.to_string(),
        metric,
        slots: n,
        moves,
        grid: None,
        labels: labels.clone(),
        solved,
        reachable_states: None,
        coding: Some(Coding {
            class_labels: labels,
            modulus: vec![2; n],
            wild: Vec::new(),
        }),
        symmetries: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::parse_puzzle;

    fn images(p: &Puzzle, name: &str) -> Vec<u8> {
        p.moves.iter().find(|m| m.name == name).unwrap().perm.images().to_vec()
    }

    #[test]
    fn generators_follow_cayleypy_conventions() {
        let p = parse_puzzle("pancake:5", Metric::Mtm).unwrap();
        assert_eq!(p.moves.len(), 4);
        assert_eq!(images(&p, "R2"), [2, 1, 0, 3, 4]);
        let p = parse_puzzle("lrx:5:2", Metric::Mtm).unwrap();
        assert_eq!(images(&p, "X"), [2, 1, 0, 3, 4]);
        let p = parse_puzzle("top-spin:6", Metric::Mtm).unwrap();
        assert_eq!(images(&p, "T"), [3, 2, 1, 0, 4, 5]);
        assert_eq!(parse_puzzle("reversals:5", Metric::Mtm).unwrap().moves.len(), 10);
        assert_eq!(parse_puzzle("transpositions:6", Metric::Mtm).unwrap().moves.len(), 15);
        assert_eq!(parse_puzzle("cyclic-coxeter:7", Metric::Mtm).unwrap().moves.len(), 7);
        assert_eq!(parse_puzzle("star:7", Metric::Mtm).unwrap().moves.len(), 6);
        for spec in [
            "pancake:6",
            "burnt-pancake:4",
            "reversals:5",
            "lrx:6",
            "lrx:6:3",
            "top-spin:7:3",
            "coxeter:5",
            "cyclic-coxeter:5",
            "transpositions:5",
            "star:5",
        ] {
            assert!(parse_puzzle(spec, Metric::Mtm).unwrap().is_undirected(), "{}", spec);
        }
    }

    #[test]
    fn a_burnt_pancake_flip_turns_the_pancakes_over() {
        let p = parse_puzzle("burnt-pancake:3", Metric::Mtm).unwrap();
        let r2 = p.moves.iter().find(|m| m.name == "R2").unwrap();
        let once = p.apply(r2, &p.solved).unwrap();
        // Pancakes 1, 0, 2 from the top, the first two burnt side up.
        assert_eq!(once, [1, 0, 2, 1, 1, 0]);
        assert_eq!(p.apply(r2, &once).unwrap(), p.solved);
    }

    #[test]
    fn bad_arguments_are_refused_with_the_family_limit() {
        for (spec, needle) in [
            ("pancake:x", "expected a whole number, e.g. pancake:8"),
            ("pancake:1", "pancake:N needs N of at least 2"),
            ("lrx:2", "lrx:N needs N of at least 3"),
            ("pancake:21", "pancake:N takes N up to 20"),
            ("burnt-pancake:17", "burnt-pancake:N takes N up to 16"),
            ("lrx:6:6", "K runs from 1 to 5"),
            ("top-spin:6:7", "K runs from 2 to 6"),
            ("coxeter:6:2", "coxeter:N takes one number"),
        ] {
            let msg = parse_puzzle(spec, Metric::Mtm).unwrap_err().to_string();
            assert!(msg.contains(needle), "{}: {}", spec, msg);
        }
    }
}
