//! Turning a finished job's checkpoint into the result folder.

use super::state::JobState;
use crate::result::RunResult;
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::format::ChunkReader;
use cayley_shared::job::Job;
use cayley_shared::search::antipodes::{
    find_antipodes, first_states, walk_fits, words_at, Antipode, LevelSource, WalkBudgetSpent, LONG_WALK_PROBES,
    WALK_CACHE_BYTES,
};
use cayley_shared::units::human_bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Reads level bits shard by shard from verified chunk files, for the
/// walk's threads at once.
struct CheckpointSource<'a> {
    checkpoint: &'a CheckpointDir,
    job: &'a Job,
    readers: Mutex<HashMap<(u32, u64), Arc<ChunkReader>>>,
    /// The first level whose file could not be opened or read.
    failed: Mutex<Option<u32>>,
}

thread_local! {
    /// Each walker thread's buffer for compressed frames, kept between
    /// shard reads.
    static FRAME: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl CheckpointSource<'_> {
    /// The open reader of `(level, chunk)`.
    fn reader(&self, level: u32, chunk: u64) -> anyhow::Result<Arc<ChunkReader>> {
        let open = self
            .readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(level, chunk))
            .cloned();
        if let Some(reader) = open {
            return Ok(reader);
        }
        let id = self
            .job
            .chunking
            .id(self.job.fingerprint(), level, chunk, self.job.space.shard_words());
        let reader = Arc::new(
            ChunkReader::open(&self.checkpoint.chunk_path(level, chunk), &id)
                .inspect_err(|_| self.note_failed(level))?,
        );
        let mut readers = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        // A walk touches few chunks per level; keep at most a handful open.
        if readers.len() >= 64 {
            readers.clear();
        }
        readers.insert((level, chunk), reader.clone());
        Ok(reader)
    }

    fn note_failed(&self, level: u32) {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(level);
    }

    /// The reader holding `(level, shard)` and the shard's place in it.
    fn locate(&self, level: u32, shard: u64) -> anyhow::Result<(Arc<ChunkReader>, usize)> {
        let reader = self.reader(level, self.job.chunking.chunk_of(shard))?;
        let i = (shard - reader.header().id.first_shard) as usize;
        Ok((reader, i))
    }
}

impl LevelSource for CheckpointSource<'_> {
    fn shard(&self, level: u32, shard: u64) -> anyhow::Result<Vec<u64>> {
        let mut words = vec![0u64; self.job.space.shard_words()];
        self.shard_into(level, shard, &mut words)?;
        Ok(words)
    }

    fn shard_into(&self, level: u32, shard: u64, words: &mut [u64]) -> anyhow::Result<()> {
        if level == 0 {
            self.job.level_zero(shard, words);
            return Ok(());
        }
        let (reader, i) = self.locate(level, shard)?;
        FRAME
            .with(|frame| reader.read_shard_via(i, words, &mut frame.borrow_mut()))
            .inspect_err(|_| self.note_failed(level))?;
        Ok(())
    }

    fn words(&self, level: u32, shard: u64, at: &[u32]) -> anyhow::Result<Vec<u64>> {
        if level == 0 {
            return Ok(words_at(&self.shard(0, shard)?, at));
        }
        let (reader, i) = self.locate(level, shard)?;
        Ok(reader.read_words(i, at).inspect_err(|_| self.note_failed(level))?)
    }

    fn popcount(&self, level: u32, shard: u64) -> anyhow::Result<Option<u64>> {
        if level == 0 {
            return Ok(None);
        }
        let (reader, i) = self.locate(level, shard)?;
        Ok(Some(reader.popcount(i)))
    }
}

/// Builds the result of a finished job from its manifest and level files,
/// within the default share of this machine's memory.
pub fn result_of(state: &JobState, antipode_limit: usize) -> anyhow::Result<RunResult> {
    let memory = cayley_shared::search::resources::default_budget(1);
    Ok(result_and_antipodes_of(state, antipode_limit, 0, memory)?.0)
}

/// Bytes one listed antipode holds while the results are made: its walker,
/// state and word, its record in `result.json` and its text. Peak RSS over
/// 0.3–3 million antipodes gave 0.7–1.4 KiB on the Loopover 3×4 (12 slots)
/// and 4×4 (16 slots); counted as 1 KiB and 64 bytes a slot. Unbounded,
/// `--antipodes 1000000000` on the 3×4 unreduced to depth 9 grew to 24 GB
/// in 104 s and was killed.
fn antipode_bytes(job: &Job) -> u64 {
    1024 + 64 * job.puzzle.slots as u64
}

