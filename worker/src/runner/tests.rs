//! The task runner on its own: every level computed chunk by chunk from the
//! files of the level before, as a worker does for the coordinator, checked
//! against the published Loopover tables of tests/data (Jia, Zhang and Xiang; tests/data/published.md) and
//! against what the chunk files themselves say; batches, budgets smaller
//! than a level, sparse levels and damaged inputs.

use super::frozen::KnownEmpty;
use super::*;
use cayley_shared::files::format::{ChunkReader, ShardEntry};
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::search::resources::requirements;

/// The published Loopover MTM table of `board` (`2x4`) in
/// tests/data/loopover-mtm.csv.
fn published(board: &str) -> Vec<u64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/loopover-mtm.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(board)?.strip_prefix(','))
        .unwrap_or_else(|| panic!("no {} in {}", board, path.display()));
    line.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

/// The job of `spec` (MTM) with `shard_pieces` and `chunk_shards` shards
/// per task.
fn job(spec: &str, shard_pieces: Option<usize>, chunk_shards: u64) -> Job {
    let puzzle = parse_puzzle(spec, Metric::Mtm).unwrap();
    Job::new(puzzle, shard_pieces)
        .unwrap()
        .with_chunk_shards(Some(chunk_shards))
}

/// How the tests write: their files need not survive a power cut.
const WRITE: WriteOptions = WriteOptions {
    durable: false,
    fail_disk_full_at: None,
};

/// An empty checkpoint, `levels/` included, as the coordinator makes it.
fn checkpoint() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    CheckpointDir::create(dir.path()).unwrap();
    dir
}

/// What computing every level reported.
struct Levels {
    /// States at each depth.
    depths: Vec<u64>,
    /// Shards the cache did not hold when asked, over all tasks.
    misses: u64,
}

/// Computes levels 1, 2, … every chunk in turn until a level is empty.
/// Each task's progress must add up: every unit of its chunk done once,
/// and the states the units found the bits of its file.
fn levels(runner: &TaskRunner) -> Levels {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let chunks = runner.ctx.job.chunking.chunks();
    let mut out = Levels {
        depths: vec![1],
        misses: 0,
    };
    for from in 0.. {
        let mut states = 0;
        for chunk in 0..chunks {
            let (units, found) = (AtomicU64::new(0), AtomicU64::new(0));
            let on_units = |u: u64, f: u64| {
                units.fetch_add(u, Relaxed);
                found.fetch_add(f, Relaxed);
            };
            let task = runner.compute_chunk(from, chunk, &on_units).unwrap();
            assert_eq!(
                units.into_inner(),
                runner.units_of_chunk(chunk),
                "level {} chunk {}",
                from + 1,
                chunk
            );
            assert_eq!(found.into_inner(), task.stored, "level {} chunk {}", from + 1, chunk);
            // Every item the task's threads took is let go (the count
            // decides whether a task's last shards spread over the pool).
            assert_eq!(runner.levels.working(), 0, "level {} chunk {}", from + 1, chunk);
            states += task.states;
            out.misses += task.io.cache.lookups - task.io.cache.hits;
        }
        if states == 0 {
            break;
        }
        out.depths.push(states);
    }
    out
}

#[test]
fn shards_in_flight_on_every_thread_give_the_table_of_one_shard_at_a_time() {
    // By pieces (72 shards) and reduced by the symmetries (classes of keys).
    for (spec, k, board) in [
        ("loopover:3x3 --no-symmetry", Some(2), "3x3"),
        ("loopover:3x3", None, "3x3"),
    ] {
        let job = job(spec, k, 8);
        let mut tables = Vec::new();
        for one_at_a_time in [false, true] {
            let dir = checkpoint();
            let mut runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
            if one_at_a_time {
                runner.window = 1;
            } else {
                assert!(runner.window > 2, "{}: the budget has room for a window", spec);
            }
            tables.push(levels(&runner).depths);
        }
        assert_eq!(tables[0], published(board), "{} on every thread", spec);
        assert_eq!(tables[1], published(board), "{} one shard at a time", spec);
    }
}

