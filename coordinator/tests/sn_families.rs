//! The built-in Cayley-graph families of the symmetric group, run as a user
//! runs them (`cayley run FAMILY:N`), against independent sources:
//! closed forms where they exist (adjacent transpositions: inversions, the
//! Mahonian numbers; all transpositions: N − cycles, the Stirling numbers
//! of the first kind) and otherwise a plain hash-set BFS over permutations
//! whose generators are written here from the families' definitions.

mod common;

use cayley_tests::bfs_counts;
use common::{assert_refused, cayley, stderr};

/// The depth table `cayley run spec` writes.
fn run_table(spec: &str) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = cayley(&["run", spec, "-q", "--threads", "2", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}: {}", spec, stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true, "{}", spec);
    json["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect()
}

/// The depth table and the order of the symmetries reduced by (1 without
/// reduction) of `cayley run spec`.
fn run_result(spec: &str) -> (Vec<u64>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["run"];
    args.extend(spec.split(' '));
    args.extend(["-q", "--threads", "2", "--out", out.to_str().unwrap()]);
    let o = cayley(&args);
    assert!(o.status.success(), "{}: {}", spec, stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true, "{}", spec);
    let depths = json["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    (depths, json["symmetries"].as_u64().unwrap())
}

/// One generator: a state to its neighbour.
type Step = Box<dyn Fn(&[u8]) -> Vec<u8>>;

type Moves = Vec<Step>;

/// The plain search (`cayley_tests::bfs_counts`) under `moves`.
fn bfs(start: Vec<u8>, moves: &[Step]) -> Vec<u64> {
    bfs_counts(start, |s| moves.iter().map(|m| m(s)).collect())
}

/// Reverses positions `i..=j`.
fn reverse(i: usize, j: usize) -> Step {
    Box::new(move |s: &[u8]| {
        let mut t = s.to_vec();
        t[i..=j].reverse();
        t
    })
}

/// Swaps positions `i` and `j`.
fn swap(i: usize, j: usize) -> Step {
    Box::new(move |s: &[u8]| {
        let mut t = s.to_vec();
        t.swap(i, j);
        t
    })
}

/// Rotates the whole arrangement left (`true`) or right.
fn rotate(left: bool) -> Step {
    Box::new(move |s: &[u8]| {
        let mut t = s.to_vec();
        if left {
            t.rotate_left(1)
        } else {
            t.rotate_right(1)
        }
        t
    })
}

fn identity(n: usize) -> Vec<u8> {
    (0..n as u8).collect()
}

/// Mahonian numbers: permutations of `n` by number of inversions (OEIS
/// A008302), by the recurrence of inserting the largest element.
fn mahonian(n: usize) -> Vec<u64> {
    let mut row = vec![1u64];
    for k in 2..=n {
        let mut next = vec![0u64; row.len() + k - 1];
        for (i, &c) in row.iter().enumerate() {
            for extra in 0..k {
                next[i + extra] += c;
            }
        }
        row = next;
    }
    row
}

/// Permutations of `n` at distance `d = n − cycles` under all
/// transpositions: the unsigned Stirling numbers of the first kind
/// `c(n, n − d)` (OEIS A132393), by `c(m, k) = c(m−1, k−1) + (m−1)·c(m−1, k)`.
fn stirling_by_distance(n: usize) -> Vec<u64> {
    let mut c = vec![vec![0u64; n + 1]; n + 1];
    c[0][0] = 1;
    for m in 1..=n {
        for k in 1..=m {
            c[m][k] = c[m - 1][k - 1] + (m as u64 - 1) * c[m - 1][k];
        }
    }
    (0..n).map(|d| c[n][n - d]).collect()
}

#[test]
fn adjacent_and_all_transpositions_match_their_closed_forms() {
    assert_eq!(run_table("coxeter:7"), mahonian(7));
    assert_eq!(run_table("transpositions:7"), stirling_by_distance(7));
}

/// The generators of `family` on `n` points, written here from the
/// families' definitions (the `lrx` and `top-spin` of the tests take K = 2
/// and the default K = 4).
fn family_moves(family: &str, n: usize) -> Moves {
    match family {
        "pancake" => (1..n).map(|i| reverse(0, i)).collect(),
        "reversals" => (0..n).flat_map(|i| (i + 1..n).map(move |j| reverse(i, j))).collect(),
        "star" => (1..n).map(|i| swap(0, i)).collect(),
        "coxeter" => (0..n - 1).map(|i| swap(i, i + 1)).collect(),
        "cyclic-coxeter" => {
            let mut cyclic: Moves = (0..n - 1).map(|i| swap(i, i + 1)).collect();
            cyclic.push(swap(0, n - 1));
            cyclic
        }
        "transpositions" => (0..n).flat_map(|i| (i + 1..n).map(move |j| swap(i, j))).collect(),
        "lrx" => vec![rotate(true), rotate(false), swap(0, 2)],
        "top-spin" => vec![rotate(true), rotate(false), reverse(0, 3)],
        other => panic!("no moves written for {}", other),
    }
}

/// The spec of `family` on `n` points with the K of [`family_moves`].
fn family_spec(family: &str, n: usize) -> String {
    match family {
        "lrx" => format!("lrx:{}:2", n),
        other => format!("{}:{}", other, n),
    }
}

const FAMILIES: [&str; 8] = [
    "pancake",
    "reversals",
    "star",
    "coxeter",
    "cyclic-coxeter",
    "transpositions",
    "lrx",
    "top-spin",
];

#[test]
fn the_other_families_match_a_plain_search() {
    let n = 7;
    for family in ["pancake", "reversals", "star", "cyclic-coxeter", "lrx", "top-spin"] {
        let spec = family_spec(family, n);
        assert_eq!(run_table(&spec), bfs(identity(n), &family_moves(family, n)), "{}", spec);
    }
}

/// The symmetries found by search reduce the families that have some, and
/// the reduced table is the unreduced one and the plain search's.
#[test]
fn found_symmetries_give_the_tables_of_the_unreduced_run() {
    for n in 5..=7 {
        for family in FAMILIES {
            let spec = family_spec(family, n);
            let expected = bfs(identity(n), &family_moves(family, n));
            let (reduced, symmetries) = run_result(&spec);
            assert_eq!(reduced, expected, "{}", spec);
            let (unreduced, none) = run_result(&format!("{} --no-symmetry", spec));
            assert_eq!(unreduced, expected, "{} --no-symmetry", spec);
            assert_eq!(none, 1, "{} --no-symmetry", spec);
            // Every family but pancake has symmetries (pancake none from 5
            // on: tests of the search), and at these sizes they are used;
            // except where the moves generate fewer than half of the n!
            // permutations (top-spin:5: D5, 10 elements; lrx:6:2: 72): the
            // group ranking then stores exactly the group, fewer bits than
            // any reduction of n! would.
            let reachable: u64 = expected.iter().sum();
            let factorial: u64 = (1..=n as u64).product();
            if family == "pancake" || 2 * reachable < factorial {
                assert_eq!(symmetries, 1, "{}", spec);
            } else {
                assert!(symmetries > 1, "{} was not reduced", spec);
            }
        }
    }
}

/// A perm file's symmetries are found without being declared: the
/// transpositions (1,k) of a star on 6 points are permuted by every
/// permutation of the leaves 2..6, 5! = 120 of them.
#[test]
fn a_perm_files_symmetries_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("star.txt");
    std::fs::write(&file, "a: (1,2)\nb: (1,3)\nc: (1,4)\nd: (1,5)\ne: (1,6)\n").unwrap();
    let spec = format!("perm:{}", file.display());
    let o = cayley(&["info", &spec]);
    let text = common::stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("symmetries   found: a group of order 120"), "{}", text);
    assert!(text.contains("cycles on slots numbered from 1"), "{}", text);
    let (table, symmetries) = run_result(&spec);
    assert!(symmetries > 1, "{}", symmetries);
    assert_eq!(table, bfs(identity(6), &family_moves("star", 6)));
}

