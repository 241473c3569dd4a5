//! `cayley info`: what a run of a puzzle involves.

use crate::cli::{InfoArgs, PuzzleArgs};
use cayley_shared::job::{human_bytes, Job};
use cayley_shared::puzzle::parse_puzzle;

/// Parses the puzzle arguments into a planned job.
pub fn plan_job(args: &PuzzleArgs) -> anyhow::Result<Job> {
    let puzzle = parse_puzzle(&args.puzzle, args.metric)?;
    Job::new(puzzle, args.shard_pieces)
}

pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    let job = plan_job(&args.puzzle)?;
    let p = &job.puzzle;
    let l = &job.layout;
    let req = job.requirements();
    println!("puzzle       {} ({} metric)", p.spec, p.metric);
    println!("slots        {}", p.slots);
    println!("generators   {}", p.moves.len());
    for m in &p.moves {
        println!("  {:<8} {}", m.name, m.perm);
    }
    println!("group order  {}", job.group_order);
    if job.reachable_states != job.group_order {
        println!("reachable    {}", job.reachable_states);
    }
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
