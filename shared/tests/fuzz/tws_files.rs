//! The `.tws` parser on generated definitions (sets with orientations,
//! identical pieces, moves of some sets, declared symmetries), mutated ones
//! and arbitrary text. An accepted definition without orientation or
//! identical pieces must round-trip: written back as one set, it gives the
//! same moves, solved state and symmetries.

use crate::edits::{config, inputs};
use crate::puzzles::{assert_names_the_line, assert_well_formed};
use cayley_shared::puzzle::perm::Perm;
use cayley_shared::puzzle::{parse_puzzle_with_file, Metric, Puzzle, SpecError};
use proptest::prelude::*;

const PATH: &str = "fuzz.tws";

/// (name, pieces, orientations) of a `Set` line.
type Set = (&'static str, usize, usize);

fn numbers(values: &[usize]) -> String {
    values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" ")
}

/// A set's lines in a block: its name, a permutation line (1-based), and
/// maybe an orientation line.
fn set_lines(set: Set, identical: bool) -> impl Strategy<Value = Vec<String>> {
    let (name, pieces, orientations) = set;
    let perm = Just((1..=pieces).collect::<Vec<usize>>()).prop_shuffle();
    let ori = prop::option::of(prop::collection::vec(0..orientations, pieces));
    (perm, ori, 1..=pieces).prop_map(move |(mut perm, ori, top)| {
        if identical {
            // Pieces above `top` become copies of `top`: still 1..m, none missing.
            perm.iter_mut().for_each(|v| *v = (*v).min(top));
        }
        let mut lines = vec![name.to_string(), numbers(&perm)];
        lines.extend(ori.map(|o| numbers(&o)));
        lines
    })
}

/// A block (`Solved` or `Move NAME`) over some of the sets.
fn block(header: String, sets: Vec<Set>, identical: bool) -> impl Strategy<Value = Vec<String>> {
    let bodies: Vec<_> = sets.into_iter().map(|s| set_lines(s, identical)).collect();
    (bodies, prop::collection::vec(any::<bool>(), 3)).prop_map(move |(bodies, keep)| {
        let mut lines = vec![header.clone()];
        for (body, keep) in bodies.into_iter().zip(keep.into_iter().chain(std::iter::repeat(true))) {
            if keep {
                lines.extend(body);
            }
        }
        lines.push("End".to_string());
        lines
    })
}

/// A whole definition: `Set` lines, a `Solved` block, up to four moves and
/// maybe a `Symmetry` block: an arbitrary one (rarely a symmetry), or a copy
/// of the first move (a symmetry when that move is the only one: the move
/// conjugates its own powers to themselves).
fn definition() -> impl Strategy<Value = String> {
    // Distinct names mostly (mutations repeat them too).
    let names = prop::sample::subsequence(&["P", "C", "E", "T"][..], 1..4).prop_shuffle();
    let sets = names.prop_flat_map(|names| {
        let sizes = prop::collection::vec((1..7usize, 1..4usize), names.len());
        (Just(names), sizes).prop_map(|(names, sizes)| {
            names
                .into_iter()
                .zip(sizes)
                .map(|(n, (p, o))| (n, p, o))
                .collect::<Vec<Set>>()
        })
    });
    (sets, any::<bool>(), any::<bool>())
        .prop_flat_map(|(sets, named, identical)| {
            let move_names = prop::sample::subsequence(&["U", "R", "F", "A", "U'"][..], 1..5).prop_shuffle();
            let moves = move_names.prop_flat_map({
                let sets = sets.clone();
                move |names| {
                    let blocks: Vec<_> = names
                        .into_iter()
                        .map(|name| block(format!("Move {}", name), sets.clone(), false))
                        .collect();
                    blocks
                }
            });
            let head: Vec<String> = named
                .then(|| "Name Fuzz".to_string())
                .into_iter()
                .chain(sets.iter().map(|(n, p, o)| format!("Set {} {} {}", n, p, o)))
                .collect();
            let symmetry = block("Symmetry S".into(), sets.clone(), false);
            (
                Just(head),
                block("Solved".into(), sets.clone(), identical),
                moves,
                symmetry,
                0..3u8,
            )
        })
        .prop_map(|(head, solved, moves, symmetry, kind)| {
            let symmetry = match kind {
                1 => symmetry,
                2 => std::iter::once("Symmetry S".to_string())
                    .chain(moves[0][1..].iter().cloned())
                    .collect(),
                _ => Vec::new(),
            };
            let mut lines = head;
            lines.extend(solved);
            lines.extend(moves.into_iter().flatten());
            lines.extend(symmetry);
            lines.join("\n") + "\n"
        })
}

