//! Chunks recorded empty from a worker's sparse map (`empties.rs`): the
//! table stays the published one, those chunks are never leased, and a
//! claim that cannot be acted on leaves the chunk to its task.

use super::*;
use std::sync::Mutex as StdMutex;

/// Loopover 3×3 with symmetry reduction, two pieces to a shard key and one
/// shard a chunk: enough chunks that its sparse early levels leave most of
/// them gaining nothing.
fn sparse_harness() -> Harness {
    let h = harness_in_shards("loopover:3x3", 2, KeepLevels::Last2);
    assert!(
        h.state.job.chunking.chunks() >= 20,
        "{} chunks",
        h.state.job.chunking.chunks()
    );
    h
}

/// Loopover 3×3 MTM, tests/data/loopover-mtm.csv.
fn published_3x3() -> Vec<u64> {
    cayley_tests::published::published_loopover_mtm("3x3")
}

/// One worker runs the job to its end, handing the coordinator each
/// level's chunks that gain nothing as the worker's client does; returns
/// the leases issued.
fn run_reporting_empties(h: &mut Harness, worker: u64) -> u64 {
    let mut leases = 0;
    while h.state.phase == Phase::Running {
        let task = match h.state.lease(worker) {
            lease_reply::Reply::Task(task) => task,
            other => panic!("no task: {:?}", other),
        };
        leases += 1;
        let claimed = StdMutex::new(Vec::new());
        let result = h
            .runner
            .compute_chunk_until(
                task.from_level,
                task.chunk,
                &|_, _| {},
                &|_| {},
                &|others| *claimed.lock().unwrap() = others,
                &std::sync::atomic::AtomicBool::new(false),
            )
            .unwrap();
        let claimed = claimed.into_inner().unwrap();
        assert!(!claimed.contains(&task.chunk), "a task's own chunk is not claimed");
        h.state.record_empties_now(task.from_level, &claimed);
        let verdict = h.state.complete(worker, task.lease_id, done_message(&result));
        assert!(
            matches!(verdict, Verdict::Accepted | Verdict::Ignored(_)),
            "{:?}",
            verdict
        );
    }
    leases
}

#[test]
fn chunks_gaining_nothing_are_recorded_without_their_tasks() {
    let mut h = sparse_harness();
    let worker = h.state.register("w".into(), 1, 0);
    let leases = run_reporting_empties(&mut h, worker);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_3x3());
    let chunks = h.state.job.chunking.chunks();
    let levels = h.state.manifest.levels.len() as u64 - 1;
    let empties = h.state.lease_stats.empties_recorded;
    assert!(empties > 0, "no chunk recorded empty");
    // Every chunk of every level is either a task or recorded empty.
    assert_eq!(
        leases + empties,
        chunks * levels,
        "{} leases, {} empties",
        leases,
        empties
    );
}

/// The sparse harness with levels 0 and 1 recorded by one worker; returns
/// it, the worker and the level the running level's tasks read.
fn at_level_2() -> (Harness, u64, u32) {
    let mut h = sparse_harness();
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, 2);
    let running = h.state.manifest.running.as_ref().unwrap().from_level;
    (h, worker, running)
}

#[test]
fn claims_outside_the_running_level_are_ignored() {
    let (mut h, _, running) = at_level_2();
    let chunks = h.state.job.chunking.chunks();
    // Another level, or chunks that do not exist: nothing to write.
    assert!(h.state.begin_empties(running + 1, &[0, 1]).is_none());
    assert!(h.state.begin_empties(running - 1, &[0, 1]).is_none());
    assert!(h.state.begin_empties(running, &[chunks, chunks + 7]).is_none());
    assert!(!h.state.checkpoint.chunk_path(running + 2, 0).exists());
    assert_eq!(h.state.lease_stats.empties_recorded, 0);
}

#[test]
fn an_empty_chunk_that_cannot_be_written_is_left_to_its_task() {
    let (mut h, worker, running) = at_level_2();
    let last = h.state.job.chunking.chunks() - 1;
    // The coordinator's writer of the last chunk fails as a full disk does.
    h.state.write.fail_disk_full_at = Some((running + 1, last));
    let empties = h.state.begin_empties(running, &[last]).unwrap();
    assert!(!h.state.pending.contains(&(running, last)), "not leased while written");
    let written = super::super::empties::write_empties(&empties);
    h.state.finish_empties(empties, written);
    assert!(h.state.pending.contains(&(running, last)), "queued again as a task");
    assert!(!h.state.checkpoint.chunk_path(running + 1, last).exists());
    h.state.write.fail_disk_full_at = None;
    h.run_until(worker, usize::MAX);
    assert_eq!(h.depths(), published_3x3());
}
