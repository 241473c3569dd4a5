use super::*;

fn build(text: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    from_text("tws:t.tws", "t.tws", text, metric, &TwsOptions::default())
}

fn names(p: &Puzzle) -> Vec<&str> {
    p.moves.iter().map(|m| m.name.as_str()).collect()
}

const THREE_CYCLE: &str = "# a 3-cycle and a twist\nName Toy\nSet P 3 1\nSet T 1 3\nSolved\nP\n1 2 3\nT\n1\n0\nEnd\n\
    Move A\nP\n2 3 1\nEnd\nMove B\nT\n1\n1\nEnd\n";

#[test]
fn oriented_sets_make_a_coded_puzzle() {
    let p = build(THREE_CYCLE, Metric::Mtm).unwrap();
    // One slot per position: three of P, one of T.
    assert_eq!(p.slots, 3 + 1);
    assert_eq!(names(&p), ["A", "A'", "B", "B'"]);
    // Position 1 receives the content of position 2: 2 → 1 → 3 → 2.
    assert_eq!(p.moves[0].perm.to_string(), "(1,3,2)");
    // B leaves the T piece in place, twisted by 1.
    assert!(p.moves[2].perm.is_identity());
    assert_eq!(p.moves[2].twist, vec![0, 0, 0, 1]);
    assert_eq!(p.moves[3].twist, vec![0, 0, 0, 2]);
    let coding = p.coding.as_ref().unwrap();
    assert_eq!(coding.class_labels, ["P1", "P2", "P3", "T1"]);
    assert_eq!(coding.modulus, [1, 1, 1, 3]);
    // Solved: classes by position, then twists.
    assert_eq!(p.solved, vec![0, 1, 2, 3, 0, 0, 0, 0]);
    // As points, the twist turns the T piece's three orientation points.
    let (points, degree) = p.point_generators();
    assert_eq!(degree, 6);
    assert_eq!(points[2].to_string(), "(4,5,6)");
}

#[test]
fn powers_are_named_as_twsearch_names_them() {
    let text = "Set P 5 1\nSolved\nP\n1 2 3 4 5\nEnd\nMove U\nP\n2 3 4 5 1\nEnd\nMove S\nP\n2 1 3 4 5\nEnd\n";
    let p = build(text, Metric::Mtm).unwrap();
    assert_eq!(names(&p), ["U", "U2", "U2'", "U'", "S"]);
    assert!(p.coding.is_none());
    assert!(p.is_undirected());
    let p = build(text, Metric::Stm).unwrap();
    assert_eq!(names(&p), ["U", "U'", "S"]);
    assert_eq!(p.labels, ["1", "2", "3", "4", "5"]);
}

#[test]
fn solved_state_with_distinct_pieces_is_kept() {
    let text = "Set P 3 1\nSolved\nP\n2 3 1\nEnd\nMove A\nP\n2 1 3\nEnd\n";
    let p = build(text, Metric::Mtm).unwrap();
    // Piece 2 sits in position 1, so solved[piece 1] = slot 0.
    assert_eq!(p.solved, vec![2, 0, 1]);
}

#[test]
fn identical_pieces_share_a_class() {
    let text = "Set P 4 1\nSolved\nP\n1 1 2 2\nEnd\nMove A\nP\n2 3 4 1\nEnd\n";
    let p = build(text, Metric::Mtm).unwrap();
    let coding = p.coding.as_ref().unwrap();
    assert_eq!(coding.class_labels, ["1", "2"]);
    assert!(!coding.has_orientation());
    assert_eq!(&p.solved[..4], &[0, 0, 1, 1]);
}

