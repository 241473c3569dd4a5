//! The counting lower bound against the published counts and bounds
//! (tests/data/published.md, "Counting lower bounds").

use cayley_shared::puzzle::group::bignat::BigNat;
use cayley_shared::puzzle::perm::Perm;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::search::bound::{counting_bound, cumulative_counts, puzzle_bound, WordGrowth};
use cayley_tests::loopover_generators;
use cayley_tests::published::{published_loopover_mtm, published_table};

/// Jia, Zhang and Xiang, Table 5 (tests/data/published.md): `TABLE_5[r - 2][c - 2]` for `r` rows and `c` columns.
const TABLE_5: [[usize; 7]; 7] = [
    [3, 4, 6, 7, 8, 9, 10],
    [4, 6, 9, 10, 13, 14, 16],
    [6, 9, 11, 14, 17, 20, 23],
    [7, 10, 14, 18, 22, 25, 29],
    [8, 13, 17, 22, 26, 31, 35],
    [9, 14, 20, 25, 31, 36, 41],
    [10, 16, 23, 29, 35, 41, 48],
];

/// Boards where Table 5 lists a smaller number than the count over the
/// board's real generators (see `table_5_is_the_count_with_each_line_family_paired_with_its_own_length`).
const WEAKER_IN_TABLE_5: [(usize, usize); 12] = [
    (2, 6),
    (2, 7),
    (2, 8),
    (3, 5),
    (3, 7),
    (3, 8),
    (6, 2),
    (7, 2),
    (8, 2),
    (5, 3),
    (7, 3),
    (8, 3),
];

/// Jia, Zhang and Xiang, Table 2 (tests/data/published.md): the 4×4's
/// cumulative canonical-sequence counts for lengths 0…11.
const TABLE_2: [u128; 12] = [
    1,
    25,
    421,
    6685,
    105991,
    1680631,
    26647423,
    422511919,
    6699197545,
    106220067217,
    1684187202805,
    26703866863933,
];

/// Loopover states (tests/data/published.md): S_RC, or A_RC when R and C are odd.
fn loopover_states(rows: usize, cols: usize) -> BigNat {
    // (RC)!/2 = 3·4·…·RC.
    let first = if rows % 2 == 1 && cols % 2 == 1 { 3 } else { 2 };
    (first..=(rows * cols) as u64).fold(BigNat::one(), |acc, k| acc.times(k))
}

#[test]
fn four_by_four_counts_match_table_2() {
    let b = puzzle_bound(&parse_puzzle("loopover:4x4", Metric::Mtm).unwrap()).unwrap();
    let counts: Vec<String> = b.cumulative.iter().map(|c| c.to_string()).collect();
    let table_2: Vec<String> = TABLE_2.iter().map(u128::to_string).collect();
    assert_eq!(counts, table_2);
    assert_eq!(b.states.to_string(), "20922789888000");
    assert_eq!(b.bound, 11);
}

/// Each distance from solved holds at most the canonical words of its
/// length: the bound `--max-depth` plans its checkpoint disk with
/// (`Requirements::disk_bytes_to`). Against Table 2's counts (per length,
/// not cumulative), the published tables, and a guarded puzzle's moves
/// legal at once.
#[test]
fn every_distance_holds_at_most_its_canonical_words() {
    let words = WordGrowth::of(&parse_puzzle("loopover:4x4", Metric::Mtm).unwrap()).up_to(11);
    let per_length: Vec<u128> = (0..12)
        .map(|k| TABLE_2[k] - if k == 0 { 0 } else { TABLE_2[k - 1] })
        .collect();
    assert_eq!(words, per_length);
    let tables = ["2x2", "2x3", "2x4", "2x5", "3x3"]
        .map(|board| (format!("loopover:{board}"), published_loopover_mtm(board)))
        .into_iter()
        .chain(
            ["pancake:10", "burnt-pancake:9", "cyclic-coxeter:13"]
                .map(|name| (name.to_string(), published_table("cayleypy-growth.csv", name))),
        )
        .chain([("sliding:3x4".to_string(), published_table("sliding-tables.csv", "3x4"))]);
    for (spec, depths) in tables {
        let words = WordGrowth::of(&parse_puzzle(&spec, Metric::Mtm).unwrap()).up_to(depths.len() - 1);
        for (k, (&states, &bound)) in depths.iter().zip(&words).enumerate() {
            assert!(
                states as u128 <= bound,
                "{spec} depth {k}: {states} states, {bound} words"
            );
        }
    }
    // The sliding puzzle's moves are guarded (one per blank cell and
    // direction, 34 on the 3×4): at most 4 are legal at once, and after a
    // move the one undoing it never shortens a word.
    let sliding = parse_puzzle("sliding:3x4", Metric::Mtm).unwrap();
    assert_eq!(sliding.moves.len(), 34);
    let words: Vec<u128> = (0..=5).map(|k| if k == 0 { 1 } else { 4 * 3u128.pow(k - 1) }).collect();
    assert_eq!(WordGrowth::of(&sliding).up_to(5), words);
}

