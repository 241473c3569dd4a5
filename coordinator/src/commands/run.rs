//! `cayley run`: a whole job on this machine.

use crate::cli::RunArgs;
use crate::local::{run_local, Finished, LocalJob};
use crate::lock::OwnerLock;
use crate::made_dir::MadeDir;
use crate::manifest::{load_manifest, Manifest};
use crate::out::{default_out_dir, refuse_other_results, OutDir};
use crate::planning::{Machine, Options, Plan, Workers};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::puzzle::spec_file_text;
use std::path::{Path, PathBuf};

/// A temporary checkpoint estimated at no more than this goes to shared
/// memory when nothing says where (see [`scratch_of`]).
const SMALL_CHECKPOINT_BYTES: u128 = 64 << 20;

/// Where a temporary checkpoint goes: `--scratch` when given; else, for a
/// job whose whole checkpoint is estimated at most
/// [`SMALL_CHECKPOINT_BYTES`], `/dev/shm` when it exists, `TMPDIR` is unset
/// and it has four times that room; else the system temp dir. A small
/// job's level files are written, read and deleted within milliseconds: on
/// this machine's ext4 /tmp, creating, renaming and deleting them took
/// half of lo33's run while other processes wrote to the disk (28.7 ms
/// against 15.3 ms on /dev/shm; docs/history.md, "Set-up sized to the
/// puzzle").
fn scratch_of(args: &RunArgs, plan: &Plan) -> PathBuf {
    if let Some(dir) = &args.scratch {
        return dir.clone();
    }
    let shm = Path::new("/dev/shm");
    let need = plan.disk_need();
    let fits = || {
        args.fault
            .free_space()
            .of(shm)
            .is_some_and(|free| free as u128 >= 4 * need)
    };
    if need <= SMALL_CHECKPOINT_BYTES && !args.tmpdir_set && shm.is_dir() && fits() {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// Plans the job (refusing it when memory or the retention cannot hold
/// it), checks the disk, and runs it to the end with in-process workers,
/// writing the results into the `--out` folder. The table tests call this
/// too, with arguments parsed as the command line's.
pub fn run(args: RunArgs) -> anyhow::Result<Finished> {
    args.local.check_here()?;
    if let Some(dir) = &args.checkpoint_dir {
        refuse_checkpoint_dir(dir, args.local.out.as_deref())?;
    }
    let options = Options {
        workers: Workers::Here {
            count: args.local.workers,
            memory: args.local.memory,
        },
        keep: args.keep_levels,
        max_depth: args.max_depth,
    };
    let plan = Plan::new(&args.puzzle, options, &Machine::here())?;
    plan.refuse()?;
    if let (Some(note), false) = (plan.replaced_note(), args.local.quiet) {
        eprintln!("{}", note);
    }
    let out_path = args
        .local
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&plan.job.puzzle.spec, plan.job.puzzle.metric.name()));
    refuse_other_results(
        &out_path,
        &plan.job.puzzle.spec,
        plan.job.puzzle.metric.name(),
        args.max_depth,
    )?;
    let mut out = OutDir::prepare(&out_path)?;
    // Refused after the folder was made (the folder or a checkpoint in
    // use, the disk): the folder goes again if this made it.
    match out.hold().and_then(|()| start(&args, plan, &out.path)) {
        Ok((task, _owner)) => run_local(task),
        Err(e) => {
            out.discard();
            Err(e)
        }
    }
}

/// Refuses, before anything is written (the lock file included), a
/// `--checkpoint-dir` that is a file, holds unrelated files, is in use
/// (its lock read, not taken) or holds a checkpoint. The last two are
/// checked again under the lock, as a run may start there meanwhile.
fn refuse_checkpoint_dir(dir: &Path, out: Option<&Path>) -> anyhow::Result<()> {
    crate::lock::refuse_unrelated_files(dir, out)?;
    if dir.is_dir() {
        let existing = CheckpointDir::existing(dir);
        OwnerLock::refuse_if_held(&existing)?;
        refuse_existing_checkpoint(dir, load_manifest(&existing)?)?;
    }
    Ok(())
}

