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
use cayley_shared::search::resources::requirements;
use cayley_shared::space::Space;
use cayley_shared::units::human_bytes;

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

/// Finer shard plans tried for [`finer_plan_fitting`]: each more shard
/// piece (or class) makes shards about `n − k` times smaller.
const FINER_PLANS_TRIED: usize = 3;

/// A finer shard plan that fits a budget the planned one does not.
pub struct FinerPlan {
    /// Its `--shard-pieces`.
    pub shard_pieces: usize,
    /// "K shards of S, at least M in all".
    pub describe: String,
}

/// When `job` (planned from `args`) does not fit `budget`: the first of the
/// next few (`FINER_PLANS_TRIED`) `--shard-pieces` values whose plan, made as
/// the command line makes it, fits. A task holds its sources, so smaller
/// shards shrink its floor toward the tables: twsearch's `ufo` needs
/// 148.5 MiB with 12 shards and 68.1 MiB with 1,320. None for a space
/// reduced by symmetry (sharded by classes) and for plans that rank more
/// states (`--shard-pieces` asks for the block layout or class digits,
/// which can rank far more than a group's ranking: `233` goes from 8!·8!
/// to 16!).
pub fn finer_plan_fitting(args: &PuzzleArgs, job: &Job, budget: u64) -> Option<FinerPlan> {
    if matches!(job.space, Space::Reduced(_) | Space::Oriented(_)) {
        return None;
    }
    let pieces = job.space.shard_pieces();
    (pieces + 1..=pieces + FINER_PLANS_TRIED).find_map(|k| {
        let mut finer_args = args.clone();
        finer_args.shard_pieces = Some(k);
        let finer = plan_job(&finer_args).ok()?;
        if matches!(finer.space, Space::Reduced(_) | Space::Oriented(_)) || finer.space.states() > job.space.states() {
            return None;
        }
        let req = requirements(&finer);
        (req.min_worker_bytes <= budget).then(|| FinerPlan {
            shard_pieces: k,
            describe: format!(
                "{} shards of {}, at least {} in all",
                req.shards,
                human_bytes(req.shard_bytes as u128),
                human_bytes(req.min_worker_bytes as u128)
            ),
        })
    })
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
