//! What a job costs in memory and disk, and the checks that refuse a run
//! before anything is computed when the machine cannot hold it.
//!
//! Memory is a per-worker **budget**: a worker keeps decompressed shards in
//! a cache within it and reads the rest again from the checkpoint, so the
//! budget, not the size of a level, bounds a worker. Its floor is the
//! working set of one shard task (the shard's sources, its two earlier
//! levels and its output) plus the fixed tables.
//!
//! Disk is the checkpoint: compressed chunk files. A level costs at most
//! about its raw size (dense levels barely compress) and far less when it
//! is sparse. A `--keep-levels last2` run holds the level read and, chunk
//! by chunk, either the older levels it retires or the level written (the
//! coordinator deletes a chunk's old files once its new one is recorded),
//! so two raw levels and the early levels kept for words bound it; keeping
//! every level costs a few raw levels in all (measured: 3.2 raw levels for
//! Loopover 2×6; see docs/history.md).

use crate::files::checkpoint::{KeepLevels, EARLY_LEVELS_SHARE};
use crate::job::Job;
use crate::kernel::context::{block_occupancy_bytes, held_transition_bytes};
use crate::kernel::lowtable::table_bytes;
use crate::search::levels::modelled_levels;
use crate::space::Space;
use crate::units::human_bytes;
use serde::Serialize;
use std::path::Path;

mod cgroup;
mod depth_bound;
mod machine;

pub use depth_bound::DepthBound;

pub use machine::{
    available_memory, check_memory_here, check_threads_here, cores_here, default_budget, default_budget_of,
};

/// Share of the available memory a worker takes when no budget is given.
pub const DEFAULT_MEMORY_SHARE: f64 = 0.6;

/// Raw levels a checkpoint keeping every level is planned to need.
pub const KEEP_ALL_LEVELS_FACTOR: u128 = 4;

/// Raw levels the live levels can need at most: the level read, and per
/// chunk either the levels it retires or the one written.
pub const LIVE_LEVELS: u128 = 2;

/// Checkpoint bytes a sparse level can take per state it holds: a state is
/// one set bit, and zstd spends a literal and a match on an isolated bit.
/// Twice the 3.5–3.8 bytes measured on the sparse levels 6–7 of the 4×4
/// Loopover (docs/history.md).
pub const SPARSE_BYTES_PER_STATE: u128 = 8;

/// Checkpoint bytes of an empty shard (its index entry and an empty frame):
/// twice the 32 bytes measured on level 1 of the 4×4 Loopover.
pub const EMPTY_SHARD_BYTES: u128 = 64;

/// Memory and disk a job needs.
#[derive(Clone, Debug, Serialize)]
pub struct Requirements {
    /// Raw bytes of one level (one bit per ranked state).
    pub level_bytes: u128,
    /// Raw bytes of one shard.
    pub shard_bytes: u64,
    /// Shards per level.
    pub shards: u64,
    /// Chunk files (tasks) per level.
    pub chunks: u64,
    /// Fixed tables of a worker (low table, transitions: cached, or one shard's).
    pub table_bytes: u64,
    /// Smallest memory budget a worker can run with.
    pub min_worker_bytes: u64,
    /// Checkpoint disk with `--keep-levels last2` (the two raw live levels
    /// and the early levels kept for words).
    pub disk_last2_bytes: u128,
    /// The part of [`Requirements::disk_last2_bytes`] that is early levels
    /// kept for words.
    pub disk_early_bytes: u128,
    /// Checkpoint disk with `--keep-levels all` (an estimate).
    pub disk_all_bytes: u128,
    /// Checkpoint bytes a level at depth k takes at most (see
    /// [`DepthBound`]).
    #[serde(skip)]
    pub depth_bound: DepthBound,
    /// Checkpoint bytes of each level (index = depth) as modelled by
    /// [`modelled_levels`], each at most raw and at most
    /// [`SPARSE_BYTES_PER_STATE`] per stored state plus [`EMPTY_SHARD_BYTES`]
    /// per shard; `None` without a level model (guarded puzzles).
    pub level_file_bytes: Option<Vec<u128>>,
}

/// Stored bits per state: one, or one per class of symmetric states in a
/// reduced space (the space's bits over the states they stand for).
pub fn stored_per_state(job: &Job) -> f64 {
    match (&job.space, job.reachable_states) {
        (Space::Reduced(_) | Space::Oriented(_), Some(states)) => job.space.states() as f64 / states as f64,
        _ => 1.0,
    }
}

/// Shard-sized buffers a worker holds outside its shard cache: the output
/// shard, the buffer compressed frames are read through, and the output's
/// compressed frames while they are written (a compressed shard is about one
/// shard at most). The cache gets the budget less these and the tables.
pub const SHARD_BUFFERS_OUTSIDE_CACHE: u64 = 3;

