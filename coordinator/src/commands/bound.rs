//! `cayley bound`: the counting lower bound on a puzzle's diameter
//! (`shared/src/search/bound.rs`), computed without searching.

use crate::cli::BoundArgs;
use cayley_shared::puzzle::{check_metric_applies, job_spec, parse_puzzle};
use cayley_shared::search::bound::puzzle_bound;

/// Prints the cumulative canonical-word counts per length and the bound.
pub fn bound(args: BoundArgs) -> anyhow::Result<()> {
    let spec = job_spec(&args.puzzle, false, args.track.as_deref());
    check_metric_applies(&spec, args.metric)?;
    let puzzle = parse_puzzle(&spec, args.metric)?;
    let b = puzzle_bound(&puzzle)?;
    println!("puzzle      {} ({} metric)", puzzle.spec, puzzle.metric);
    println!(
        "generators  {} distinct, {} classes of last move",
        b.generators, b.classes
    );
    println!("states      {}", b.states);
    println!("length  canonical words of at most this length");
    for (length, count) in b.cumulative.iter().enumerate() {
        println!("{:>6}  {}", length, count);
    }
    println!("bound       {}: some state needs at least {} moves", b.bound, b.bound);
    Ok(())
}