#[test]
fn malformed_files_name_the_line() {
    let head = "Set P 3 2\nSolved\nP\n1 2 3\nEnd\n";
    for (body, needle) in [
        (
            "Move A\nP\n1 1 2\nEnd\n",
            "t.tws:8: move A: set P is not a permutation: 1 appears twice",
        ),
        (
            "Move A\nP\n1 2 3\n0 2 0\nEnd\n",
            "t.tws:9: move A: orientations of set P",
        ),
        (
            "Move A\nP\n1 2\nEnd\n",
            "t.tws:8: set P has 3 pieces but this line has 2 numbers",
        ),
        ("Move A\nQ\n1 2 3\nEnd\n", "t.tws:7: unknown set 'Q'"),
        ("Move A\n1 2 3\nEnd\n", "t.tws:7: numbers before a set name"),
        ("Move A\nP\n2 1 3\n", "t.tws:6: move A has no End"),
        ("Move A\nP\nEnd\n", "t.tws:7: set P has no permutation line"),
        ("Move A\nP\n2 x 3\nEnd\n", "'x' is not a number"),
        ("Move A\nP\n2 1 3\n0 0 0\n1 1 1\nEnd\n", "at most two lines"),
        ("Move A\nP\n2 1 3\nP\n2 1 3\nEnd\n", "t.tws:9: set P appears twice"),
        ("Illegal P 1 2\n", "t.tws:6: 'Illegal' is not supported"),
        ("MoveAlias A B\n", "t.tws:6: 'MoveAlias' is not supported"),
        (
            "Move A\nP\n2 1 3\n? 0 0\nEnd\n",
            "t.tws:9: move A: orientations of set P (2 of them): '?' is only allowed in the Solved block",
        ),
        ("End\n", "t.tws:6: End without an open"),
        ("Move A\nP\n1 2 3\nEnd\n", "t.tws:6: move A changes nothing"),
        (
            "Move A\nP\n2 1 3\nEnd\nMove A\nP\n2 1 3\nEnd\n",
            "t.tws:10: move A is already defined on line 6",
        ),
        ("", "t.tws: no Move blocks"),
    ] {
        let text = format!("{}{}", head, body);
        match build(&text, Metric::Mtm) {
            Ok(_) => panic!("accepted:\n{}", text),
            Err(e) => assert!(e.to_string().contains(needle), "{:?}: {}", body, e),
        }
    }
    for (text, needle) in [
        ("", "t.tws: no Solved block"),
        ("Set P 0 1\n", "t.tws:1: the number of pieces must be"),
        ("Set P 3\n", "t.tws:1: expected 'Set NAME PIECES ORIENTATIONS'"),
        ("Move A\n", "t.tws:1: Move must follow the Solved block"),
        (
            "Set P 3 1\nSolved\nP\n1 3 3\nEnd\n",
            "t.tws:4: the Solved block: set P skips piece 2",
        ),
        ("Set P 200 2\n", "'tws:t.tws' has 400 points"),
        (
            "Set P 3 1\nSolved\nP\n1 ? 3\nEnd\n",
            "t.tws:4: the Solved block: set P: '?' is only allowed in orientation lines",
        ),
    ] {
        let text = if text.contains("200") {
            format!(
                "{}Solved\nEnd\nMove A\nP\n{}\nEnd\n",
                text,
                (1..=200).rev().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
            )
        } else {
            text.to_string()
        };
        match build(&text, Metric::Mtm) {
            Ok(_) => panic!("accepted:\n{}", text),
            Err(e) => assert!(e.to_string().contains(needle), "{:?}: {}", text, e),
        }
    }
}

#[test]
fn twists_follow_the_piece_leaving_a_position() {
    // twsearch: new_o[j] = old_o[p[j]] + o[p[j]], so the orientation line is
    // indexed by the position a piece leaves. Here position 1 receives the
    // piece from 2, and the piece leaving position 1 (for position 3) turns.
    let text = "Set C 3 3\nSolved\nC\n1 2 3\n0 0 0\nEnd\nMove M\nC\n2 3 1\n1 0 0\nEnd\n";
    let p = build(text, Metric::Stm).unwrap();
    // Slot 1's piece goes to slot 3 with twist 1; the others untwisted.
    assert_eq!(p.moves[0].perm.images(), &[2, 0, 1]);
    assert_eq!(p.moves[0].twist, vec![1, 0, 0]);
    let (points, _) = p.point_generators();
    let m = &points[0];
    let point = |pos: usize, o: usize| pos * 3 + o;
    assert_eq!(m[point(0, 0)] as usize, point(2, 1));
    assert_eq!(m[point(0, 2)] as usize, point(2, 0));
    assert_eq!(m[point(1, 0)] as usize, point(0, 0));
    assert_eq!(m[point(2, 1)] as usize, point(1, 1));
    // Applied to coded states: the piece of slot 1 arrives in slot 3 twisted.
    let moved = p.apply(&p.moves[0], &p.solved).unwrap();
    assert_eq!(moved, vec![1, 2, 0, 0, 0, 1]);
}