#[test]
fn table_5_from_the_real_loopover_generators() {
    // Generators written from the rules (cayley_tests), states from the
    // theorem of Jia, Zhang and Xiang (Thm 5.2.3); the puzzle module is not involved.
    for rows in 2..=8 {
        for cols in 2..=8 {
            let gens: Vec<Perm> = loopover_generators(rows, cols, false)
                .into_iter()
                .map(|g| Perm::from_images(g).unwrap())
                .collect();
            let b = counting_bound(&gens, &loopover_states(rows, cols)).unwrap();
            let table = TABLE_5[rows - 2][cols - 2];
            if WEAKER_IN_TABLE_5.contains(&(rows, cols)) {
                // Both are lower bounds; ours uses the board's true moves.
                assert!(b.bound > table, "{}x{}: {} vs {}", rows, cols, b.bound, table);
            } else {
                assert_eq!(b.bound, table, "{}x{}", rows, cols);
            }
        }
    }
}

#[test]
fn table_5_is_the_count_with_each_line_family_paired_with_its_own_length() {
    // All 49 entries of Table 5 come out of the same transfer matrix when an
    // R×C board is counted as R lines of R − 1 shifts and C lines of C − 1
    // shifts (the real board has R rows of C − 1 shifts and C columns of
    // R − 1). Square boards are the same either way. Rules, as in §4.3: two
    // shifts of one line never follow each other; shifts of parallel lines
    // commute, so they appear in increasing line order.
    for rows in 2..=8 {
        for cols in 2..=8 {
            let lines: Vec<(usize, usize)> = (0..rows).map(|i| (0, i)).chain((0..cols).map(|j| (1, j))).collect();
            let size = |family: usize| (if family == 0 { rows - 1 } else { cols - 1 }) as u64;
            let sizes: Vec<u64> = lines.iter().map(|&(f, _)| size(f)).collect();
            let matrix: Vec<Vec<u64>> = lines
                .iter()
                .map(|&(f, i)| {
                    lines
                        .iter()
                        .map(|&(g, j)| if f == g && j <= i { 0 } else { size(g) })
                        .collect()
                })
                .collect();
            let cumulative = cumulative_counts(&sizes, &matrix, &loopover_states(rows, cols)).unwrap();
            assert_eq!(cumulative.len() - 1, TABLE_5[rows - 2][cols - 2], "{}x{}", rows, cols);
        }
    }
}

#[test]
fn eight_by_eight_bound_goes_through_schreier_sims() {
    // 64 points: no ranking, the state count is the exact group order.
    let b = puzzle_bound(&parse_puzzle("loopover:8x8", Metric::Mtm).unwrap()).unwrap();
    assert_eq!(b.states, BigNat::factorial(64));
    assert_eq!(b.bound, 48);
    assert_eq!(b.classes, 16);
}

#[test]
fn sliding_puzzles_have_no_counting_bound() {
    let err = puzzle_bound(&parse_puzzle("sliding:3x3", Metric::Mtm).unwrap()).unwrap_err();
    assert!(err.to_string().contains("guarded moves"), "{}", err);
}
