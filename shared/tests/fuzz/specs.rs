//! The puzzle spec parser (`loopover:3x3`, `sliding:2x3 --track 1-3`, …)
//! on specs built from its grammar, mutated, and arbitrary.

use crate::edits::{assert_clear_quoting, config, inputs};
use crate::puzzles::{assert_well_formed, same_puzzle};
use cayley_shared::puzzle::{parse_puzzle_with_file, Metric, SpecError};
use proptest::prelude::*;

/// A valid perm file: two 3-cycles and the symmetry that swaps them (a
/// symmetry with or without the inverses, so `--directed` parses too).
pub const PERM_TEXT: &str = "# C3 x C3\na: (1,2,3)\nb: (4 5 6)\nsymmetry swap: (1,4)(2,5)(3,6)\n";
/// A valid `.tws` file: a 3-cycle and a twisted piece.
pub const TWS_TEXT: &str = "Name Toy\nSet P 3 1\nSet T 1 3\nSolved\nP\n1 2 3\nT\n1\n0\nEnd\n\
    Move A\nP\n2 3 1\nEnd\nMove B\nT\n1\n1\nEnd\n";

const FAMILIES: &[&str] = &[
    "loopover",
    "sliding",
    "varikon",
    "turnstyle",
    "turnstyle-cayley",
    "perm",
    "tws",
    "LoopOver",
    "cube",
    "",
];

/// A size or count: mostly small, sometimes at or past the limits.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0..24u32).prop_map(|n| n.to_string()),
        1 => Just("256".to_string()),
        1 => Just("18446744073709551617".to_string()),
        1 => "[0-9a-z -]{0,4}",
    ]
}

/// The argument after the colon.
fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        (number(), number()).prop_map(|(r, c)| format!("{}x{}", r, c)),
        number(),
        Just("gens.txt".to_string()),
        Just(String::new()),
    ]
}

/// A `--track` list: numbers, ranges, labels and mistakes.
fn track_list() -> impl Strategy<Value = String> {
    let item = prop_oneof![
        (0..30u32).prop_map(|n| n.to_string()),
        (0..30u32, 0..30u32).prop_map(|(a, b)| format!("{}-{}", a, b)),
        Just("1-99999999999999999999".to_string()),
        Just("P2".to_string()),
        "[a-z0-9-]{0,3}",
    ];
    prop::collection::vec(item, 1..4).prop_map(|items| items.join(","))
}

/// A spec from the grammar: family, colon, argument, options.
fn grammar_spec() -> impl Strategy<Value = String> {
    (
        prop::sample::select(FAMILIES),
        prop_oneof![6 => Just(":"), 1 => prop::sample::select(&["", " : ", "::"][..])],
        argument(),
        prop::bool::weighted(0.15),
        any::<bool>(),
        prop::option::of(track_list()),
    )
        .prop_map(|(family, colon, arg, directed, no_symmetry, track)| {
            let mut spec = format!("{}{}{}", family, colon, arg);
            if directed {
                spec.push_str(" --directed");
            }
            if no_symmetry {
                spec.push_str(" --no-symmetry");
            }
            if let Some(list) = track {
                spec.push_str(" --track ");
                spec.push_str(&list);
            }
            spec
        })
}

/// A spec to try: from the grammar, mutated, or any text at all.
fn spec() -> impl Strategy<Value = String> {
    inputs(grammar_spec, 6, 3)
}

/// The definition file text a `perm:`/`tws:` spec is parsed with.
fn file_text(spec: &str) -> &'static str {
    if spec.to_ascii_lowercase().starts_with("tws") {
        TWS_TEXT
    } else {
        PERM_TEXT
    }
}

/// Parses `spec` and checks the outcome: a well-formed puzzle whose own
/// spec string parses back to the same puzzle, or a clear error.
fn check_spec(spec: &str, metric: Metric) {
    let text = file_text(spec);
    match parse_puzzle_with_file(spec, metric, Some(text)) {
        Ok(puzzle) => {
            assert_well_formed(&puzzle, spec);
            let again = parse_puzzle_with_file(&puzzle.spec, metric, Some(text))
                .unwrap_or_else(|e| panic!("{:?} parsed, its spec {:?} did not: {}", spec, puzzle.spec, e));
            same_puzzle(&puzzle, &again, spec);
        }
        Err(e) => {
            let message = e.to_string();
            assert_clear_quoting(&message, spec);
            if let SpecError::BadFile { path, .. } = &e {
                assert!(message.starts_with(path.as_str()), "{:?}: {}", spec, message);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(30_000))]

    #[test]
    fn specs_parse_to_puzzles_or_clear_errors(spec in spec(), stm in any::<bool>()) {
        check_spec(&spec, if stm { Metric::Stm } else { Metric::Mtm });
    }
}

#[test]
fn specs_at_the_size_limits() {
    // The largest puzzles a spec can name parse; one past them is refused
    // with the family's limit (perm.rs MAX_POINTS and MAX_RANKED_POINTS).
    for spec in [
        "loopover:16x16",
        "loopover:2x128",
        "sliding:4x5",
        "turnstyle:21",
        "turnstyle-cayley:256",
        "loopover:16x16 --track 1-256",
        "loopover:16x16 --no-symmetry --track 256",
    ] {
        check_spec(spec, Metric::Mtm);
        assert!(
            parse_puzzle_with_file(spec, Metric::Mtm, None).is_ok(),
            "{:?} refused",
            spec
        );
    }
    for (spec, limit) in [
        ("loopover:16x17", "at most 256"),
        ("sliding:2x11", "at most 20"),
        ("turnstyle:22", "from 4 to 21"),
        ("turnstyle-cayley:257", "from 4 to 256"),
    ] {
        check_spec(spec, Metric::Mtm);
        match parse_puzzle_with_file(spec, Metric::Mtm, None) {
            Ok(_) => panic!("{:?} parsed beyond the limit", spec),
            Err(e) => assert!(e.to_string().contains(limit), "{:?}: {}", spec, e),
        }
    }
}
