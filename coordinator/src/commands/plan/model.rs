//! The projection of `cayley plan`, level by level (computing level `d`
//! from its frontier, level `d - 1`), from the level sizes of
//! [`cayley_shared::search::levels`] and what this machine measured:
//!
//! - **Shards worked on.** While at most a quarter of the shards hold
//!   frontier states, a worker computes only the shards those can reach
//!   (each non-empty source shard reaches at most one shard per move) and
//!   writes the rest empty; otherwise every shard. Non-empty shards are
//!   counted as if states fell on shards at random (Poisson).
//! - **Compute.** The job's kernel is timed on one of its shards with
//!   random bits at the level's densities: the share of shards holding
//!   frontier states (each source of the shard holds some with that
//!   probability), the frontier's density within them, and the share of
//!   states already seen. The
//!   kernel picks top-down or bottom-up itself, as in a run, and the time
//!   includes its fixed costs. CPU time of one core per shard, times the
//!   shards, over the cluster's cores. "Seen" is what a worker knows: on
//!   dense levels the last two or three levels, not every earlier one
//!   (see `known_seen`).
//! - **Written.** The chunk format: a header per chunk, an index entry per
//!   shard, and per non-empty shard what the chunk writer stores for
//!   random bits of the shard's density (a list of its bits when sparse,
//!   else zstd frames or raw words; an upper bound: real levels compress
//!   better), as a fraction of the shard.
//! - **Read.** A worker keeps its own outputs in its cache, so with memory
//!   for the frontier nothing is read back on one node; on N nodes each
//!   reads the others' share once. With less memory a share of the input
//!   lookups misses: 0.4 × (1 − memory / frontier), fitted to three
//!   out-of-core runs (hit rates 0.82, 0.83 and 0.857 at 0.55, 0.68 and
//!   0.77 of a level in memory; docs/history.md), each miss reading one
//!   compressed shard.
//! - A level's wall time is compute plus I/O (no overlap assumed).

use cayley_shared::files::format::{ENTRY_LEN, HEADER_LEN};
use cayley_shared::search::calibrate::{DiskRates, KernelProbe, ShardCost, ZstdSample};
use std::time::Duration;

/// The cluster to project for.
#[derive(Clone, Copy, Debug)]
pub struct Cluster {
    pub nodes: f64,
    pub cores: f64,
    /// Memory of each node's worker, bytes.
    pub memory: f64,
}

/// The job's shape: what every level shares.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub shards: f64,
    pub chunks: f64,
    /// Stored bits a shard holds.
    pub shard_bits: f64,
    pub shard_bytes: f64,
    pub generators: f64,
}

/// What one level costs.
#[derive(Clone, Debug)]
pub struct LevelCost {
    /// The level computed.
    pub depth: usize,
    /// Shards the kernel ran on (the others are written empty).
    pub active_shards: f64,
    /// Whether the frontier was sparse enough to map it forward.
    pub sparse: bool,
    pub kernel: ShardCost,
    pub compute: f64,
    /// Bytes read back from the checkpoint, all nodes together.
    pub read_bytes: f64,
    /// Bytes of the level's chunk files.
    pub written_bytes: f64,
    pub io: f64,
}

impl LevelCost {
    /// Wall time of the level.
    pub fn wall(&self) -> f64 {
        self.compute + self.io
    }
}

/// Share of input lookups that miss the cache when it holds `ratio` of the
/// frontier (see the module doc).
fn miss_rate(ratio: f64) -> f64 {
    0.4 * (1.0 - ratio).clamp(0.0, 1.0)
}

/// Stored states the kernel of level `d` knows as seen, of `seen` (levels
/// `0..d`) in all: every one while the frontier is sparse (a worker then
/// holds each shard's union of the earlier levels); on dense levels, whose
/// unions do not fit, the frontier and the level before, and the one
/// before that while it is kept (it holds more states than remain unseen,
/// see `worker/src/runner/shard.rs`). Taking every earlier level as seen
/// made the 4×4 Loopover's depth 14 look free: 8,880 states left to find,
/// where the real kernel went top-down over 3.9·10⁹ stored frontier states
/// (403 s).
fn known_seen(stored: &[f64], d: usize, sparse: bool, seen: f64, total: f64) -> f64 {
    if sparse || d < 2 {
        return seen;
    }
    let recent = stored[d - 1] + stored[d - 2];
    match d.checked_sub(3) {
        Some(older) if older > 0 && stored[older] > total - seen => recent + stored[older],
        _ => recent,
    }
}

/// Shards holding at least one of `states` states spread at random.
fn non_empty(states: f64, shards: f64) -> f64 {
    shards * -(-states / shards).exp_m1()
}

/// zstd's compressed fraction at `density`, interpolated in log density.
pub fn ratio_at(zstd: &[ZstdSample], density: f64) -> f64 {
    let density = density.clamp(zstd[0].density, zstd[zstd.len() - 1].density);
    let i = zstd
        .iter()
        .position(|s| s.density >= density)
        .unwrap_or(zstd.len() - 1)
        .max(1);
    let (a, b) = (&zstd[i - 1], &zstd[i]);
    let t = (density.ln() - a.density.ln()) / (b.density.ln() - a.density.ln());
    a.ratio + t.clamp(0.0, 1.0) * (b.ratio - a.ratio)
}

/// Bytes of a level's chunk files holding `stored` states.
pub fn level_file_bytes(shape: &Shape, zstd: &[ZstdSample], stored: f64) -> f64 {
    let filled = non_empty(stored, shape.shards);
    let density = if filled > 0.0 {
        stored / (filled * shape.shard_bits)
    } else {
        0.0
    };
    let frames = filled * ratio_at(zstd, density.max(1e-12)) * shape.shard_bytes;
    shape.chunks * HEADER_LEN as f64 + shape.shards * ENTRY_LEN as f64 + frames
}

