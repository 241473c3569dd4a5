//! `cayley info`: what a run of a puzzle involves.

use crate::cli::{InfoArgs, PuzzleArgs};
use cayley_shared::group::group_order_exact;
use cayley_shared::job::{human_bytes, Job};
use cayley_shared::puzzle::parse_puzzle;
use cayley_shared::rank::MAX_RANKED_POINTS;

/// Parses the puzzle arguments into a planned job.
pub fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    let puzzle = parse_puzzle(&args.puzzle, args.metric)?;
    Job::new(puzzle, args.shard_pieces)
}

pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    let puzzle = parse_puzzle(&args.puzzle.puzzle, args.puzzle.metric)?;
    let p = &puzzle;
    println!("puzzle       {} ({} metric)", p.spec, p.metric);
    println!("slots        {}", p.slots);
    println!("generators   {}", p.moves.len());
    for m in &p.moves {
        match m.guard {
            Some(g) => println!(
                "  {:<8} {}  when {} is in slot {}",
                m.name,
                m.perm,
                p.labels[g.piece],
                g.slot + 1
            ),
            None => println!("  {:<8} {}", m.name, m.perm),
        }
    }
    // Exact at any size, so puzzles too large to search still get their order.
    let order = group_order_exact(p.slots, &p.generator_perms());
    println!("group order  {}", order);
    if let Some(reachable) = p.reachable_states.filter(|&r| Some(r) != order.to_u128()) {
        println!("reachable    {}", reachable);
    }
    if p.unsupported.as_ref().is_some_and(|u| !u.states_are_group) {
        println!("positions    fewer than the group order (identical pieces); not computed");
    }
    let searchable = p.unsupported.is_none() && p.slots <= MAX_RANKED_POINTS;
    let job = match Job::new(puzzle, args.puzzle.shard_pieces) {
        Ok(job) => job,
        // Too large or not supported: the group part above is the answer.
        Err(e) if !searchable => {
            println!("search       {:#}", e);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let l = &job.layout;
    let req = job.requirements();
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
    Ok(())
}
