//! Command-line interface definitions.

use cayley_shared::puzzle::Metric;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Exact distance tables ("God's number") of permutation puzzles.
#[derive(Parser, Debug)]
#[command(name = "cayley", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute the full depth table of a puzzle on this machine.
    Run(RunArgs),
    /// Show a puzzle's generators, group order, shard plan and the memory
    /// and disk a run needs, without running it.
    Info(InfoArgs),
    /// Counting lower bound on the diameter: canonical move sequences per length.
    Bound(crate::bound::BoundArgs),
}

/// Which puzzle and how to cut it.
#[derive(Args, Debug, Clone)]
pub struct PuzzleArgs {
    /// Puzzle spec, e.g. `loopover:3x3` (families: loopover:RxC).
    pub puzzle: String,
    /// Metric: `mtm` (shift a line by any amount = 1 move) or `stm` (one cell = 1 move).
    #[arg(long, default_value = "mtm")]
    pub metric: Metric,
    /// Number of leading pieces whose slots form the shard key (default: chosen so a
    /// shard's bit array is at most 32 MiB).
    #[arg(long, value_name = "K")]
    pub shard_pieces: Option<usize>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
    /// Directory for result.json and depths.csv [default: ./cayley-out/<puzzle>-<metric>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Worker threads (default: every core).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
    /// Stop after depth D; the table is then marked partial.
    #[arg(long, value_name = "D")]
    pub max_depth: Option<u32>,
    /// Directory for the memory-mapped level files [default: the system temp dir].
    /// A fresh subdirectory is made there and removed at the end.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// How many antipodes (states at maximum depth) to report.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub antipodes: usize,
    /// Print only the final table (no progress bars).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
}
