//! No work is lost when `cayley run` ends without results (docs/guide.md, "Checkpoints and resume"): the
//! checkpoint, a temporary one included, is kept and the command that
//! continues it printed; running that command finishes the job, into the
//! run's result folder. A result folder that cannot be written is refused
//! before anything is computed. The table
//! is Loopover 2×5 MTM from tests/data/loopover-mtm.csv. A resumed job keeps
//! the memory budget it was started with. A disk too small for the planned
//! checkpoint is refused before anything is made, unless the user says to
//! go on (free space faked with CAYLEY_FAULT_FREE_BYTES). A depth-limited
//! run keeps within
//! the disk its pre-flight planned (counts at depth k are at most 17^k,
//! the words of length k over Loopover 3×4's 17 generators).

use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::search::resources::requirements;
use cayley_tests::checkpoint::printed_resume_dir;
use cayley_tests::published::published_loopover_mtm;
use cayley_tests::{cayley, cayley_env, json_u64s, read_json, stderr_text, test_dir};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn run_with_an_unwritable_out_is_refused_before_any_checkpoint_exists() {
    let root = test_dir();
    // A directory below a regular file cannot be created, even by root.
    let blocker = root.path().join("a-file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let unwritable = blocker.join("out");
    let scratch = root.path().join("scratch");
    let given = root.path().join("ck");
    for checkpoint in [None, Some(&given)] {
        let mut args = vec!["run", "loopover:2x5", "--out", s(&unwritable), "--scratch", s(&scratch)];
        if let Some(ck) = checkpoint {
            args.extend(["--checkpoint-dir", s(ck)]);
        }
        let o = cayley(&args);
        let err = stderr_text(&o);
        assert_eq!(o.status.code(), Some(1), "{:?}: {}", args, err);
        assert_eq!(err.trim().lines().count(), 1, "{}", err);
        assert!(err.contains(s(&unwritable)), "the output folder is not named: {}", err);
        // Refused before the first level: no checkpoint, kept or temporary.
        assert!(!given.exists() && !scratch.exists(), "{:?} made a checkpoint", args);
    }
}

#[test]
fn sigterm_stops_a_run_cleanly_and_prints_the_resume_command() {
    use cayley_tests::procs::signal;
    use std::io::Read;
    let root = test_dir();
    let scratch = root.path().join("scratch");
    let out = root.path().join("out");
    let mut run = std::process::Command::new(cayley_tests::cayley_bin())
        .args(["run", "loopover:2x5", "--threads", "1", "-q"])
        .args(["--scratch", s(&scratch), "--out", s(&out)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start cayley run");
    // Terminated once its temporary checkpoint has recorded level 2.
    let levels = || {
        std::fs::read_dir(&scratch)
            .into_iter()
            .flatten()
            .filter_map(|e| read_json(&e.ok()?.path().join("manifest.json")))
            .map(|m| m["levels"].as_array().map_or(0, Vec::len))
            .max()
            .unwrap_or(0)
    };
    let mut exited = None;
    let reached = cayley_tests::wait_for(std::time::Duration::from_secs(120), || {
        exited = run.try_wait().expect("run status");
        exited.is_some() || levels() > 2
    });
    assert!(reached && exited.is_none(), "level 2 never recorded: {:?}", exited);
    signal(&run, libc::SIGTERM);
    let mut err = String::new();
    run.stderr.take().expect("piped").read_to_string(&mut err).unwrap();
    let status = run.wait().expect("reap run");
    assert!(!err.contains("panicked"), "{}", err);
    // Levels 3 to 12 take seconds, so the signal all but always lands
    // mid-run; a run that still beat it has written its results instead.
    if !status.success() {
        assert!(err.contains("terminated (SIGTERM)"), "{}", err);
        // Exactly the printed command: the results go to the run's --out.
        let ck = printed_resume_dir(&err);
        let o = cayley(&["resume", s(&ck), "-q"]);
        assert!(o.status.success(), "{}", stderr_text(&o));
    }
    let json = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(json_u64s(&json["depths"]), published_loopover_mtm("2x5"));
}

#[test]
fn resume_reuses_the_memory_budget_the_run_was_started_with() {
    let root = test_dir();
    let ck = root.path().join("ck");
    let out = root.path().join("out");
    let budget: u64 = 256 << 20;
    let run = [
        "run",
        "loopover:2x5",
        "--memory",
        "256M",
        "--checkpoint-dir",
        s(&ck),
        "--out",
        s(&out),
        "-q",
    ];
    // Stopped by an injected full disk while writing level 4.
    let o = cayley_env(&run, &[("CAYLEY_FAULT_DISK_FULL", "4:0")]);
    assert!(!o.status.success(), "the injected full disk went unnoticed");
    let manifest = read_json(&ck.join("manifest.json")).expect("manifest.json");
    assert_eq!(manifest["memory"].as_u64(), Some(budget));
    // Not quiet, so that it says which budget it took.
    let o = cayley(&["resume", s(&ck), "--out", s(&out)]);
    let err = stderr_text(&o);
    assert!(o.status.success(), "{}", err);
    assert!(
        err.contains("memory budget 256.0 MiB, as the job was started"),
        "{}",
        err
    );
    assert!(err.contains("memory budget 256.0 MiB per worker"), "{}", err);
    let json = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(json_u64s(&json["depths"]), published_loopover_mtm("2x5"));
}

/// Bytes of every file under `dir`.
fn bytes_under(dir: &Path) -> u128 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read directory") {
        let entry = entry.expect("entry");
        let meta = entry.metadata().expect("metadata");
        total += if meta.is_dir() {
            bytes_under(&entry.path())
        } else {
            meta.len() as u128
        };
    }
    total
}

#[test]
fn a_depth_limited_checkpoint_stays_within_the_disk_planned_for_it() {
    let root = test_dir();
    let ck = root.path().join("ck");
    let o = cayley(&[
        "run",
        "loopover:3x4",
        "--max-depth",
        "4",
        "--keep-levels",
        "all",
        "--checkpoint-dir",
        s(&ck),
        "--out",
        s(&root.path().join("out")),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    let job = Job::new(parse_puzzle("loopover:3x4", Metric::Mtm).unwrap(), None).unwrap();
    let req = requirements(&job);
    let planned = req.disk_bytes_to(KeepLevels::All, Some(4));
    let used = bytes_under(&ck);
    assert!(
        used <= planned,
        "the checkpoint takes {} bytes, {} were planned",
        used,
        planned
    );
    // The limit is what made the plan small: the whole table plans more.
    assert!(planned < req.disk_bytes(KeepLevels::All) / 4, "{} planned", planned);
}

#[test]
fn a_disk_too_small_is_refused_with_the_numbers_unless_told_to_go_on() {
    let root = test_dir();
    let ck = root.path().join("ck");
    let out = root.path().join("out");
    let args = [
        "run",
        "loopover:2x5",
        "--checkpoint-dir",
        s(&ck),
        "--out",
        s(&out),
        "-q",
    ];
    let tiny = [("CAYLEY_FAULT_FREE_BYTES", "1000")];
    let refused = cayley_env(&args, &tiny);
    let err = stderr_text(&refused);
    assert!(!refused.status.success(), "{}", err);
    assert_eq!(err.trim().lines().count(), 1, "{}", err);
    for part in [
        "error: 'loopover:2x5' is too large for this disk",
        "has 1000 B free",
        "--ignore-disk-check",
    ] {
        assert!(err.contains(part), "{:?} not in {}", part, err);
    }
    assert!(!ck.exists() && !out.exists(), "a refused run left files");
    let info = cayley_env(&["info", "loopover:2x5", "--checkpoint-dir", s(root.path())], &tiny);
    assert!(String::from_utf8_lossy(&info.stdout).contains("does NOT fit"));
    // Told to go on, it warns once and computes the table.
    let mut going_on = args.to_vec();
    going_on.push("--ignore-disk-check");
    let o = cayley_env(&going_on, &tiny);
    let err = stderr_text(&o);
    assert!(o.status.success(), "{}", err);
    // The warning is the first line, a log line at WARN level.
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.contains(" WARN ") && first.contains("'loopover:2x5' is too large for this disk"),
        "{}",
        err
    );
    let json = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(json_u64s(&json["depths"]), published_loopover_mtm("2x5"));
}
