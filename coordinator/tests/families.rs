//! The `cayley` command on the puzzle families, `bound`, and bad files.

use std::path::Path;
mod common;

use common::{assert_refused, cayley, stderr, stdout};

/// Writes `text` to `dir/name` and returns the spec `family:path`.
fn spec_file(dir: &Path, family: &str, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("{}:{}", family, path.display())
}

/// One corner that can be twisted in place: 3 orientations.
const TWIST: &str = "Name Twist\nSet CORNER 1 3\nSolved\nCORNER\n1\n0\nEnd\nMove T\nCORNER\n1\n1\nEnd\n";

#[test]
fn bound_prints_table_2_and_the_bound() {
    let o = cayley(&["bound", "loopover:4x4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // Jia, Zhang and Xiang, Table 2 (tests/data/published.md).
    assert!(text.contains("     2  421\n"), "{}", text);
    assert!(text.contains("    11  26703866863933\n"), "{}", text);
    assert!(text.contains("states      20922789888000"), "{}", text);
    assert!(text.contains("bound       11"), "{}", text);
    assert_refused(&["bound", "sliding:3x3"], &["guarded moves"]);
}

#[test]
fn perm_file_runs_a5() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "perm", "a5.txt", "a: (1 2 3)\nb: (3 4 5)\n");
    let out = dir.path().join("out");
    let o = cayley(&["run", &spec, "-q", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    // D'Eon and Nehaniv, §5 (tests/data/published.md): diameter 6, one antipode, (1 2)(4 5).
    assert_eq!(json["diameter"], 6);
    assert_eq!(json["states"], 60);
    let antipodes = json["antipodes"].as_array().unwrap();
    assert_eq!(antipodes.len(), 1);
    assert_eq!(antipodes[0]["state"], serde_json::json!(["2", "1", "3", "5", "4"]));
}

#[test]
fn info_shows_group_orders_of_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let twist = spec_file(dir.path(), "tws", "twist.tws", TWIST);
    for (args, needles) in [
        (vec!["info", "varikon"], vec!["group order  40320", "reachable    20160", "when . is in slot 8"]),
        (vec!["info", "sliding:3x3"], vec!["group order  362880", "reachable    181440"]),
        (vec!["info", "turnstyle:12"], vec!["group order  39916800", "F12"]),
        (vec!["info", "turnstyle-cayley:12"], vec!["group order  479001600", "swap"]),
        (vec!["info", "loopover:8x8"], vec!["group order  126886932185884164103433389335161480802865516174545192198801894375214704230400000000000000", "search       'loopover:8x8' cannot be searched"]),
        (vec!["info", twist.as_str()], vec!["group order  3\n", "positions    3 (counted without searching)", "twists [2]"]),
        (vec!["info", "loopover:4x4", "--track", "1-8"], vec!["positions    518918400", "shard classes"]),
    ] {
        let o = cayley(&args);
        assert!(o.status.success(), "{:?}: {}", args, stderr(&o));
        let text = stdout(&o);
        for needle in needles {
            assert!(text.contains(needle), "{:?}: {}", args, text);
        }
    }
}

/// Runs `cayley run` with `args` into a fresh folder and returns result.json.
fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-q", "--out", out.to_str().unwrap()]);
    let o = cayley(&full);
    assert!(o.status.success(), "{:?}: {}", args, stderr(&o));
    serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap()
}

#[test]
fn oriented_and_identical_tws_files_run() {
    let dir = tempfile::tempdir().unwrap();
    let twist = spec_file(dir.path(), "tws", "twist.tws", TWIST);
    // One corner twisted in place: T and T' reach its other two twists.
    let json = run_json(dir.path(), &[&twist]);
    assert_eq!(json["states"], 3);
    assert_eq!(json["diameter"], 1);
    assert_eq!(json["complete"], true);
    // 1 1 2 2 on a 4-cycle: the four rotations, each one move (A, A2, A').
    let identical = spec_file(
        dir.path(),
        "tws",
        "same.tws",
        "Set P 4 1\nSolved\nP\n1 1 2 2\nEnd\nMove A\nP\n2 3 4 1\nEnd\n",
    );
    let json = run_json(dir.path(), &[&identical]);
    assert_eq!(json["states"], 4);
    assert_eq!(json["diameter"], 1);
    assert_eq!(json["complete"], true);
    // Known before searching: the group ranking numbers the cosets of the
    // solved state's stabiliser (Z4 on the slots, stabiliser 1: 4).
    assert_eq!(json["reachable_states"], "4");
}

