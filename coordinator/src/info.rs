//! `cayley info`: what a run of a puzzle involves.

use crate::cli::{InfoArgs, PuzzleArgs};
use cayley_shared::group::group_order_exact;
use cayley_shared::job::{human_bytes, Job};
use cayley_shared::puzzle::{parse_puzzle, Puzzle};
use cayley_shared::rank::MAX_RANKED_POINTS;
use cayley_shared::space::Space;

/// Parses the puzzle arguments into a planned job.
pub fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    let puzzle = parse_puzzle(&args.spec(), args.metric)?;
    Job::new(puzzle, args.shard_pieces)
}

pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    let puzzle = parse_puzzle(&args.puzzle.spec(), args.puzzle.metric)?;
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
    let (generators, points) = p.point_generators();
    let order = group_order_exact(points, &generators);
    println!("group order  {}", order);
    if let Some(reachable) = p.reachable_states.filter(|&r| Some(r) != order.to_u128()) {
        println!("reachable    {}", reachable);
    }
    let searchable = p.coding.is_some() || p.slots <= MAX_RANKED_POINTS;
    let job = match Job::new(puzzle, args.puzzle.shard_pieces) {
        Ok(job) => job,
        // Too large: the group part above is the answer.
        Err(e) if !searchable => {
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