/// Measured throughputs the projection uses.
pub struct Rates<'a> {
    pub probe: &'a KernelProbe<'a>,
    pub zstd: &'a [ZstdSample],
    pub disk: DiskRates,
    /// Time to spend timing the kernel at each level's densities.
    pub kernel_time: Duration,
}

/// Projects every level after level 0 of `stored` (stored states per
/// level, index = depth).
pub fn project(stored: &[f64], shape: &Shape, rates: &Rates, c: Cluster) -> Vec<LevelCost> {
    let capacity = shape.shards * shape.shard_bits;
    let mean = |f: fn(&ZstdSample) -> f64| rates.zstd.iter().map(f).sum::<f64>() / rates.zstd.len() as f64;
    let (compress, decompress) = (mean(|s| s.compress), mean(|s| s.decompress));
    let cores = c.nodes * c.cores;
    let total: f64 = stored.iter().sum();
    let mut seen = stored[0];
    let mut costs = Vec::new();
    for d in 1..stored.len() {
        let (frontier, level) = (stored[d - 1], stored[d]);
        let sources = non_empty(frontier, shape.shards);
        let sparse = sources <= shape.shards / 4.0;
        let active = if sparse {
            non_empty(sources * shape.generators, shape.shards)
        } else {
            shape.shards
        };
        let kernel = rates.probe.cost(
            sources / shape.shards,
            (frontier / (sources * shape.shard_bits)).min(1.0),
            (known_seen(stored, d, sparse, seen, total) / capacity).min(1.0),
            rates.kernel_time,
        );
        let compute = kernel.cpu_seconds * active / cores;
        let frontier_bytes = level_file_bytes(shape, rates.zstd, frontier);
        let written = level_file_bytes(shape, rates.zstd, level);
        // Each node reads the other nodes' share of the frontier once, and
        // again what its cache misses.
        let in_memory = c.memory / (sources * shape.shard_bytes).max(1.0);
        let misses = active * (shape.generators + 2.0) * miss_rate(in_memory);
        let read = frontier_bytes * (c.nodes - 1.0) + misses * frontier_bytes / sources.max(1.0);
        let read_raw = read / frontier_bytes.max(1.0) * sources * shape.shard_bytes;
        let written_raw = non_empty(level, shape.shards) * shape.shard_bytes;
        let io = (read / rates.disk.read + read_raw / decompress + written / rates.disk.write) / c.nodes
            + written_raw / (compress * cores);
        costs.push(LevelCost {
            depth: d,
            active_shards: active,
            sparse,
            kernel,
            compute,
            read_bytes: read,
            written_bytes: written,
            io,
        });
        seen += level;
    }
    costs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(density: f64, ratio: f64) -> ZstdSample {
        ZstdSample {
            density,
            ratio,
            compress: 1.0,
            decompress: 1.0,
        }
    }

    #[test]
    fn ratios_interpolate_between_samples_and_clamp_outside() {
        let z = [sample(0.001, 0.01), sample(0.1, 0.5)];
        assert!((ratio_at(&z, 0.01) - 0.255).abs() < 1e-9);
        assert_eq!(ratio_at(&z, 1e-9), 0.01);
        assert_eq!(ratio_at(&z, 0.9), 0.5);
    }

    #[test]
    fn an_empty_level_is_its_headers_and_index() {
        let shape = Shape {
            shards: 1000.0,
            chunks: 10.0,
            shard_bits: 8192.0,
            shard_bytes: 1024.0,
            generators: 4.0,
        };
        let z = [sample(1e-6, 0.5), sample(0.5, 0.5)];
        assert_eq!(level_file_bytes(&shape, &z, 0.0), 10.0 * 96.0 + 1000.0 * 32.0);
        // One state: one frame more, half a shard at this zstd's ratio.
        let one = level_file_bytes(&shape, &z, 1.0) - level_file_bytes(&shape, &z, 0.0);
        assert!((one - 0.5 * 1024.0).abs() < 1.0, "{}", one);
    }

    /// Levels 0–4 of 1, 10, 100, 1000 and 10 stored states (1121 in all).
    #[test]
    fn dense_levels_know_the_recent_levels_as_seen_and_sparse_ones_every_level() {
        let stored = [1.0, 10.0, 100.0, 1000.0, 10.0];
        let total: f64 = stored.iter().sum();
        let through = |d: usize| stored[..d].iter().sum::<f64>();
        // Sparse: every earlier level.
        assert_eq!(known_seen(&stored, 4, true, through(4), total), 1111.0);
        // Level 4 from frontier 3: levels 3 and 2, and level 1, kept while
        // it outnumbers the 10 states left unseen? 10 is not more: left out.
        assert_eq!(known_seen(&stored, 4, false, through(4), total), 1100.0);
        // Level 5 of a longer table from frontier 4: levels 4, 3 and 2 (100
        // states, more than the 5 left).
        let longer = [1.0, 10.0, 100.0, 1000.0, 10.0, 5.0];
        let total: f64 = longer.iter().sum();
        assert_eq!(known_seen(&longer, 5, false, total - 5.0, total), 1110.0);
    }

    #[test]
    fn misses_fall_to_none_with_memory_for_the_frontier() {
        assert_eq!(miss_rate(1.0), 0.0);
        assert_eq!(miss_rate(3.0), 0.0);
        assert!((miss_rate(0.55) - 0.18).abs() < 1e-9);
    }
}
