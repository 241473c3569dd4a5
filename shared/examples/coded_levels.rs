//! Times the coded kernel alone, level by level, on in-memory bit arrays (no
//! scratch files, no coordinator): the kernel figures of docs/history.md.
//!
//! `cargo run --release -p cayley-shared --example coded_levels -- tws:corners.tws [mtm|stm] [threads]`
//!
//! Prints per level the states found, the kernel's wall seconds and its
//! neighbour evaluations, then the totals and nanoseconds per evaluation
//! per thread (wall time × threads / evaluations).

use cayley_shared::job::Job;
use cayley_shared::kernel::coded::{expand_coded, CodedMoves, CodedTask};
use cayley_shared::kernel::task::SourceBits;
use cayley_shared::puzzle::parse_puzzle;
use cayley_shared::space::Space;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map_or("loopover:3x3 --track 1-4", |s| s.as_str());
    let metric = args
        .get(2)
        .map_or("mtm", |s| s.as_str())
        .parse()
        .map_err(|e: String| anyhow::anyhow!(e))?;
    let threads: usize = args.get(3).map_or(Ok(2), |s| s.parse())?;
    let started = Instant::now();
    let job = Job::new(parse_puzzle(spec, metric)?, None)?;
    let Space::Coded(codec) = &job.space else {
        anyhow::bail!("{} is not a coded puzzle (no identical or oriented pieces)", spec);
    };
    let moves = CodedMoves::new(&job.puzzle);
    println!(
        "{}: {} shards of {} states, {} low states per block, planned in {:.3} s",
        spec,
        codec.shards(),
        codec.shard_states(),
        codec.low().states(),
        started.elapsed().as_secs_f64()
    );
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let shards = codec.shards() as usize;
    let words = codec.shard_states().div_ceil(64) as usize;
    let mut previous = vec![vec![0u64; words]; shards];
    let mut current = vec![vec![0u64; words]; shards];
    let n = codec.slots();
    let (shard, index) = codec.split(codec.rank(&job.puzzle.solved[..n], &job.puzzle.solved[n..]));
    current[shard as usize][(index / 64) as usize] |= 1 << (index % 64);
    let (mut total_seconds, mut total_evaluations, mut total) = (0f64, 0u64, 1u64);
    println!("{:>3} {:>14} {:>9} {:>14}", 0, 1, "", "");
    for depth in 1.. {
        let mut next = vec![vec![0u64; words]; shards];
        let frontier = SourceBits::new(current.iter().enumerate().map(|(s, v)| (s as u64, &v[..])).collect());
        moves.begin_level();
        let level_start = Instant::now();
        let mut found = 0u64;
        let mut evaluations = 0u64;
        for (s, out) in next.iter_mut().enumerate() {
            let task = CodedTask {
                codec,
                moves: &moves,
                shard: s as u64,
                sources: &frontier,
                previous: &previous[s],
                current: &current[s],
            };
            let stats = pool.install(|| expand_coded(&task, out, &|_| {}));
            found += stats.found;
            evaluations += stats.evaluations;
        }
        let seconds = level_start.elapsed().as_secs_f64();
        total_seconds += seconds;
        total_evaluations += evaluations;
        if found == 0 {
            break;
        }
        total += found;
        println!("{:>3} {:>14} {:>9.4} {:>14}", depth, found, seconds, evaluations);
        // Workers pass every earlier level as "seen" when they hold it
        // (their seen cache); so does this loop.
        for (p, c) in previous.iter_mut().zip(&current) {
            p.iter_mut().zip(c).for_each(|(p, c)| *p |= c);
        }
        current = next;
        // As the engine does: no level after the last state is found.
        if job.reachable_states == Some(total as u128) {
            break;
        }
    }
    println!(
        "total {} states, kernel {:.3} s, {} evaluations, {:.2} ns per evaluation per thread ({} threads)",
        total,
        total_seconds,
        total_evaluations,
        total_seconds * threads as f64 * 1e9 / total_evaluations.max(1) as f64,
        threads
    );
    Ok(())
}
