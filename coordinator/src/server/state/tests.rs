//! The job state driven directly, with real tasks computed by the worker's
//! runner: what end-to-end runs cannot time (several workers reporting the
//! same damaged file, an output damaged between its write and its report).

use super::*;
use cayley_shared::manifest::KeepLevels;
use cayley_shared::proto::{task_failed, TaskDone, TaskFailed};
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_worker::runner::TaskRunner;

/// Loopover 2×4 MTM, ../shared/reference/published.md.
const PUBLISHED_2X4: [u64; 9] = [1, 10, 63, 352, 1623, 5890, 14345, 15772, 2264];

struct Quiet;
impl Reporter for Quiet {
    fn warn(&mut self, _message: &str) {}
}

struct Harness {
    state: JobState,
    runner: TaskRunner,
    _dir: tempfile::TempDir,
}

/// Loopover 2×4 in 8 shards.
fn harness(keep: KeepLevels) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let job = Job::new(parse_puzzle("loopover:2x4", Metric::Mtm).unwrap(), Some(1)).unwrap();
    let fresh = Manifest::new(&job, keep, None);
    let checkpoint = CheckpointDir::create(&ck).unwrap();
    let state = JobState::open(
        job.clone(),
        checkpoint,
        fresh,
        Duration::from_secs(600),
        Box::new(Quiet),
    )
    .unwrap();
    let runner = TaskRunner::new(job, &ck, &dir.path().join("scratch"), 1).unwrap();
    Harness {
        state,
        runner,
        _dir: dir,
    }
}

impl Harness {
    fn lease(&mut self, worker: u64) -> Task {
        match self.state.lease(worker) {
            lease_reply::Reply::Task(task) => task,
            other => panic!("no task for worker {}: {:?}", worker, other),
        }
    }

    /// Computes a leased task and writes its output, as a worker does.
    fn compute(&mut self, task: &Task) -> TaskDone {
        let r = self
            .runner
            .compute(task.from_level, task.shard, &|_| {})
            .and_then(|c| c.write())
            .unwrap_or_else(|e| panic!("task ({}, {}): {}", task.from_level, task.shard, e));
        TaskDone {
            count: r.count,
            evaluations: r.evaluations,
            file_bytes: r.file_bytes,
            seconds: r.seconds,
        }
    }

    /// One worker runs tasks until `levels` levels are recorded or the job ends.
    fn run_until(&mut self, worker: u64, levels: usize) {
        while self.state.phase == Phase::Running && self.state.manifest.levels.len() < levels {
            let task = self.lease(worker);
            let done = self.compute(&task);
            assert_eq!(self.state.complete(worker, task.lease_id, done), Verdict::Accepted);
        }
    }

    fn depths(&self) -> Vec<u64> {
        self.state.manifest.levels.iter().map(|l| l.count).collect()
    }
}

fn corrupt_input(level: u32, shard: u64) -> TaskFailed {
    TaskFailed {
        kind: task_failed::Kind::CorruptInput as i32,
        message: format!("level {} shard {}: checksum mismatch", level, shard),
        level,
        shard,
    }
}

/// Flips a byte in the middle of a frontier file's payload.
fn flip_payload_byte(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = 64 + (bytes.len() - 64) / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn many_reports_of_one_damaged_file_schedule_one_repair() {
    let mut h = harness(KeepLevels::All);
    let first = h.state.register("first".into(), 1);
    h.run_until(first, 3);
    let damaged = h.state.checkpoint.frontier_path(2, 3);
    flip_payload_byte(&damaged);
    // Six workers each find it while reading the inputs of their own task.
    let workers: Vec<u64> = (0..6).map(|i| h.state.register(format!("w{}", i), 1)).collect();
    let tasks: Vec<Task> = workers.iter().map(|&w| h.lease(w)).collect();
    for (&w, task) in workers.iter().zip(&tasks) {
        assert_eq!(h.state.fail(w, task.lease_id, corrupt_input(2, 3)), Verdict::Accepted);
    }
    assert_eq!(h.state.phase, Phase::Running);
    assert_eq!(h.state.failures.get(&(1, 3)), Some(&1), "one repair attempt");
    // The repair comes first, then a report from a worker that read the
    // damaged file before it was repaired: the good file stays.
    let repair = h.lease(first);
    assert_eq!((repair.from_level, repair.shard), (1, 3));
    let done = h.compute(&repair);
    assert_eq!(h.state.complete(first, repair.lease_id, done), Verdict::Accepted);
    let late = h.lease(workers[0]);
    h.state.fail(workers[0], late.lease_id, corrupt_input(2, 3));
    assert!(h.state.file_verifies(2, 3), "the repaired file was deleted");
    assert!(!h.state.is_queued_or_leased((1, 3)));
    h.run_until(first, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), PUBLISHED_2X4);
}

#[test]
fn an_output_that_does_not_read_back_is_not_recorded() {
    let mut h = harness(KeepLevels::Last2);
    let worker = h.state.register("w".into(), 1);
    h.run_until(worker, 3);
    let task = h.lease(worker);
    let done = h.compute(&task);
    flip_payload_byte(&h.state.checkpoint.frontier_path(task.from_level + 1, task.shard));
    assert!(matches!(
        h.state.complete(worker, task.lease_id, done),
        Verdict::Rejected(why) if why.contains("corrupt")
    ));
    let running = h.state.manifest.running.as_ref().unwrap();
    assert!(!running.done.contains_key(&task.shard));
    // Re-issued while its inputs are still there.
    let again = h.lease(worker);
    assert_eq!((again.from_level, again.shard), (task.from_level, task.shard));
    let done = h.compute(&again);
    assert_eq!(h.state.complete(worker, again.lease_id, done), Verdict::Accepted);
    h.run_until(worker, usize::MAX);
    assert_eq!(h.depths(), PUBLISHED_2X4);
}
