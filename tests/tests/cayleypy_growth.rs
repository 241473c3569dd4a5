//! The built-in generator families of S_N (shared/src/puzzle/sn_families.rs)
//! against the growth functions CayleyPy publishes
//! (tests/data/cayleypy-growth.csv: another program, its own GPU BFS, and
//! conventions these families follow so that tables compare directly).

use cayley_tests::published::published_table;
use cayley_tests::run::run_complete;

/// `cayley run FAMILY:N` for every `N` in `sizes`, compared depth by depth.
fn agrees_with_cayleypy(family: &str, sizes: std::ops::RangeInclusive<usize>) {
    for n in sizes {
        let spec = format!("{}:{}", family, n);
        let expected = published_table("cayleypy-growth.csv", &spec);
        let run = run_complete(&spec);
        assert_eq!(run.result.depths, expected, "cayley run {}", spec);
    }
}

#[test]
fn cyclic_coxeter_matches_cayleypy() {
    agrees_with_cayleypy("cyclic-coxeter", 3..=8);
}

#[test]
fn pancake_matches_cayleypy() {
    agrees_with_cayleypy("pancake", 3..=8);
}

#[test]
fn burnt_pancake_matches_cayleypy() {
    agrees_with_cayleypy("burnt-pancake", 2..=6);
}

#[test]
fn reversals_match_cayleypy() {
    agrees_with_cayleypy("reversals", 3..=8);
}

#[test]
fn top_spin_matches_cayleypy_including_the_alternating_odd_sizes() {
    agrees_with_cayleypy("top-spin", 4..=8);
}

#[test]
fn lrx_matches_cayleypy() {
    agrees_with_cayleypy("lrx", 3..=8);
}

#[test]
fn coxeter_matches_cayleypy() {
    agrees_with_cayleypy("coxeter", 3..=7);
}