/// Computes levels 1, 2, … with the chunks of each level on `parallel`
/// threads at once (tasks side by side in one runner, as a worker holding
/// two leases runs them), until a level is empty.
fn levels_side_by_side(runner: &TaskRunner, parallel: usize) -> Vec<u64> {
    let chunks = runner.ctx.job.chunking.chunks();
    let mut depths = vec![1];
    for from in 0.. {
        let next = std::sync::atomic::AtomicU64::new(0);
        let states = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..parallel {
                s.spawn(|| loop {
                    let chunk = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if chunk >= chunks {
                        break;
                    }
                    let task = runner.compute_chunk(from, chunk, &|_, _| {}).unwrap();
                    states.fetch_add(task.states, std::sync::atomic::Ordering::Relaxed);
                });
            }
        });
        assert_eq!(runner.levels.working(), 0, "level {}", from + 1);
        match states.into_inner() {
            0 => break,
            n => depths.push(n),
        }
    }
    depths
}

#[test]
fn tasks_of_a_level_side_by_side_give_the_published_table() {
    // The sparse levels of the reduced space (items folding skipped
    // shards), the dense block layout, and a window of one shard per
    // task (loops end when it is full, and start again once it is
    // written).
    for (spec, k, window) in [
        ("loopover:3x3", None, None),
        ("loopover:3x3 --no-symmetry", Some(2), None),
        ("loopover:3x3 --no-symmetry", Some(2), Some(1)),
    ] {
        let job = job(spec, k, 4);
        let dir = checkpoint();
        let mut runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
        if let Some(limit) = window {
            runner.window = limit;
        }
        assert_eq!(
            levels_side_by_side(&runner, 3),
            published("3x3"),
            "{} window {:?}",
            spec,
            window
        );
    }
}

#[test]
fn sixteen_threads_run_four_tasks_side_by_side_and_give_the_published_table() {
    // As many tasks side by side as the runner says a worker leases
    // (`in_flight`: four at 16 threads), on a pool of 16 threads.
    for (spec, k) in [("loopover:3x3", None), ("loopover:3x3 --no-symmetry", Some(2))] {
        let job = job(spec, k, 4);
        let dir = checkpoint();
        let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 16, WRITE).unwrap();
        assert_eq!(runner.tasks_at_once(), 4, "{spec}");
        assert_eq!(
            levels_side_by_side(&runner, runner.tasks_at_once()),
            published("3x3"),
            "{spec}"
        );
    }
}

