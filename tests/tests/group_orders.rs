//! Schreier–Sims orders of groups read from files the tests write: S_n and
//! A_n from cycle notation, and the cubes from `.tws` definitions derived
//! from the cube's geometry (`cayley_tests::cube`).

use cayley_shared::job::Job;
use cayley_shared::puzzle::group::bignat::BigNat;
use cayley_shared::puzzle::group::group_order_exact;
use cayley_shared::puzzle::{parse_puzzle, Metric, Puzzle};
use cayley_tests::cube::cube_tws;

fn order(p: &Puzzle) -> String {
    let (generators, points) = p.point_generators();
    group_order_exact(points, &generators).to_string()
}

fn from_file(family: &str, name: &str, text: &str, metric: Metric) -> Puzzle {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    parse_puzzle(&format!("{}:{}", family, path.display()), metric).unwrap()
}

#[test]
fn symmetric_and_alternating_groups_from_cycle_notation() {
    for n in [3usize, 5, 8, 12, 20, 40] {
        let long: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        let text = format!("swap: (1,2)\nlong: ({})\n", long.join(","));
        let p = from_file("perm", "sn.txt", &text, Metric::Mtm);
        assert_eq!(order(&p), BigNat::factorial(n as u64).to_string(), "S_{}", n);
        // Consecutive 3-cycles generate A_n.
        let text: String = (1..=n - 2)
            .map(|i| format!("t{}: ({} {} {})\n", i, i, i + 1, i + 2))
            .collect();
        let p = from_file("perm", "an.txt", &text, Metric::Mtm);
        let half = BigNat::factorial(n as u64);
        assert_eq!(order(&p), half_of(&half), "A_{}", n);
    }
}

/// Decimal half of an even number (n! for n ≥ 2).
fn half_of(n: &BigNat) -> String {
    let digits: Vec<u32> = n.to_string().chars().map(|c| c.to_digit(10).unwrap()).collect();
    let mut out = String::new();
    let mut carry = 0;
    for d in digits {
        let cur = carry * 10 + d;
        out.push(char::from_digit(cur / 2, 10).unwrap());
        carry = cur % 2;
    }
    out.trim_start_matches('0').to_string()
}

#[test]
fn symmetric_group_from_a_tws_file() {
    let text = "Name S6\nSet P 6 1\nSolved\nP\n1 2 3 4 5 6\nEnd\n\
        Move swap\nP\n2 1 3 4 5 6\nEnd\nMove cycle\nP\n6 1 2 3 4 5\nEnd\n";
    let p = from_file("tws", "s6.tws", text, Metric::Mtm);
    assert_eq!(order(&p), "720");
}

#[test]
fn three_by_three_cube_has_43_quintillion_positions() {
    // "Generalized Twisty Polyhedra" (tests/data/published.md): 43,252,003,274,489,856,000 positions.
    for metric in [Metric::Mtm, Metric::Stm] {
        let p = from_file("tws", "cube3.tws", &cube_tws(3, "UDLRFB"), metric);
        // One slot per cubie position; orientation makes 8·3 + 12·2 points.
        assert_eq!(p.slots, 8 + 12);
        assert_eq!(p.point_generators().1, 8 * 3 + 12 * 2);
        assert_eq!(p.moves.len(), if metric == Metric::Mtm { 18 } else { 12 });
        assert_eq!(order(&p), "43252003274489856000");
        // Its ranks do not fit in 64 bits: refused by name, not attempted.
        let err = Job::new(p, None).unwrap_err().to_string();
        assert!(err.contains("ranks must fit in 64 bits"), "{}", err);
    }
}

#[test]
fn two_by_two_cube_with_a_fixed_corner_has_3674160_positions() {
    // "Generalized Twisty Polyhedra": 3,674,160 with one corner fixed (U, R, F never move DLB).
    let p = from_file("tws", "cube2.tws", &cube_tws(2, "URF"), Metric::Mtm);
    assert_eq!(order(&p), "3674160");
    // With all six faces the group also turns the whole cube: 24 rotations
    // times the positions with DLB fixed.
    let p = from_file("tws", "cube2all.tws", &cube_tws(2, "UDLRFB"), Metric::Mtm);
    assert_eq!(order(&p), (3_674_160u64 * 24).to_string());
}
