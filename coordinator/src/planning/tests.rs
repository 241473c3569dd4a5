//! Planning without a command: plans of real puzzles for machines given as
//! values, checked against what the job's own requirements say.

use super::*;
use clap::Parser;

const GIB: u64 = 1 << 30;

/// The puzzle arguments of a command line, parsed as `cayley run` parses them.
fn args(line: &[&str]) -> PuzzleArgs {
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        puzzle: PuzzleArgs,
    }
    let argv = std::iter::once("cayley").chain(line.iter().copied());
    Line::try_parse_from(argv).expect("puzzle arguments").puzzle
}

fn here(count: u32, memory: Option<u64>) -> Options {
    Options {
        workers: Workers::Here { count, memory },
        keep: KeepLevels::All,
        max_depth: None,
    }
}

const MACHINE: Machine = Machine {
    available_memory: Some(10 * GIB),
};

#[test]
fn a_plan_holds_the_job_its_needs_and_each_workers_share_of_the_budget() {
    let plan = Plan::new(&args(&["loopover:3x3"]), here(2, Some(8 * GIB)), &MACHINE).unwrap();
    assert_eq!(plan.worker_budget, Some(4 * GIB));
    assert!(plan.refusals.is_empty(), "{:?}", plan.refusals);
    assert!(plan.replaced.is_none());
    // The needs are those of the planned job, and the disk those of the
    // retention asked for.
    let needs = requirements(&plan.job);
    assert_eq!(plan.needs.min_worker_bytes, needs.min_worker_bytes);
    assert_eq!(plan.needs.level_bytes, needs.level_bytes);
    assert_eq!(plan.disk_need(), needs.disk_bytes(KeepLevels::All));
    // Loopover 3×3: every move is a 3-cycle, so the 9!/2 even
    // permutations, reduced by the board's symmetries.
    assert_eq!(plan.job.reachable_states, Some(362_880 / 2));
    assert!(matches!(plan.job.space, Space::Reduced(_)));
    // Without --memory: 60 % of what the machine has, shared by the workers.
    let plan = Plan::new(&args(&["loopover:3x3"]), here(2, None), &MACHINE).unwrap();
    assert_eq!(plan.worker_budget, Some((10 * GIB) as f64 as u64 * 6 / 10 / 2));
}

#[test]
fn a_depth_limit_bounds_the_disk_the_plan_needs() {
    let mut options = here(1, None);
    options.max_depth = Some(3);
    let plan = Plan::new(&args(&["loopover:4x4"]), options, &MACHINE).unwrap();
    assert_eq!(plan.disk_need(), plan.needs.disk_bytes_to(KeepLevels::All, Some(3)));
    assert!(plan.disk_need() < plan.needs.disk_bytes(KeepLevels::All) / 100);
}

#[test]
fn a_budget_too_small_for_the_default_shard_plan_takes_a_finer_one_unless_one_was_asked_for() {
    // Loopover 2×4 without symmetry: one task of the default plan needs
    // more than 100 KiB (tests/validation.rs runs this plan to its table).
    let budget = 100 << 10;
    let line = ["loopover:2x4", "--no-symmetry"];
    let plan = Plan::new(&args(&line), here(1, Some(budget)), &MACHINE).unwrap();
    let replaced = plan.replaced.as_ref().expect("a finer plan");
    assert!(replaced.default_min_bytes > budget);
    assert_eq!(plan.job.space.shard_pieces(), replaced.finer.shard_pieces);
    assert!(plan.needs.min_worker_bytes <= budget);
    assert!(plan.refusals.is_empty(), "{:?}", plan.refusals);
    assert!(plan.replaced_note().unwrap().contains("planned with --shard-pieces"));
    // Asked for by name, the default plan is kept and refused, naming the finer one.
    let default = Plan::new(&args(&line), here(1, None), &MACHINE).unwrap();
    let pieces = default.job.space.shard_pieces().to_string();
    let asked = [&line[..], &["--shard-pieces", &pieces]].concat();
    let plan = Plan::new(&args(&asked), here(1, Some(budget)), &MACHINE).unwrap();
    assert!(plan.replaced.is_none());
    assert_eq!(plan.refusals.len(), 1, "{:?}", plan.refusals);
    let why = plan.refuse().unwrap_err().to_string();
    assert!(
        why.contains("is too small") && why.contains(", or --shard-pieces "),
        "{}",
        why
    );
}

#[test]
fn workers_elsewhere_bring_their_own_budget() {
    let options = Options {
        workers: Workers::Elsewhere,
        ..here(1, None)
    };
    let tiny = Machine {
        available_memory: Some(1),
    };
    let plan = Plan::new(&args(&["loopover:3x4"]), options, &tiny).unwrap();
    assert_eq!(plan.worker_budget, None);
    assert!(plan.refusals.is_empty(), "{:?}", plan.refusals);
    assert!(plan.replaced.is_none());
}

#[test]
fn a_directed_search_refuses_a_retention_that_deletes_levels_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.perm");
    std::fs::write(&file, "a: (1,2,3,4)\nb: (1,2)\n").unwrap();
    let spec = format!("perm:{}", file.display());
    let mut options = here(1, None);
    options.keep = KeepLevels::Last2;
    let plan = Plan::new(&args(&[&spec, "--directed"]), options, &MACHINE).unwrap();
    assert!(plan.job.directed);
    let why = plan.refuse().unwrap_err().to_string();
    assert!(why.contains("--keep-levels last2 cannot be used"), "{}", why);
    // Undirected, the same retention is fine.
    let plan = Plan::new(&args(&[&spec]), options, &MACHINE).unwrap();
    assert!(plan.refusals.is_empty(), "{:?}", plan.refusals);
}

#[test]
fn a_disk_too_small_is_refused_unless_ignored() {
    let plan = Plan::new(&args(&["loopover:3x4"]), here(1, None), &MACHINE).unwrap();
    let place = Path::new("/checkpoints");
    let why = plan.check_disk(place, Some(1000), false).unwrap_err().to_string();
    assert!(
        why.contains("too large for this disk") && why.contains("/checkpoints has 1000 B free"),
        "{}",
        why
    );
    assert!(why.contains("--ignore-disk-check"), "{}", why);
    assert!(plan.check_disk(place, Some(1000), true).is_ok());
    // Unknown free space is not a reason to refuse; enough room is not either.
    assert!(plan.check_disk(place, None, false).is_ok());
    let room = u64::try_from(plan.disk_need()).unwrap();
    assert!(plan.check_disk(place, Some(room), false).is_ok());
}

#[test]
fn a_resumed_plan_is_the_recorded_job_with_its_recorded_retention() {
    let started = Plan::new(&args(&["pancake:6"]), here(1, None), &MACHINE).unwrap();
    let manifest = Manifest::new(&started.job, KeepLevels::Every(3), Some(4), None);
    let plan = Plan::resumed(&manifest, Workers::Here { count: 2, memory: None }, &MACHINE).unwrap();
    assert_eq!(plan.job.fingerprint(), started.job.fingerprint());
    assert_eq!(plan.options.keep, KeepLevels::Every(3));
    assert_eq!(plan.options.max_depth, Some(4));
    assert_eq!(plan.worker_budget, Some(default_budget_of(MACHINE.available_memory, 2)));
}

#[test]
fn a_space_reduced_by_symmetry_refuses_a_shard_plan_by_pieces() {
    let why = Plan::new(&args(&["loopover:3x3", "--shard-pieces", "2"]), here(1, None), &MACHINE)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    // Loopover's symmetries are built in: they stay, and the option is refused.
    assert!(why.contains("--shard-pieces does not apply"), "{}", why);
}