fn with_options(text: &str, metric: Metric, args: &str) -> Result<Puzzle, SpecError> {
    let (_, options) = split_tws_args("tws:t.tws", &format!("t.tws{}", args)).unwrap();
    from_text("tws:t.tws", "t.tws", text, metric, &options)
}

/// Five positions; A swaps the first two, B cycles the last four.
const FIVE: &str = "Set P 5 1\nSolved\nP\n1 2 3 4 5\nEnd\n\
    Move A\nP\n2 1 3 4 5\nEnd\n";
const FIVE_B: &str = "Move B\nP\n1 5 2 3 4\nEnd\n";

#[test]
fn move_sequences_compose_first_to_last_and_may_come_first() {
    // S = A then B, declared before B; T = S then B (a sequence of a sequence).
    let text = format!("{}MoveSequence S A B\n{}MoveSequence T S B\n", FIVE, FIVE_B);
    let p = build(&text, Metric::Stm).unwrap();
    assert_eq!(names(&p), ["A", "B", "B'", "S", "S'", "T", "T'"]);
    let perm = |name: &str| p.moves.iter().find(|m| m.name == name).unwrap().perm.clone();
    // Slot images: A sends 0↔1; B sends 1→2→3→4→1. A then B sends 0→1→2,
    // 1→0, 2→3, 3→4, 4→1.
    assert_eq!(perm("S").images(), &[2, 0, 3, 4, 1]);
    assert_eq!(perm("S"), perm("B").after(&perm("A")));
    assert_eq!(perm("T"), perm("B").after(&perm("S")));
    for (body, needle) in [
        ("MoveSequence S A C\n", "t.tws:10: move sequence S: no move named 'C'"),
        ("MoveSequence S\n", "t.tws:10: expected 'MoveSequence NAME MOVE…'"),
        ("MoveSequence A B\n", "t.tws:10: move A is already defined on line 6"),
    ] {
        let text = format!("{}{}{}", FIVE, body, FIVE_B);
        let err = build(&text, Metric::Mtm).unwrap_err().to_string();
        assert!(err.contains(needle), "{}: {}", body, err);
    }
}

#[test]
fn rotations_are_not_generators_unless_listed() {
    let text = format!("{}Move x\nP\n5 1 2 3 4\nEnd\nMove UFv\nP\n1 2 3 5 4\nEnd\n", FIVE);
    assert_eq!(names(&build(&text, Metric::Stm).unwrap()), ["A"]);
    let p = with_options(&text, Metric::Stm, " --moves A,x").unwrap();
    assert_eq!(names(&p), ["A", "x", "x'"]);
}

#[test]
fn moves_option_keeps_powers_as_twsearch_does() {
    let text = format!("{}{}Move C\nP\n1 2 4 3 5\nEnd\n", FIVE, FIVE_B);
    let p = with_options(&text, Metric::Mtm, " --moves B,A").unwrap();
    assert_eq!(names(&p), ["A", "B", "B2", "B'"]);
    // A listed power keeps its multiples only.
    let p = with_options(&text, Metric::Mtm, " --moves B2").unwrap();
    assert_eq!(names(&p), ["B2"]);
    for (args, needle) in [
        (" --moves D", "--moves: no move named 'D'"),
        (" --moves B,B2", "move B is listed twice"),
    ] {
        let err = with_options(&text, Metric::Mtm, args).unwrap_err().to_string();
        assert!(err.contains(needle), "{}: {}", args, err);
    }
}

