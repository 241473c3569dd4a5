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
//! is sparse, so the three live levels bound a `--keep-levels last2` run,
//! and keeping every level costs a few raw levels in all (measured: 3.2 raw
//! levels for Loopover 2×6; see BENCHMARKS.md).

use crate::files::checkpoint::KeepLevels;
use crate::kernel::context::held_transition_bytes;
use crate::kernel::lowtable::table_bytes;
use crate::search::job::Job;
use crate::space::Space;
use serde::Serialize;
use std::path::Path;

/// Share of the available memory a worker takes when no budget is given.
pub const DEFAULT_MEMORY_SHARE: f64 = 0.6;

/// Raw levels a checkpoint keeping every level is planned to need.
pub const KEEP_ALL_LEVELS_FACTOR: u128 = 4;

/// Raw levels the three live levels can need at most.
pub const LIVE_LEVELS: u128 = 3;

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
    /// Checkpoint disk with `--keep-levels last2` (the three live levels).
    pub disk_last2_bytes: u128,
    /// Checkpoint disk with `--keep-levels all` (an estimate).
    pub disk_all_bytes: u128,
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
        Space::Blocks(l) => table_bytes(l.low_pieces) + held_transition_bytes(job),
        Space::Coded(_) => 0,
        Space::Reduced(space) => space.table_bytes(job.puzzle.moves.len()),
    };
    // One task holds its sources (distinct shards, itself included: never
    // more than the space has) and its own two earlier levels in the cache,
    // plus the worker's buffers outside it.
    let sources = (job.puzzle.moves.len() as u64 + 1).min(job.space.shards());
    let working_shards = sources + 2 + SHARD_BUFFERS_OUTSIDE_CACHE;
    let level = job.space.level_bytes();
    Requirements {
        level_bytes: level,
        shard_bytes,
        shards: job.space.shards(),
        chunks: job.chunking.chunks(),
        table_bytes: tables,
        min_worker_bytes: working_shards * shard_bytes + tables,
        disk_last2_bytes: LIVE_LEVELS * level,
        disk_all_bytes: KEEP_ALL_LEVELS_FACTOR * level,
    }
}

impl Requirements {
    /// Checkpoint disk the chosen retention needs.
    pub fn disk_bytes(&self, keep: KeepLevels) -> u128 {
        match keep {
            KeepLevels::All => self.disk_all_bytes,
            KeepLevels::Last2 => self.disk_last2_bytes,
            // The live levels and every K-th of the others, never more than
            // all of them. The widest levels, which are most of the bytes,
            // are live at the peak, so this is near `All`'s figure unless
            // the levels are many (the sliding 2×7: 108; BENCHMARKS.md).
            KeepLevels::Every(k) => {
                (self.disk_last2_bytes + self.disk_all_bytes / k.max(1) as u128).min(self.disk_all_bytes)
            }
        }
    }
}

/// Memory this process may use: `MemAvailable`, lowered to the cgroup's
/// limit (containers, Slurm) when that is smaller.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    };
    let available = field("MemAvailable:").or_else(|| field("MemTotal:"))?;
    Some(cgroup_memory_left().map_or(available, |c| c.min(available)))
}

/// Memory left under this process's cgroup limit (v2, then v1), if limited.
fn cgroup_memory_left() -> Option<u64> {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let (limit, used) = match read("/sys/fs/cgroup/memory.max") {
        Some(limit) => (limit, read("/sys/fs/cgroup/memory.current").unwrap_or(0)),
        None => (
            read("/sys/fs/cgroup/memory/memory.limit_in_bytes")?,
            read("/sys/fs/cgroup/memory/memory.usage_in_bytes").unwrap_or(0),
        ),
    };
    // v1 reports "no limit" as a huge number.
    (limit < 1 << 60).then(|| limit.saturating_sub(used))
}

/// The default memory budget of one worker when `workers` share this machine.
pub fn default_budget(workers: usize) -> u64 {
    let available = available_memory().unwrap_or(4 << 30);
    (available as f64 * DEFAULT_MEMORY_SHARE) as u64 / workers.max(1) as u64
}

/// Refuses a budget below what one task needs.
pub fn check_budget(job: &Job, budget: u64) -> anyhow::Result<()> {
    let req = requirements(job);
    if budget < req.min_worker_bytes {
        anyhow::bail!(
            "a memory budget of {} is too small for '{}': one task holds up to {} shards of {} plus {} of tables, at least {} in all; give --memory {} or more",
            human_bytes(budget as u128),
            job.puzzle.spec,
            req.min_worker_bytes.saturating_sub(req.table_bytes) / req.shard_bytes.max(1),
            human_bytes(req.shard_bytes as u128),
            human_bytes(req.table_bytes as u128),
            human_bytes(req.min_worker_bytes as u128),
            human_bytes(req.min_worker_bytes as u128),
        );
    }
    Ok(())
}

/// Refuses, before anything is computed, a checkpoint directory whose
/// filesystem cannot hold what the retention keeps.
pub fn check_disk(job: &Job, checkpoint: &Path, keep: KeepLevels) -> anyhow::Result<()> {
    let req = requirements(job);
    let Ok(free) = fs4::available_space(checkpoint) else {
        return Ok(());
    };
    let need = req.disk_bytes(keep);
    if (free as u128) < need {
        // Only last2 is suggested: every:K is estimated at about all's size.
        let hint = if keep != KeepLevels::Last2 && (free as u128) >= req.disk_last2_bytes {
            format!(
                "; --keep-levels last2 needs about {} and fits (antipodes then come without words)",
                human_bytes(req.disk_last2_bytes)
            )
        } else {
            "; use a checkpoint directory on a larger filesystem, or a cluster's shared filesystem".to_string()
        };
        anyhow::bail!(
            "'{}' is too large for this disk: {} states, stored as {} bits, take {} per level raw in {} shards, and --keep-levels {} needs about {} of checkpoint disk ({:.1} raw levels), but {} has {} free{}",
            job.puzzle.spec,
            job.reachable_text(),
            job.space.states(),
            human_bytes(req.level_bytes),
            req.shards,
            keep.name(),
            human_bytes(need),
            need as f64 / req.level_bytes.max(1) as f64,
            checkpoint.display(),
            human_bytes(free as u128),
            hint
        );
    }
    Ok(())
}

/// `1.5 GiB`-style sizes.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 9] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{} B", bytes)
    } else {
        format!("{:.1} {}", value, UNITS[unit])
    }
}

/// Parses sizes such as `512M`, `8G`, `1.5GiB`, `3000000` (bytes); `k`, `m`,
/// `g`, `t` are powers of 1024 with or without `iB`/`B`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!(
            "bad size '{}': expected a number with an optional unit, e.g. 8G or 512M",
            text
        )
    })?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "bad size '{}': unknown unit '{}' (use K, M, G or T)",
                text, other
            ))
        }
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("bad size '{}': out of range", text));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").unwrap_err().contains("bad size"));
        assert!(parse_size("3X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").is_err());
    }
}
