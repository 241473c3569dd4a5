//! Fuzz tests of the manifest and journal readers (stable Rust, proptest):
//! a valid `manifest.json` and `done.jsonl` with values replaced, keys
//! removed, bytes flipped and files cut. The readers must refuse with the
//! file named, or accept something that saves and loads back unchanged and
//! that every later reader can rely on; a torn journal keeps exactly its
//! whole lines. Nothing is saved to the source tree on failure.

use super::*;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A checkpoint directory for fuzz files, in memory when `/dev/shm` is
/// there (the round trip fsyncs every accepted manifest), removed when
/// dropped: a static root would never be dropped, and every run of these
/// tests left its directory behind.
struct Scratch {
    _root: tempfile::TempDir,
    dir: CheckpointDir,
}

impl std::ops::Deref for Scratch {
    type Target = CheckpointDir;
    fn deref(&self) -> &CheckpointDir {
        &self.dir
    }
}

/// A fresh [`Scratch`] whose checkpoint is the subdirectory `name`.
fn scratch(name: &str) -> Scratch {
    let root = tempfile::Builder::new()
        .prefix("cayley-fuzz-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temp dir");
    let dir = CheckpointDir::create(&root.path().join(name)).expect("checkpoint dir");
    Scratch { _root: root, dir }
}

/// The job of the fuzzed manifests.
fn job() -> &'static Job {
    static JOB: OnceLock<Job> = OnceLock::new();
    JOB.get_or_init(|| Job::new(parse_puzzle("loopover:2x3", Metric::Mtm).unwrap(), Some(1)).unwrap())
}

fn io() -> IoTotals {
    IoTotals {
        bytes_read: 4096,
        lookups: 9,
        hits: 7,
        load_seconds: 0.25,
        compute_seconds: 1.5,
        write_seconds: 0.125,
        close_seconds: 0.75,
        sources_seconds: 0.5,
        other_seconds: 0.0625,
        wait_seconds: 0.03125,
        task_seconds: 2.4375,
        busy_seconds: 4.5,
        idle_seconds: 0.375,
        threads: 2,
        top_down_units: 3,
        bottom_up_units: 5,
        cheaper_bound: 1000,
    }
}

/// A manifest two levels into the job, with a definition text to quote.
fn sample() -> Manifest {
    let mut m = Manifest::new(job(), KeepLevels::All, Some(9), Some("a: (1,2)\n\"quoted\" ·\n".into()));
    m.levels.push(LevelRecord {
        count: 7,
        stored: 2,
        classes: 2,
        seconds: 0.5,
        bytes: 333,
        evaluations: 42,
        io: io(),
    });
    m.running = Some(RunningLevel {
        from_level: 1,
        seconds_before: 0.75,
        retiring: Vec::new(),
    });
    m
}

/// The sample as `save_manifest` writes it.
fn sample_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| serde_json::to_vec_pretty(&sample()).unwrap())
}

/// JSON values of every type and at the edges of the numeric ones.
fn odd_value() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(1),
        json!(-1),
        json!(0.5),
        json!(u32::MAX),
        json!(u64::MAX),
        serde_json::from_str("18446744073709551616").unwrap(),
        json!(1e300),
        json!(""),
        json!("all"),
        json!("last2"),
        json!([]),
        json!({}),
        json!({ "from_level": 7, "seconds_before": 0 }),
    ])
}

/// One change to the manifest.
#[derive(Clone, Debug)]
enum Change {
    /// Replace (or, with `None`, remove) the value an index path leads to.
    Value(Vec<usize>, Option<Value>),
    /// XOR a byte of the text (non-zero mask).
    Flip(usize, u8),
    /// Cut the text.
    Cut(usize),
}

