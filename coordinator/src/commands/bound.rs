//! `cayley bound`: the counting lower bound on a puzzle's diameter (seed
//! 002 §4.3), computed without searching.

use cayley_shared::puzzle::{job_spec, parse_puzzle, Metric};
use cayley_shared::search::bound::puzzle_bound;
use clap::Args;

/// Which puzzle to bound.
#[derive(Args, Debug)]
pub struct BoundArgs {
    /// Puzzle spec, e.g. `loopover:4x4` (any family whose moves are not guarded).
    pub puzzle: String,
    /// Metric: `mtm` (shift a line by any amount = 1 move) or `stm` (one cell = 1 move).
    #[arg(long, default_value = "mtm")]
    pub metric: Metric,
    /// Track only these pieces (as for `cayley run`): the bound is for the coset space.
    #[arg(long, value_name = "PIECES")]
    pub track: Option<String>,
}

/// Prints the cumulative canonical-word counts per length and the bound.
pub fn bound(args: BoundArgs) -> anyhow::Result<()> {
    let puzzle = parse_puzzle(&job_spec(&args.puzzle, false, args.track.as_deref()), args.metric)?;
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
