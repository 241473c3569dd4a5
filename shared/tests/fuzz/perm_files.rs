//! The `perm:FILE` parser on generated files (random permutations in cycle
//! notation, comments, declared symmetries), mutated files and arbitrary
//! text. An accepted file must round-trip: the puzzle's moves written back
//! as a file parse to the same moves.

use crate::edits::{config, inputs};
use crate::puzzles::{assert_names_the_line, assert_well_formed};
use cayley_shared::puzzle::perm::Perm;
use cayley_shared::puzzle::{parse_puzzle_with_file, Metric, Puzzle};
use proptest::prelude::*;

const PATH: &str = "fuzz.txt";

/// A permutation of `n` points in cycle notation, commas or spaces inside
/// cycles.
fn cycles_text(n: usize) -> impl Strategy<Value = String> {
    (
        Just((0..n).map(|i| i as u8).collect::<Vec<u8>>()).prop_shuffle(),
        any::<bool>(),
    )
        .prop_map(|(images, spaces)| {
            let text = Perm::from_images(images).expect("a shuffle").to_string();
            if spaces {
                text.replace(',', " ")
            } else {
                text
            }
        })
}

/// One line of a perm file.
fn line(n: usize) -> impl Strategy<Value = String> {
    let name = "[a-zA-Z][a-zA-Z0-9_']{0,3}";
    prop_oneof![
        6 => (name, cycles_text(n)).prop_map(|(name, c)| format!("{}: {}", name, c)),
        1 => (name, cycles_text(n)).prop_map(|(name, c)| format!("symmetry {}: {}", name, c)),
        1 => "# [ -~]{0,12}",
        1 => Just(String::new()),
        // The largest point there is.
        1 => Just("big: (1,256)".to_string()),
    ]
}

/// A whole file: a degree, then up to six lines.
fn file() -> impl Strategy<Value = String> {
    (2..10usize)
        .prop_flat_map(|n| prop::collection::vec(line(n), 1..7))
        .prop_map(|lines| lines.join("\n") + "\n")
}

/// A file to try: generated, mutated, or any text at all.
fn text() -> impl Strategy<Value = String> {
    inputs(file, 3, 4)
}

/// The puzzle's generators and symmetries written back as a perm file (a
/// trailing 1-cycle keeps the degree when the last point never moves).
fn written_back(p: &Puzzle) -> String {
    let last = p.slots - 1;
    let moved = p.moves.iter().any(|m| m.perm[last] as usize != last);
    let mut text = String::new();
    for (i, m) in p.moves.iter().enumerate() {
        let pad = if i == 0 && !moved {
            format!("({})", p.slots)
        } else {
            String::new()
        };
        text.push_str(&format!("{}: {}{}\n", m.name, m.perm, pad));
    }
    for (name, sigma) in &p.symmetries {
        text.push_str(&format!("symmetry {}: {}\n", name, sigma));
    }
    text
}

/// Parses `text` as a perm file and checks the outcome.
fn check_perm_file(text: &str, directed: bool, metric: Metric) {
    let spec = format!("perm:{}{}", PATH, if directed { " --directed" } else { "" });
    match parse_puzzle_with_file(&spec, metric, Some(text)) {
        Ok(p) => {
            assert_well_formed(&p, text);
            // Written back with every move, so parsed directed (nothing added).
            let back = written_back(&p);
            let q = parse_puzzle_with_file("perm:back.txt --directed", metric, Some(&back))
                .unwrap_or_else(|e| panic!("{:?} parsed, written back as {:?} it did not: {}", text, back, e));
            let moves = |p: &Puzzle| -> Vec<(String, Perm)> {
                p.moves.iter().map(|m| (m.name.clone(), m.perm.clone())).collect()
            };
            assert_eq!(moves(&p), moves(&q), "{:?}", text);
            assert_eq!(
                (p.slots, &p.solved, &p.labels),
                (q.slots, &q.solved, &q.labels),
                "{:?}",
                text
            );
            assert_eq!(p.symmetries, q.symmetries, "{:?}", text);
        }
        Err(e) => assert_names_the_line(&e, PATH, text),
    }
}

proptest! {
    #![proptest_config(config(25_000))]

    #[test]
    fn perm_files_parse_round_trip_or_name_the_line(text in text(), directed in any::<bool>(), stm in any::<bool>()) {
        check_perm_file(&text, directed, if stm { Metric::Stm } else { Metric::Mtm });
    }
}

#[test]
fn the_largest_point_is_accepted() {
    // Point 256 once made the image list empty (`0..256 as u8`) and panicked.
    for text in ["a: (1,256)\n", "a: (1,2)\nb: (255,256)(3,4)\n", "a: (1,2)(256)\n"] {
        check_perm_file(text, false, Metric::Mtm);
        let p = parse_puzzle_with_file("perm:f", Metric::Mtm, Some(text)).unwrap();
        assert_eq!(p.slots, 256, "{:?}", text);
    }
}
