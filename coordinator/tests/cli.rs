//! The `cayley` command as a user runs it.

mod common;

use common::{cayley, stderr};

#[test]
fn run_writes_result_files_with_the_published_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let o = cayley(&["run", "loopover:2x3", "--out", out.to_str().unwrap(), "--threads", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["puzzle"], "loopover:2x3");
    assert_eq!(json["metric"], "mtm");
    assert_eq!(json["group_order"], "720");
    assert_eq!(json["states"], 720);
    assert_eq!(json["diameter"], 7);
    assert_eq!(json["complete"], true);
    // Published table, tests/data/loopover-mtm.csv.
    assert_eq!(
        json["depths"],
        serde_json::json!(cayley_tests::published::published_loopover_mtm("2x3"))
    );
    // One state per class of symmetric antipodes; the classes cover the
    // 3 states of depth 7.
    let antipodes = json["antipodes"].as_array().unwrap();
    let listed: u64 = antipodes.iter().map(|a| a["class_size"].as_u64().unwrap()).sum();
    assert_eq!(listed, 3);
    assert_eq!(json["depths_reduced"][7].as_u64().unwrap() as usize, antipodes.len());
    for a in antipodes {
        assert_eq!(a["state"].as_array().unwrap().len(), 6);
        assert_eq!(a["word"].as_str().unwrap().split(' ').count(), 7);
    }
    assert_eq!(json["level_seconds"].as_array().unwrap().len(), 8);
    let csv = std::fs::read_to_string(out.join("depths.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("depth,count"));
    assert_eq!(csv.lines().nth(8), Some("7,3"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("diameter 7"), "{}", stdout);
}

#[test]
fn a_scratch_folder_the_run_made_goes_with_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let run_with = |scratch: &std::path::Path, out: &str| {
        let out = dir.path().join(out);
        let o = cayley(&[
            "run",
            "loopover:2x3",
            "-q",
            "--scratch",
            scratch.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
        assert_eq!(
            json["depths"],
            serde_json::json!(cayley_tests::published::published_loopover_mtm("2x3"))
        );
    };
    // Made, with a parent, for this run: nothing of it stays.
    run_with(&dir.path().join("new/scratch"), "made");
    assert!(!dir.path().join("new").exists());
    // There before: it stays, without the temporary checkpoint.
    let existing = dir.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    run_with(&existing, "there");
    assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 0);
}

#[test]
fn max_depth_marks_the_table_partial() {
    let dir = tempfile::tempdir().unwrap();
    let o = cayley(&[
        "run",
        "loopover:3x3",
        "--max-depth",
        "3",
        "-q",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("result.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], false);
    assert_eq!(json["depths"], serde_json::json!([1, 12, 96, 736]));
    // A partial table has no diameter, only a depth reached.
    assert_eq!(json["diameter"], serde_json::Value::Null);
    assert_eq!(json["depth_reached"], 3);
    let svg = std::fs::read_to_string(dir.path().join("depths.svg")).unwrap();
    assert!(
        svg.contains("partial: depth 3 reached") && !svg.contains("diameter"),
        "{}",
        svg
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("PARTIAL"));
}

#[test]
fn bad_input_gives_one_clear_error_line() {
    // Refused before any output, but given a folder all the same: a test
    // never lets `run` default to ./cayley-out in the source tree.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "loopover:1x5", "--out", out], "at least 2 rows"),
        (&["run", "loopover:2x", "--out", out], "bad size"),
        (&["run", "loopover:axb", "--out", out], "bad size"),
        (&["run", "rubik:3", "--out", out], "known families: loopover"),
        (&["run", "loopover:5x5", "--out", out], "states would need"),
        // Unreduced, the 4×4 needs terabytes whatever disk CI has.
        (
            &["run", "loopover:4x4", "--no-symmetry", "--out", out],
            "too large for this disk",
        ),
        (
            &["info", "loopover:2x3", "--no-symmetry", "--shard-pieces", "9"],
            "--shard-pieces 9 is out of range",
        ),
        (
            &["info", "loopover:2x3", "--shard-pieces", "1"],
            "--shard-pieces does not apply",
        ),
        (
            &["run", "loopover:2x3", "--metric", "htm", "--out", out],
            "unknown metric",
        ),
    ];
    for (args, needle) in cases {
        let o = cayley(args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{:?} succeeded", args);
        assert!(err.contains(needle), "{:?}: {}", args, err);
        assert!(!err.contains("panicked"), "{:?}: {}", args, err);
        assert!(!dir.path().join("out").exists(), "{:?} wrote results", args);
        if !args.contains(&"--metric") {
            assert_eq!(err.trim().lines().count(), 1, "{:?}: {}", args, err);
        }
    }
}

#[test]
fn oversize_refusal_is_about_disk_with_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = stderr(&cayley(&[
        "run",
        "loopover:4x4",
        "--no-symmetry",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(err.contains("shards"), "{}", err);
    assert!(err.contains("checkpoint disk") && err.contains("free"), "{}", err);
    assert!(err.contains("20922789888000"), "{}", err);
}

#[test]
fn info_shows_order_and_plan() {
    let o = cayley(&["info", "loopover:3x3", "--no-symmetry"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("group order  181440"), "{}", text);
    assert!(text.contains("even permutations only"), "{}", text);
    assert!(text.contains("R1+1"), "{}", text);
    // By default Loopover is reduced by its board symmetries: 9
    // translations times the 4 reflections that keep rows as rows.
    let o = cayley(&["info", "loopover:3x3"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("reduced by a group of 36 symmetries"), "{}", text);
}

#[test]
fn help_documents_every_run_flag() {
    let text = String::from_utf8_lossy(&cayley(&["run", "--help"]).stdout).into_owned();
    for flag in [
        "--metric",
        "--out",
        "--threads",
        "--shard-pieces",
        "--max-depth",
        "--scratch",
        "--antipodes",
    ] {
        assert!(text.contains(flag), "{} missing from help", flag);
    }
}

#[test]
fn a_closed_stdout_stops_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // 400 generators of 60-cycles: `info` prints far more than a pipe holds.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.txt");
    let text: String = (0..400)
        .map(|k| {
            let cycle: Vec<String> = (0..60).map(|i| ((i * 7 + k) % 64 + 1).to_string()).collect();
            format!("g{}: ({})\n", k, cycle.join(" "))
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    let spec = format!("perm:{}", file.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_cayley"))
        .args(["info", &spec])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte and hang up, as `| head -c1` would.
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{}", err);
    assert_eq!(status.code(), Some(141), "{}", err);
}

#[test]
fn plan_projects_every_level_of_a_counted_table() {
    let dir = tempfile::tempdir().unwrap();
    // Loopover 2×3 MTM, tests/data/loopover-mtm.csv: depths 0–7.
    let csv = dir.path().join("depths.csv");
    std::fs::write(&csv, "depth,count\n0,1\n1,7\n2,31\n3,115\n4,274\n5,253\n6,36\n7,3\n").unwrap();
    let o = cayley(&[
        "plan",
        "loopover:2x3",
        "--levels",
        csv.to_str().unwrap(),
        "--checkpoint-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("levels       8 (depths 0-7): 8 counted"), "{}", text);
    let depths: Vec<u32> = text
        .lines()
        .filter(|l| l.contains("counted") && !l.starts_with("levels"))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(depths, (1..=7).collect::<Vec<_>>(), "{}", text);
    assert!(text.contains("\ntotal "), "{}", text);
    // A table of more states (720) than the puzzle has (the 2×2: at most
    // 4! = 24) is refused, before any calibration.
    let o = cayley(&["plan", "loopover:2x2", "--levels", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot be levels of 'loopover:2x2'"),
        "{}",
        stderr(&o)
    );
}

/// A closed stderr (`cayley run … 2>&1 | head -3`) ends the run as a
/// closed pipe ends any Unix filter (status 141), or the run finishes:
/// it never hangs (it spun on a core for good before).
#[test]
fn a_closed_stderr_ends_the_run_instead_of_hanging() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // A run ended by the closed pipe keeps its temporary checkpoint, as
    // any interrupted run does: in this test's folder, not the machine's
    // scratch, so that it goes with the folder.
    let scratch = dir.path().join("scratch");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cayley"))
        .args(["run", "loopover:3x4", "--threads", "2", "--out", out.to_str().unwrap()])
        .args(["--scratch", scratch.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two lines (the header and depth 1), then the reading end closes, as
    // `head -2` does: every later write to stderr fails.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    for _ in 0..2 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    }
    drop(stderr);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("cayley run did not finish with its stderr closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success() || status.code() == Some(141), "{:?}", status);
}
