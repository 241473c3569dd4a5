//! The plan of a job, made once before any work: the job (puzzle, ranking,
//! shard plan, chunking), what it needs in memory and disk, the budget of
//! each worker, and every reason it cannot run here. `run`, `resume`,
//! `serve`, `info` and `plan` each build one [`Plan`] from their arguments
//! (or a checkpoint's manifest) and the machine's resources ([`Machine`]),
//! then only read it; `info` prints it.
//!
//! Planning is a pure function of its inputs: the machine's memory comes in
//! as a value, and the free disk as a number when the checkpoint's place is
//! known ([`Plan::check_disk`]), so tests plan any puzzle for any machine.

use crate::cli::PuzzleArgs;
use crate::manifest::Manifest;
use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::job::Job;
use cayley_shared::puzzle::symmetry::find_symmetries;
use cayley_shared::puzzle::{
    check_metric_applies, job_spec_with, parse_puzzle, parse_puzzle_with_file, spec_file_text, split_options,
    split_track, Puzzle, SpecError,
};
use cayley_shared::search::resources::{available_memory, default_budget_of, requirements, Requirements};
use cayley_shared::space::Space;
use cayley_shared::units::human_bytes;
use std::path::Path;

/// What the machine that runs the workers can give them.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// Memory this process may use (None when it cannot be read).
    pub available_memory: Option<u64>,
}

impl Machine {
    /// This machine.
    pub fn here() -> Machine {
        Machine {
            available_memory: available_memory(),
        }
    }
}

/// Where the workers run, and the memory they share.
#[derive(Clone, Copy, Debug)]
pub enum Workers {
    /// `count` workers in this process sharing `memory` (`--memory`, all of
    /// them together), or the default share of the machine's memory.
    Here { count: u32, memory: Option<u64> },
    /// Workers on other machines (`serve`): each checks its own budget
    /// when it starts.
    Elsewhere,
}

/// What the command line (or the manifest) asks of the run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Where the workers run and their memory.
    pub workers: Workers,
    /// Which levels stay on disk.
    pub keep: KeepLevels,
    /// The depth the search stops at, if any.
    pub max_depth: Option<u32>,
}

/// A finer shard plan than the default one, which fits a budget the
/// default one does not.
#[derive(Clone, Debug)]
pub struct FinerPlan {
    /// Its `--shard-pieces`.
    pub shard_pieces: usize,
    /// "K shards of S, at least M in all".
    pub describe: String,
}

/// The default shard plan, replaced by a finer one because one of its tasks
/// needs more than the budget.
#[derive(Clone, Debug)]
pub struct Replaced {
    /// The least budget the default plan runs with.
    pub default_min_bytes: u64,
    /// The plan taken instead.
    pub finer: FinerPlan,
}

/// A job planned: read by the commands, never changed once made.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The job: its puzzle, space (ranking and shard plan) and chunking.
    pub job: Job,
    /// What it needs: memory per worker and its minimum, disk, modelled levels.
    pub needs: Requirements,
    /// The options it was planned with.
    pub options: Options,
    /// The memory budget of each worker; None for workers elsewhere.
    pub worker_budget: Option<u64>,
    /// Set when the default shard plan was replaced by a finer one.
    pub replaced: Option<Replaced>,
    /// Why the job cannot run as planned, each a sentence that names the
    /// option changing it; empty when it can (the disk is checked apart,
    /// once its place is known: [`Plan::check_disk`]).
    pub refusals: Vec<String>,
}

impl Plan {
    /// Plans the job the puzzle arguments describe.
    pub fn new(args: &PuzzleArgs, options: Options, machine: &Machine) -> anyhow::Result<Plan> {
        Plan::for_puzzle(parse_args_puzzle(args)?, args, options, machine)
    }

