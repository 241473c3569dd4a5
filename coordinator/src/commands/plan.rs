//! `cayley plan`: how a job would run on a cluster, projected from figures
//! measured on this machine; the projection is in [`model`].
//!
//! Level sizes: counted ones where given (`--levels`: a `depths.csv`,
//! `result.json` or `manifest.json` of this job, or the manifest in
//! `--checkpoint-dir`), the rest modelled
//! ([`cayley_shared::search::levels`]). Every level the search will run
//! is projected, its tail included.

pub mod model;

use crate::cli::PlanArgs;
use crate::planning::{Machine, Options, Plan, Workers};
use anyhow::Context;
use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::job::Job;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::search::calibrate::{measure_zstd, DiskProbe, DiskRates, KernelProbe, ZstdSample};
use cayley_shared::search::levels::modelled_levels;
use cayley_shared::search::resources::stored_per_state;
use cayley_shared::units::human_bytes;
use model::{project, Cluster, LevelCost, Rates, Shape};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Densities at which zstd is sampled; others are interpolated.
const DENSITIES: [f64; 7] = [1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5];

/// Measures this machine and prints the projected time of the job on the
/// cluster `args` describes, level by level.
pub fn plan(args: PlanArgs) -> anyhow::Result<()> {
    // The node's memory is the one worker's budget. Without --memory it is
    // this machine's, and a plan this machine would refuse is still
    // projected, as it may run on the cluster; a --memory too small for one
    // task is refused before calibrating, as it runs nowhere (it was
    // projected as if it could).
    let options = Options {
        workers: Workers::Here {
            count: 1,
            memory: args.memory,
        },
        keep: KeepLevels::All,
        max_depth: None,
    };
    let plan = Plan::new(&args.puzzle, options, &Machine::here())?;
    if args.memory.is_some() {
        plan.refuse()?;
    }
    let job = &plan.job;
    let dir = args.checkpoint_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let counted = match &args.levels {
        Some(file) => counted_levels(file, job)?,
        None => counted_levels(&dir.join("manifest.json"), job).unwrap_or_default(),
    };
    let sum: u128 = counted.iter().map(|&c| c as u128).sum();
    if counted.first().is_some_and(|&c| c != 1) || job.reachable_states.is_some_and(|r| sum > r) {
        anyhow::bail!(
            "the counted levels ({} states from depth 0) cannot be levels of '{}' ({} states, one at depth 0)",
            sum,
            job.puzzle.spec,
            job.reachable_text()
        );
    }
    let Some(states) = modelled_levels(job, &counted) else {
        anyhow::bail!(
            "no level model for '{}': it has guarded moves (no counting bound) or an unknown state count; give the counts of its first levels with --levels",
            job.puzzle.spec
        );
    };
    // The last check, as it makes (and removes) a file.
    let disk_probe = DiskProbe::create(&dir).with_context(|| {
        format!(
            "cannot write a file in {} to measure its disk (choose another folder with --checkpoint-dir)",
            dir.display()
        )
    })?;
    let req = &plan.needs;
    let here = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let cluster = Cluster {
        nodes: args.nodes as f64,
        cores: args.cores.map_or(here, f64::from),
        memory: plan.worker_budget.unwrap_or(0) as f64,
    };
    println!("puzzle       {} ({} metric)", job.puzzle.spec, job.puzzle.metric);
    println!(
        "stored       {} bits per level ({} shards, {} chunk files, {} raw per level)",
        job.space.states(),
        req.shards,
        req.chunks,
        human_bytes(req.level_bytes)
    );
    println!(
        "levels       {} (depths 0-{}): {} counted, the rest modelled",
        states.len(),
        states.len() - 1,
        counted.len()
    );
    eprintln!("calibrating on this machine (a few seconds)...");
    let ctx = SearchContext::new(job.clone());
    let probe = KernelProbe::new(&ctx);
    let zstd = measure_zstd(&DENSITIES, 16 << 20).context("measuring zstd")?;
    let disk = disk_probe
        .measure(256 << 20)
        .with_context(|| format!("measuring the disk in {}", dir.display()))?;
    print_calibration(&zstd, &disk, &dir);
    println!(
        "cluster      {} node(s) x {} cores, {} of memory per node",
        cluster.nodes,
        cluster.cores,
        human_bytes(cluster.memory as u128)
    );
    let scale = stored_per_state(job);
    let stored: Vec<f64> = states.iter().map(|s| s * scale).collect();
    let shape = Shape {
        shards: req.shards as f64,
        chunks: req.chunks as f64,
        shard_bits: job.space.states() as f64 / req.shards as f64,
        shard_bytes: req.shard_bytes as f64,
        generators: job.puzzle.moves.len() as f64,
    };
    let rates = Rates {
        probe: &probe,
        zstd: &zstd,
        disk,
        kernel_time: Duration::from_millis(40),
    };
    let costs = project(&stored, &shape, &rates, cluster);
    print_levels(&costs, &states, counted.len());
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
    let written: f64 = costs.iter().map(|l| l.written_bytes).sum();
    println!(
        "disk         {} of level files in all; checkpoint planned: --keep-levels all {}, every:3 {}, last2 {} (see cayley info)",
        human_bytes(written as u128),
        human_bytes(req.disk_bytes(KeepLevels::All)),
        human_bytes(req.disk_bytes(KeepLevels::Every(3))),
        human_bytes(req.disk_last2_bytes)
    );
    println!("model        kernel timed at each level's densities on random bits, file sizes as the chunk writer stores random bits (upper bounds); described in coordinator/src/commands/plan/model.rs");
    Ok(())
}

