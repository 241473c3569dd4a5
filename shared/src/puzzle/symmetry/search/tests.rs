use super::*;
use crate::puzzle::group::Chain;
use crate::puzzle::{parse_puzzle, Metric};
use std::collections::HashSet;

/// The S_N families of permutations (burnt pancakes are coded).
const FAMILIES: [&str; 8] = [
    "pancake",
    "reversals",
    "lrx",
    "top-spin",
    "coxeter",
    "cyclic-coxeter",
    "transpositions",
    "star",
];

fn found(spec: &str) -> FoundGroup {
    let p = parse_puzzle(spec, Metric::Mtm).unwrap();
    find_symmetries(&p).unwrap_or_else(|e| panic!("{}: {}", spec, e))
}

fn order(spec: &str) -> u128 {
    found(spec).order().to_u128().unwrap()
}

fn factorial(n: u128) -> u128 {
    (1..=n).product()
}

/// Every σ of S_n with σ M σ⁻¹ = M, by trying them all: an oracle written
/// without the search or `verify`.
fn brute_force_order(spec: &str) -> u128 {
    let p = parse_puzzle(spec, Metric::Mtm).unwrap();
    let n = p.slots;
    let moves: HashSet<Vec<u8>> = p.moves.iter().map(|m| m.perm.images().to_vec()).collect();
    let mut sigma: Vec<u8> = (0..n as u8).collect();
    let mut count = 0;
    loop {
        let normalises = moves.iter().all(|m| {
            // (σ m σ⁻¹)(σ(x)) = σ(m(x)).
            let mut image = vec![0u8; n];
            for x in 0..n {
                image[sigma[x] as usize] = sigma[m[x] as usize];
            }
            moves.contains(&image)
        });
        count += u128::from(normalises);
        if !next_permutation(&mut sigma) {
            return count;
        }
    }
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(a: &mut [u8]) -> bool {
    let Some(i) = (0..a.len().saturating_sub(1)).rev().find(|&i| a[i] < a[i + 1]) else {
        return false;
    };
    let j = (i + 1..a.len()).rev().find(|&j| a[j] > a[i]).unwrap();
    a.swap(i, j);
    a[i + 1..].reverse();
    true
}

#[test]
fn orders_of_the_families_are_the_known_ones() {
    for n in 3..=20u128 {
        assert_eq!(order(&format!("star:{}", n)), factorial(n - 1), "star:{}", n);
        assert_eq!(
            order(&format!("transpositions:{}", n)),
            factorial(n),
            "transpositions:{}",
            n
        );
        // The dihedral group of the N-gon.
        assert_eq!(order(&format!("cyclic-coxeter:{}", n)), 2 * n, "cyclic-coxeter:{}", n);
        // The path's reversal.
        assert_eq!(order(&format!("coxeter:{}", n)), 2, "coxeter:{}", n);
    }
    // Below 5 pancakes (0 1) and (0 2) are exchanged by (1 2) (brute force
    // agrees, in the next test).
    for n in 5..=20u128 {
        assert_eq!(order(&format!("pancake:{}", n)), 1, "pancake:{}", n);
    }
}

#[test]
fn orders_agree_with_trying_every_permutation() {
    for n in 4..=7 {
        for family in FAMILIES {
            let spec = format!("{}:{}", family, n);
            assert_eq!(order(&spec), brute_force_order(&spec), "{}", spec);
        }
        for spec in [format!("lrx:{}:2", n), format!("top-spin:{}:3", n)] {
            assert_eq!(order(&spec), brute_force_order(&spec), "{}", spec);
        }
    }
}

/// Euler's totient: the units mod `n`.
fn phi(n: u128) -> u128 {
    (1..=n)
        .filter(|&k| (1..=k).rev().find(|d| k % d == 0 && n % d == 0) == Some(1))
        .count() as u128
}

#[test]
fn loopover_has_its_board_symmetries_and_in_mtm_the_multipliers() {
    let widen = |p: &Perm| p.images().iter().map(|&x| x as u16).collect::<Vec<u16>>();
    for (rows, cols) in [
        (2, 2),
        (2, 3),
        (3, 3),
        (2, 5),
        (3, 4),
        (4, 4),
        (4, 6),
        (5, 5),
        (3, 7),
        (8, 8),
    ] {
        for metric in [Metric::Mtm, Metric::Stm] {
            let p = parse_puzzle(&format!("loopover:{}x{}", rows, cols), metric).unwrap();
            let g = find_symmetries(&p).unwrap();
            let gens: Vec<Vec<u16>> = g.stabilizer_generators(0).iter().map(widen).collect();
            let chain = Chain::generated(p.slots, &gens, &[]);
            let built_in: Vec<Vec<u16>> = p.symmetries.iter().map(|(_, s)| widen(s)).collect();
            for (name, s) in p.symmetries.iter().map(|(n, _)| n).zip(&built_in) {
                assert!(chain.contains(s), "{}x{} {}: {} is not found", rows, cols, metric, name);
            }
            assert_eq!(g.order(), chain.order());
            let declared = Chain::generated(p.slots, &built_in, &[]).order().to_u128().unwrap();
            let square = if rows == cols { 2 } else { 1 };
            // In STM a symmetry maps unit shifts to unit shifts: the board's
            // translations and mirrors (declared = R·C·4, ·2 when square,
            // fewer on 2 rows whose mirror is a translation). In MTM every
            // shift of a line is a move, so (r, c) ↦ (u·r, v·c) with u, v
            // units mod R and C also maps moves to moves: the affine maps
            // of both axes, R·φ(R)·C·φ(C), ·2 when square.
            let expected = match metric {
                Metric::Stm => declared,
                Metric::Mtm => rows * phi(rows) * cols * phi(cols) * square,
            };
            assert_eq!(g.order().to_u128(), Some(expected), "{}x{} {}", rows, cols, metric);
        }
    }
    for spec in ["loopover:2x5", "loopover:3x3"] {
        assert_eq!(order(spec), brute_force_order(spec), "{}", spec);
    }
}

#[test]
fn stabilisers_are_the_chain_levels() {
    let g = found("transpositions:9");
    assert_eq!(g.base.len(), 8);
    // G_k is S_{9−k} on the points after the first k base points.
    for k in 0..=8 {
        assert_eq!(g.stabilizer_order(k).to_u128(), Some(factorial(9 - k as u128)));
        for s in g.stabilizer_generators(k) {
            assert!(g.base[..k].iter().all(|&b| s[b] as usize == b));
        }
    }
    assert_eq!(g.largest_stabilizer_within(4096), Some(3));
    assert_eq!(found("pancake:9").largest_stabilizer_within(4096), None);
}

#[test]
fn coded_and_guarded_puzzles_are_not_searched() {
    for spec in ["burnt-pancake:4", "sliding:2x3", "loopover:2x3 --track 1-2"] {
        let p = parse_puzzle(spec, Metric::Mtm).unwrap();
        assert!(find_symmetries(&p).is_err(), "{}", spec);
    }
}

/// Prints how long the search takes on the largest families (run with
/// `--ignored --nocapture`; docs/history.md records the numbers).
#[test]
#[ignore]
fn timings() {
    let mut specs: Vec<String> = FAMILIES.iter().map(|f| format!("{}:20", f)).collect();
    specs.extend(["loopover:4x4", "loopover:6x6", "loopover:8x8", "loopover:5x12"].map(String::from));
    for spec in specs {
        let p = parse_puzzle(&spec, Metric::Mtm).unwrap();
        let start = std::time::Instant::now();
        let g = find_symmetries(&p).unwrap();
        println!(
            "{:<20} order {:>22}  {:>3} generators  {:>8.2} ms",
            spec,
            g.order(),
            g.generators.len(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}