    /// Plans the job of `puzzle`, parsed from `args` already (`info` shows
    /// the puzzle before its plan). A budget too small for a task of the
    /// default shard plan takes the first finer plan that fits when the
    /// shard plan was left to cayley, and names it in the refusal when it
    /// was asked for.
    pub fn for_puzzle(puzzle: Puzzle, args: &PuzzleArgs, options: Options, machine: &Machine) -> anyhow::Result<Plan> {
        let job = job_of_puzzle(puzzle, args)?;
        let budget = worker_budget(options.workers, machine);
        let needs = requirements(&job);
        let finer = budget
            .filter(|&b| needs.min_worker_bytes > b)
            .and_then(|b| finer_plan_fitting(args, &job, b));
        match finer {
            Some((finer, finer_job)) if args.shard_pieces.is_none() => {
                let mut plan = Plan::of_job(finer_job, options, budget, None);
                plan.replaced = Some(Replaced {
                    default_min_bytes: needs.min_worker_bytes,
                    finer,
                });
                Ok(plan)
            }
            finer => Ok(Plan::of_job(job, options, budget, finer.as_ref().map(|f| &f.0))),
        }
    }

    /// Plans the job a checkpoint's manifest records, rebuilt from the
    /// manifest alone (a `perm:`/`tws:` definition comes from its recorded
    /// text), with its shard plan, retention and depth limit.
    pub fn resumed(manifest: &Manifest, workers: Workers, machine: &Machine) -> anyhow::Result<Plan> {
        let options = Options {
            workers,
            keep: manifest.keep_levels,
            max_depth: manifest.max_depth,
        };
        Ok(Plan::of_job(
            job_of_manifest(manifest)?,
            options,
            worker_budget(workers, machine),
            None,
        ))
    }

    /// The plan of `job` as it is, with what refuses it; a budget refusal
    /// names `finer`, a shard plan that fits, when there is one.
    fn of_job(job: Job, options: Options, worker_budget: Option<u64>, finer: Option<&FinerPlan>) -> Plan {
        let needs = requirements(&job);
        let mut refusals = Vec::new();
        if let Err(e) = options.keep.check_for(&job) {
            refusals.push(e.to_string());
        }
        if let Some(mut problem) = worker_budget.and_then(|b| needs.budget_shortfall(&job.puzzle.spec, b)) {
            if let Some(finer) = finer {
                problem.push_str(&format!(
                    ", or --shard-pieces {} ({})",
                    finer.shard_pieces, finer.describe
                ));
            }
            refusals.push(problem);
        }
        Plan {
            job,
            needs,
            options,
            worker_budget,
            replaced: None,
            refusals,
        }
    }

    /// Fails with the first reason the job cannot run as planned.
    pub fn refuse(&self) -> anyhow::Result<()> {
        match self.refusals.first() {
            Some(why) => Err(anyhow::anyhow!("{}", why)),
            None => Ok(()),
        }
    }

    /// Checkpoint disk the job needs kept as `keep`, to its depth limit.
    pub fn disk_bytes(&self, keep: KeepLevels) -> u128 {
        self.needs.disk_bytes_to(keep, self.options.max_depth)
    }

    /// Checkpoint disk the job needs as planned.
    pub fn disk_need(&self) -> u128 {
        self.disk_bytes(self.options.keep)
    }

    /// Refuses, before anything is computed, a checkpoint in `location`
    /// whose filesystem (`free` bytes free, None when unknown) cannot hold
    /// what the retention keeps. The need is an upper bound, so with
    /// `ignore` a shortfall is only a warning: a disk that does fill up
    /// stops the job cleanly, and `resume` continues it.
    pub fn check_disk(&self, location: &Path, free: Option<u64>, ignore: bool) -> anyhow::Result<()> {
        let planned = (self.options.keep, self.options.max_depth);
        let Some(problem) = self.needs.disk_shortfall(&self.job, location, planned, free) else {
            return Ok(());
        };
        if !ignore {
            anyhow::bail!(
                "{}, or --ignore-disk-check if you know the levels will be smaller",
                problem
            );
        }
        tracing::warn!(
            "{}; going on (--ignore-disk-check): if the disk fills up the job stops cleanly, and `cayley resume` continues it once there is room",
            problem
        );
        Ok(())
    }

    /// The note printed when the default shard plan was replaced.
    pub fn replaced_note(&self) -> Option<String> {
        let replaced = self.replaced.as_ref()?;
        Some(format!(
            "note: one task of the default shard plan needs at least {}, more than the budget of {}; planned with --shard-pieces {} instead ({})",
            human_bytes(replaced.default_min_bytes as u128),
            human_bytes(self.worker_budget.unwrap_or(0) as u128),
            replaced.finer.shard_pieces,
            replaced.finer.describe
        ))
    }
}