/// The requirements of `job`.
pub fn requirements(job: &Job) -> Requirements {
    let shard_bytes = job.space.shard_bytes();
    let tables = match &job.space {
        Space::Blocks(l) => table_bytes(l.low_pieces) + held_transition_bytes(job) + block_occupancy_bytes(l),
        Space::Coded(codec) => crate::kernel::coded::held_source_table_bytes(codec, job.puzzle.moves.len()),
        Space::Reduced(space) => space.table_bytes(job.puzzle.moves.len()),
        Space::Oriented(space) => space.table_bytes(),
    };
    // One task holds its sources (distinct shards, itself included: never
    // more than the space has) and its own two earlier levels in the cache,
    // plus the worker's buffers outside it.
    let sources = (job.puzzle.moves.len() as u64 + 1).min(job.space.shards());
    let working_shards = sources + 2 + SHARD_BUFFERS_OUTSIDE_CACHE;
    let level = job.space.level_bytes();
    let overhead = job.space.shards() as u128 * EMPTY_SHARD_BYTES;
    let level_file_bytes = modelled_levels(job, &[]).map(|states| {
        states
            .iter()
            .map(|&s| ((s * stored_per_state(job)).ceil() as u128 * SPARSE_BYTES_PER_STATE + overhead).min(level))
            .collect()
    });
    let early = early_levels_bytes(level, level_file_bytes.as_deref());
    Requirements {
        level_bytes: level,
        shard_bytes,
        shards: job.space.shards(),
        chunks: job.chunking.chunks(),
        table_bytes: tables,
        min_worker_bytes: working_shards * shard_bytes + tables,
        disk_last2_bytes: LIVE_LEVELS * level + early,
        disk_early_bytes: early,
        disk_all_bytes: KEEP_ALL_LEVELS_FACTOR * level,
        depth_bound: DepthBound::of(job),
        level_file_bytes,
    }
}

/// Checkpoint bytes of the early levels `last2` keeps for words: those the
/// level model says it keeps (their modelled files within
/// 1/[`EARLY_LEVELS_SHARE`] of a raw level, as the run decides from the real
/// ones), or that share itself without a model. On the 4×4 Loopover the
/// model keeps levels 1–8 (0.6 GiB); the run kept 1–9 (1.0 GiB).
fn early_levels_bytes(level: u128, modelled: Option<&[u128]>) -> u128 {
    let cap = level / EARLY_LEVELS_SHARE;
    let Some(bytes) = modelled else {
        return cap;
    };
    let mut early = 0;
    for &b in bytes.iter().skip(1) {
        if early + b > cap {
            break;
        }
        early += b;
    }
    early
}

/// Most checkpoint bytes on disk at once when levels of `bytes` (index =
/// depth) are written in turn and `keep` decides which stay: while level
/// `d` is written, `d - 1` is live and, chunk by chunk, `d - 2` gives way
/// to `d`; older ones stay only if kept (level 0 is never stored).
pub fn peak_disk_of_levels(keep: KeepLevels, bytes: &[u128]) -> u128 {
    (1..bytes.len())
        .map(|d| {
            let kept: u128 = (1..d.saturating_sub(2))
                .filter(|&k| keep.keeps(k as u32))
                .map(|k| bytes[k])
                .sum();
            let older = if d >= 3 { bytes[d - 2] } else { 0 };
            let written = if d >= 3 && keep.keeps(d as u32 - 2) {
                older + bytes[d]
            } else {
                older.max(bytes[d])
            };
            kept + bytes[d - 1] + written
        })
        .max()
        .unwrap_or(0)
}

impl Requirements {
    /// Checkpoint disk the chosen retention needs.
    pub fn disk_bytes(&self, keep: KeepLevels) -> u128 {
        match keep {
            KeepLevels::All => self.disk_all_bytes,
            KeepLevels::Last2 => self.disk_last2_bytes,
            // The share of `All`'s figure that the modelled levels kept by
            // every:K take at their peak, never below the live levels'
            // bound (the model's levels are lighter than raw ones); without
            // a model, the live levels and every K-th of the others, never
            // more than all of them.
            KeepLevels::Every(k) => match &self.level_file_bytes {
                Some(bytes) => {
                    let all: u128 = bytes.iter().sum();
                    let peak = peak_disk_of_levels(keep, bytes);
                    let scaled = (self.disk_all_bytes as f64 * peak as f64 / all.max(1) as f64) as u128;
                    scaled.max(LIVE_LEVELS * self.level_bytes)
                }
                None => (self.disk_last2_bytes + self.disk_all_bytes / k.max(1) as u128).min(self.disk_all_bytes),
            },
        }
    }

