//! The single-machine search driver: level after level, every shard's task
//! runs the kernel over memory-mapped scratch files, until a level is empty,
//! the group order is reached, or `max_depth` stops it.

use crate::job::Job;
use crate::kernel::context::SearchContext;
use crate::kernel::task::{ShardInputs, SourceBits, TaskStats};
use crate::search::antipodes::{find_antipodes, LevelSource, ShardWords};
use crate::space::bits::{Plane, PlaneMut};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How to run a search.
#[derive(Clone, Debug, Default)]
pub struct SearchConfig {
    /// Worker threads (0 = all cores).
    pub threads: usize,
    /// Stop after this depth even if states remain.
    pub max_depth: Option<u32>,
    /// Directory for scratch files (a fresh subdirectory is made and removed).
    pub scratch: Option<PathBuf>,
    /// How many antipodes to report.
    pub antipodes: usize,
}

/// Progress reports from a running search.
pub trait Progress: Sync {
    /// A level begins; `blocks` units of work follow.
    fn level_started(&self, _depth: u32, _blocks: u64) {}
    /// One block finished with `found` new states.
    fn block_done(&self, _found: u64) {}
    /// A level ended with `count` states.
    fn level_finished(&self, _depth: u32, _count: u64, _seconds: f64) {}
}

/// A progress sink that ignores everything.
pub struct Silent;
impl Progress for Silent {}

pub use crate::search::antipodes::Antipode;

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchOutcome {
    /// States at each depth.
    pub depths: Vec<u64>,
    /// Classes of states under the symmetries reduced by, at each depth
    /// (equal to `depths` without reduction).
    pub classes: Vec<u64>,
    /// Wall seconds per level (level 0 included, as setup time).
    pub level_seconds: Vec<f64>,
    /// True when every reachable state was counted.
    pub complete: bool,
    /// Up to `antipodes` states at the last depth.
    pub antipodes: Vec<Antipode>,
    /// Kernel statistics summed over all tasks.
    pub stats: TaskStats,
    /// Total wall seconds.
    pub seconds: f64,
}

/// Scratch directory holding one memory-mapped file per level, its shards
/// at fixed offsets (one file per shard cost more in file creation than the
/// search itself on spaces of many small shards).
pub struct LevelStore {
    root: PathBuf,
    words: usize,
    _temp: Option<tempfile::TempDir>,
}

impl LevelStore {
    /// A fresh store of shards of `words` words under `parent` (or the
    /// system temp dir); removed on drop.
    pub fn new(parent: Option<&Path>, words: usize) -> anyhow::Result<LevelStore> {
        let temp = match parent {
            Some(p) => {
                std::fs::create_dir_all(p)
                    .with_context(|| format!("cannot create scratch directory {}", p.display()))?;
                tempfile::Builder::new().prefix("cayley-scratch-").tempdir_in(p)
            }
            None => tempfile::Builder::new().prefix("cayley-scratch-").tempdir(),
        }
        .context("cannot create a scratch directory")?;
        Ok(LevelStore {
            root: temp.path().to_path_buf(),
            words,
            _temp: Some(temp),
        })
    }

    /// Path of the file of `level`.
    pub fn path(&self, level: u32) -> PathBuf {
        self.root.join(format!("level-{:04}.bits", level))
    }

    /// Creates the (zeroed) file of a new level.
    pub fn create_level(&self, level: u32, shards: u64) -> anyhow::Result<PlaneMut> {
        let path = self.path(level);
        PlaneMut::create(&path, self.words * shards as usize)
            .with_context(|| format!("cannot create scratch file {}", path.display()))
    }

    /// Maps a finished level.
    pub fn open(&self, level: u32) -> anyhow::Result<Plane> {
        let path = self.path(level);
        Plane::open(&path).with_context(|| format!("cannot read scratch file {}", path.display()))
    }

    /// The words of `shard` within a level's words.
    pub fn shard<'a>(&self, level: &'a [u64], shard: u64) -> &'a [u64] {
        &level[shard as usize * self.words..(shard as usize + 1) * self.words]
    }
}