/// A definition to try: generated, mutated, or any text at all.
fn text() -> impl Strategy<Value = String> {
    inputs(definition, 3, 4)
}

/// A puzzle without orientation or identical pieces as a one-set `.tws`
/// file: the solved line says which piece sits in each position, a move's
/// (or symmetry's) line which position's content comes to each position.
fn written_back(p: &Puzzle) -> String {
    let n = p.slots;
    let mut piece_at = vec![0; n];
    for (piece, &slot) in p.solved.iter().enumerate() {
        piece_at[slot as usize] = piece + 1;
    }
    let comes_from = |perm: &Perm| -> Vec<usize> { (0..n).map(|j| perm.inverse()[j] as usize + 1).collect() };
    let mut text = format!("Set P {} 1\nSolved\nP\n{}\nEnd\n", n, numbers(&piece_at));
    for m in &p.moves {
        text.push_str(&format!("Move {}\nP\n{}\nEnd\n", m.name, numbers(&comes_from(&m.perm))));
    }
    for (name, sigma) in &p.symmetries {
        text.push_str(&format!("Symmetry {}\nP\n{}\nEnd\n", name, numbers(&comes_from(sigma))));
    }
    text
}

/// Parses `text` as a `.tws` file and checks the outcome.
fn check_tws(text: &str, metric: Metric) {
    match parse_puzzle_with_file(&format!("tws:{}", PATH), metric, Some(text)) {
        Ok(p) => {
            assert_well_formed(&p, text);
            if p.coding.is_none() {
                // Every move and its inverse are already there: in stm
                // each base move adds only its inverse, so nothing new.
                let back = written_back(&p);
                let q = parse_puzzle_with_file("tws:back.tws", Metric::Stm, Some(&back))
                    .unwrap_or_else(|e| panic!("{:?} parsed, written back as {:?} it did not: {}", text, back, e));
                let perms = |p: &Puzzle| {
                    let mut images: Vec<Vec<u8>> = p.moves.iter().map(|m| m.perm.images().to_vec()).collect();
                    images.sort();
                    images
                };
                assert_eq!(perms(&p), perms(&q), "{:?}", text);
                assert_eq!((p.slots, &p.solved), (q.slots, &q.solved), "{:?}", text);
                assert_eq!(p.symmetries, q.symmetries, "{:?}", text);
            }
        }
        // A well-formed file too big to build (its sets' pieces ×
        // orientations exceed the point limit) is refused as such.
        Err(SpecError::TooManyPoints { points, max, .. }) => {
            assert!(points > max, "{:?}: refused with {} points of {}", text, points, max)
        }
        Err(e) => assert_names_the_line(&e, PATH, text),
    }
}

proptest! {
    #![proptest_config(config(25_000))]

    #[test]
    fn tws_files_parse_round_trip_or_name_the_line(text in text(), stm in any::<bool>()) {
        check_tws(&text, if stm { Metric::Stm } else { Metric::Mtm });
    }
}

/// The case the fuzzer found (CI, 2026-11-24): 1 + 2·2 + 6·92 = 557 points,
/// a file without a mistake that is too big to build.
#[test]
fn a_file_with_too_many_points_is_refused_with_the_count() {
    let text = "Set E 1 1\nSet C 2 2\nSet T 6 92\nSolved\nT\n1 2 3 4 5 6\nEnd\nMove A\nC\n1 2\nEnd\n";
    match parse_puzzle_with_file(&format!("tws:{}", PATH), Metric::Mtm, Some(text)) {
        Err(SpecError::TooManyPoints { points, .. }) => assert_eq!(points, 1 + 2 * 2 + 6 * 92),
        other => panic!(
            "expected a refusal for too many points, got {:?}",
            other.map(|p| p.slots)
        ),
    }
}
