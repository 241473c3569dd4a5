//! `cayley run`: a whole job on this machine.

use crate::cli::RunArgs;
use crate::info::plan_job;
use crate::progress::LevelBars;
use cayley_shared::engine::{search, SearchConfig};
use cayley_shared::result::RunResult;
use std::path::PathBuf;

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    job.check_fits_here(&scratch)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&job.puzzle.spec, job.puzzle.metric.name()));
    if !args.quiet {
        eprintln!(
            "{} ({}): {} states, {} generators, {} shards",
            job.puzzle.spec,
            job.puzzle.metric,
            job.reachable_states,
            job.puzzle.moves.len(),
            job.layout.shards()
        );
    }
    let config = SearchConfig {
        threads: args.threads,
        max_depth: args.max_depth,
        scratch: args.scratch,
        antipodes: args.antipodes,
    };
    let outcome = search(&job, &config, &LevelBars::new(args.quiet))?;
    let result = RunResult::new(&job, &outcome);
    result.write(&out)?;
    print_summary(&job, &result, &outcome);
    println!("results written to {}", out.display());
    Ok(())
}

/// `./cayley-out/<puzzle>-<metric>` with the spec made file-name safe.
pub fn default_out_dir(spec: &str, metric: &str) -> PathBuf {
    let safe: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    PathBuf::from("cayley-out").join(format!("{}-{}", safe, metric))
}

fn print_summary(job: &cayley_shared::job::Job, result: &RunResult, outcome: &cayley_shared::engine::SearchOutcome) {
    println!("{} ({} metric)", result.puzzle, result.metric);
    print!("{}", result.table());
    if result.complete {
        println!(
            "complete: {} states = all reachable states; diameter {}",
            result.states, result.diameter
        );
    } else {
        println!(
            "PARTIAL table (stopped at depth {}): {} of {} states counted",
            result.diameter, result.states, result.reachable_states
        );
    }
    println!("{} s total", format_args!("{:.2}", result.total_seconds));
    if !outcome.antipodes.is_empty() {
        println!(
            "\n{} state(s) at depth {} (first {} shown):",
            result.depths.last().unwrap(),
            result.diameter,
            outcome.antipodes.len()
        );
        for (a, rec) in outcome.antipodes.iter().zip(&result.antipodes) {
            println!("{}", job.puzzle.render(&a.state));
            println!("solve: {}\n", if rec.word.is_empty() { "(solved)" } else { &rec.word });
        }
    }
}
