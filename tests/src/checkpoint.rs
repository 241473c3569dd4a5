//! What the checkpoint tests share (`tests/tests/checkpoints.rs`,
//! `damaged_checkpoints.rs`): a Loopover 2×5 job's directories, the
//! commands run on them, and checks of the table and the manifest.
//!
//! Every table is compared with Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv, never with an earlier output of this program.

use crate::{cayley, cayley_env, disk_test_dir, json_u64s, read_json, spawn_cayley, stderr_text, test_dir, wait_for};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

pub const PUZZLE: &str = "loopover:2x5";
/// Loopover 2×5 MTM, tests/data/loopover-mtm.csv.
pub fn published() -> Vec<u64> {
    crate::published::published_loopover_mtm("2x5")
}
/// Generous bound for polling a running job (the whole table takes a few seconds).
pub const PATIENCE: Duration = Duration::from_secs(120);

/// One test's directories: the checkpoint and the result folder.
pub struct Dirs {
    _root: tempfile::TempDir,
    pub ck: PathBuf,
    pub out: PathBuf,
}

/// The directories of one test, in memory where possible ([`test_dir`]).
pub fn dirs() -> Dirs {
    dirs_in(test_dir())
}

/// The directories of one test on a disk-backed filesystem
/// ([`disk_test_dir`]).
pub fn dirs_on_disk() -> Dirs {
    dirs_in(disk_test_dir())
}

fn dirs_in(root: tempfile::TempDir) -> Dirs {
    Dirs {
        ck: root.path().join("ck"),
        out: root.path().join("out"),
        _root: root,
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `run` and the options of Loopover 2×6 unreduced in 66 chunks of two
/// shards (0.9 MiB raw each; a level is 57 MiB): small enough for tests,
/// with dense levels whose chunks its `last2` checkpoint retires one by one.
pub const LOOPOVER_2X6_IN_66_CHUNKS: [&str; 7] = [
    "run",
    "loopover:2x6",
    "--no-symmetry",
    "--shard-pieces",
    "2",
    "--chunk-shards",
    "2",
];

impl Dirs {
    /// `cayley run loopover:2x5 --no-symmetry --checkpoint-dir … extra…`:
    /// these tests address the files of particular shards, so they use the
    /// unreduced plan (`reduced_run_args` for the reduced one).
    pub fn run_args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = self.reduced_run_args(extra);
        args.insert(2, "--no-symmetry");
        args
    }

    /// `cayley run loopover:2x5 --checkpoint-dir … extra…` (reduced by the
    /// board's symmetries).
    pub fn reduced_run_args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["run", PUZZLE, "--checkpoint-dir", s(&self.ck)];
        args.extend(self.output_args());
        args.extend_from_slice(extra);
        args
    }

    /// `cayley resume CK --out …`
    pub fn resume_args(&self) -> Vec<&str> {
        let mut args = vec!["resume", s(&self.ck)];
        args.extend(self.output_args());
        args
    }

    /// Where results go, and quiet output.
    pub fn output_args(&self) -> [&str; 3] {
        ["--out", s(&self.out), "-q"]
    }

    pub fn run(&self, extra: &[&str]) -> Output {
        cayley(&self.run_args(extra))
    }

    pub fn resume(&self) -> Output {
        cayley(&self.resume_args())
    }

    /// Runs until `CAYLEY_FAULT_DISK_FULL=level:chunk` stops the job.
    pub fn run_until_disk_full(&self, level: u32, chunk: u64, extra: &[&str]) -> String {
        let fault = format!("{}:{}", level, chunk);
        let o = cayley_env(&self.run_args(extra), &[("CAYLEY_FAULT_DISK_FULL", &fault)]);
        let err = stderr_text(&o);
        assert!(!o.status.success(), "the injected full disk went unnoticed: {}", err);
        err
    }

    pub fn manifest(&self) -> serde_json::Value {
        read_json(&self.ck.join("manifest.json")).expect("manifest.json")
    }

    pub fn chunk(&self, level: u32, chunk: u64) -> PathBuf {
        chunk_file(&self.ck, level, chunk)
    }
}

/// The checkpoint named by the `cayley resume DIR` a stopped or failed
/// run printed.
pub fn printed_resume_dir(err: &str) -> PathBuf {
    let tail = err
        .split("`cayley resume ")
        .nth(1)
        .unwrap_or_else(|| panic!("no resume command in {:?}", err));
    PathBuf::from(tail.split('`').next().expect("closing backquote"))
}

/// The file of chunk `chunk` of level `level`.
pub fn chunk_file(ck: &Path, level: u32, chunk: u64) -> PathBuf {
    ck.join("levels")
        .join(format!("L{:04}", level))
        .join(format!("C{:08}.chunk", chunk))
}