#[test]
fn question_marks_make_wild_classes() {
    let text = "Set C 3 3\nSolved\nC\n1 2 2\n? 0 0\nEnd\nMove M\nC\n2 3 1\n1 0 2\nEnd\n";
    let p = build(text, Metric::Stm).unwrap();
    let coding = p.coding.as_ref().unwrap();
    assert_eq!(coding.wild, vec![true, false]);
    // Slot 1's piece (wild) goes to slot 3 and would gain twist 1; slot
    // 3's piece goes to slot 2 with twist 2.
    let moved = p.apply(&p.moves[0], &p.solved).unwrap();
    assert_eq!(&moved[..3], &[1, 1, 0]);
    assert_eq!(&moved[3..], &[0, 2, 0], "the wild piece's twist is dropped");
    let mixed = "Set C 3 3\nSolved\nC\n1 2 2\n0 ? 0\nEnd\nMove M\nC\n2 3 1\nEnd\n";
    let err = build(mixed, Metric::Stm).unwrap_err().to_string();
    assert!(
        err.contains("t.tws:5: set C: identical pieces 2 must all have '?' orientation or none"),
        "{}",
        err
    );
}

#[test]
fn omitted_sets_are_left_out_with_their_moves() {
    let text = "Set P 3 1\nSet Q 2 1\nSolved\nP\n1 2 3\nQ\n1 2\nEnd\n\
        Move A\nP\n2 3 1\nEnd\nMove B\nQ\n2 1\nEnd\n";
    let p = with_options(text, Metric::Stm, " --omit Q").unwrap();
    assert_eq!(p.slots, 3);
    assert_eq!(names(&p), ["A", "A'"]);
    let err = with_options(text, Metric::Stm, " --omit R").unwrap_err().to_string();
    assert!(err.contains("--omit R: there is no set of that name"), "{}", err);
    let err = with_options(text, Metric::Stm, " --omit P,Q").unwrap_err().to_string();
    assert!(err.contains("no move is left"), "{}", err);
}

#[test]
fn definitions_of_any_size_give_their_group() {
    // Two sets of 150 positions with a 150-cycle and a swap each: 300 points.
    let cycle: Vec<String> = (0..150).map(|i| ((i + 149) % 150 + 1).to_string()).collect();
    let mut swap: Vec<String> = (1..=150).map(|i| i.to_string()).collect();
    swap.swap(0, 1);
    let (cycle, swap) = (cycle.join(" "), swap.join(" "));
    let text = format!(
        "Set P 150 1\nSet Q 150 1\nSolved\nEnd\nMove C\nP\n{c}\nQ\n{c}\nEnd\nMove S\nP\n{s}\nEnd\n",
        c = cycle,
        s = swap
    );
    let err = build(&text, Metric::Mtm).unwrap_err();
    assert!(matches!(err, SpecError::TooManyPoints { points: 300, .. }), "{}", err);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tws");
    std::fs::write(&path, &text).unwrap();
    let group = tws_point_group("tws:big", path.to_str().unwrap(), Metric::Stm).unwrap();
    assert_eq!(group.degree, 300);
    assert_eq!(group.generators.len(), 3); // C, C', S
}

#[test]
fn a_move_with_too_many_powers_is_refused() {
    // Cycles of the first primes (and 4) over 240 pieces: order 6·10^14.
    let mut comes_from: Vec<usize> = Vec::new();
    for len in [3, 4, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41] {
        let start = comes_from.len();
        comes_from.extend((0..len).map(|i| start + (i + 1) % len + 1));
    }
    let n = comes_from.len();
    let line: Vec<String> = comes_from.iter().map(|v| v.to_string()).collect();
    let solved: Vec<String> = (1..=n).map(|v| v.to_string()).collect();
    let text = format!(
        "Set P {} 1\nSolved\nP\n{}\nEnd\nMove A\nP\n{}\nEnd\n",
        n,
        solved.join(" "),
        line.join(" ")
    );
    for metric in [Metric::Mtm, Metric::Stm] {
        let err = build(&text, metric).unwrap_err().to_string();
        // lcm(3, 4, 5, 7, 11, …, 41) = 4 · 3 · 5 · 7 · 11 · 13 · 17 · 19 · 23 · 29 · 31 · 37 · 41.
        assert!(err.contains("move A has order 608500527054420"), "{}", err);
    }
}