#[test]
fn track_runs_the_coset_space_through_workers() {
    let dir = tempfile::tempdir().unwrap();
    // 9·8·7·6 placements of pieces 1 to 4, with two in-process workers over
    // gRPC and several shards.
    let json = run_json(
        dir.path(),
        &[
            "loopover:3x3",
            "--track",
            "1-4",
            "--workers",
            "2",
            "--shard-pieces",
            "2",
        ],
    );
    assert_eq!(json["states"], 3024);
    assert_eq!(json["complete"], true);
    assert_eq!(json["puzzle"], "loopover:3x3 --track 1-4");
    let state = json["antipodes"][0]["state"].as_array().unwrap();
    assert_eq!(state.iter().filter(|l| *l == "·").count(), 5);
    let out = dir.path().join("refused");
    let out = out.to_str().unwrap();
    assert_refused(
        &["run", "loopover:3x3", "--track", "0-2", "--out", out],
        &["no piece is labelled '0'"],
    );
    let twist = spec_file(dir.path(), "tws", "twist.tws", TWIST);
    assert_refused(
        &["run", &twist, "--track", "1", "--out", out],
        &["--track applies to puzzles of distinct pieces"],
    );
    let o = cayley(&["bound", "loopover:4x4", "--track", "1-8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("states      518918400"), "{}", stdout(&o));
}

#[test]
fn malformed_files_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("perm", "a: (1,2,3\n", ":1: unclosed '('"),
        ("perm", "a: (1,2)\nb: (2,3,2)\n", ":2: point 2 appears twice"),
        ("perm", "a: (0,1)\n", ":1: point 0"),
        ("perm", "a: (1,999)\n", ":1: point 999 is out of range"),
        ("perm", "a: (1,2)\na: (1,3)\n", ":2: generator name 'a' is already used"),
        ("perm", "\n# nothing\n", "no generators"),
        (
            "tws",
            "Set P 3 1\nSolved\nP\n1 2 3\nEnd\nMove A\nP\n1 1 2\nEnd\n",
            ":8: move A: set P is not a permutation",
        ),
        ("tws", "Set P 3 1\nIllegal\n", ":2: 'Illegal' is not supported"),
        (
            "tws",
            "Set P 3 1\nSolved\nP\n1 2 3\nEnd\nMove A\nP\n2 1\nEnd\n",
            ":8: set P has 3 pieces",
        ),
    ];
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for (i, (family, text, needle)) in cases.iter().enumerate() {
        let name = format!("bad{}.{}", i, family);
        let spec = spec_file(dir.path(), family, &name, text);
        let path = spec.split_once(':').unwrap().1.to_string();
        for args in [
            vec!["run", &spec, "--out", out],
            vec!["info", &spec],
            vec!["bound", &spec],
        ] {
            assert_refused(&args, &[&path, needle]);
        }
    }
}

#[test]
fn info_gives_the_group_of_files_beyond_256_points() {
    // 100 pieces with 3 orientations (300 points): a 100-cycle, a swap and
    // a twist of piece 1 generate Z_3 ≀ S_100, of order 3^100 · 100!.
    let cycle: Vec<String> = (0..100).map(|i| ((i + 99) % 100 + 1).to_string()).collect();
    let mut swap: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    swap.swap(0, 1);
    let plain: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let mut twist = vec!["0"; 100];
    twist[0] = "1";
    let text = format!(
        "Name Big\nSet P 100 3\nSolved\nEnd\nMove C\nP\n{}\nEnd\nMove S\nP\n{}\nEnd\nMove T\nP\n{}\n{}\nEnd\n",
        cycle.join(" "),
        swap.join(" "),
        plain.join(" "),
        twist.join(" ")
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path(), "tws", "big.tws", &text);
    let expected = (0..100).fold(
        cayley_shared::puzzle::group::bignat::BigNat::factorial(100),
        |acc, _| acc.times(3),
    );
    let o = cayley(&["info", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("group order  {}\n", expected)), "{}", out);
    assert!(out.contains("points       300"), "{}", out);
    assert!(out.contains("search       300 points"), "{}", out);
}

#[test]
fn tws_options_and_refusals_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Set C 2 1\nSet E 3 1\nSolved\nEnd\nMove A\nC\n2 1\nE\n2 3 1\nEnd\nMove B\nE\n2 1 3\nEnd\n";
    let spec = spec_file(dir.path(), "tws", "two.tws", text);
    // --moves A: one generator; --omit E: the sets left are C, moved by A alone.
    let o = cayley(&["info", &spec, "--moves", "A"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("group order  6\n"), "{}", stdout(&o));
    let o = cayley(&["info", &spec, "--omit", "E"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("group order  2\n"), "{}", stdout(&o));
    assert_refused(&["info", &spec, "--moves", "Z"], &["--moves: no move named 'Z'"]);
    assert_refused(&["info", "loopover:3x3", "--moves", "R1+1"], &["apply to tws: files"]);
    let illegal = spec_file(dir.path(), "tws", "illegal.tws", &format!("{}Illegal E 1 2\n", text));
    assert_refused(&["info", &illegal], &["illegal.tws:15: 'Illegal' is not supported"]);
}
