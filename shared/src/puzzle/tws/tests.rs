use super::*;

fn build(text: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    from_text("tws:t.tws", "t.tws", text, metric)
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
        ("Illegal\nEnd\n", "t.tws:6: unsupported keyword 'Illegal'"),
        ("End\n", "t.tws:6: End without an open"),
        ("Move A\nP\n1 2 3\nEnd\n", "t.tws:6: move A changes nothing"),
        (
            "Move A\nP\n2 1 3\nEnd\nMove A\nP\n2 1 3\nEnd\n",
            "t.tws:10: move A is already defined on line 6",
        ),
        ("", "t.tws: no Move blocks"),
        (
            // U's inverse is U' in mtm: a second move of that name.
            "Move U\nP\n2 3 1\nEnd\nMove U'\nP\n2 1 3\nEnd\n",
            "t.tws:10: the name U' (move U' or one of its powers) is already another move's",
        ),
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
        ("Move A\n", "t.tws:1: Move blocks must follow the Solved block"),
        (
            "Set P 3 1\nSolved\nP\n1 3 3\nEnd\n",
            "t.tws:4: the Solved block: set P skips piece 2",
        ),
        ("Set P 200 2\n", "400 points"),
    ] {
        let text = if text.contains("200") {
            format!("{}Solved\nEnd\nMove A\nEnd\n", text)
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

#[test]
fn a_move_with_too_many_powers_is_refused_in_mtm_only() {
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
    let err = build(&text, Metric::Mtm).unwrap_err().to_string();
    assert!(
        err.contains("t.tws:6: move A has order 608500527054420") && err.contains("--metric stm"),
        "{}",
        err
    );
    assert_eq!(names(&build(&text, Metric::Stm).unwrap()), ["A", "A'"]);
}
