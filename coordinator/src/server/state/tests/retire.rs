//! Old levels retired chunk by chunk (`retire.rs`): which levels, when their
//! chunks go, and that a level interrupted halfway through still completes
//! with the published table.

use super::super::retire::RETIRE_LAG_SHARE;
use super::*;
use crate::manifest::LevelRecord;

/// A coordinator restart: the state reopened from its checkpoint.
fn reopen(h: &mut Harness) {
    let job = h.state.job.clone();
    let fresh = Manifest::new(&job, h.state.manifest.keep_levels, None, None);
    h.state = open_state(job, CheckpointDir::existing(h.state.checkpoint.root()), fresh);
    h.restart_worker();
}

fn exists(h: &Harness, level: u32, chunk: u64) -> bool {
    h.state.checkpoint.chunk_path(level, chunk).exists()
}

/// Runs the job to its end: the published 2×4 table.
fn finish_with_the_table(h: &mut Harness, worker: u64) {
    h.run_until(worker, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4());
}

/// Runs levels until one retires a level chunk by chunk (`last2` keeps
/// the small early ones whole); returns the level retired.
fn run_to_first_retiring(h: &mut Harness, worker: u64) -> u32 {
    loop {
        let running = h.state.manifest.running.clone().expect("not finished");
        if let Some(&level) = running.retiring.first() {
            // The one level read only per chunk: the frontier's predecessor.
            assert_eq!(running.retiring, vec![running.from_level - 1]);
            return level;
        }
        h.run_until(worker, h.state.manifest.levels.len() + 1);
    }
}

/// Records one task of worker `worker` and makes its record durable, as
/// the server's clock does a second later.
fn record_one(h: &mut Harness, worker: u64) -> u64 {
    let task = h.lease(worker);
    let done = h.compute(&task);
    assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
    h.state.journal.as_mut().unwrap().sync().unwrap();
    h.state.retire_durable();
    task.chunk
}

#[test]
fn a_seen_chunk_goes_once_its_successor_is_recorded_and_a_resume_finds_the_rest() {
    let mut h = harness(KeepLevels::Last2);
    let worker = h.state.register("w".into(), 1, 0);
    // Level `seen + 2` reads level `seen + 1` and, per chunk, level `seen`.
    let seen = run_to_first_retiring(&mut h, worker);
    let chunks = h.state.job.chunking.chunks();
    assert!((0..chunks).all(|c| exists(&h, seen, c) && exists(&h, seen + 1, c)));
    let first = record_one(&mut h, worker);
    let second = record_one(&mut h, worker);
    for c in 0..chunks {
        let recorded = c == first || c == second;
        assert_eq!(exists(&h, seen, c), !recorded, "level {}, chunk {}", seen, c);
        assert!(exists(&h, seen + 1, c), "the frontier stays whole");
    }
    // A crash now: the resumed level recomputes only the other chunks,
    // whose seen sets are still there.
    reopen(&mut h);
    assert_eq!(h.state.done.len(), 2);
    finish_with_the_table(&mut h, worker);
}

#[test]
fn nothing_is_retired_before_the_record_is_durable_or_under_keep_all() {
    // 56 chunks: the first few recorded wait for the journal's clock.
    let mut h = harness_in_shards("loopover:2x4 --no-symmetry", 2, KeepLevels::Last2);
    let chunks = h.state.job.chunking.chunks();
    assert_eq!(chunks, 56);
    let worker = h.state.register("w".into(), 1, 0);
    let seen = run_to_first_retiring(&mut h, worker);
    h.state.journal.as_mut().unwrap().sync().unwrap();
    let mut waiting = Vec::new();
    for _ in 1..chunks.div_ceil(RETIRE_LAG_SHARE) {
        let task = h.lease(worker);
        let done = h.compute(&task);
        // Appended but, within the second, not yet synced.
        assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
        assert!(!h.state.journal.as_ref().unwrap().is_synced());
        waiting.push(task.chunk);
    }
    assert!(waiting.iter().all(|&c| exists(&h, seen, c)));
    // One more makes a sixteenth of the level: the journal syncs at once.
    let task = h.lease(worker);
    let done = h.compute(&task);
    assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
    assert!(h.state.journal.as_ref().unwrap().is_synced());
    assert!(waiting.iter().chain([&task.chunk]).all(|&c| !exists(&h, seen, c)));

    let mut all = harness(KeepLevels::All);
    let worker = all.state.register("w".into(), 1, 0);
    all.run_until(worker, seen as usize + 2);
    assert!(all.state.manifest.running.as_ref().unwrap().retiring.is_empty());
    let chunk = record_one(&mut all, worker);
    assert!(exists(&all, seen, chunk));
}

