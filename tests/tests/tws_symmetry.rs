//! Symmetries declared in `.tws` files (docs/ARCHITECTURE.md, "Symmetry reduction"), end to end: the corner
//! positions of the 2×2×2 cube under U, R, F, whose symmetries are the
//! motions of the cube that fix the URF corner (a third of a turn about the
//! URF–DBL diagonal, and mirror images through planes holding it). Tables
//! are checked against the plain hash-set BFS of the same moves built from
//! the cube's geometry (tests/src/cube.rs), never against this program.

use cayley_tests::cube::{corner_position_generators, corner_positions_tws, Motion};
use cayley_tests::{cayley, cayley_env, json_u64s, read_json, reference_bfs, run_complete, stderr_text, test_dir};
use std::path::Path;

/// v ↦ (z, x, y): R → U → F → R, a proper rotation fixing URF.
const TURN: Motion = [[0, 0, 1], [1, 0, 0], [0, 1, 0]];
/// v ↦ (y, x, z): swaps R and U, fixes F; a mirror image, so it takes a
/// clockwise turn to an anticlockwise one (U to R', still a move).
const MIRROR: Motion = [[0, 1, 0], [1, 0, 0], [0, 0, 1]];
/// A quarter turn about the U axis: R goes to F and F to L, not a move.
const Y_TURN: Motion = [[0, 0, -1], [0, 1, 0], [1, 0, 0]];

/// U, R and F never move the DBL corner and are odd: the other seven
/// corners take every arrangement, 7! of them.
const STATES: u64 = 5040;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("tws:{}", path.display())
}

/// `cayley run SPEC extra…` into `dir/out`; its result.json.
fn run(dir: &Path, spec: &str, extra: &[&str]) -> serde_json::Value {
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    run_complete(&out, spec, extra)
}

/// The refusal of `cayley info SPEC extra…`: one line on stderr, a failed
/// exit.
fn refusal(spec: &str, extra: &[&str]) -> String {
    let mut args = vec!["info", spec];
    args.extend_from_slice(extra);
    let o = cayley(&args);
    let err = stderr_text(&o);
    assert!(!o.status.success(), "{} was accepted", spec);
    assert_eq!(err.trim().lines().count(), 1, "{}", err);
    err
}

#[test]
fn declared_symmetries_reduce_a_tws_job_to_the_same_table() {
    let dir = test_dir();
    let spec = write(
        dir.path(),
        "corners.tws",
        &corner_positions_tws("URF", &[("turn", TURN), ("mirror", MIRROR)]),
    );
    for (metric, all_powers) in [("mtm", true), ("stm", false)] {
        let expected = reference_bfs(&corner_position_generators("URF", all_powers));
        assert_eq!(expected.iter().sum::<u64>(), STATES);
        let reduced = run(dir.path(), &spec, &["--metric", metric]);
        // The stabiliser of a corner among the cube's 48 motions: 48 / 8.
        assert_eq!(reduced["symmetries"], 6, "{}", metric);
        assert_eq!(json_u64s(&reduced["depths"]), expected, "{}", metric);
        let stored: u64 = json_u64s(&reduced["depths_stored"]).iter().sum();
        assert!(stored < STATES, "{}: {} bits stored", metric, stored);
        let plain = run(dir.path(), &spec, &["--metric", metric, "--no-symmetry"]);
        assert_eq!(plain["symmetries"], 1);
        assert_eq!(json_u64s(&plain["depths"]), expected, "{}", metric);
    }
}

#[test]
fn false_symmetries_and_broken_ones_are_refused_by_name_and_line() {
    let dir = test_dir();
    let text = corner_positions_tws("URF", &[("turn", TURN), ("yturn", Y_TURN)]);
    let line = 1 + text.lines().position(|l| l == "Symmetry yturn").unwrap();
    let spec = write(dir.path(), "false.tws", &text);
    let err = refusal(&spec, &[]);
    assert!(
        err.contains(&format!("false.tws:{}", line)) && err.contains("'yturn' is not a symmetry"),
        "{}",
        err
    );
    // --no-symmetry does not make a false declaration acceptable.
    refusal(&spec, &["--no-symmetry"]);
    // Without F, the third of a turn takes R to F: refused, not trusted.
    let text = corner_positions_tws("URF", &[("turn", TURN), ("mirror", MIRROR)]);
    let spec = write(dir.path(), "c.tws", &text);
    let err = refusal(&spec, &["--moves", "U,R"]);
    assert!(
        err.contains("'turn' is not a symmetry") && err.contains("--moves U,R keeps only some moves"),
        "{}",
        err
    );
    // The mirror alone survives that restriction.
    let mirror_only = corner_positions_tws("URF", &[("mirror", MIRROR)]);
    let spec = write(dir.path(), "m.tws", &mirror_only);
    let json = run(dir.path(), &spec, &["--moves", "U,R"]);
    let expected = reference_bfs(&corner_position_generators("UR", true));
    assert_eq!(json_u64s(&json["depths"]), expected);
    // A malformed block: turn's permutation line one number short.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let line = 1 + lines.iter().position(|l| l == "Symmetry turn").unwrap() + 2;
    let numbers = &mut lines[line - 1];
    numbers.truncate(numbers.rfind(' ').unwrap());
    let short = lines.join("\n") + "\n";
    let err = refusal(&write(dir.path(), "short.tws", &short), &[]);
    assert!(
        err.contains(&format!("short.tws:{}", line)) && err.contains("8 pieces but this line has"),
        "{}",
        err
    );
}

#[test]
fn a_reduced_tws_job_resumes_from_the_definition_in_its_checkpoint() {
    let dir = test_dir();
    let ck = dir.path().join("ck");
    let out = dir.path().join("out");
    let spec = write(
        dir.path(),
        "corners.tws",
        &corner_positions_tws("URF", &[("turn", TURN), ("mirror", MIRROR)]),
    );
    let (ck, out) = (ck.to_str().unwrap(), out.to_str().unwrap());
    let o = cayley_env(
        &["run", &spec, "--checkpoint-dir", ck, "--out", out, "-q"],
        &[("CAYLEY_FAULT_DISK_FULL", "4:0")],
    );
    assert!(!o.status.success(), "the injected full disk went unnoticed");
    // The file is gone: resume must rebuild the puzzle, symmetries
    // included, from the text the checkpoint keeps.
    std::fs::remove_file(spec.trim_start_matches("tws:")).unwrap();
    let o = cayley(&["resume", ck, "--out", out, "-q"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    let json = read_json(&Path::new(out).join("result.json")).expect("result.json");
    assert_eq!(json["symmetries"], 6);
    assert_eq!(
        json_u64s(&json["depths"]),
        reference_bfs(&corner_position_generators("URF", true))
    );
}
