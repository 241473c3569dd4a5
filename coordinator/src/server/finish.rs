//! Turning a finished job's checkpoint into the result folder.

use super::state::JobState;
use cayley_shared::antipodes::{find_antipodes, first_states, Antipode, LevelSource, ShardWords};
use cayley_shared::engine::SearchOutcome;
use cayley_shared::format::{read_frontier, FrontierId};
use cayley_shared::job::Job;
use cayley_shared::kernel::TaskStats;
use cayley_shared::manifest::{CheckpointDir, KeepLevels, Manifest};
use cayley_shared::result::RunResult;

/// Reads level bits from verified frontier files.
struct CheckpointSource<'a> {
    checkpoint: &'a CheckpointDir,
    job: &'a Job,
}

impl LevelSource for CheckpointSource<'_> {
    fn shard(&mut self, level: u32, shard: u64) -> anyhow::Result<ShardWords> {
        let mut words = vec![0u64; self.job.space.shard_words()];
        let id = FrontierId {
            fingerprint: self.job.fingerprint(),
            level,
            shard,
            bits: words.len() as u64 * 64,
        };
        read_frontier(&self.checkpoint.frontier_path(level, shard), &id, &mut words)?;
        Ok(ShardWords::Loaded(words))
    }
}

/// Builds the result of a finished job from its manifest and level files.
pub fn result_of(state: &JobState, antipode_limit: usize) -> anyhow::Result<RunResult> {
    outcome_to_result(&state.job, &state.checkpoint, &state.manifest, antipode_limit)
}

/// Same as [`result_of`], from the parts.
pub fn outcome_to_result(
    job: &Job,
    checkpoint: &CheckpointDir,
    manifest: &Manifest,
    limit: usize,
) -> anyhow::Result<RunResult> {
    let mut source = CheckpointSource { checkpoint, job };
    let depth = manifest.levels.len() as u32 - 1;
    let antipodes = if manifest.keep_levels == KeepLevels::All {
        find_antipodes(job, &mut source, depth, limit)?
    } else {
        // Earlier levels are gone: states without words.
        first_states(job, &mut source, depth, limit)?
            .into_iter()
            .map(|state| Antipode {
                state,
                solution: Vec::new(),
            })
            .collect()
    };
    let depths: Vec<u64> = manifest.levels.iter().map(|l| l.count).collect();
    let total: u128 = depths.iter().map(|&c| c as u128).sum();
    let last = depths.len() as u32 - 1;
    // Without a known count, a level limit leaves the table open.
    let complete = match job.reachable_states {
        Some(r) => total == r,
        None => manifest.max_depth.is_none_or(|m| last < m),
    };
    let outcome = SearchOutcome {
        complete,
        depths,
        level_seconds: manifest.levels.iter().map(|l| l.seconds).collect(),
        antipodes,
        stats: TaskStats {
            evaluations: manifest.levels.iter().map(|l| l.evaluations).sum(),
            ..TaskStats::default()
        },
        seconds: manifest.levels.iter().map(|l| l.seconds).sum(),
    };
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
    Ok(RunResult::new(job, &outcome))
}