#[test]
fn a_task_failing_beside_another_leaves_the_other_whole() {
    // Level 3 from level 2 with one chunk of level 2 damaged: the tasks
    // reading it fail as corrupt inputs, those beside them finish and
    // their files hold what a lone runner computes.
    let (job, dir, chunk, entry) = computed();
    let expected: Vec<u64> = {
        let copy = tempfile::tempdir().unwrap();
        copy_checkpoint(dir.path(), copy.path());
        let runner = TaskRunner::new(job.clone(), copy.path(), 64 << 20, 2, WRITE).unwrap();
        (0..job.chunking.chunks())
            .map(|c| runner.compute_chunk(2, c, &|_, _| {}).unwrap().stored)
            .collect()
    };
    let path = CheckpointDir::existing(dir.path()).chunk_path(2, chunk);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[(entry.offset + entry.length / 2) as usize] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
    let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
    let results: Vec<Result<TaskResult, TaskError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..job.chunking.chunks())
            .map(|c| {
                let runner = &runner;
                s.spawn(move || runner.compute_chunk(2, c, &|_, _| {}))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut failed = 0;
    for (c, result) in results.iter().enumerate() {
        match result {
            Ok(task) => assert_eq!(task.stored, expected[c], "chunk {}", c),
            Err(TaskError::CorruptInput {
                level: 2, chunk: bad, ..
            }) if *bad == chunk => failed += 1,
            Err(e) => panic!("chunk {}: {}", c, e),
        }
    }
    assert!(
        failed > 0 && failed < results.len(),
        "{} of {} failed",
        failed,
        results.len()
    );
}

/// Copies the checkpoint at `from` (levels and their chunk files) to `to`.
fn copy_checkpoint(from: &Path, to: &Path) {
    for entry in walk(from) {
        let target = to.join(entry.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &target).unwrap();
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A level of one shard: each task needs three shard buffers at once (the
/// union of the earlier levels, the running level, which is also every
/// source, and the output), whatever the budget. Four had been in use: the
/// level below stayed cached beside the union that covers it, a fresh
/// output buffer was taken before the kept output's inputs were let go,
/// and depth 0 made the solved shard afresh for the current level and for
/// each source.
#[test]
fn a_one_shard_level_holds_three_shard_buffers() {
    let job = job("loopover:3x3 --no-symmetry", Some(0), 1);
    assert_eq!(job.space.shards(), 1);
    let dir = checkpoint();
    let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
    assert_eq!(levels(&runner).depths, published("3x3"));
    assert_eq!(runner.slots_touched(), 3);
}

#[test]
fn a_budget_smaller_than_a_level_evicts_and_gives_the_same_table() {
    let job = job("loopover:3x3 --no-symmetry", Some(2), 4);
    let req = requirements(&job);
    let smallest = req.min_worker_bytes;
    // What the smallest budget leaves for shards beside the tables.
    let shards = smallest - req.table_bytes;
    assert!(
        shards < job.space.level_bytes() as u64 / 2,
        "room for {} bytes of shards",
        shards
    );
    let mut misses = Vec::new();
    for budget in [smallest, 64 << 20] {
        let dir = checkpoint();
        let runner = TaskRunner::new(job.clone(), dir.path(), budget, 1, WRITE).unwrap();
        let run = levels(&runner);
        assert_eq!(run.depths, published("3x3"), "budget {}", budget);
        assert!(runner.cache_peak() <= budget, "budget {}", budget);
        misses.push(run.misses);
    }
    // Evicted shards are read again; with room for every level, never.
    assert!(misses[0] > misses[1], "misses {:?}", misses);
}

/// A cache in stripes, each evicting on its own, on threads that compute
/// tasks side by side: the table is still the published one, shards were
/// read again, and the stripes together stay within the budget.
#[test]
fn a_striped_cache_smaller_than_a_level_gives_the_same_table() {
    // 3,024 shards of 120 states: room for a third of a level beyond the
    // smallest budget, which is several stripes of 256 shards.
    let job = job("loopover:3x3 --no-symmetry", Some(4), 64);
    let budget = requirements(&job).min_worker_bytes + job.space.level_bytes() as u64 / 3;
    let dir = checkpoint();
    let runner = TaskRunner::new(job.clone(), dir.path(), budget, 4, WRITE).unwrap();
    assert!(runner.store.stripes() > 1, "{} stripes", runner.store.stripes());
    let run = levels(&runner);
    assert_eq!(run.depths, published("3x3"));
    assert!(run.misses > 0, "the cache held every level");
    assert!(runner.cache_peak() <= budget);
    let dir = checkpoint();
    let runner = TaskRunner::new(job, dir.path(), budget, 4, WRITE).unwrap();
    assert_eq!(levels_side_by_side(&runner, 3), published("3x3"), "tasks side by side");
}

#[test]
fn sparse_levels_are_written_as_empty_index_entries() {
    // 72 shards of two pieces' places: level 1 (12 states) touches few.
    let job = job("loopover:3x3 --no-symmetry", Some(2), 8);
    let dir = checkpoint();
    let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
    let run = levels(&runner);
    assert_eq!(run.depths, published("3x3"));
    let checkpoint = CheckpointDir::existing(dir.path());
    let (mut empty, mut wholly_empty_chunks) = (0, 0);
    for (level, &count) in run.depths.iter().enumerate().skip(1) {
        let mut popcount = 0;
        for chunk in 0..job.chunking.chunks() {
            let id = job
                .chunking
                .id(job.fingerprint(), level as u32, chunk, job.space.shard_words());
            let reader = ChunkReader::open(&checkpoint.chunk_path(level as u32, chunk), &id).unwrap();
            reader.verify_all().unwrap();
            let shards = id.shards as usize;
            let entries: Vec<_> = (0..shards).map(|i| reader.entry(i)).collect();
            let empties = entries.iter().filter(|e| e.popcount == 0).count();
            assert!(
                entries.iter().all(|e| e.popcount > 0 || e.length == 0),
                "an empty shard stores no bytes"
            );
            assert_eq!(reader.nonempty().count(), shards - empties);
            empty += empties;
            wholly_empty_chunks += usize::from(empties == entries.len());
            popcount += reader.header().popcount;
        }
        // Without reduction a bit is a state: the files hold the table.
        assert_eq!(popcount, count, "level {}", level);
    }
    assert!(empty > 0 && wholly_empty_chunks > 0, "{} empty shards", empty);
}

#[test]
fn chunks_said_empty_gain_no_state_and_the_table_stays_whole() {
    // The client leases more tasks beside those it is told are empty: a
    // chunk said empty that gained states would break the memory bound.
    // Reduced by the symmetries (the sparse map is the reduced space's),
    // a shard a chunk, so that most chunks of the first levels are empty.
    let job = job("loopover:3x3", None, 1);
    let dir = checkpoint();
    let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
    let checkpoint = CheckpointDir::existing(dir.path());
    let mut depths = vec![1];
    let mut said_empty_at_level_1 = 0;
    let mut bounded = 0;
    for from in 0.. {
        let mut states = 0;
        for chunk in 0..job.chunking.chunks() {
            let said = std::sync::Mutex::new(Vec::new());
            let stop = AtomicBool::new(false);
            let on_shards_done = |done| said.lock().unwrap().push(done);
            let task = runner
                .compute_chunk_until(from, chunk, &|_, _| {}, &on_shards_done, &|_| {}, &stop)
                .unwrap();
            states += task.states;
            let said = said.into_inner().unwrap();
            // At most a bound on the shards in flight, then one end.
            let (end, bound) = match said[..] {
                [end] => (end, None),
                [ShardsDone::AtMost(shards), end] => (end, Some(shards)),
                _ => panic!("said {said:?}"),
            };
            assert_ne!(end, ShardsDone::AtMost(0), "{said:?}");
            if let Some(shards) = bound {
                // The client then holds only that many shards for the
                // task: no more may gain states.
                assert!(shards > 0 && shards < runner.window(), "{said:?}");
                let id = job
                    .chunking
                    .id(job.fingerprint(), from + 1, chunk, job.space.shard_words());
                let reader = ChunkReader::open(&checkpoint.chunk_path(from + 1, chunk), &id).unwrap();
                let gained = reader.nonempty().count();
                assert!(
                    gained <= shards,
                    "chunk {chunk} of level {}: {gained} > {shards}",
                    from + 1
                );
                bounded += 1;
            }
            let said = end == ShardsDone::GainsNothing;
            if said {
                assert_eq!(task.stored, 0, "chunk {} of level {} was said empty", chunk, from + 1);
                let id = job
                    .chunking
                    .id(job.fingerprint(), from + 1, chunk, job.space.shard_words());
                let reader = ChunkReader::open(&checkpoint.chunk_path(from + 1, chunk), &id).unwrap();
                assert_eq!(reader.header().popcount, 0);
                said_empty_at_level_1 += usize::from(from == 0);
            }
        }
        if states == 0 {
            break;
        }
        depths.push(states);
    }
    assert_eq!(depths, published("3x3"));
    assert!(
        said_empty_at_level_1 > job.chunking.chunks() as usize / 2,
        "{} of {} chunks of level 1 said empty",
        said_empty_at_level_1,
        job.chunking.chunks()
    );
    assert!(bounded > 0, "no chunk said it computes fewer shards than a window");
}

/// A job of several levels computed into a checkpoint, and the chunk of
/// level 2 that holds its first non-empty shard, with that shard's entry.
fn computed() -> (Job, tempfile::TempDir, u64, ShardEntry) {
    let job = job("loopover:3x3 --no-symmetry", Some(2), 8);
    let dir = checkpoint();
    let runner = TaskRunner::new(job.clone(), dir.path(), 64 << 20, 2, WRITE).unwrap();
    assert_eq!(levels(&runner).depths, published("3x3"));
    let checkpoint = CheckpointDir::existing(dir.path());
    for chunk in 0..job.chunking.chunks() {
        let id = job.chunking.id(job.fingerprint(), 2, chunk, job.space.shard_words());
        let reader = ChunkReader::open(&checkpoint.chunk_path(2, chunk), &id).unwrap();
        let first = reader.nonempty().next();
        if let Some((_, entry)) = first {
            return (job, dir, chunk, entry);
        }
    }
    panic!("level 2 has states")
}

/// The errors of computing level 3 from level 2, every chunk, by a fresh
/// runner (nothing cached: every input comes from the files).
fn level_3_errors(job: &Job, dir: &Path) -> Vec<TaskError> {
    let runner = TaskRunner::new(job.clone(), dir, 64 << 20, 2, WRITE).unwrap();
    (0..job.chunking.chunks())
        .filter_map(|chunk| runner.compute_chunk(2, chunk, &|_, _| {}).err())
        .collect()
}

/// Asserts that `errors` are reports of a corrupt `(level, chunk)`.
fn assert_corrupt(errors: &[TaskError], level: u32, chunk: u64) {
    assert!(!errors.is_empty(), "the damage went unnoticed");
    for e in errors {
        match e {
            TaskError::CorruptInput { level: l, chunk: c, .. } => assert_eq!((*l, *c), (level, chunk), "{}", e),
            other => panic!("not a corrupt input: {}", other),
        }
    }
}

#[test]
fn a_damaged_shard_is_a_corrupt_input_naming_its_level_and_chunk() {
    let (job, dir, chunk, entry) = computed();
    let path = CheckpointDir::existing(dir.path()).chunk_path(2, chunk);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[(entry.offset + entry.length / 2) as usize] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
    assert_corrupt(&level_3_errors(&job, dir.path()), 2, chunk);
}

#[test]
fn a_truncated_or_missing_chunk_file_is_a_corrupt_input() {
    let (job, dir, chunk, _) = computed();
    let path = CheckpointDir::existing(dir.path()).chunk_path(2, chunk);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert_corrupt(&level_3_errors(&job, dir.path()), 2, chunk);
    std::fs::remove_file(&path).unwrap();
    let errors = level_3_errors(&job, dir.path());
    assert_corrupt(&errors, 2, chunk);
    assert!(
        errors.iter().all(|e| e.to_string().ends_with("missing")),
        "{}",
        errors[0]
    );
}

mod frozen;
mod last_level;
mod store;
mod unions;

/// Each shard's farthest state from solved, by a plain breadth-first
/// search over the puzzle's states in a hash map: the level after which
/// every state of the shard is reached, found without the engine's levels.
fn farthest_by_shard(job: &Job) -> Vec<u32> {
    let puzzle = &job.puzzle;
    let mut distance = std::collections::HashMap::from([(puzzle.solved.clone(), 0u32)]);
    let mut frontier = vec![puzzle.solved.clone()];
    for depth in 1.. {
        let mut next = Vec::new();
        for state in &frontier {
            for m in &puzzle.moves {
                let Some(to) = puzzle.apply(m, state) else { continue };
                if let std::collections::hash_map::Entry::Vacant(e) = distance.entry(to) {
                    next.push(e.key().clone());
                    e.insert(depth);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    let mut farthest = vec![0; job.space.shards() as usize];
    for (state, &d) in &distance {
        let shard = job.space.locate(state).0 as usize;
        farthest[shard] = farthest[shard].max(d);
    }
    farthest
}

#[test]
fn shards_with_every_state_reached_gain_nothing_and_the_table_stays_whole() {
    // Reduced (14 and 65 shards) and by pieces (336 shards of 120
    // states, 3,024 of 120), each in the smallest budget, where the
    // unions of earlier levels that would exclude the states already
    // reached do not stay in the cache.
    for (spec, k, board) in [
        ("loopover:2x4", None, "2x4"),
        ("loopover:3x3", None, "3x3"),
        ("loopover:2x4 --no-symmetry", Some(3), "2x4"),
        ("loopover:3x3 --no-symmetry", Some(4), "3x3"),
    ] {
        let job = job(spec, k, 8);
        let dir = checkpoint();
        let budget = requirements(&job).min_worker_bytes;
        let runner = TaskRunner::new(job.clone(), dir.path(), budget, 2, WRITE).unwrap();
        let table = levels(&runner).depths;
        runner.counts_saved();
        assert_eq!(table, published(board), "{}", spec);
        // A worker that reads the finished levels from the first says
        // which shards still had states to reach after each, as the plain
        // search does: the levels above ran with those maps.
        let farthest = farthest_by_shard(&job);
        let fresh = TaskRunner::new(job.clone(), dir.path(), budget, 2, WRITE).unwrap();
        let mut levels_with_full_shards = 0;
        for level in 0..table.len() as u32 {
            let what = format!("{}: shards open after level {}", spec, level);
            levels_with_full_shards +=
                check_open_shards(fresh.open_shards(level, KnownEmpty::default()), &farthest, level, &what);
        }
        // Some shards were full before the last level (at the last, all).
        assert!(levels_with_full_shards > 1, "{}", spec);
        // A repair of an earlier level does not read the counts of later
        // ones.
        assert!(fresh.open_shards(1, KnownEmpty::default()).is_none(), "{}", spec);
        fresh.counts_saved();
        joining_after_retirement(&job, dir.path(), budget, &farthest, spec);
    }
}

/// Checks a worker's map of shards with states left after `level`
/// (`open`) against each shard's farthest state from a plain search: the
/// map names exactly the shards whose farthest state lies beyond `level`,
/// and where there is none, no shard is full. Returns 1 for a map, else 0.
fn check_open_shards(open: Option<Vec<u64>>, farthest: &[u32], level: u32, what: &str) -> u32 {
    let expected: Vec<bool> = farthest.iter().map(|&far| far > level).collect();
    match open {
        Some(open) => {
            let got: Vec<bool> = (0..expected.len())
                .map(|s| cayley_shared::space::bits::test_bit(&open, s))
                .collect();
            assert_eq!(got, expected, "{}", what);
            1
        }
        None => {
            assert!(expected.iter().all(|&open| open), "{}: no map, but full shards", what);
            0
        }
    }
}

/// Counts files present in `checkpoint`, by level.
fn counts_files(checkpoint: &CheckpointDir, depth: u32) -> Vec<u32> {
    (0..=depth).filter(|&l| checkpoint.reached_path(l).exists()).collect()
}

/// A worker that joins as level `level + 1` starts, once `--keep-levels
/// last2` has retired what it retires by then (the folders of levels below
/// `level - 1`, and the chunk files of level `level - 1`), still names the
/// shards with states left, from the counts files the first worker saved
/// and the files of level `level`; without the counts it cannot tell, and
/// says so. Only the two newest counts files are kept.
fn joining_after_retirement(job: &Job, dir: &Path, budget: u64, farthest: &[u32], spec: &str) {
    let checkpoint = CheckpointDir::existing(dir);
    let depth = *farthest.iter().max().unwrap();
    for level in counts_files(&checkpoint, depth) {
        std::fs::remove_file(checkpoint.reached_path(level)).unwrap();
    }
    // The first worker, entering each level as the job did.
    let first = TaskRunner::new(job.clone(), dir, budget, 2, WRITE).unwrap();
    first.open_shards(0, KnownEmpty::default());
    first.open_shards(1, KnownEmpty::default());
    let mut levels_with_full_shards = 0;
    for level in 2..=depth {
        first.open_shards(level, KnownEmpty::default());
        first.counts_saved();
        let newest_two = vec![level - 1, level];
        assert_eq!(counts_files(&checkpoint, depth), newest_two, "{}", spec);
        checkpoint.remove_level(level - 2);
        for chunk in 0..job.chunking.chunks() {
            let _ = std::fs::remove_file(checkpoint.chunk_path(level - 1, chunk));
        }
        // As if the job stopped before any worker entered the level: the
        // joining worker starts from the counts through `level - 1` and
        // sums `level` from its files.
        std::fs::remove_file(checkpoint.reached_path(level)).unwrap();
        let joining = TaskRunner::new(job.clone(), dir, budget, 2, WRITE).unwrap();
        let what = format!("{}: joining, shards open after level {}", spec, level);
        levels_with_full_shards += check_open_shards(
            joining.open_shards(level, KnownEmpty::default()),
            farthest,
            level,
            &what,
        );
        joining.counts_saved();
        assert_eq!(counts_files(&checkpoint, depth), newest_two, "{}: written again", spec);
    }
    assert!(levels_with_full_shards > 1, "{}", spec);
    // A damaged counts file is passed over for the one before it, and
    // written again.
    let newest = checkpoint.reached_path(depth);
    let mut damaged = std::fs::read(&newest).unwrap();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(&newest, &damaged).unwrap();
    let joining = TaskRunner::new(job.clone(), dir, budget, 2, WRITE).unwrap();
    let open = joining
        .open_shards(depth, KnownEmpty::default())
        .expect("every shard is full after the last level");
    joining.counts_saved();
    assert!(open.iter().all(|&word| word == 0), "{}", spec);
    assert_ne!(std::fs::read(&newest).unwrap(), damaged, "{}", spec);
    // The counts files are what it starts from: without them the retired
    // levels cannot be summed.
    for level in depth - 1..=depth {
        std::fs::remove_file(checkpoint.reached_path(level)).unwrap();
    }
    let joining = TaskRunner::new(job.clone(), dir, budget, 2, WRITE).unwrap();
    assert!(joining.open_shards(depth, KnownEmpty::default()).is_none(), "{}", spec);
}
