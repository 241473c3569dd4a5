//! `cayley`: computes exact distance tables of Cayley graphs of permutation
//! puzzles. See `cayley --help` and README.md.

mod bound;
mod cli;
mod info;
mod progress;
mod run;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let outcome = match cli.command {
        cli::Command::Run(args) => run::run(args),
        cli::Command::Info(args) => info::info(args),
        cli::Command::Bound(args) => bound::bound(args),
    };
    if let Err(err) = outcome {
        eprintln!("error: {:#}", err);
        std::process::exit(1);
    }
}