    /// Checkpoint disk the chosen retention needs when the search stops at
    /// `max_depth`: never more than [`Requirements::disk_bytes`], and never
    /// more than levels 0..=max_depth take at most ([`DepthBound`]: the
    /// canonical words of each length, `cayley bound`'s counts, over the
    /// states a stored bit stands for). A short search of a huge space
    /// (`run loopover:4x4 --max-depth 5`) needs megabytes, not the
    /// terabytes of the whole table: counting every word of k moves (24^k
    /// on the 4×4) and a stored bit a state planned its depth 8 at 39.3
    /// GiB (`last2`), whose checkpoint peaked at 141 MB.
    pub fn disk_bytes_to(&self, keep: KeepLevels, max_depth: Option<u32>) -> u128 {
        let whole = self.disk_bytes(keep);
        let Some(depth) = max_depth else {
            return whole;
        };
        let total = self
            .depth_bound
            .levels_to(depth)
            .into_iter()
            .fold(0u128, u128::saturating_add);
        total.min(whole)
    }
}

/// Refuses a budget below what one task of `job` needs (a worker checks
/// its own; the commands plan with [`Requirements::budget_shortfall`]).
pub fn check_budget(job: &Job, budget: u64) -> anyhow::Result<()> {
    match requirements(job).budget_shortfall(&job.puzzle.spec, budget) {
        Some(problem) => Err(anyhow::anyhow!(problem)),
        None => Ok(()),
    }
}

impl Requirements {
    /// Why a worker budget of `budget` cannot run one task of the puzzle
    /// `spec`, naming the `--memory` that can; None when it fits.
    pub fn budget_shortfall(&self, spec: &str, budget: u64) -> Option<String> {
        (budget < self.min_worker_bytes).then(|| {
            format!(
                "a memory budget of {} is too small for '{}': one task holds up to {} shards of {} plus {} of tables, at least {} in all; give --memory {} or more",
                human_bytes(budget as u128),
                spec,
                self.min_worker_bytes.saturating_sub(self.table_bytes) / self.shard_bytes.max(1),
                human_bytes(self.shard_bytes as u128),
                human_bytes(self.table_bytes as u128),
                human_bytes(self.min_worker_bytes as u128),
                human_bytes(self.min_worker_bytes as u128),
            )
        })
    }

    /// What a checkpoint in `checkpoint`, with `free` bytes free, lacks for
    /// `job` kept as `keep` to `max_depth`, as a sentence naming what fits;
    /// None when it fits or the free space is unknown. The need is an
    /// upper bound: levels are planned at their raw size unless the depth
    /// limit bounds them.
    pub fn disk_shortfall(
        &self,
        job: &Job,
        checkpoint: &Path,
        (keep, max_depth): (KeepLevels, Option<u32>),
        free: Option<u64>,
    ) -> Option<String> {
        let free = free?;
        let need = self.disk_bytes_to(keep, max_depth);
        if (free as u128) >= need {
            return None;
        }
        // Only last2 is suggested: every:K is estimated at about all's size.
        let last2 = self.disk_bytes_to(KeepLevels::Last2, max_depth);
        let hint = if keep != KeepLevels::Last2 && (free as u128) >= last2 {
            format!(
                "; --keep-levels last2 needs about {} and fits (antipodes then get words only when its kept early levels reach near the deepest)",
                human_bytes(last2)
            )
        } else {
            "; use a checkpoint directory on a larger filesystem or a cluster's shared filesystem".to_string()
        };
        // A search cut short needs a fraction of a raw level, which "0.0
        // raw levels" would hide: its depth says where the need comes from.
        let scale = match max_depth {
            Some(depth) => format!("to depth {depth}"),
            None => format!("({:.1} raw levels)", need as f64 / self.level_bytes.max(1) as f64),
        };
        Some(format!(
            "'{}' is too large for this disk: {} states, stored as {} bits, take {} per level raw in {} shards, and --keep-levels {} needs about {} of checkpoint disk {}, but {} has {} free{}",
            job.puzzle.spec,
            job.reachable_text(),
            job.space.states(),
            human_bytes(self.level_bytes),
            self.shards,
            keep.name(),
            human_bytes(need),
            scale,
            checkpoint.display(),
            human_bytes(free as u128),
            hint
        ))
    }
}

/// Where the free space of a checkpoint's filesystem comes from, for the
/// disk checks of `run`, `serve` and `info`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FreeSpace {
    /// Asked of the filesystem: every real run.
    #[default]
    Measured,
    /// Taken to be this many bytes, whatever the filesystem holds: fault
    /// injection for the tests of the disk check, set only from the
    /// binary's hidden `--fault-free-bytes` option (`cayley_worker::faults`).
    Assumed(u64),
}