fn changes() -> impl Strategy<Value = Vec<Change>> {
    let path = prop::collection::vec(any::<usize>(), 1..4);
    let change = prop_oneof![
        4 => (path, prop::option::weighted(0.75, odd_value())).prop_map(|(p, v)| Change::Value(p, v)),
        2 => (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Change::Flip(at, mask)),
        1 => any::<usize>().prop_map(Change::Cut),
    ];
    prop::collection::vec(change, 1..4)
}

fn has_children(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Replaces (or removes) the value at the end of `path`: each index picks a
/// child, modulo their number, until the path ends or reaches a leaf.
fn edit_at(value: &mut Value, path: &[usize], new: Option<&Value>) {
    let Some((&first, rest)) = path.split_first() else {
        return;
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(first % map.len()).cloned().expect("non-empty");
            if rest.is_empty() || !has_children(&map[&key]) {
                match new {
                    Some(v) => map.insert(key, v.clone()),
                    None => map.remove(&key),
                };
            } else if let Some(child) = map.get_mut(&key) {
                edit_at(child, rest, new);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = first % items.len();
            if rest.is_empty() || !has_children(&items[i]) {
                match new {
                    Some(v) => items[i] = v.clone(),
                    None => drop(items.remove(i)),
                }
            } else {
                edit_at(&mut items[i], rest, new);
            }
        }
        _ => {}
    }
}

/// The sample's text after `changes`.
fn changed(changes: &[Change]) -> Vec<u8> {
    let mut bytes = sample_bytes().to_vec();
    for change in changes {
        match change {
            Change::Value(path, new) => {
                // Once the text is no longer JSON, only byte changes apply.
                if let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) {
                    edit_at(&mut value, path, new.as_ref());
                    bytes = serde_json::to_vec_pretty(&value).unwrap();
                }
            }
            Change::Flip(at, mask) if !bytes.is_empty() => {
                let i = at % bytes.len();
                bytes[i] ^= mask;
            }
            Change::Flip(..) => {}
            Change::Cut(at) => bytes.truncate(at % (bytes.len() + 1)),
        }
    }
    bytes
}

/// Loads `bytes` as a checkpoint's manifest and checks the outcome.
fn check_manifest(bytes: &[u8]) {
    let dir = scratch("manifest");
    std::fs::write(dir.manifest_path(), bytes).unwrap();
    match load_manifest(&dir) {
        Ok(Some(m)) => {
            if bytes == sample_bytes() {
                assert_eq!(m, sample());
            }
            // What resume and the state machine rely on.
            m.check_consistent().expect("load_manifest checked it");
            let _ = m.states();
            if let Err(e) = m.check_matches(job(), dir.root()) {
                assert!(format!("{:#}", e).contains(&dir.root().display().to_string()));
            }
            let copy = scratch("round-trip");
            save_manifest(&copy, &m, WriteOptions::DURABLE).unwrap();
            assert_eq!(load_manifest(&copy).unwrap(), Some(m), "saved and loaded back");
        }
        Ok(None) => panic!("{} exists but was not read", dir.manifest_path().display()),
        Err(e) => {
            let message = format!("{:#}", e);
            let root = dir.root().display().to_string();
            assert!(message.starts_with(&root), "{} does not name the file", message);
            assert!(message.len() > root.len() + 20, "{} says nothing", message);
        }
    }
}

/// Journal lines of `records` as `Journal::append` writes them.
fn journal_text(records: &[ChunkRecord]) -> Vec<u8> {
    let dir = scratch("journal-writer");
    let mut journal = Journal::open(&dir, 1, true, WriteOptions::DURABLE).unwrap();
    for r in records {
        journal.append(r).unwrap();
    }
    journal.sync().unwrap();
    std::fs::read(dir.journal_path(1)).unwrap()
}

fn record(chunk: u64, states: u64) -> ChunkRecord {
    ChunkRecord {
        chunk,
        stored: states,
        states,
        classes: 1,
        bytes: 100 + states,
        checksum: chunk.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        evaluations: 3 * states,
        seconds: 0.001 * states as f64,
        io: io(),
    }
}