/// `(chunk, states)` of every chunk a level's journal records (the states
/// its stored bits stand for).
pub fn journal(ck: &Path, level: usize) -> Vec<(u64, u64)> {
    let path = ck.join("levels").join(format!("L{:04}", level)).join("done.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut records = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Ok(r) = serde_json::from_str::<serde_json::Value>(line) {
            records.insert(r["chunk"].as_u64().unwrap(), r["states"].as_u64().unwrap());
        }
    }
    records.into_iter().collect()
}

pub fn assert_success(o: &Output) {
    assert!(o.status.success(), "cayley failed: {}", stderr_text(o));
}

/// A refusal: non-zero exit and exactly one `error:` line saying `needle`.
pub fn assert_refused(o: &Output, needle: &str) {
    let err = stderr_text(o);
    assert!(!o.status.success(), "not refused: {}", err);
    assert_eq!(err.trim().lines().count(), 1, "not one line: {}", err);
    assert!(err.starts_with("error: ") && err.contains(needle), "{}", err);
}

/// result.json in `out` holds the published table, complete.
pub fn assert_published(out: &Path) {
    let json = read_json(&out.join("result.json")).expect("result.json");
    let published = published();
    assert_eq!(
        json_u64s(&json["depths"]),
        published,
        "wrong table in {}",
        out.display()
    );
    assert_eq!(json["complete"], true);
    assert_eq!(json["states"], published.iter().sum::<u64>());
    assert_eq!(json["diameter"], published.len() - 1);
}

/// The manifest of a stopped or killed job describes a consistent prefix
/// of the work: its levels are the published counts, each kept level's
/// journal records every chunk and adds up to its count, and every file the
/// records rely on exists.
pub fn assert_manifest_consistent(ck: &Path) {
    let m = read_json(&ck.join("manifest.json")).expect("manifest.json");
    let levels = m["levels"].as_array().expect("levels");
    let counts: Vec<u64> = levels.iter().map(|l| l["count"].as_u64().unwrap()).collect();
    let published = published();
    assert_eq!(counts, published[..counts.len()], "recorded levels");
    // Levels kept for good: all of them, every K-th, or (last2) none.
    let kept = |depth: usize| match &m["keep_levels"] {
        serde_json::Value::String(s) => s == "all",
        every => depth as u64 % every["every"].as_u64().expect("every: K") == 0,
    };
    let chunks = m["job"]["chunks"].as_u64().unwrap();
    // The running level deletes a chunk of the levels it retires once the
    // same chunk of its own is recorded (docs/ARCHITECTURE.md, "Which
    // levels stay"): those chunks alone may be gone.
    let retiring: Vec<u64> = m["running"]["retiring"]
        .as_array()
        .map_or(Vec::new(), |l| l.iter().map(|v| v.as_u64().unwrap()).collect());
    let recorded_now: Vec<u64> = match m["running"]["from_level"].as_u64() {
        Some(from) if !retiring.is_empty() => journal(ck, from as usize + 1).into_iter().map(|r| r.0).collect(),
        _ => Vec::new(),
    };
    // Level 0 (the solved state) is made by every reader, never stored.
    for (depth, &count) in counts.iter().enumerate().skip(1) {
        if kept(depth) || depth + 2 >= levels.len() {
            let records = journal(ck, depth);
            assert_eq!(records.len() as u64, chunks, "level {} journal", depth);
            assert_eq!(records.iter().map(|r| r.1).sum::<u64>(), count);
            let retired = |chunk| retiring.contains(&(depth as u64)) && recorded_now.contains(&chunk);
            for chunk in 0..chunks {
                assert!(
                    chunk_file(ck, depth as u32, chunk).exists() || retired(chunk),
                    "level {} chunk {}",
                    depth,
                    chunk
                );
            }
        }
    }
    if m["finished"] == true {
        assert_eq!(counts, published);
    } else if let Some(running) = m["running"].as_object() {
        let next = running["from_level"].as_u64().unwrap() as usize + 1;
        assert_eq!(next, levels.len());
        for (chunk, _) in journal(ck, next) {
            assert!(chunk_file(ck, next as u32, chunk).exists());
        }
    }
}

/// Number of completed levels recorded in a checkpoint (0 before the manifest exists).
pub fn levels_done(ck: &Path) -> usize {
    read_json(&ck.join("manifest.json")).map_or(0, |m| m["levels"].as_array().map_or(0, |l| l.len()))
}

/// Starts `args`, waits until the checkpoint records depth `level`, then
/// `extra_ms` more, then SIGKILLs the process.
pub fn kill_after_level(args: &[&str], ck: &Path, level: usize, extra_ms: u64) {
    let mut child = spawn_cayley(args);
    let mut exited = None;
    let reached = wait_for(PATIENCE, || {
        exited = child.try_wait().expect("child status");
        levels_done(ck) > level || exited.is_some()
    });
    assert!(reached, "depth {} was never recorded", level);
    // It may have finished the whole job first (then resuming it must only
    // rewrite the results), but not failed.
    assert!(exited.is_none_or(|status| status.success()), "{:?}", exited);
    std::thread::sleep(Duration::from_millis(extra_ms));
    let _ = child.kill();
    child.wait().expect("reap cayley");
}