/// A stop syncs the journal, so the records waiting for the clock are
/// durable and their seen chunks go as after any sync: whether a recorded
/// chunk's inputs survive a stop no longer depends on when the last
/// second's sync came (`damaged_checkpoints` counts on it).
#[test]
fn a_stop_retires_what_its_sync_made_durable() {
    let mut h = harness_in_shards("loopover:2x4 --no-symmetry", 2, KeepLevels::Last2);
    let worker = h.state.register("w".into(), 1, 0);
    let seen = run_to_first_retiring(&mut h, worker);
    h.state.journal.as_mut().unwrap().sync().unwrap();
    let mut waiting = Vec::new();
    while waiting.len() < 2 {
        let task = h.lease(worker);
        let done = h.compute(&task);
        let holds_states = done.stored > 0;
        assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
        if holds_states {
            waiting.push(task.chunk);
        }
    }
    assert!(!h.state.journal.as_ref().unwrap().is_synced());
    assert!(waiting.iter().all(|&c| exists(&h, seen, c)), "within the second");
    h.state.stop("interrupted".into());
    assert!(h.state.journal.as_ref().unwrap().is_synced());
    assert!(waiting.iter().all(|&c| !exists(&h, seen, c)), "retired by the stop");
    // The resumed level recomputes only the others and ends with the table.
    reopen(&mut h);
    finish_with_the_table(&mut h, worker);
}

/// A task finishing just after the job stopped is recorded, and its seen
/// chunk goes with it at once: the server's clock may not sync the journal
/// again before the process ends (`damaged_checkpoints` failed under CI's
/// load when such a record's seen chunk was still there).
#[test]
fn a_result_recorded_after_a_stop_retires_its_seen_chunk() {
    let mut h = harness_in_shards("loopover:2x4 --no-symmetry", 2, KeepLevels::Last2);
    let worker = h.state.register("w".into(), 1, 0);
    let seen = run_to_first_retiring(&mut h, worker);
    let (task, done) = loop {
        let task = h.lease(worker);
        let done = h.compute(&task);
        if done.stored > 0 {
            break (task, done);
        }
        assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
    };
    h.state.stop("interrupted".into());
    assert!(exists(&h, seen, task.chunk));
    assert_eq!(h.state.complete(worker, task.lease_id, done), Verdict::Accepted);
    assert!(h.state.journal.as_ref().unwrap().is_synced());
    assert!(!exists(&h, seen, task.chunk), "retired with its record");
    // The resumed level keeps that record and ends with the table.
    reopen(&mut h);
    assert!(h.state.done.contains_key(&task.chunk));
    finish_with_the_table(&mut h, worker);
}

/// The state of a job whose levels `0..counts.len()` are recorded with
/// these counts and file bytes, without computing anything.
fn recorded(spec: &str, counts: &[u64], bytes: &[u64]) -> (JobState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let job = Job::new(parse_puzzle(spec, Metric::Mtm).unwrap(), None).unwrap();
    let mut manifest = Manifest::new(&job, KeepLevels::Last2, None, None);
    manifest.levels = counts
        .iter()
        .zip(bytes)
        .map(|(&count, &bytes)| LevelRecord {
            count,
            stored: count,
            classes: count,
            seconds: 0.0,
            bytes,
            evaluations: 0,
            io: IoTotals::default(),
        })
        .collect();
    manifest.running.as_mut().unwrap().from_level = counts.len() as u32 - 1;
    let state = open_state(job, CheckpointDir::create(&dir.path().join("ck")).unwrap(), manifest);
    (state, dir)
}

/// On the 4×4 Loopover MTM (counts: results/loopover-4x4-mtm, which match
/// Rokicki's diameter and sum to 16!) level 10 would pay to keep for depth
/// 13, but levels 10 and 11 take more than one raw level (19.3 GiB), so
/// depth 12 retires level 10 chunk by chunk. With files small enough to
/// fit, level 10 waits for the level to close.
#[test]
fn an_older_level_is_kept_longer_only_within_two_raw_levels() {
    let counts = &LOOPOVER_4X4_MTM[..12];
    // The run's level files, rounded: level 10 5.1 GiB, level 11 19.1 GiB.
    let mut bytes = [16 << 20; 12];
    (bytes[0], bytes[9], bytes[10], bytes[11]) = (0, 837 << 20, 5511 << 20, 20473 << 20);
    let (state, _dir) = recorded("loopover:4x4", counts, &bytes);
    assert!(state.job.space.level_bytes() < (bytes[10] + bytes[11]) as u128);
    assert_eq!(state.retiring_levels(11, false), vec![10]);
    bytes[11] = 10_000 << 20;
    let (state, _dir) = recorded("loopover:4x4", counts, &bytes);
    assert_eq!(state.retiring_levels(11, false), Vec::<u32>::new());
    // Kept for it, level 10 is retired by depth 13 in turn.
    let (state, _dir) = recorded(
        "loopover:4x4",
        &LOOPOVER_4X4_MTM[..13],
        &[&bytes[..], &[20660 << 20]].concat(),
    );
    assert_eq!(state.retiring_levels(12, true), vec![10, 11]);
}
