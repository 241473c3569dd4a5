//! The job a command works on: planned from its puzzle arguments, or
//! rebuilt from a checkpoint's manifest with the settings it recorded.
//! Shared by the commands (`run`, `serve`, `resume`, `info`, `plan`).

use crate::cli::PuzzleArgs;
use crate::manifest::Manifest;
use cayley_shared::job::Job;
use cayley_shared::puzzle::symmetry::find_symmetries;
use cayley_shared::puzzle::{
    job_spec_with, parse_puzzle, parse_puzzle_with_file, spec_file_text, split_options, split_track, Puzzle, SpecError,
};
use cayley_shared::space::Space;

/// The puzzle of the arguments. `--shard-pieces` asks for the plain layout,
/// so a puzzle whose symmetries would only be found (none declared or built
/// in, some found) is parsed with `--no-symmetry` in its spec: workers and `resume`,
/// which rebuild the puzzle from the spec, then plan the same job. Declared
/// symmetries stay, and refuse the option ([`refuse_shard_pieces_when_reduced`]).
pub fn parse_args_puzzle(args: &PuzzleArgs) -> Result<Puzzle, SpecError> {
    let puzzle = parse_puzzle(&args.spec(), args.metric)?;
    let found = || find_symmetries(&puzzle).is_ok_and(|g| !g.is_trivial());
    if args.shard_pieces.is_none() || !puzzle.symmetries.is_empty() || puzzle.reduction_off() || !found() {
        return Ok(puzzle);
    }
    let (before, track) = split_track(&puzzle.spec);
    let (base, directed, _) = split_options(before);
    parse_puzzle_with_file(
        &job_spec_with(base, directed, true, track),
        args.metric,
        spec_file_text(&puzzle.spec)?.as_deref(),
    )
}

/// Parses the puzzle arguments into a planned job.
pub fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    let puzzle = parse_args_puzzle(args)?;
    let job = Job::new(puzzle, args.shard_pieces)?.with_chunk_shards(args.chunk_shards);
    refuse_shard_pieces_when_reduced(&job, args)?;
    Ok(job)
}

/// Shards of a space reduced by symmetry are classes of keys, not pieces.
pub fn refuse_shard_pieces_when_reduced(job: &Job, args: &PuzzleArgs) -> anyhow::Result<()> {
    if matches!(job.space, Space::Reduced(_)) && args.shard_pieces.is_some() {
        anyhow::bail!(
            "--shard-pieces does not apply to '{}': it is reduced by its symmetries and sharded by classes of keys (add --no-symmetry to shard by pieces)",
            job.puzzle.spec
        );
    }
    Ok(())
}

/// Rebuilds the job a manifest describes, from the manifest alone (a
/// `perm:`/`tws:` definition comes from its recorded text).
pub fn job_of_manifest(manifest: &Manifest) -> anyhow::Result<Job> {
    let metric = manifest.job.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let puzzle = parse_puzzle_with_file(&manifest.job.puzzle, metric, manifest.job.definition.as_deref())?;
    Ok(Job::new(puzzle, Some(manifest.job.shard_pieces))?.with_chunk_shards(Some(manifest.job.chunk_shards)))
}

/// A setting `resume` takes from the command line when given (recording it
/// for the next resume), else from the manifest, saying so unless quiet;
/// `(what, option)` name it in that message. `None` when neither has one.
pub fn kept_or_given<T: Clone>(
    given: Option<T>,
    recorded: &mut Option<T>,
    (what, option): (&str, &str),
    quiet: bool,
    show: impl Fn(&T) -> String,
) -> Option<T> {
    match given {
        Some(value) => {
            *recorded = Some(value.clone());
            Some(value)
        }
        None => {
            if let (Some(value), false) = (recorded.as_ref(), quiet) {
                eprintln!(
                    "{} {}, as the job was started ({} changes it)",
                    what,
                    show(value),
                    option
                );
            }
            recorded.clone()
        }
    }
}