/// Each worker's memory budget: its share of `--memory`, or of the
/// default share of the machine's memory.
fn worker_budget(workers: Workers, machine: &Machine) -> Option<u64> {
    match workers {
        Workers::Here { count, memory } => Some(match memory {
            Some(m) => m / count.max(1) as u64,
            None => default_budget_of(machine.available_memory, count as usize),
        }),
        Workers::Elsewhere => None,
    }
}

/// The puzzle of the arguments. `--shard-pieces` asks for the plain layout,
/// so a puzzle whose symmetries would only be found (none declared or built
/// in, some found) is parsed with `--no-symmetry` in its spec: workers and `resume`,
/// which rebuild the puzzle from the spec, then plan the same job. Declared
/// symmetries stay, and refuse the option (when the job is planned).
pub fn parse_args_puzzle(args: &PuzzleArgs) -> Result<Puzzle, SpecError> {
    check_metric_applies(&args.spec(), args.metric)?;
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

/// The job of the puzzle arguments, as the command line plans it.
fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    job_of_puzzle(parse_args_puzzle(args)?, args)
}

/// The job of `puzzle` with the shard plan and chunking of `args`. Shards
/// of a space reduced by symmetry are classes of keys, not pieces: such a
/// space refuses `--shard-pieces`.
fn job_of_puzzle(puzzle: Puzzle, args: &PuzzleArgs) -> anyhow::Result<Job> {
    let job = Job::new(puzzle, args.shard_pieces)?.with_chunk_shards(args.chunk_shards);
    if matches!(job.space, Space::Reduced(_)) && args.shard_pieces.is_some() {
        anyhow::bail!(
            "--shard-pieces does not apply to '{}': it is reduced by its symmetries and sharded by classes of keys (add --no-symmetry to shard by pieces)",
            job.puzzle.spec
        );
    }
    Ok(job)
}

/// Finer shard plans tried for [`finer_plan_fitting`]: each more shard
/// piece (or class) makes shards about `n − k` times smaller.
const FINER_PLANS_TRIED: usize = 3;

/// When `job` (planned from `args`) does not fit `budget`: the first of the
/// next few (`FINER_PLANS_TRIED`) `--shard-pieces` values whose plan, made as
/// the command line makes it, fits, with that job. A task holds its sources, so smaller
/// shards shrink its floor toward the tables: twsearch's `ufo` needs
/// 148.5 MiB with 12 shards and 68.1 MiB with 1,320. None for a space
/// reduced by symmetry (sharded by classes) and for plans that rank more
/// states (`--shard-pieces` asks for the block layout or class digits,
/// which can rank far more than a group's ranking: `233` goes from 8!·8!
/// to 16!).
fn finer_plan_fitting(args: &PuzzleArgs, job: &Job, budget: u64) -> Option<(FinerPlan, Job)> {
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
        let needs = requirements(&finer);
        (needs.min_worker_bytes <= budget).then(|| {
            let plan = FinerPlan {
                shard_pieces: k,
                describe: format!(
                    "{} shards of {}, at least {} in all",
                    needs.shards,
                    human_bytes(needs.shard_bytes as u128),
                    human_bytes(needs.min_worker_bytes as u128)
                ),
            };
            (plan, finer)
        })
    })
}

/// Rebuilds the job a manifest describes, from the manifest alone (a
/// `perm:`/`tws:` definition comes from its recorded text).
fn job_of_manifest(manifest: &Manifest) -> anyhow::Result<Job> {
    let metric = manifest.job.metric.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let puzzle = parse_puzzle_with_file(&manifest.job.puzzle, metric, manifest.job.definition.as_deref())?;
    // An unreadable fingerprint matches no plan: `check_matches` names it.
    let fingerprint = u64::from_str_radix(&manifest.fingerprint, 16).unwrap_or(0);
    Job::recorded(
        puzzle,
        manifest.job.shard_pieces,
        manifest.job.chunk_shards,
        fingerprint,
    )
}

#[cfg(test)]
mod tests;
