//! The job state driven directly, with real tasks computed by the worker's
//! runner: what end-to-end runs cannot time (several workers reporting the
//! same damaged file, an output damaged between its write and its report).

use super::clock::ManualClock;
use super::*;
use cayley_proto::{task_failed, Task, TaskDone, TaskFailed, TaskProgress};
use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::files::format::{verify_chunk, ChunkReader};
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_worker::client::done_message;
use cayley_worker::runner::{TaskError, TaskRunner};

/// The 4×4 Loopover MTM table, depths 0–14 (results/loopover-4x4-mtm: its
/// diameter is Rokicki's and its counts sum to 16!).
const LOOPOVER_4X4_MTM: [u64; 15] = [
    1,
    24,
    396,
    6264,
    97558,
    1486728,
    22201916,
    324714424,
    4612908913,
    62546431704,
    761114737756,
    6477461009768,
    13117496920628,
    499209363040,
    8880,
];

/// Loopover 2×4 MTM, tests/data/loopover-mtm.csv.
fn published_2x4() -> Vec<u64> {
    cayley_tests::published::published_loopover_mtm("2x4")
}

struct Quiet;
impl Reporter for Quiet {
    fn warn(&mut self, _message: &str) {}
}

struct Harness {
    state: JobState,
    runner: TaskRunner,
    _dir: tempfile::TempDir,
}

/// Loopover 2×4 (without symmetry reduction) in 8 shards, one per chunk.
fn harness(keep: KeepLevels) -> Harness {
    let h = harness_of("loopover:2x4 --no-symmetry", keep);
    assert_eq!(h.state.job.chunking.chunks(), 8);
    h
}

/// The job state in `checkpoint` (its manifest if it has one, else `fresh`),
/// with a ten-minute lease, silent and durable.
fn open_state(job: Job, checkpoint: CheckpointDir, fresh: Manifest) -> JobState {
    JobState::open(
        job,
        checkpoint,
        fresh,
        Duration::from_secs(600),
        Box::new(Quiet),
        WriteOptions::DURABLE,
    )
    .unwrap()
}

fn harness_of(spec: &str, keep: KeepLevels) -> Harness {
    harness_in_shards(spec, 1, keep)
}

/// The harness with `shard_pieces` pieces to a shard key and one shard a chunk.
fn harness_in_shards(spec: &str, shard_pieces: usize, keep: KeepLevels) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let job = Job::new(parse_puzzle(spec, Metric::Mtm).unwrap(), Some(shard_pieces))
        .unwrap()
        .with_chunk_shards(Some(1));
    let fresh = Manifest::new(&job, keep, None, None);
    let state = open_state(job.clone(), CheckpointDir::create(&ck).unwrap(), fresh);
    let runner = TaskRunner::new(job, &ck, 64 << 20, 1, WriteOptions::DURABLE).unwrap();
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
            .compute_chunk(task.from_level, task.chunk, &|_, _| {})
            .unwrap_or_else(|e| panic!("task ({}, {}): {}", task.from_level, task.chunk, e));
        done_message(&r)
    }

    /// A new worker process: same job, nothing in memory.
    fn restart_worker(&mut self) {
        let ck = self.state.checkpoint.root().to_path_buf();
        self.runner = TaskRunner::new(self.state.job.clone(), &ck, 64 << 20, 1, WriteOptions::DURABLE).unwrap();
    }

    /// True when the file of `(level, chunk)` reads back whole.
    fn intact(&self, level: u32, chunk: u64) -> bool {
        let path = self.state.checkpoint.chunk_path(level, chunk);
        verify_chunk(&path, &self.state.chunk_id(level, chunk)).is_ok()
    }

    /// One worker runs tasks until `levels` levels are recorded or the job
    /// ends, reporting damaged inputs as a worker does.
    fn run_until(&mut self, worker: u64, levels: usize) {
        while self.state.phase == Phase::Running && self.state.manifest.levels.len() < levels {
            let task = self.lease(worker);
            match self.runner.compute_chunk(task.from_level, task.chunk, &|_, _| {}) {
                Ok(r) => assert_eq!(
                    self.state.complete(worker, task.lease_id, done_message(&r)),
                    Verdict::Accepted
                ),
                Err(TaskError::CorruptInput { level, chunk, message }) => {
                    let failed = TaskFailed {
                        kind: task_failed::Kind::CorruptInput as i32,
                        message,
                        level,
                        chunk,
                    };
                    assert_eq!(self.state.fail(worker, task.lease_id, failed), Verdict::Accepted);
                }
                Err(e) => panic!("task ({}, {}): {}", task.from_level, task.chunk, e),
            }
        }
    }

    fn pending_repairs(&self) -> Vec<(u32, u64)> {
        let running = self.state.manifest.running.as_ref().map_or(u32::MAX, |r| r.from_level);
        self.state.pending.iter().filter(|k| k.0 < running).copied().collect()
    }

    fn depths(&self) -> Vec<u64> {
        self.state.manifest.levels.iter().map(|l| l.count).collect()
    }
}

