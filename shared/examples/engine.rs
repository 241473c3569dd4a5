//! Runs the in-process engine (no coordinator, no files beyond scratch) on a
//! puzzle and prints the table and timings: the baseline the distributed
//! path is compared against in BENCHMARKS.md.
//!
//! `cargo run --release -p cayley-shared --example engine -- loopover:2x6 [mtm|stm] [threads]`

use cayley_shared::job::Job;
use cayley_shared::puzzle::parse_puzzle;
use cayley_shared::search::engine::{search, SearchConfig, Silent};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map_or("loopover:3x3", |s| s.as_str());
    let metric = args
        .get(2)
        .map_or("mtm", |s| s.as_str())
        .parse()
        .map_err(|e: String| anyhow::anyhow!(e))?;
    let threads = args.get(3).map_or(Ok(0), |s| s.parse())?;
    let job = Job::new(parse_puzzle(spec, metric)?, None)?;
    let config = SearchConfig {
        threads,
        antipodes: 10,
        ..SearchConfig::default()
    };
    let outcome = search(&job, &config, &Silent)?;
    for (d, (c, s)) in outcome.depths.iter().zip(&outcome.level_seconds).enumerate() {
        println!("{:>3} {:>14} {:>8.3} s", d, c, s);
    }
    println!(
        "{}: {} states, diameter {}, {:.2} s, {} evaluations",
        spec,
        outcome.depths.iter().sum::<u64>(),
        outcome.depths.len() - 1,
        outcome.seconds,
        outcome.stats.evaluations
    );
    Ok(())
}