#[test]
fn info_numbers_the_families_points_from_0_and_prints_the_found_group() {
    let o = cayley(&["info", "star:6"]);
    let text = common::stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("cycles on slots numbered from 0"), "{}", text);
    assert!(text.contains("  (0,5)    (0,5)"), "{}", text);
    // 5! = 120: every permutation of the leaves 1..5.
    assert!(text.contains("symmetries   found: a group of order 120"), "{}", text);
    let o = cayley(&["info", "star:6", "--no-symmetry"]);
    assert!(common::stdout(&o).contains("symmetries   off (--no-symmetry"));
}

#[test]
fn burnt_pancakes_match_a_plain_search_of_signed_stacks() {
    // A pancake is 2·number + side, side 1 burnt side up; flipping the top
    // i reverses them and turns each over.
    let n = 5usize;
    let flips: Moves = (1..=n)
        .map(|i| -> Step {
            Box::new(move |s: &[u8]| {
                let mut t = s.to_vec();
                t[..i].reverse();
                t[..i].iter_mut().for_each(|p| *p ^= 1);
                t
            })
        })
        .collect();
    let table = run_table("burnt-pancake:5");
    assert_eq!(table, bfs((0..n as u8).map(|p| 2 * p).collect(), &flips));
    // 2^5·5! signed stacks.
    assert_eq!(table.iter().sum::<u64>(), 32 * 120);
}

#[test]
fn family_arguments_are_checked_before_any_work() {
    assert_refused(&["run", "pancake:21"], &["pancake:N takes N up to 20"]);
    assert_refused(&["run", "lrx:6:0"], &["K runs from 1 to 5"]);
    assert_refused(&["run", "star:x"], &["expected a whole number"]);
}