impl FreeSpace {
    /// Bytes free for an unprivileged writer on the filesystem of `path`
    /// (None when it cannot be read).
    pub fn of(self, path: &Path) -> Option<u64> {
        match self {
            FreeSpace::Measured => fs4::available_space(path).ok(),
            FreeSpace::Assumed(bytes) => Some(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirements_of(spec: &str) -> Requirements {
        let puzzle = crate::puzzle::parse_puzzle(spec, crate::puzzle::Metric::Mtm).expect("puzzle");
        requirements(&Job::new(puzzle, None).expect("job"))
    }

    #[test]
    fn a_depth_limit_bounds_the_disk_by_the_words_of_each_length() {
        let req = requirements_of("loopover:4x4");
        for keep in [KeepLevels::All, KeepLevels::Last2, KeepLevels::Every(3)] {
            assert_eq!(req.disk_bytes_to(keep, None), req.disk_bytes(keep));
            // Deep enough, the raw levels are the smaller bound.
            assert_eq!(req.disk_bytes_to(keep, Some(40)), req.disk_bytes(keep));
        }
        // Depths 0..=7 hold at most as many states as there are canonical
        // words of each length (Jia, Zhang and Xiang, Table 2, per length;
        // tests/data/published.md), a stored bit standing for at most the
        // 128 symmetries' states and for one at least; each level's headers
        // and index entries on top.
        let words: [u128; 8] = [1, 24, 396, 6264, 99306, 1574640, 24966792, 395864496];
        let overhead =
            req.chunks as u128 * crate::files::format::HEADER_LEN as u128 + req.shards as u128 * EMPTY_SHARD_BYTES;
        let planned = req.disk_bytes_to(KeepLevels::All, Some(7));
        let fewest: u128 = words
            .iter()
            .map(|w| w.div_ceil(128) * SPARSE_BYTES_PER_STATE + overhead)
            .sum();
        let most: u128 = words.iter().map(|w| w * SPARSE_BYTES_PER_STATE + overhead).sum();
        assert!(fewest <= planned && planned <= most, "{fewest} {planned} {most}");
        // Under a GiB to depth 8, where the raw levels take 19.3 GiB each.
        assert!(req.disk_bytes_to(KeepLevels::Last2, Some(8)) < 1 << 30);
        assert!(req.disk_bytes(KeepLevels::All) > 50 << 30);
        // Never decreasing with the depth.
        let bounds: Vec<u128> = (0..20).map(|d| req.disk_bytes_to(KeepLevels::All, Some(d))).collect();
        assert!(bounds.windows(2).all(|w| w[0] <= w[1]), "{:?}", bounds);
    }

    #[test]
    fn every_k_plans_the_levels_it_keeps() {
        // Levels of 1, 5, 10, 10, 10, 5, 1 (level 0 never stored): while
        // level 5 is written, 4 is live and every:3 keeps 3 whole; while
        // level 6 is, 5 is live, 4 gives way to 6 and 3 is kept.
        let bytes = [0, 1, 5, 10, 10, 10, 5, 1];
        assert_eq!(peak_disk_of_levels(KeepLevels::Every(3), &bytes), 10 + 10 + 10);
        assert_eq!(peak_disk_of_levels(KeepLevels::All, &bytes), 42);
        assert_eq!(peak_disk_of_levels(KeepLevels::Last2, &bytes), 10 + 10);
        // On the 4×4 Loopover every:3 needs less than all, more than last2's live levels.
        let req = requirements_of("loopover:4x4");
        let (all, every3) = (req.disk_bytes(KeepLevels::All), req.disk_bytes(KeepLevels::Every(3)));
        assert!(every3 < all && every3 >= 2 * req.level_bytes, "{} vs {}", every3, all);
    }

    /// The 4×4 Loopover stores 16!/128 classes and a few more (the keys'
    /// fill): a last2 checkpoint plans two of its raw levels, 2 bits a
    /// stored state, and the early levels within an eighth of a level.
    #[test]
    fn last2_plans_two_raw_levels_and_its_early_levels() {
        let req = requirements_of("loopover:4x4");
        let classes = 20_922_789_888_000u128 / 128;
        assert!(req.level_bytes * 8 >= classes && req.level_bytes * 8 < classes * 102 / 100);
        let early = req.disk_last2_bytes - 2 * req.level_bytes;
        assert!(early <= req.level_bytes / EARLY_LEVELS_SHARE, "{}", early);
        assert!(req.disk_last2_bytes <= 41 << 30, "{}", req.disk_last2_bytes);
        // Without a level model the early levels are planned at the cap.
        assert_eq!(early_levels_bytes(800, None), 100);
        assert_eq!(early_levels_bytes(800, Some(&[0, 10, 40, 60, 1])), 50);
    }
}
