//! `cayley info`: what a run of a puzzle involves.

use crate::cli::{InfoArgs, PuzzleArgs};
use cayley_shared::group::{order_of_points, puzzle_group_order};
use cayley_shared::job::{human_bytes, Job};
use cayley_shared::puzzle::{parse_puzzle, split_options, tws_point_group, Metric, Puzzle, SpecError};
use cayley_shared::space::Space;

/// Parses the puzzle arguments into a planned job.
pub fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    let puzzle = parse_puzzle(&args.spec(), args.metric)?;
    Job::new(puzzle, args.shard_pieces)
}

pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    let spec = args.puzzle.spec();
    let puzzle = match parse_puzzle(&spec, args.puzzle.metric) {
        Ok(puzzle) => puzzle,
        Err(SpecError::TooManyPoints { points, max, .. }) => {
            return info_group_only(&spec, args.puzzle.metric, points, max)
        }
        Err(e) => return Err(e.into()),
    };
    let p = &puzzle;
    println!("puzzle       {} ({} metric)", p.spec, p.metric);
    println!("slots        {}", p.slots);
    println!("generators   {}", p.moves.len());
    for m in &p.moves {
        let twist = if m.twist.iter().any(|&t| t != 0) {
            format!("  twists {:?}", m.twist)
        } else {
            String::new()
        };
        match m.guard {
            Some(g) => println!(
                "  {:<8} {}{}  when {} is in slot {}",
                m.name,
                m.perm,
                twist,
                guard_label(p, g.piece),
                g.slot + 1
            ),
            None => println!("  {:<8} {}{}", m.name, m.perm, twist),
        }
    }
    if !p.is_undirected() {
        println!("graph        directed: depth = length of the shortest word from solved");
    }
    // Exact at any size, so puzzles too large to search still get their order.
    let order = puzzle_group_order(p);
    println!("group order  {}", order);
    if let Some(reachable) = p.reachable_states.filter(|&r| Some(r) != order.to_u128()) {
        println!("reachable    {}", reachable);
    }
    let job = match Job::new(puzzle, args.puzzle.shard_pieces) {
        Ok(job) => job,
        // Without a shard plan asked for, only size stops the planning: the
        // group part above is the answer.
        Err(e) if args.puzzle.shard_pieces.is_none() => {
            println!("search       {:#}", e);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if job.puzzle.coding.is_some() {
        match job.reachable_states {
            Some(r) => println!("positions    {} (counted without searching)", r),
            None => println!("positions    not known in advance: the search ends at its first empty level"),
        }
    }
    print_plan(&job);
    Ok(())
}

/// A `.tws` definition too large to build as a puzzle: its generators'
/// names and the group order on its points.
fn info_group_only(spec: &str, metric: Metric, points: usize, max: usize) -> anyhow::Result<()> {
    let (base, _, _) = split_options(spec);
    let args = base.split_once(':').map_or("", |(_, a)| a);
    let group = tws_point_group(base, args, metric)?;
    let gens: Vec<Vec<u16>> = group.generators.iter().map(|(_, g)| g.clone()).collect();
    let names: Vec<&str> = group.generators.iter().map(|(n, _)| n.as_str()).collect();
    println!("puzzle       {} ({} metric)", spec, metric);
    println!("points       {} (positions × orientations)", points);
    println!("generators   {}: {}", names.len(), names.join(" "));
    if !group.rotations.is_empty() {
        println!(
            "rotations    {} (not generators, as in twsearch)",
            group.rotations.join(" ")
        );
    }
    println!(
        "group order  {}",
        order_of_points(group.degree, &gens, &group.piece_len)
    );
    println!("search       {} points; puzzles are built with at most {}", points, max);
    Ok(())
}

/// The label of the piece (or class, in a coded puzzle) a guard names.
fn guard_label(p: &Puzzle, piece: usize) -> &str {
    match &p.coding {
        Some(c) => &c.class_labels[piece],
        None => &p.labels[piece],
    }
}

/// The shard plan, memory and disk of a job.
fn print_plan(job: &Job) {
    let req = job.requirements();
    match &job.space {
        Space::Blocks(l) => {
            println!(
                "states       {} ranked ({})",
                l.states(),
                if l.even {
                    "even permutations only: every move is even"
                } else {
                    "all permutations"
                }
            );
            println!(
                "shard plan   {} shard pieces -> {} shards of {} ({} blocks of {} states each)",
                l.shard_pieces,
                l.shards(),
                human_bytes(l.shard_bytes() as u128),
                l.blocks_per_shard(),
                l.block_states()
            );
        }
        Space::Coded(c) => {
            println!(
                "states       {} ranked (places of each piece class, then twists)",
                c.states()
            );
            println!(
                "shard plan   {} shard classes -> {} shards of {} ({} states each)",
                c.shard_classes,
                c.shards(),
                human_bytes(job.space.shard_bytes() as u128),
                c.shard_states()
            );
        }
    }
    println!("level size   {}", human_bytes(req.level_bytes));
    println!(
        "memory       {} (three live levels, low table {}, transitions {})",
        human_bytes(req.memory_bytes),
        human_bytes(req.table_bytes as u128),
        human_bytes(req.transition_bytes as u128)
    );
    println!(
        "scratch disk {} for the live levels, plus up to {} per earlier level kept",
        human_bytes(req.disk_bytes),
        human_bytes(req.level_bytes)
    );
}
