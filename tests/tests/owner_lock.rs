//! One owner per checkpoint directory (docs/guide.md, "Checkpoints and resume"): `run`, `resume` and
//! `serve` hold a kernel lock on it for their whole life. A second owner is
//! refused at once, naming the first, and changes nothing; a killed owner
//! leaves no lock behind. Tables are Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv.

use cayley_tests::procs::{pause, signal, Coordinator};
use cayley_tests::published::published_loopover_mtm;
use cayley_tests::{
    cayley, cayley_env, cayley_within, json_u64s, read_json, spawn_cayley, stderr_text, test_dir, wait_for,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::Duration;

const PUZZLE: &str = "loopover:2x5";
/// Generous bound for polling a running job (the whole table takes seconds).
const PATIENCE: Duration = Duration::from_secs(120);

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The pid recorded in a checkpoint's lock file, once it is written.
fn lock_owner(ck: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(ck.join("owner.lock")).ok()?;
    let record: serde_json::Value = serde_json::from_str(&text).ok()?;
    record["pid"].as_u64().map(|p| p as u32)
}

/// Waits until `child` has recorded itself as the owner of `ck`; panics
/// if it exits first.
fn wait_until_owner(child: &mut Child, ck: &Path) {
    let mut exited = None;
    let owns = wait_for(PATIENCE, || {
        exited = child.try_wait().expect("child status");
        exited.is_some() || lock_owner(ck) == Some(child.id())
    });
    assert!(
        owns && exited.is_none(),
        "{} never owned {}: {:?}",
        child.id(),
        ck.display(),
        exited
    );
}

/// This machine's name, as the kernel reports it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("host name")
        .trim()
        .to_string()
}

/// A refusal naming `owner` as the holder of `ck`, with an RFC 3339 time.
fn assert_in_use(o: &Output, ck: &Path, owner: u32) {
    let err = stderr_text(o);
    assert!(!o.status.success(), "a second owner was let in: {}", err);
    assert_eq!(err.trim().lines().count(), 1, "not one line: {}", err);
    let expected = format!(
        "error: checkpoint directory {} is in use by pid {} on host {} since ",
        ck.display(),
        owner,
        host_name()
    );
    let since = err
        .trim()
        .strip_prefix(&expected)
        .unwrap_or_else(|| panic!("expected {:?}…, got {:?}", expected, err));
    // YYYY-MM-DDTHH:MM:SSZ
    let shape: String = since
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "9999-99-99T99:99:99Z", "{}", since);
}

/// result.json in `out` holds the published table.
fn assert_published(out: &Path) {
    let json = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(json_u64s(&json["depths"]), published_loopover_mtm("2x5"));
    assert_eq!(json["complete"], true);
}

/// Every file of `ck` with its contents (a directory's own state).
fn snapshot(ck: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![ck.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read checkpoint") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).expect("read file")));
            }
        }
    }
    files.sort();
    files
}

/// `cayley serve … --resume` of the checkpoint `ck` on any free port.
fn serve_resume<'a>(ck: &'a Path, out: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["serve", PUZZLE, "--checkpoint-dir", s(ck), "--out", s(out)];
    args.extend(["--resume", "--listen", "127.0.0.1:0"]);
    args
}

/// A checkpoint of 2×5 stopped at level `level` (an injected full disk).
fn stopped_checkpoint(root: &Path, level: u32) -> PathBuf {
    let ck = root.join("ck");
    let fault = format!("{}:0", level);
    let o = cayley_env(
        &[
            "run",
            PUZZLE,
            "--checkpoint-dir",
            s(&ck),
            "--out",
            s(&root.join("never")),
            "-q",
        ],
        &[("CAYLEY_FAULT_DISK_FULL", &fault)],
    );
    assert!(!o.status.success(), "the injected full disk went unnoticed");
    ck
}

#[test]
fn a_second_owner_is_refused_while_the_first_finishes() {
    let root = test_dir();
    let ck = stopped_checkpoint(root.path(), 2);
    let (out, other) = (root.path().join("out"), root.path().join("other"));
    let mut first = spawn_cayley(&["resume", s(&ck), "--out", s(&out), "--threads", "1", "-q"]);
    wait_until_owner(&mut first, &ck);
    // Paused, it cannot finish (and let go) while the others try.
    pause(&first);
    let before = snapshot(&ck);
    let attempts: [&[&str]; 3] = [
        &["resume", s(&ck), "--out", s(&other), "-q"],
        &["run", PUZZLE, "--checkpoint-dir", s(&ck), "--out", s(&other), "-q"],
        &serve_resume(&ck, &other),
    ];
    let refusals: Vec<Output> = attempts.iter().map(|args| cayley(args)).collect();
    let after = snapshot(&ck);
    signal(&first, libc::SIGCONT);
    let status = first.wait().expect("reap the first owner");
    for o in &refusals {
        assert_in_use(o, &ck, first.id());
    }
    let changed: Vec<_> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|(b, _)| b.0.display().to_string())
        .collect();
    assert!(
        before.len() == after.len() && changed.is_empty(),
        "a refused owner changed the checkpoint: {} files before, {} after, changed {:?}",
        before.len(),
        after.len(),
        changed
    );
    assert!(!other.exists(), "a refused owner wrote results");
    assert!(status.success(), "the first owner failed: {:?}", status);
    assert_published(&out);
}