fn corrupt_input(level: u32, chunk: u64) -> TaskFailed {
    TaskFailed {
        kind: task_failed::Kind::CorruptInput as i32,
        message: format!("level {} chunk {}: checksum mismatch", level, chunk),
        level,
        chunk,
    }
}

/// Flips a byte in the middle of a one-shard chunk file's payload (after
/// its header and one index entry).
fn flip_payload_byte(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let start = cayley_shared::files::format::HEADER_LEN + cayley_shared::files::format::ENTRY_LEN;
    let at = start + (bytes.len() - start) / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn many_reports_of_one_damaged_file_schedule_one_repair() {
    let mut h = harness(KeepLevels::All);
    let first = h.state.register("first".into(), 1, 0);
    h.run_until(first, 3);
    let damaged = h.state.checkpoint.chunk_path(2, 3);
    flip_payload_byte(&damaged);
    // Six workers each find it while reading the inputs of their own task.
    let workers: Vec<u64> = (0..6).map(|i| h.state.register(format!("w{}", i), 1, 0)).collect();
    let tasks: Vec<Task> = workers.iter().map(|&w| h.lease(w)).collect();
    for (&w, task) in workers.iter().zip(&tasks) {
        assert_eq!(h.state.fail(w, task.lease_id, corrupt_input(2, 3)), Verdict::Accepted);
    }
    assert_eq!(h.state.phase, Phase::Running);
    assert_eq!(h.state.failures.get(&(1, 3)), Some(&1), "one repair attempt");
    // The repair comes first, then a report from a worker that read the
    // damaged file before it was repaired: the good file stays.
    let repair = h.lease(first);
    assert_eq!((repair.from_level, repair.chunk), (1, 3));
    let done = h.compute(&repair);
    assert_eq!(h.state.complete(first, repair.lease_id, done), Verdict::Accepted);
    let late = h.lease(workers[0]);
    h.state.fail(workers[0], late.lease_id, corrupt_input(2, 3));
    assert!(h.intact(2, 3), "the repaired file was deleted");
    assert!(!h.state.is_queued_or_leased((1, 3)));
    h.run_until(first, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4());
}

#[test]
fn a_report_that_disagrees_with_its_file_is_not_recorded() {
    let mut h = harness(KeepLevels::Last2);
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, 3);
    let task = h.lease(worker);
    let mut done = h.compute(&task);
    // A report that disagrees with the file it names is rejected.
    done.stored += 1;
    assert!(matches!(
        h.state.complete(worker, task.lease_id, done),
        Verdict::Rejected(why) if why.contains("the report says")
    ));
    assert!(!h.state.done.contains_key(&task.chunk));
    // Re-issued while its inputs are still there.
    let again = h.lease(worker);
    assert_eq!((again.from_level, again.chunk), (task.from_level, task.chunk));
    let done = h.compute(&again);
    assert_eq!(h.state.complete(worker, again.lease_id, done), Verdict::Accepted);
    h.run_until(worker, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

#[test]
fn a_damaged_index_is_caught_when_the_result_is_checked() {
    let mut h = harness(KeepLevels::All);
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, 3);
    let task = h.lease(worker);
    let done = h.compute(&task);
    // An index entry (the last, at the file's end: its popcount field) of
    // the output changes after the write.
    let path = h.state.checkpoint.chunk_path(task.from_level + 1, task.chunk);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - cayley_shared::files::format::ENTRY_LEN + 16;
    bytes[at] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    assert!(matches!(
        h.state.complete(worker, task.lease_id, done),
        Verdict::Rejected(why) if why.contains("index checksum")
    ));
    h.run_until(worker, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

#[test]
fn a_damaged_payload_is_found_by_its_reader_and_repaired() {
    let mut h = harness(KeepLevels::All);
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, 4);
    // Level 3 is complete; damage one of its files before level 4 reads it,
    // and read it with a fresh worker (one that does not hold the shard).
    flip_payload_byte(&h.state.checkpoint.chunk_path(3, 5));
    h.restart_worker();
    h.run_until(worker, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4());
    assert!(h.intact(3, 5));
}

#[test]
fn workers_keep_to_their_own_segment_of_chunks_then_help_others() {
    let mut h = harness(KeepLevels::All);
    let a = h.state.register("a".into(), 1, 0);
    let b = h.state.register("b".into(), 1, 0);
    // Eight chunks, two workers: a owns 0..4, b owns 4..8, each in order.
    let mut of_a = Vec::new();
    let mut of_b = Vec::new();
    for _ in 0..3 {
        of_a.push(h.lease(a).chunk);
        of_b.push(h.lease(b).chunk);
    }
    assert_eq!(of_a, vec![0, 1, 2]);
    assert_eq!(of_b, vec![4, 5, 6]);
    // a's segment has one chunk left, then it takes the last pending chunk.
    assert_eq!(h.lease(a).chunk, 3);
    assert_eq!(h.lease(a).chunk, 7);
}

#[test]
fn a_network_named_input_outside_the_plan_is_the_workers_fault() {
    let mut h = harness(KeepLevels::All);
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, 3);
    for bogus in [corrupt_input(9, 1), corrupt_input(2, 1 << 40), corrupt_input(0, 0)] {
        let task = h.lease(worker);
        assert_eq!(h.state.fail(worker, task.lease_id, bogus), Verdict::Accepted);
        assert!(h.pending_repairs().is_empty(), "no repair for a bogus report");
    }
    h.run_until(worker, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

#[test]
fn a_reduced_job_records_the_full_counts() {
    // Reduced by Loopover 2×4's 16 board symmetries: the stored bits are
    // fewer than the states, the recorded counts are the full ones.
    let mut h = harness_of("loopover:2x4", KeepLevels::All);
    assert!(matches!(h.state.job.space, cayley_shared::space::Space::Reduced(_)));
    let worker = h.state.register("w".into(), 1, 0);
    h.run_until(worker, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4());
    let stored: u64 = h.state.manifest.levels.iter().map(|l| l.stored).sum();
    assert!(stored < 40320, "{} bits stored", stored);
}

/// Level d-2, which workers read only to shrink the unseen set, is damaged
/// on disk: the worker goes on without it and the table is still exact
/// (the coordinator cannot repair a level it does not count as an input).
#[test]
fn a_damaged_older_level_is_left_out() {
    let mut h = harness_of("loopover:2x4", KeepLevels::All);
    let worker = h.state.register("w".into(), 1, 0);
    // Depths 0..=5 done: the next tasks read level 5, 4 and (older) 3.
    h.run_until(worker, 6);
    for chunk in 0..h.state.job.chunking.chunks() {
        // Every stored shard's first byte changed: reads fail their checksum.
        let path = h.state.checkpoint.chunk_path(3, chunk);
        let reader = ChunkReader::open(&path, &h.state.chunk_id(3, chunk)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        for (_, entry) in reader.nonempty() {
            bytes[entry.offset as usize] ^= 0x40;
        }
        std::fs::write(&path, &bytes).unwrap();
    }
    h.restart_worker();
    h.run_until(worker, usize::MAX);
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4());
}

/// The harness with a lease period of `lease`, on a clock the test moves.
fn harness_with_lease(lease: Duration) -> (Harness, ManualClock) {
    let mut h = harness(KeepLevels::All);
    h.state.lease_duration = lease;
    let (clock, hands) = Clock::manual();
    h.state.clock = clock;
    (h, hands)
}

/// Level 1 (chunks 0..8) with worker `slow` holding one task and `fast`
/// having computed the seven others; returns slow's task.
fn all_but_one_done(h: &mut Harness, slow: u64, fast: u64) -> Task {
    let held = h.lease(slow);
    for _ in 0..7 {
        let task = h.lease(fast);
        let done = h.compute(&task);
        assert_eq!(h.state.complete(fast, task.lease_id, done), Verdict::Accepted);
    }
    held
}

#[test]
fn an_idle_worker_copies_a_straggler_and_the_first_result_wins() {
    let (mut h, hands) = harness_with_lease(Duration::from_secs(600));
    let slow = h.state.register("slow".into(), 1, 0);
    let fast = h.state.register("fast".into(), 1, 0);
    let held = all_but_one_done(&mut h, slow, fast);
    // Slow's task has not yet run as long as an average task (milliseconds
    // of real compute): no copy.
    assert!(matches!(h.state.lease(fast), lease_reply::Reply::WaitMs(_)));
    // Now it has, with no progress. A worker still computing a task of
    // its own gets no copy (it is not idle: the copy would wait for its
    // threads)...
    hands.advance(Duration::from_secs(60));
    assert!(matches!(h.state.lease_holding(fast, 1), lease_reply::Reply::WaitMs(_)));
    // ...an idle one gets a second copy of it.
    let copy = h.lease(fast);
    assert_eq!((copy.from_level, copy.chunk), (held.from_level, held.chunk));
    assert_ne!(copy.lease_id, held.lease_id);
    // One copy at most: slow, asking again, waits.
    assert!(matches!(h.state.lease(slow), lease_reply::Reply::WaitMs(_)));
    let done = h.compute(&copy);
    assert_eq!(h.state.complete(fast, copy.lease_id, done), Verdict::Accepted);
    assert_eq!(
        h.state.manifest.levels.len(),
        2,
        "level 1 closed with the copy's result"
    );
    // The original's lease ended: its progress is refused (its worker
    // stops) and its result, the same file, is ignored, not counted twice.
    assert!(h.state.progress(slow, held.lease_id, TaskProgress::default()).is_err());
    assert!(matches!(
        h.state.complete(slow, held.lease_id, done),
        Verdict::Ignored(_)
    ));
    let stats = h.state.lease_stats;
    assert_eq!((stats.backups_issued, stats.backups_won, stats.late_reports), (1, 1, 0));
    h.run_until(fast, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

/// Warnings, kept for a test to read.
struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
impl Reporter for Warnings {
    fn warn(&mut self, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
}

/// A result whose file was being checked while another copy's result
/// closed its level is a late duplicate: ignored, not taken for a repair
/// of the closed level (which warned "level 1 chunk 3 recomputed and
/// verified" in a plain `cayley run loopover:4x4 --max-depth 4`, the
/// other copy there being the coordinator's record of the chunk as empty).
#[test]
fn a_result_checked_while_its_level_closed_is_a_duplicate_not_a_repair() {
    let (mut h, hands) = harness_with_lease(Duration::from_secs(600));
    let warnings = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    h.state.reporter = Box::new(Warnings(warnings.clone()));
    let slow = h.state.register("slow".into(), 1, 0);
    let fast = h.state.register("fast".into(), 1, 0);
    let held = all_but_one_done(&mut h, slow, fast);
    hands.advance(Duration::from_secs(60));
    let copy = h.lease(fast);
    assert_eq!(copy.chunk, held.chunk);
    // Slow's result passes the lease check; its file is checked without
    // the lock, and meanwhile the copy's result closes level 1.
    let done = h.compute(&held);
    let checking = h.state.begin_complete(slow, held.lease_id, done).unwrap();
    let file = super::completion::check_file(&checking);
    assert_eq!(file, Ok(()));
    let copy_done = h.compute(&copy);
    assert_eq!(h.state.complete(fast, copy.lease_id, copy_done), Verdict::Accepted);
    assert_eq!(h.state.manifest.levels.len(), 2, "level 1 closed");
    let verdict = h.state.finish_complete(checking, file);
    assert!(matches!(verdict, Verdict::Ignored(_)), "{:?}", verdict);
    let warned = warnings.lock().unwrap().clone();
    assert!(!warned.iter().any(|w| w.contains("recomputed")), "{:?}", warned);
    h.run_until(fast, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

#[test]
fn no_copy_of_a_task_that_is_on_time_or_when_backups_are_off() {
    let (mut h, hands) = harness_with_lease(Duration::from_secs(600));
    let slow = h.state.register("slow".into(), 1, 0);
    let fast = h.state.register("fast".into(), 1, 0);
    let held = all_but_one_done(&mut h, slow, fast);
    hands.advance(Duration::from_secs(60));
    // Under a second of running is too short to copy, however slow.
    let (mut short, short_hands) = harness_with_lease(Duration::from_secs(600));
    let (a, b) = (
        short.state.register("a".into(), 1, 0),
        short.state.register("b".into(), 1, 0),
    );
    all_but_one_done(&mut short, a, b);
    short_hands.advance(Duration::from_millis(500));
    assert!(matches!(short.state.lease(b), lease_reply::Reply::WaitMs(_)));
    // Nearly done: what is left takes less than an average task.
    let progress = TaskProgress {
        units_done: 999_999,
        units_total: 1_000_000,
        states_found: 0,
        gaining_nothing: Vec::new(),
    };
    h.state.progress(slow, held.lease_id, progress).unwrap();
    assert!(matches!(h.state.lease(fast), lease_reply::Reply::WaitMs(_)));
    // No progress at all, but backups are off.
    h.state.progress(slow, held.lease_id, TaskProgress::default()).unwrap();
    h.state.backups = false;
    assert!(matches!(h.state.lease(fast), lease_reply::Reply::WaitMs(_)));
    h.state.backups = true;
    assert_eq!(h.lease(fast).chunk, held.chunk);
}

#[test]
fn a_result_after_its_lease_expired_is_late_and_its_worker_lost() {
    let (mut h, hands) = harness_with_lease(Duration::from_secs(30));
    let cut_off = h.state.register("cut off".into(), 1, 0);
    let other = h.state.register("other".into(), 1, 0);
    let task = h.lease(cut_off);
    let done = h.compute(&task);
    hands.advance(Duration::from_secs(29));
    h.state.expire_leases();
    assert!(!h.state.is_lost(cut_off), "within its lease");
    hands.advance(Duration::from_secs(2));
    // The server's clock expires the lease; the worker is lost until heard.
    h.state.expire_leases();
    assert!(h.state.is_lost(cut_off));
    let verdict = h.state.complete(cut_off, task.lease_id, done);
    assert!(
        matches!(verdict, Verdict::Rejected(ref m) if m.contains("expired")),
        "{:?}",
        verdict
    );
    assert_eq!((h.state.lease_stats.expired, h.state.lease_stats.late_reports), (1, 1));
    assert!(!h.state.is_lost(cut_off), "heard again, so no longer lost");
    // The task went back to the queue and is computed once.
    h.state.lease_duration = Duration::from_secs(600);
    h.run_until(other, usize::MAX);
    assert_eq!(h.depths(), published_2x4());
}

/// The level two below the frontier stays for the next level only where it
/// outnumbers the states left and bottom-up is likely: on the 4×4 Loopover
/// MTM table (results/loopover-4x4-mtm), for depth 13 alone.
#[test]
fn an_older_level_is_kept_only_where_bottom_up_would_probe_it() {
    use super::completion::older_level_pays;
    let counts = LOOPOVER_4X4_MTM.map(|c| c as u128);
    let order = Some(20922789888000u128);
    let keeps: Vec<usize> = (1..=counts.len())
        .filter(|&n| older_level_pays(&counts[..n], order))
        .map(|n| n - 1)
        .collect();
    assert_eq!(keeps, vec![12], "kept after depth 12 (level 10, for depth 13) only");
    assert!(
        !older_level_pays(&counts[..13], None),
        "no group order, nothing to compare"
    );
}

mod empties;
mod last_level;
mod retire;