/// States per depth of `job` from a `depths.csv`, `result.json` or
/// `manifest.json` (which must be of the same puzzle and metric).
fn counted_levels(file: &Path, job: &Job) -> anyhow::Result<Vec<u64>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    if text.trim_start().starts_with('{') {
        let json: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
        let (puzzle, metric, counts) = match json.get("job") {
            // A manifest: the job, then one record per completed level.
            Some(j) => (
                &j["puzzle"],
                &j["metric"],
                json["levels"]
                    .as_array()
                    .map(|l| l.iter().map(|r| &r["count"]).collect::<Vec<_>>()),
            ),
            None => (
                &json["puzzle"],
                &json["metric"],
                json["depths"].as_array().map(|d| d.iter().collect::<Vec<_>>()),
            ),
        };
        let (Some(puzzle), Some(metric)) = (puzzle.as_str(), metric.as_str()) else {
            anyhow::bail!(
                "{} is not a cayley result.json or manifest.json (it names no puzzle and metric)",
                file.display()
            );
        };
        if puzzle != job.puzzle.spec || metric != job.puzzle.metric.name() {
            anyhow::bail!(
                "{} holds levels of {} ({}), not of {} ({})",
                file.display(),
                puzzle,
                metric,
                job.puzzle.spec,
                job.puzzle.metric
            );
        }
        let counts = counts.with_context(|| format!("{}: no level counts", file.display()))?;
        if counts.is_empty() {
            anyhow::bail!("{}: no level counts", file.display());
        }
        return counts
            .iter()
            .map(|c| {
                c.as_u64()
                    .with_context(|| format!("{}: bad count {}", file.display(), c))
            })
            .collect();
    }
    // depths.csv: `depth,count` after a header line.
    let counts = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("depth"))
        .map(|l| {
            l.split(',')
                .nth(1)
                .and_then(|c| c.trim().parse::<u64>().ok())
                .with_context(|| format!("{}: expected depth,count lines, found {:?}", file.display(), l))
        })
        .collect::<anyhow::Result<Vec<u64>>>()?;
    if counts.is_empty() {
        anyhow::bail!("{}: no depth,count lines", file.display());
    }
    Ok(counts)
}

fn print_calibration(zstd: &[ZstdSample], disk: &DiskRates, dir: &Path) {
    for s in zstd {
        println!(
            "calibration  density {:<7} stored at {:.4} of raw; zstd compresses {:.0} MB/s, decompresses {:.0} MB/s (one core)",
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

fn print_levels(costs: &[LevelCost], states: &[f64], counted: usize) {
    println!(
        "{:>5} {:>12} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "depth", "states", "", "kernel", "evals", "compute", "read", "written", "wall"
    );
    for l in costs {
        println!(
            "{:>5} {:>12.4e} {:>9} {:>9} {:>10.3e} {:>10} {:>10} {:>10} {:>10}",
            l.depth,
            states[l.depth],
            if l.depth < counted { "counted" } else { "modelled" },
            match (l.kernel.bottom_up, l.sparse) {
                (true, _) => "bottom-up",
                (false, true) => "sparse",
                (false, false) => "top-down",
            },
            l.kernel.evaluations * l.active_shards,
            duration(l.compute),
            human_bytes(l.read_bytes as u128),
            human_bytes(l.written_bytes as u128),
            duration(l.wall())
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

    #[test]
    fn counted_levels_come_from_csv_and_json_of_the_same_job() {
        let job = plan_job_of("loopover:2x3");
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("depths.csv");
        std::fs::write(&csv, "depth,count\n0,1\n1,7\n2,31\n").unwrap();
        assert_eq!(counted_levels(&csv, &job).unwrap(), vec![1, 7, 31]);
        let json = dir.path().join("result.json");
        std::fs::write(&json, r#"{"puzzle":"loopover:2x3","metric":"mtm","depths":[1,7]}"#).unwrap();
        assert_eq!(counted_levels(&json, &job).unwrap(), vec![1, 7]);
        std::fs::write(&json, r#"{"puzzle":"loopover:3x3","metric":"mtm","depths":[1,12]}"#).unwrap();
        assert!(counted_levels(&json, &job)
            .unwrap_err()
            .to_string()
            .contains("not of loopover:2x3"));
        // JSON of something else is named as such (it said "levels of
        // null (null)").
        std::fs::write(&json, r#"{"x":1}"#).unwrap();
        assert!(counted_levels(&json, &job)
            .unwrap_err()
            .to_string()
            .contains("is not a cayley result.json or manifest.json"));
        // A file that names no level is a mistake, not "nothing counted".
        std::fs::write(&csv, "depth,count\n").unwrap();
        assert!(counted_levels(&csv, &job)
            .unwrap_err()
            .to_string()
            .contains("no depth,count lines"));
        std::fs::write(&json, r#"{"puzzle":"loopover:2x3","metric":"mtm","depths":[]}"#).unwrap();
        assert!(counted_levels(&json, &job)
            .unwrap_err()
            .to_string()
            .contains("no level counts"));
    }

    fn plan_job_of(spec: &str) -> Job {
        let puzzle = cayley_shared::puzzle::parse_puzzle(spec, cayley_shared::puzzle::Metric::Mtm).unwrap();
        Job::new(puzzle, None).unwrap()
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(12.0), "12.0 s");
        assert_eq!(duration(600.0), "10.0 min");
        assert_eq!(duration(7200.0), "2.0 h");
        assert_eq!(duration(3.0 * 86400.0), "3.0 days");
    }
}