#[test]
fn a_killed_owner_leaves_no_lock() {
    let root = test_dir();
    let ck = root.path().join("ck");
    let out = root.path().join("out");
    let mut owner = spawn_cayley(&["run", PUZZLE, "--checkpoint-dir", s(&ck), "--out", s(&out), "-q"]);
    wait_until_owner(&mut owner, &ck);
    let levels = || read_json(&ck.join("manifest.json")).map_or(0, |m| m["levels"].as_array().map_or(0, Vec::len));
    assert!(wait_for(PATIENCE, || levels() > 3), "level 3 was never recorded");
    owner.kill().expect("SIGKILL the owner");
    owner.wait().expect("reap the owner");
    // Its record stays behind, but only the kernel's lock counts.
    assert_eq!(lock_owner(&ck), Some(owner.id()));
    let o = cayley(&["resume", s(&ck), "--out", s(&out), "-q"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    assert_published(&out);
}

#[test]
fn serve_owns_its_checkpoint() {
    let root = test_dir();
    // Waits for workers that never come: it owns the directory throughout.
    let coordinator = Coordinator::start(root.path(), PUZZLE, "token", &[]);
    let ck = coordinator.checkpoint.clone();
    let other = root.path().join("other");
    for args in [
        vec!["resume", s(&ck), "--out", s(&other), "-q"],
        serve_resume(&ck, &other),
    ] {
        assert_in_use(&cayley(&args), &ck, coordinator.child.id());
    }
}

#[test]
fn run_owns_its_temporary_checkpoint() {
    let root = test_dir();
    let (scratch, out, other) = (
        root.path().join("scratch"),
        root.path().join("out"),
        root.path().join("other"),
    );
    let mut run = spawn_cayley(&[
        "run",
        PUZZLE,
        "--scratch",
        s(&scratch),
        "--out",
        s(&out),
        "--threads",
        "1",
        "-q",
    ]);
    let mut temporary = None;
    let found = wait_for(PATIENCE, || {
        temporary = std::fs::read_dir(&scratch)
            .into_iter()
            .flatten()
            .map(|e| e.expect("entry").path())
            .find(|p| lock_owner(p) == Some(run.id()));
        temporary.is_some() || run.try_wait().expect("run status").is_some()
    });
    let ck = temporary.unwrap_or_else(|| panic!("no owned temporary checkpoint in {}", scratch.display()));
    assert!(found);
    pause(&run);
    let refused = cayley(&["resume", s(&ck), "--out", s(&other), "-q"]);
    signal(&run, libc::SIGCONT);
    let status = run.wait().expect("reap run");
    assert_in_use(&refused, &ck, run.id());
    assert!(status.success(), "{:?}", status);
    assert_published(&out);
    assert!(!ck.exists(), "a successful run keeps no temporary checkpoint");
}

/// A result folder in use: while a run computes results for `--out`, a
/// `run`, `resume` or `serve` of another job given the same folder is
/// refused at once (before, each found the folder empty, and the job that
/// finished first lost its results to the other's), and leaves nothing of
/// its own; once the first ends, the folder is free again.
#[test]
fn a_result_folder_in_use_is_refused() {
    let root = test_dir();
    let (ck, out) = (root.path().join("ck"), root.path().join("out"));
    let other_ck = stopped_checkpoint(&root.path().join("other"), 2);
    let mut first = spawn_cayley(&[
        "run",
        PUZZLE,
        "--checkpoint-dir",
        s(&ck),
        "--out",
        s(&out),
        "--threads",
        "1",
        "-q",
    ]);
    wait_until_owner(&mut first, &ck);
    pause(&first);
    let (scratch, serve_ck) = (root.path().join("scratch"), root.path().join("serve-ck"));
    let attempts: [&[&str]; 3] = [
        &["run", "loopover:2x3", "--scratch", s(&scratch), "--out", s(&out), "-q"],
        &["resume", s(&other_ck), "--out", s(&out), "-q"],
        &[
            "serve",
            "loopover:2x3",
            "--checkpoint-dir",
            s(&serve_ck),
            "--out",
            s(&out),
            "--listen",
            "127.0.0.1:0",
        ],
    ];
    // Within a minute: a `serve` let in would wait for workers forever.
    let refusals: Vec<Option<Output>> = attempts
        .iter()
        .map(|args| cayley_within(args, Duration::from_secs(60)))
        .collect();
    signal(&first, libc::SIGCONT);
    let status = first.wait().expect("reap the first run");
    for (o, args) in refusals.iter().zip(&attempts) {
        let o = o.as_ref().unwrap_or_else(|| panic!("{:?} was let in: it ran on", args));
        let err = stderr_text(o);
        assert!(!o.status.success(), "{:?} was let in", args);
        assert!(
            err.contains(&format!("--out {} is in use", out.display())),
            "{:?}: {}",
            args,
            err
        );
    }
    assert!(
        !scratch.exists() && !serve_ck.exists(),
        "a refused job left its folders"
    );
    assert!(status.success(), "the first run failed: {:?}", status);
    assert_published(&out);
    // The first run's lock went with it: the same job may write there again.
    let again = cayley(&["run", PUZZLE, "--out", s(&out), "--scratch", s(&scratch), "-q"]);
    assert!(again.status.success(), "{}", stderr_text(&again));
    assert_published(&out);
}