/// Refuses a `--checkpoint-dir` that holds the manifest `found`.
fn refuse_existing_checkpoint(dir: &Path, found: Option<Manifest>) -> anyhow::Result<()> {
    match found {
        Some(m) => anyhow::bail!(
            "{} already holds a checkpoint of {} ({}); continue it with `cayley resume {}` or choose another directory",
            dir.display(),
            m.job.puzzle,
            m.job.metric,
            dir.display()
        ),
        None => Ok(()),
    }
}

/// Checks the disk, creates and owns the checkpoint (temporary under
/// `--scratch` unless `--checkpoint-dir` is given) and makes the job's
/// first manifest; `out` is the result folder, already made.
fn start(args: &RunArgs, plan: Plan, out: &Path) -> anyhow::Result<(LocalJob, OwnerLock)> {
    let scratch = scratch_of(args, &plan);
    // The disk check comes before anything else is created; a temporary
    // checkpoint lives under --scratch.
    let location = args.checkpoint_dir.clone().unwrap_or_else(|| scratch.clone());
    // Named as the user gave it: a default scratch comes from TMPDIR.
    let flag = match (&args.checkpoint_dir, &args.scratch) {
        (Some(_), _) => "--checkpoint-dir",
        (None, Some(_)) => "--scratch",
        (None, None) => "the temporary folder, from TMPDIR; choose another with --scratch",
    };
    if location.exists() && !location.is_dir() {
        anyhow::bail!("{} ({}) is a file, not a folder", location.display(), flag);
    }
    let made = MadeDir::create(&location)
        .map_err(|e| anyhow::anyhow!("cannot create directory {} ({}): {}", location.display(), flag, e))?;
    let free = args.fault.free_space().of(&location);
    if let Err(refused) = plan.check_disk(&location, free, args.ignore_disk_check) {
        // Made only to ask its filesystem; a refused run leaves nothing.
        made.remove_if_empty();
        return Err(refused);
    }
    let (checkpoint, temporary, owner) = match &args.checkpoint_dir {
        Some(dir) => {
            let checkpoint = CheckpointDir::create(dir)
                .map_err(|e| anyhow::anyhow!("cannot create checkpoint directory {}: {}", dir.display(), e))?;
            // Owned before the manifest is read: a directory in use is
            // refused as such, whatever it holds.
            let owner = OwnerLock::acquire(&checkpoint)?;
            refuse_existing_checkpoint(dir, load_manifest(&checkpoint)?)?;
            (checkpoint, None, owner)
        }
        None => {
            let temp = tempfile::Builder::new()
                .prefix("cayley-checkpoint-")
                .tempdir_in(&scratch)
                .map_err(|e| anyhow::anyhow!("cannot create a checkpoint directory in {}: {}", scratch.display(), e))?;
            let checkpoint = CheckpointDir::create(temp.path())
                .map_err(|e| anyhow::anyhow!("cannot create checkpoint directory {}: {}", temp.path().display(), e))?;
            // Kept after an error, it can be resumed while this process
            // still exits: it is owned like any other.
            let owner = OwnerLock::acquire(&checkpoint)?;
            (checkpoint, Some(temp), owner)
        }
    };
    // A --scratch this run made goes with its temporary checkpoint; a
    // --checkpoint-dir stays, as the checkpoint it holds.
    let scratch = temporary.is_some().then_some(made);
    // A temporary checkpoint is deleted after success: no fsyncs (see
    // `WriteOptions::durable`), neither the coordinator's nor its workers'.
    let write = args.local.fault.write_options(args.checkpoint_dir.is_some());
    let definition = spec_file_text(&plan.job.puzzle.spec)?;
    let mut fresh = Manifest::new(&plan.job, args.keep_levels, args.max_depth, definition);
    fresh.memory = args.local.memory;
    fresh.out = Some(out.to_path_buf());
    fresh.temporary = temporary.is_some();
    // From here on a temporary checkpoint is an ordinary directory, removed
    // only after success: an error, a panic or a signal can never delete
    // computed levels.
    let temporary = temporary.map(tempfile::TempDir::keep);
    let task = LocalJob {
        plan,
        checkpoint,
        fresh,
        temporary,
        scratch,
        out: out.to_path_buf(),
        local: args.local.clone(),
        write,
    };
    Ok((task, owner))
}