/// At least this many antipodes are listed whatever the memory (a few MB).
const MIN_LISTED: usize = 1000;

/// Same as [`result_of`], with the antipodes as found (states and move
/// indices; the result holds them as text). The antipode walk runs on
/// `threads` threads (0: every core) and holds at most `memory` bytes of
/// the level it walks into (and at most [`WALK_CACHE_BYTES`]); the
/// antipodes listed are as many as `limit` asks and `memory` holds.
pub fn result_and_antipodes_of(
    state: &JobState,
    limit: usize,
    threads: usize,
    memory: u64,
) -> anyhow::Result<(RunResult, Vec<Antipode>)> {
    let (job, checkpoint, manifest) = (&state.job, &state.checkpoint, &state.manifest);
    let total = manifest.states();
    if let Some(reachable) = job
        .reachable_states
        .filter(|&r| manifest.max_depth.is_none() && total != r)
    {
        anyhow::bail!(
            "internal check failed: the job counted {} states but {} are reachable; the table is not trustworthy",
            total,
            reachable
        );
    }
    let source = CheckpointSource {
        checkpoint,
        job,
        readers: Mutex::new(HashMap::new()),
        failed: Mutex::new(None),
    };
    let depth = manifest.levels.len() as u32 - 1;
    let raw_level = job.space.level_bytes();
    let fit = ((memory / antipode_bytes(job)) as usize).max(MIN_LISTED);
    let at_depth = manifest
        .levels
        .last()
        .map_or(0, |l| if l.classes > 0 { l.classes } else { l.count });
    if limit > fit && at_depth > fit as u64 {
        tracing::warn!(
            "listing the first {} antipodes, not {}: at about {} each, that many fit in {} of memory (a larger --memory, or `cayley resume` of a kept checkpoint with one, lists more)",
            fit,
            limit,
            human_bytes(antipode_bytes(job) as u128),
            human_bytes(memory as u128)
        );
    }
    let limit = limit.min(fit);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    // Levels kept whose files turned out missing or damaged: the walk goes
    // on without them, as without a level the retention dropped.
    let mut lost: Vec<u32> = Vec::new();
    let (walked, failed) = loop {
        // The last two levels are always on disk; a level the retention
        // keeps may still be missing (deleted by hand, or by an older build).
        let kept = |level: u32| {
            level + 1 >= depth
                || level == 0
                || (manifest.keeps_level(level, raw_level)
                    && checkpoint.level_dir(level).is_dir()
                    && !lost.contains(&level))
        };
        // Jumps of more than MAX_KEEP_STRIDE moves between the levels left are
        // tried with a bounded number of membership tests: depth first they
        // usually succeed early, but their worst case grows as moves^jump.
        let max_probes = if walk_fits(depth, &kept) {
            u64::MAX
        } else {
            LONG_WALK_PROBES
        };
        let walked = pool.install(|| {
            find_antipodes(
                job,
                &source,
                depth,
                limit,
                &kept,
                max_probes,
                memory.min(WALK_CACHE_BYTES),
            )
        });
        let failed = source.failed.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (walked, failed) {
            (Err(e), Some(level)) if kept(level) && level > 0 && level + 1 < depth => {
                tracing::warn!(
                    "level {} of the checkpoint cannot be read ({:#}); the antipodes' words are found without it",
                    level,
                    e
                );
                lost.push(level);
            }
            (walked, failed) => break (walked, failed),
        }
    };
    // Too few earlier levels are left: states without words.
    let without_words = || -> anyhow::Result<Vec<Antipode>> {
        Ok(first_states(job, &source, depth, limit)?
            .into_iter()
            .map(|state| Antipode {
                state,
                solution: Vec::new(),
            })
            .collect())
    };
    let walked = match walked {
        Err(e) if e.is::<WalkBudgetSpent>() => without_words(),
        walked => walked,
    };
    let unreadable = failed.is_some() || source.failed.lock().unwrap_or_else(|e| e.into_inner()).is_some();
    let antipodes = match walked {
        Ok(antipodes) => antipodes,
        // One of the last two levels cannot be read: the table (from the
        // manifest) is whole, and is written; only the listing is lost.
        // Failing instead sent `cayley resume` round in a loop, as a
        // finished job's files are not recomputed.
        Err(e) if unreadable => {
            tracing::warn!(
                "the antipodes cannot be listed ({:#}); the depth table is written without them",
                e
            );
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    Ok((RunResult::new(job, manifest, &antipodes), antipodes))
}
