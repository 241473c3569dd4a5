//! `cayley plan`: how a job would run on a cluster, projected from figures
//! measured on this machine.
//!
//! The model, level by level (d → d+1):
//! - **Level sizes.** Unknown before the run, so they are modelled by the
//!   counting bound: level l holds at most the canonical words of length l,
//!   capped by the states not yet placed. That packs the states into the
//!   fewest levels the bound allows (real tables have a longer tail), but the
//!   total work, which is about every state expanded once, barely depends on
//!   the shape. Guarded puzzles have no bound; they get totals only.
//! - **Compute.** Every level is expanded top-down: one evaluation per
//!   frontier state and move at the measured top-down rate, plus the
//!   measured fixed cost of every shard. That is every state expanded once,
//!   an upper bound: the kernel goes bottom-up where that is cheaper (on the
//!   dense middle levels), and its bottom-up rate is higher.
//! - **Data.** Each node reads the previous level compressed (every node's
//!   tasks draw sources from all over a level), more than once when its memory
//!   holds less than the level; it decompresses what it reads and compresses
//!   and writes its share of the new level. Sizes use zstd's ratio on random
//!   bits of the level's density, an upper bound (real frontiers compress
//!   better).
//! - A level's wall time is the sum of those parts (no overlap assumed).

use crate::cli::PlanArgs;
use crate::info::plan_job;
use anyhow::Context;
use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::search::bound::puzzle_bound;
use cayley_shared::search::calibrate::{measure_disk, measure_kernel, measure_zstd, DiskRates, KernelRate, ZstdSample};
use cayley_shared::search::resources::{default_budget, human_bytes, requirements};
use std::path::PathBuf;
use std::time::Duration;

/// Densities at which zstd is sampled; others are interpolated.
const DENSITIES: [f64; 7] = [1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5];

/// The cluster to project for.
#[derive(Clone, Copy, Debug)]
struct Cluster {
    nodes: f64,
    cores: f64,
    memory: f64,
}

/// What one level costs.
#[derive(Clone, Debug, Default)]
struct LevelCost {
    /// The level expanded (its frontier is level `depth - 1`).
    depth: usize,
    frontier: f64,
    evaluations: f64,
    compute: f64,
    read_bytes: f64,
    written_bytes: f64,
    io: f64,
}

pub fn plan(args: PlanArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    let req = requirements(&job);
    let here = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let cluster = Cluster {
        nodes: args.nodes as f64,
        cores: args.cores.map_or(here, f64::from),
        memory: args.memory.unwrap_or_else(|| default_budget(1)) as f64,
    };
    let dir = args.checkpoint_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    println!("puzzle       {} ({} metric)", job.puzzle.spec, job.puzzle.metric);
    println!(
        "stored       {} bits per level ({} shards, {} chunk files, {} raw per level)",
        job.space.states(),
        req.shards,
        req.chunks,
        human_bytes(req.level_bytes)
    );
    eprintln!("calibrating on this machine (a few seconds)...");
    let ctx = SearchContext::new(job.clone());
    let kernel = measure_kernel(&ctx, Duration::from_millis(500));
    let zstd = measure_zstd(&DENSITIES, 16 << 20).context("measuring zstd")?;
    let disk = measure_disk(&dir, 256 << 20).with_context(|| format!("measuring the disk in {}", dir.display()))?;
    print_calibration(&kernel, &zstd, &disk, &dir);
    let stored_total = job.space.states() as f64;
    let gens = job.puzzle.moves.len() as f64;
    println!(
        "cluster      {} node(s) x {} cores, {} of memory per node",
        cluster.nodes,
        cluster.cores,
        human_bytes(cluster.memory as u128)
    );
    let Some(levels) = level_model(&job, stored_total) else {
        let evaluations = stored_total * gens;
        let seconds = evaluations / (kernel.top_down / kernel.threads as f64 * cluster.nodes * cluster.cores);
        println!("levels       no model for this puzzle (no counting bound: it has guarded moves)");
        println!(
            "total        about {:.3e} evaluations (every state expanded once): {} of compute",
            evaluations,
            duration(seconds)
        );
        return Ok(());
    };
    let shards = req.shards as f64;
    let costs = project(
        &levels,
        stored_total,
        gens,
        shards,
        req.level_bytes as f64,
        &kernel,
        &zstd,
        &disk,
        cluster,
    );
    print_levels(&costs);
    let (compute, io): (f64, f64) = costs.iter().fold((0.0, 0.0), |(c, i), l| (c + l.compute, i + l.io));
    println!(
        "total        {} ({} compute, {} reading, decompressing, compressing and writing)",
        duration(compute + io),
        duration(compute),
        duration(io)
    );
    println!(
        "dominated by {}",
        if compute >= io {
            "the kernel: more cores shorten it in proportion"
        } else {
            "moving levels: memory per node (fewer re-reads) and disk/network bandwidth shorten it"
        }
    );
    println!(
        "disk         --keep-levels all about {}, every:3 about {}, last2 about {} (raw; compressed levels are smaller)",
        human_bytes(req.disk_all_bytes),
        human_bytes(req.disk_bytes(KeepLevels::Every(3))),
        human_bytes(req.disk_last2_bytes)
    );
    println!("model        level sizes from the counting bound, compressed sizes from zstd on random bits (an upper bound); the model is described in README.md");
    Ok(())
}

