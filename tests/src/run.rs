//! Running a job the way users do, in this process: `cayley run` itself
//! (the coordinator crate's [`cayley_coordinator::commands::run::run`],
//! given arguments parsed as from its command line), so the table tests
//! exercise the shipped path: the embedded coordinator, its worker's task
//! runner and cache, and the chunk files of a temporary checkpoint.

use crate::test_dir;
use cayley_coordinator::cli::{Cli, Command};
pub use cayley_coordinator::local::Finished;
use cayley_shared::puzzle::perm::Perm;
use clap::Parser;
use std::path::Path;

/// `cayley run ARGS…` with `ARGS` the whitespace-separated words of
/// `command_line` (a spec and options, e.g. `loopover:2x5 --metric stm
/// --antipodes 3`), quietly, with its checkpoint and result folder in a
/// fresh test directory. The run must succeed with a complete table, whose
/// counts must add up to the number of reachable states when that is known.
pub fn run_complete(command_line: &str) -> Finished {
    let finished = run_quietly(command_line);
    let result = &finished.result;
    assert!(result.complete, "cayley run {}: partial table", command_line);
    let counted: u128 = result.depths.iter().map(|&c| c as u128).sum();
    if let Some(reachable) = finished.job.reachable_states {
        assert_eq!(counted, reachable, "cayley run {}", command_line);
    }
    finished
}

/// `cayley run ARGS…` as [`run_complete`] runs it, a partial table
/// (`--max-depth`) allowed.
pub fn run_quietly(command_line: &str) -> Finished {
    let dir = test_dir();
    let out = dir.path().join("out");
    let mut argv: Vec<String> = vec!["cayley".into(), "run".into()];
    argv.extend(command_line.split_whitespace().map(String::from));
    argv.extend(["-q".into(), "--out".into(), out.display().to_string()]);
    argv.extend(["--scratch".into(), dir.path().display().to_string()]);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("cayley run {}: {}", command_line, e));
    let Command::Run(args) = cli.command else {
        unreachable!("the arguments start with `run`")
    };
    cayley_coordinator::commands::run::run(args).unwrap_or_else(|e| panic!("cayley run {}: {:#}", command_line, e))
}

/// Replays every antipode's word: in exactly `diameter` legal moves it must
/// solve the state, or for a directed graph build it from solved.
pub fn assert_words_solve(run: &Finished) {
    let (puzzle, diameter) = (&run.job.puzzle, run.result.depths.len() - 1);
    for a in &run.antipodes {
        assert_eq!(a.solution.len(), diameter, "word of {:?}", a.state);
        let start = if run.job.directed {
            puzzle.solved.clone()
        } else {
            a.state.clone()
        };
        let end = a.solution.iter().fold(start, |state, &m| {
            puzzle.apply(&puzzle.moves[m], &state).expect("a legal move")
        });
        if run.job.directed {
            assert_eq!(end, a.state, "word does not build its state");
        } else {
            assert!(puzzle.is_solved(&end), "word does not solve {:?}", a.state);
        }
    }
}

/// Writes the generators (image lists, 0-based) to `name` in `dir` as a
/// perm file, `g1: (1,2,3)…` in 1-based cycles, and returns its spec.
pub fn perm_file(dir: &Path, name: &str, generators: &[Vec<u8>]) -> String {
    let text: String = generators
        .iter()
        .enumerate()
        .map(|(i, g)| format!("g{}: {}\n", i + 1, Perm::from_images(g.clone()).expect("a permutation")))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the perm file");
    format!("perm:{}", path.display())
}

/// The option ` --shard-pieces K` when `k` is given; nothing (the default
/// plan) otherwise.
pub fn shard_pieces(k: Option<usize>) -> String {
    k.map_or(String::new(), |k| format!(" --shard-pieces {}", k))
}
