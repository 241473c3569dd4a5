//! The built-in generator families of S_N (shared/src/puzzle/sn_families.rs)
//! against the growth functions CayleyPy publishes
//! (tests/data/cayleypy-growth.csv: another program, its own GPU BFS, and
//! conventions these families follow so that tables compare directly).

use cayley_tests::published::published_table;
use cayley_tests::run::run_complete;

/// Each family and the sizes checked: every published size whose run takes
/// well under a second (top-spin's odd sizes generate A_N, so their rows
/// sum to N!/2).
const CHECKED: [(&str, std::ops::RangeInclusive<usize>); 7] = [
    ("cyclic-coxeter", 3..=8),
    ("pancake", 3..=8),
    ("burnt-pancake", 2..=6),
    ("reversals", 3..=8),
    ("top-spin", 4..=8),
    ("lrx", 3..=8),
    ("coxeter", 3..=7),
];

#[test]
fn every_family_matches_cayleypy_depth_by_depth() {
    for (family, sizes) in CHECKED {
        for n in sizes {
            let spec = format!("{}:{}", family, n);
            let expected = published_table("cayleypy-growth.csv", &spec);
            let run = run_complete(&spec);
            assert_eq!(run.result.depths, expected, "cayley run {}", spec);
        }
    }
}