proptest! {
    #![proptest_config(config(8_000))]

    #[test]
    fn changed_manifests_are_refused_by_name_or_round_trip(changes in changes()) {
        check_manifest(&changed(&changes));
    }
}

proptest! {
    #![proptest_config(config(4_000))]

    #[test]
    fn a_torn_journal_keeps_exactly_its_whole_lines(
        states in prop::collection::vec(0..1000u64, 1..12),
        cut in any::<usize>(),
        flip in prop::option::of((any::<usize>(), 1..=255u8)),
    ) {
        let records: Vec<ChunkRecord> = states.iter().enumerate().map(|(c, &s)| record(c as u64, s)).collect();
        let mut bytes = journal_text(&records);
        let cut = cut % (bytes.len() + 1);
        bytes.truncate(cut);
        if let Some((at, mask)) = flip.filter(|_| !bytes.is_empty()) {
            let i = at % bytes.len();
            bytes[i] ^= mask;
        }
        let dir = scratch("journal");
        std::fs::create_dir_all(dir.level_dir(1)).unwrap();
        std::fs::write(dir.journal_path(1), &bytes).unwrap();
        let read = read_journal(&dir, 1).unwrap();
        for (chunk, r) in &read {
            assert_eq!(*chunk, r.chunk);
        }
        if flip.is_none() {
            // Unflipped: the records whose whole line (up to its closing
            // brace) was written, and no other.
            let mut end = 0;
            let whole: Vec<&ChunkRecord> = records
                .iter()
                .take_while(|r| {
                    end += serde_json::to_vec(r).unwrap().len() + 1;
                    end - 1 <= cut
                })
                .collect();
            assert_eq!(read.values().collect::<Vec<_>>(), whole);
        } else {
            assert!(read.len() <= records.len() + 1);
        }
    }
}

#[test]
fn manifests_that_would_mislead_resume_are_refused() {
    let dir = scratch("inconsistent");
    let mut unfinished_without_level = sample();
    unfinished_without_level.running = None;
    let mut gap = sample();
    gap.running = Some(RunningLevel {
        from_level: 5,
        seconds_before: 0.0,
        retiring: Vec::new(),
    });
    // Retiring the frontier would delete what every task reads.
    let mut retires_frontier = sample();
    retires_frontier.running.as_mut().unwrap().retiring = vec![1];
    let mut no_levels = sample();
    no_levels.levels.clear();
    let mut bigger_plan = sample();
    bigger_plan.job.chunks = 1 << 40;
    for (m, needle) in [
        (unfinished_without_level, "an unfinished job without a running level"),
        (gap, "the running level reads level 5, but levels 0 to 1 are recorded"),
        (no_levels, "level 0 (the solved state) is not recorded"),
        (retires_frontier, "reads level 1 but retires levels [1]"),
    ] {
        std::fs::write(dir.manifest_path(), serde_json::to_vec(&m).unwrap()).unwrap();
        let err = format!("{:#}", load_manifest(&dir).unwrap_err());
        assert!(err.contains("inconsistent manifest") && err.contains(needle), "{}", err);
    }
    let err = format!("{:#}", bigger_plan.check_matches(job(), dir.root()).unwrap_err());
    assert!(err.contains("another plan"), "{}", err);
    sample().check_matches(job(), dir.root()).unwrap();
}

/// A level too short for its busy time to mean anything gets no
/// utilization figure (it printed 0 % or 166 % by chance), a longer one
/// busy seconds over threads × wall.
#[test]
fn utilization_is_given_only_for_levels_long_enough_to_measure() {
    let totals = io();
    assert_eq!(totals.utilization(0.01), None);
    assert_eq!(totals.utilization(MEASURABLE_LEVEL_SECONDS / 2.0), None);
    assert_eq!(totals.utilization(3.0), Some(4.5 / (2.0 * 3.0)));
    let unmeasured = IoTotals { threads: 0, ..io() };
    assert_eq!(unmeasured.utilization(3.0), None);
}
