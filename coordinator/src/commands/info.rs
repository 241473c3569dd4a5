//! `cayley info`: what a run of a puzzle involves.

use crate::cli::InfoArgs;
use crate::planning::{parse_args_puzzle, Machine, Options, Plan, Workers};
use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::job::Job;
use cayley_shared::puzzle::group::{order_of_points, puzzle_group_order};
use cayley_shared::puzzle::symmetry::find_symmetries;
use cayley_shared::puzzle::symmetry::oriented::find_oriented_symmetries;
use cayley_shared::puzzle::{split_options, strip_no_symmetry, tws_point_group, Metric, Puzzle, SpecError};
use cayley_shared::search::resources::{check_memory_here, FreeSpace, LIVE_LEVELS};
use cayley_shared::space::Space;
use cayley_shared::units::human_bytes;
use std::path::Path;

/// Prints the puzzle, its group order, the job's plan and the memory and
/// disk a run needs; a puzzle too large to plan still gets its group.
pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    if let Some(memory) = args.memory {
        check_memory_here(memory)?;
    }
    let spec = args.puzzle.spec();
    let puzzle = match parse_args_puzzle(&args.puzzle) {
        Ok(puzzle) => puzzle,
        Err(SpecError::TooManyPoints { points, max, .. }) => {
            return info_group_only(&spec, args.puzzle.metric, points, max)
        }
        Err(e) => return Err(e.into()),
    };
    let p = &puzzle;
    println!("puzzle       {} ({} metric)", p.spec, p.metric);
    println!("slots        {}", p.slots);
    let first = p.first_point();
    println!(
        "moves        {} (cycles on slots numbered from {})",
        p.moves_text(),
        first
    );
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
                m.perm.cycles_from(first),
                twist,
                guard_label(p, g.piece),
                g.slot + first
            ),
            None => println!("  {:<8} {}{}", m.name, m.perm.cycles_from(first), twist),
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
    print_found_symmetries(p);
    let options = Options {
        workers: Workers::Here {
            count: 1,
            memory: args.memory,
        },
        keep: KeepLevels::All,
        max_depth: args.max_depth,
    };
    let plan = match Plan::for_puzzle(puzzle, &args.puzzle, options, &Machine::here()) {
        Ok(plan) => plan,
        // Without a shard plan asked for, only size stops the planning: the
        // group part above is the answer.
        Err(e) if args.puzzle.shard_pieces.is_none() => {
            println!("search       {:#}", e);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let job = &plan.job;
    if job.puzzle.coding.is_some() {
        match job.reachable_states {
            Some(r) => println!("positions    {} (counted without searching)", r),
            None => println!("positions    not known in advance: the search ends at its first empty level"),
        }
    }
    print_plan(job);
    if let Some(note) = plan.replaced_note() {
        println!("             {}", note);
    }
    let dir = args.checkpoint_dir.clone().unwrap_or_else(|| ".".into());
    print_resources(&plan, &dir, args.fault.free_space());
    Ok(())
}

/// A `.tws` definition too large to build as a puzzle: its generators'
/// names and the group order on its points.
fn info_group_only(spec: &str, metric: Metric, points: usize, max: usize) -> anyhow::Result<()> {
    let (rest, _) = strip_no_symmetry(spec);
    let (base, _, _) = split_options(&rest);
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

/// The group of the slot permutations that map the move set onto itself
/// (found by search): its order and generators, in the moves' notation.
fn print_found_symmetries(p: &Puzzle) {
    if p.reduction_off() {
        println!("symmetries   off (--no-symmetry, which --shard-pieces implies for found ones): none used, none searched for");
        return;
    }
    if p.coding.as_ref().is_some_and(|c| c.has_orientation()) {
        print_oriented_symmetries(p);
        return;
    }
    let found = match find_symmetries(p) {
        Ok(found) => found,
        // Coded and guarded puzzles: their families declare what they have.
        Err(_) if p.coding.is_some() || p.moves.iter().any(|m| m.guard.is_some()) => return,
        Err(why) => {
            println!("symmetries   not searched: {}", why);
            return;
        }
    };
    let declared = if p.symmetries.is_empty() {
        "used when reduction pays"
    } else {
        "the declared or built-in ones are used"
    };
    println!(
        "symmetries   found: a group of order {} (slot permutations mapping the moves onto themselves; {})",
        found.order(),
        declared
    );
    let base: Vec<String> = found.base.iter().map(|&b| (b + p.first_point()).to_string()).collect();
    println!(
        "  base       {} (a generator of level k fixes the first k base points)",
        base.join(" ")
    );
    for (i, (level, g)) in found.generators.iter().enumerate() {
        let name = format!("found{}", i + 1);
        println!("  {:<10} level {:<3} {}", name, level, g.cycles_from(p.first_point()));
    }
}

/// The symmetries of a puzzle with oriented pieces (found by search), or
/// why there are none to show; the `symmetry` line of the plan says
/// whether the job is reduced by them.
fn print_oriented_symmetries(p: &Puzzle) {
    match find_oriented_symmetries(p) {
        Ok(found) if found.order() > 1 => println!(
            "symmetries   found: a group of order {} (maps of slots and twists conjugating the moves onto themselves; used when reduction pays)",
            found.order()
        ),
        Ok(_) => println!("symmetries   none (no map of slots and twists conjugates the moves onto themselves)"),
        Err(why) => println!("symmetries   not searched: {}", why),
    }
}

/// The label of the piece (or class, in a coded puzzle) a guard names.
fn guard_label(p: &Puzzle, piece: usize) -> &str {
    match &p.coding {
        Some(c) => &c.class_labels[piece],
        None => &p.labels[piece],
    }
}

/// The shard plan of a job.
fn print_plan(job: &Job) {
    if let Some(why) = &job.symmetry_note {
        println!("symmetry     the puzzle's symmetries are not used: {}", why);
    }
    match &job.space {
        Space::Blocks(l) => {
            println!(
                "states       {} ({})",
                ranked_text(l.states(), job.reachable_states),
                match (l.even, l.parity) {
                    (_, Some(_)) => "the reachable half only: a state's parity follows where the guarded piece is",
                    (true, None) => "even permutations only: every move is even",
                    (false, None) => "all permutations",
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
        Space::Reduced(r) => {
            let blocks = r.blocks();
            let mut sizes: Vec<usize> = blocks.iter().map(|b| b.len()).collect();
            sizes.sort_unstable();
            let found = r.symmetries.generators.iter().any(|g| g.starts_with("found"));
            println!(
                "symmetry     reduced by a group of {} symmetries ({}{}); blocks of {:?} pieces",
                r.symmetries.order(),
                if found { "the found subgroup generated by " } else { "" },
                r.symmetries.generators.join(", "),
                sizes
            );
            let ideal = job.reachable_states.unwrap_or(job.group_order) as f64 / r.symmetries.order() as f64;
            println!(
                "states       {} stored per level for {} ({:.3}x of states / symmetries)",
                r.states(),
                job.reachable_text(),
                r.states() as f64 / ideal
            );
            println!(
                "shard plan   {} shards (classes of keys, of {} keys) of {} ({} states each)",
                r.shards(),
                r.keys().total(),
                human_bytes(job.space.shard_bytes() as u128),
                r.shard_capacity()
            );
        }
        Space::Oriented(o) => {
            println!(
                "symmetry     reduced by a group of {} symmetries of slots and twists (found)",
                o.order()
            );
            let ideal = job.reachable_states.unwrap_or(job.group_order) as f64 / o.order() as f64;
            println!(
                "states       {} stored per level for {} ({:.3}x of states / symmetries: {} classes of arrangements, {} twist vectors each)",
                o.states(),
                job.reachable_text(),
                o.states() as f64 / ideal,
                o.classes(),
                o.block_states()
            );
            println!(
                "shard plan   {} shards (classes of arrangements of one stabiliser order) of {}",
                o.shards(),
                human_bytes(job.space.shard_bytes() as u128)
            );
        }
        Space::Coded(c) => {
            println!(
                "states       {} ({})",
                ranked_text(c.states(), job.reachable_states),
                c.describe()
            );
            println!(
                "shard plan   {} shard classes -> {} shards of {} ({} states each: {} blocks of {} states)",
                c.shard_classes,
                c.shards(),
                human_bytes(job.space.shard_bytes() as u128),
                c.shard_states(),
                c.shard_blocks(),
                c.low().states()
            );
        }
    }
}

/// `424,673,280 ranked, 256.0× the 1,658,880 reachable`: how many ranks a
/// level has against the states a search finds (when that is known).
fn ranked_text(ranked: u128, reachable: Option<u128>) -> String {
    match reachable {
        Some(r) if r > 0 => format!(
            "{} ranked, {:.1}× the {} reachable",
            grouped(ranked),
            ranked as f64 / r as f64,
            grouped(r)
        ),
        _ => format!("{} ranked, reachable count unknown", grouped(ranked)),
    }
}

/// A number with thousands separated by commas.
fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Memory per worker, files and disk, and whether this machine can run it.
fn print_resources(plan: &Plan, checkpoint: &Path, free: FreeSpace) {
    let (job, req) = (&plan.job, &plan.needs);
    let budget = plan.worker_budget.unwrap_or(0);
    let max_depth = plan.options.max_depth;
    println!(
        "tasks        {} chunk files per level ({} shards each), {} per level raw",
        req.chunks,
        job.chunking.per_chunk,
        human_bytes(req.level_bytes)
    );
    println!(
        "memory       {} per worker here ({}); at least {} (one task: its shards' sources of {} each, plus {} of tables)",
        human_bytes(budget as u128),
        if let Workers::Here { memory: Some(_), .. } = plan.options.workers {
            "--memory"
        } else {
            "60% of the memory available"
        },
        human_bytes(req.min_worker_bytes as u128),
        human_bytes(req.shard_bytes as u128),
        human_bytes(req.table_bytes as u128),
    );
    // What `cayley run` would refuse, in its words.
    for refusal in &plan.refusals {
        println!("             `cayley run` refuses it: {}", refusal);
    }
    let whole_level = req.level_bytes + req.table_bytes as u128;
    println!(
        "             a budget of {} holds a whole level: each shard is then read once per level",
        human_bytes(whole_level)
    );
    let free = free.of(checkpoint);
    for keep in [KeepLevels::All, KeepLevels::Every(3), KeepLevels::Last2] {
        let need = plan.disk_bytes(keep);
        println!(
            "disk         --keep-levels {:<7} about {} of checkpoint{}{}",
            keep.name(),
            human_bytes(need),
            max_depth.map_or(String::new(), |d| format!(" to depth {}", d)),
            match free {
                Some(f) if (f as u128) < need => format!(
                    " - does NOT fit in {} ({} free)",
                    checkpoint.display(),
                    human_bytes(f as u128)
                ),
                Some(f) => format!(" (fits: {} free in {})", human_bytes(f as u128), checkpoint.display()),
                None => String::new(),
            }
        );
    }
    if max_depth.is_none() && !job.directed {
        // What last2 is built to bound, in the unit of Korf's two-bit BFS.
        println!(
            "             last2's peak: the level read and, chunk by chunk, the one before or the one written ({} bits a stored state), plus {} of early levels kept for words ({:.2} bits a stored state in all)",
            LIVE_LEVELS,
            human_bytes(req.disk_early_bytes),
            req.disk_last2_bytes as f64 * 8.0 / job.space.states() as f64
        );
    }
}