/// Runs a whole search on this machine.
pub fn search(job: &Job, config: &SearchConfig, progress: &dyn Progress) -> anyhow::Result<SearchOutcome> {
    let threads = if config.threads == 0 {
        num_cpus()
    } else {
        config.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    pool.install(|| search_in_pool(job, config, progress))
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn search_in_pool(job: &Job, config: &SearchConfig, progress: &dyn Progress) -> anyhow::Result<SearchOutcome> {
    let started = Instant::now();
    let space = &job.space;
    let shards = space.shards();
    let words = space.shard_words();
    let mut store = LevelStore::new(config.scratch.as_deref(), words)?;
    let ctx = SearchContext::new(job.clone());

    // Level 0: the solved state alone.
    let mut level0 = store.create_level(0, shards)?;
    let (shard, word, bit) = space.locate(&job.puzzle.solved);
    level0.words_mut()[shard as usize * words + word] |= 1u64 << bit;
    let mut current: Plane = level0.freeze()?;
    let mut previous: Option<Plane> = None;
    let mut depths = vec![1u64];
    let mut classes = vec![1u64];
    let mut level_seconds = vec![started.elapsed().as_secs_f64()];
    let mut total: u128 = 1;
    let mut stats = TaskStats::default();
    let zeros = vec![0u64; words];
    // True once no state is left to find (known count reached, or an empty level).
    let mut exhausted = false;
    // Directed graphs: F_0 ∪ … ∪ F_{d-1} per shard, the "seen" set of level d.
    let mut earlier: Option<Vec<Vec<u64>>> = job.directed.then(|| vec![vec![0u64; words]; shards as usize]);

    loop {
        let depth = depths.len() as u32 - 1;
        if job.reachable_states.is_some_and(|r| total >= r) {
            exhausted = true;
            break;
        }
        if config.max_depth.is_some_and(|m| depth >= m) {
            break;
        }
        let level_start = Instant::now();
        progress.level_started(depth + 1, space.units_per_shard() * shards);
        ctx.begin_level();
        let mut next = store.create_level(depth + 1, shards)?;
        let mut count = 0u64;
        let mut level_classes = 0u64;
        for (shard, out) in next.words_mut().chunks_mut(words).enumerate() {
            let shard = shard as u64;
            let sources = ctx.source_shards(shard);
            let inputs = ShardInputs {
                sources: SourceBits::new(sources.iter().map(|&s| (s, store.shard(current.words(), s))).collect()),
                previous: match &earlier {
                    Some(union) => &union[shard as usize][..],
                    None => previous.as_ref().map_or(&zeros[..], |p| store.shard(p.words(), shard)),
                },
                current: store.shard(current.words(), shard),
                // One shard at a time: the kernel may use the whole pool.
                split: true,
            };
            let task = ctx.expand(shard, &inputs, out, &|found| progress.block_done(found));
            count += task.found * space.weight(shard);
            level_classes += space.classes_in(shard, out);
            stats = stats.plus(task);
        }
        let seconds = level_start.elapsed().as_secs_f64();
        progress.level_finished(depth + 1, count, seconds);
        if count == 0 {
            exhausted = true;
            break;
        }
        depths.push(count);
        classes.push(level_classes);
        level_seconds.push(seconds);
        total += count as u128;
        if let Some(union) = earlier.as_mut() {
            for (u, level) in union.iter_mut().zip(current.words().chunks(words)) {
                u.iter_mut().zip(level).for_each(|(u, w)| *u |= w);
            }
        }
        previous = Some(std::mem::replace(&mut current, next.freeze()?));
    }
    drop(previous);
    drop(current);

    // Without a known count, reaching an empty level is completeness.
    let complete = exhausted && job.reachable_states.is_none_or(|r| total == r);
    if let Some(reachable) = job.reachable_states.filter(|&r| exhausted && total != r) {
        anyhow::bail!(
            "internal check failed: the search counted {} states but {} are reachable; the table is not trustworthy",
            total,
            reachable
        );
    }
    let last = depths.len() as u32 - 1;
    let antipodes = find_antipodes(job, &mut store, last, config.antipodes, &|_| true, u64::MAX)?;
    Ok(SearchOutcome {
        depths,
        classes,
        level_seconds,
        complete,
        antipodes,
        stats,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Level files of the scratch store, as a source for the antipode walk.
impl LevelSource for LevelStore {
    fn shard(&mut self, level: u32, shard: u64) -> anyhow::Result<ShardWords> {
        let plane = self.open(level)?;
        Ok(ShardWords::Loaded(
            LevelStore::shard(self, plane.words(), shard).to_vec(),
        ))
    }
}
