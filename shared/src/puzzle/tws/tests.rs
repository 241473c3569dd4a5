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

/// A5 on five positions: A cycles positions 1, 2, 3 and B positions 3, 4,
/// 5. Reversing the row (1↔5, 2↔4) turns a 3-cycle of 1, 2, 3 into one of
/// 5, 4, 3, that is B or B', and back: a symmetry in either metric.
const A5: &str = "Set P 5 1\nSolved\nP\n1 2 3 4 5\nEnd\n\
    Move A\nP\n2 3 1 4 5\nEnd\nMove B\nP\n1 2 4 5 3\nEnd\n";

#[test]
fn a_declared_symmetry_becomes_a_slot_permutation() {
    let text = format!("{}# reverse the row\nSymmetry flip\nP\n5 4 3 2 1\n0 0 0 0 0\nEnd\n", A5);
    for metric in [Metric::Mtm, Metric::Stm] {
        let p = build(&text, metric).unwrap();
        assert_eq!(p.symmetries.len(), 1);
        assert_eq!(p.symmetries[0].0, "flip");
        assert_eq!(p.symmetries[0].1.to_string(), "(1,5)(2,4)");
        assert!(p.moves.iter().all(|m| m.name != "flip"), "a symmetry is not a move");
    }
    // Two sets and a solved state that is not the identity: P's 4-cycle
    // and Q's swap are one move; reversing P turns the 4-cycle into its
    // inverse (a move in mtm), and a set left out of the block is fixed.
    let two = "Set P 4 1\nSet Q 2 1\nSolved\nP\n2 1 3 4\nEnd\nMove A\nP\n2 3 4 1\nQ\n2 1\nEnd\n";
    let p = build(&format!("{}Symmetry r\nP\n4 3 2 1\nEnd\n", two), Metric::Mtm).unwrap();
    assert_eq!(p.symmetries[0].1.to_string(), "(1,4)(2,3)");
    let p = build(&format!("{}Symmetry rq\nQ\n2 1\nP\n4 3 2 1\nEnd\n", two), Metric::Mtm).unwrap();
    assert_eq!(p.symmetries[0].1.to_string(), "(1,4)(2,3)(5,6)");
}

#[test]
fn a_false_or_malformed_symmetry_is_refused_with_its_line() {
    // A5's lines 1–13; the Symmetry block starts on line 14.
    for (body, needle) in [
        // (1 4) takes A to a 3-cycle of 4, 2, 3, which is not a move.
        (
            "Symmetry bad\nP\n4 2 3 1 5\nEnd\n",
            "t.tws:14: 'bad' is not a symmetry of tws:t.tws",
        ),
        (
            "Symmetry s\nP\n1 2 3\nEnd\n",
            "t.tws:16: set P has 5 pieces but this line has 3",
        ),
        (
            "Symmetry s\nP\n1 1 2 3 4\nEnd\n",
            "t.tws:16: symmetry s: set P is not a permutation: 1 appears twice",
        ),
        ("Symmetry s\nQ\n1 2 3 4 5\nEnd\n", "t.tws:15: unknown set 'Q'"),
        ("Symmetry s\nP\n5 4 3 2 1\n", "t.tws:14: symmetry s has no End"),
        (
            "Symmetry s\nP\n5 4 3 2 1\n0 1 0 0 0\nEnd\n",
            "t.tws:17: symmetry s: orientations of set P (1 of them): 1 is out of range",
        ),
        (
            "Symmetry s\nP\n5 4 3 2 1\n? 0 0 0 0\nEnd\n",
            "'?' is only allowed in the Solved block",
        ),
        (
            "Symmetry s\nP\n1 2 3 4 5\nEnd\n",
            "t.tws:14: symmetry s changes nothing",
        ),
        (
            "Symmetry A\nP\n5 4 3 2 1\nEnd\n",
            "t.tws:14: the name A is already used on line 6",
        ),
        ("Symmetry\n", "t.tws:14: expected 'Symmetry NAME'"),
        (
            "Symmetry A'\nP\n5 4 3 2 1\nEnd\n",
            "t.tws:14: the name A' is already a move's",
        ),
        (
            "Symmetry s\nP\n5 4 3 2 1\nEnd\nMove s\nP\n2 1 3 4 5\nEnd\n",
            "t.tws:18: move s is already defined on line 14",
        ),
    ] {
        let text = format!("{}{}", A5, body);
        match build(&text, Metric::Mtm) {
            Ok(_) => panic!("accepted:\n{}", text),
            Err(e) => assert!(e.to_string().contains(needle), "{:?}: {}", body, e),
        }
    }
    let early = "Set P 2 1\nSymmetry s\n";
    let err = build(early, Metric::Mtm).unwrap_err().to_string();
    assert!(
        err.contains("t.tws:2: Symmetry must follow the Solved block"),
        "{}",
        err
    );
}

#[test]
fn a_restriction_that_breaks_a_symmetry_makes_it_refused() {
    let text = format!("{}Symmetry flip\nP\n5 4 3 2 1\nEnd\n", A5);
    // Without B, flip takes A to a move that is not searched.
    let err = with_options(&text, Metric::Mtm, " --moves A").unwrap_err().to_string();
    assert!(
        err.contains("t.tws:14: 'flip' is not a symmetry") && err.contains("--moves A keeps only some moves"),
        "{}",
        err
    );
    assert_eq!(
        with_options(&text, Metric::Mtm, " --moves A,B")
            .unwrap()
            .symmetries
            .len(),
        1
    );
}

#[test]
fn coded_puzzles_refuse_symmetries_unless_the_sets_that_code_them_are_left_out() {
    // THREE_CYCLE's P is a plain 3-cycle, T one twisted piece (lines 1–20).
    let reverse = format!("{}Symmetry rev\nP\n3 2 1\nEnd\n", THREE_CYCLE);
    let err = build(&reverse, Metric::Mtm).unwrap_err().to_string();
    assert!(
        err.contains("t.tws:21: symmetry rev cannot be used") && err.contains("set T has 3 orientations"),
        "{}",
        err
    );
    // Without T the puzzle is plain, and reversing P inverts the 3-cycle.
    let p = with_options(&reverse, Metric::Mtm, " --omit T").unwrap();
    assert!(p.coding.is_none());
    assert_eq!(p.symmetries.len(), 1);
    assert_eq!(p.symmetries[0].1.to_string(), "(1,3)");
    // A twist of T alone: refused with T, the identity (dropped) without it.
    let twist = format!("{}Symmetry tw\nT\n1\n2\nEnd\n", THREE_CYCLE);
    assert!(build(&twist, Metric::Mtm)
        .unwrap_err()
        .to_string()
        .contains("cannot be used"));
    assert!(with_options(&twist, Metric::Mtm, " --omit T")
        .unwrap()
        .symmetries
        .is_empty());
    let identical = "Set P 4 1\nSolved\nP\n1 1 2 2\nEnd\nMove A\nP\n2 3 4 1\nEnd\nSymmetry s\nP\n4 3 2 1\nEnd\n";
    let err = build(identical, Metric::Mtm).unwrap_err().to_string();
    assert!(
        err.contains("t.tws:10: symmetry s cannot be used") && err.contains("set P has identical pieces"),
        "{}",
        err
    );
}