fn print_calibration(kernel: &KernelRate, zstd: &[ZstdSample], disk: &DiskRates, dir: &std::path::Path) {
    let per_core = |rate: f64| rate / kernel.threads as f64 / 1e6;
    println!(
        "calibration  kernel {:.0} M evaluations/s/core top-down, {:.0} M/s/core bottom-up, {:.2} ms fixed per shard ({} threads, one shard of this job, random frontiers)",
        per_core(kernel.top_down),
        per_core(kernel.bottom_up),
        kernel.per_shard_seconds * 1e3,
        kernel.threads
    );
    for s in zstd {
        println!(
            "             zstd at density {:<7} {:.4} of raw, compress {:.0} MB/s, decompress {:.0} MB/s (one core)",
            s.density,
            s.ratio,
            s.compress / 1e6,
            s.decompress / 1e6
        );
    }
    println!(
        "             disk in {}: write {:.0} MB/s (fsynced), read {:.0} MB/s",
        dir.display(),
        disk.write / 1e6,
        disk.read / 1e6
    );
}

/// Stored bits per level, from the counting bound; `None` without one.
fn level_model(job: &cayley_shared::search::job::Job, stored_total: f64) -> Option<Vec<f64>> {
    let bound = puzzle_bound(&job.puzzle).ok()?;
    let states = bound.states.to_u128()? as f64;
    let scale = stored_total / states;
    let mut placed = 0.0;
    let mut previous = 0.0;
    let mut levels = Vec::new();
    for cumulative in &bound.cumulative {
        let words = cumulative.to_u128().map_or(f64::INFINITY, |c| c as f64) - previous;
        previous += words;
        let size = words.min(states - placed);
        if size <= 0.0 {
            break;
        }
        placed += size;
        levels.push(size * scale);
    }
    Some(levels)
}

/// zstd's compressed fraction at `density`, interpolated in log density.
fn ratio_at(zstd: &[ZstdSample], density: f64) -> f64 {
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

#[allow(clippy::too_many_arguments)]
fn project(
    levels: &[f64],
    stored_total: f64,
    gens: f64,
    shards: f64,
    level_bytes: f64,
    kernel: &KernelRate,
    zstd: &[ZstdSample],
    disk: &DiskRates,
    c: Cluster,
) -> Vec<LevelCost> {
    let cores = c.nodes * c.cores;
    let per_core = |rate: f64| rate / kernel.threads as f64;
    let mean = |f: fn(&ZstdSample) -> f64| zstd.iter().map(f).sum::<f64>() / zstd.len() as f64;
    let (compress, decompress) = (mean(|s| s.compress), mean(|s| s.decompress));
    let mut costs = Vec::new();
    for (d, &frontier) in levels.iter().enumerate() {
        let next = levels.get(d + 1).copied().unwrap_or(0.0);
        let evaluations = frontier * gens;
        let fixed = shards * kernel.per_shard_seconds * kernel.threads as f64;
        let compute = (evaluations / per_core(kernel.top_down) + fixed) / cores;
        // Each node reads the whole previous level, again for every time its
        // memory is exhausted, up to once per move.
        let rereads = (level_bytes / c.memory).clamp(1.0, gens + 1.0);
        let read_per_node = ratio_at(zstd, frontier / stored_total) * level_bytes * rereads;
        let written = ratio_at(zstd, next / stored_total) * level_bytes;
        let io = read_per_node / disk.read
            + level_bytes * rereads / (decompress * c.cores)
            + level_bytes / c.nodes / (compress * c.cores)
            + written / c.nodes / disk.write;
        costs.push(LevelCost {
            depth: d + 1,
            frontier,
            evaluations,
            compute,
            read_bytes: read_per_node * c.nodes,
            written_bytes: written,
            io,
        });
    }
    costs
}

fn print_levels(costs: &[LevelCost]) {
    println!(
        "{:>5} {:>12} {:>11} {:>10} {:>10} {:>10} {:>10}",
        "depth", "from", "evals", "compute", "read", "written", "wall"
    );
    for l in costs {
        println!(
            "{:>5} {:>12.3e} {:>11.3e} {:>10} {:>10} {:>10} {:>10}",
            l.depth,
            l.frontier,
            l.evaluations,
            duration(l.compute),
            human_bytes(l.read_bytes as u128),
            human_bytes(l.written_bytes as u128),
            duration(l.compute + l.io)
        );
    }
}

/// Seconds as `1.2 s`, `3.4 min`, `5.6 h` or `7.8 days`.
fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{:.1} s", s),
        s if s < 5400.0 => format!("{:.1} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
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
    fn modelled_levels_hold_every_stored_state_once() {
        let puzzle = cayley_shared::puzzle::parse_puzzle("loopover:2x5", cayley_shared::puzzle::Metric::Mtm).unwrap();
        let job = cayley_shared::search::job::Job::new(puzzle, None).unwrap();
        let stored = job.space.states() as f64;
        let levels = level_model(&job, stored).expect("loopover has a counting bound");
        let bound = puzzle_bound(&job.puzzle).unwrap().bound;
        assert_eq!(levels.len(), bound + 1, "levels 0 ..= the counting bound");
        let total: f64 = levels.iter().sum();
        assert!((total - stored).abs() < 1e-6 * stored, "{} vs {}", total, stored);
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(12.0), "12.0 s");
        assert_eq!(duration(600.0), "10.0 min");
        assert_eq!(duration(7200.0), "2.0 h");
        assert_eq!(duration(3.0 * 86400.0), "3.0 days");
    }
}
