//! Times canonicalising keys alone: for the first SHARDS shards of a
//! reduced space, the class of each move's image of the shard's key (what
//! working out a shard's steps and a sparse level's targets costs), and
//! unranking representatives' keys (what each kernel map starts with).
//!
//! `cargo run --release -p cayley-shared --example canonical_keys -- loopover:4x4 [SHARDS]`

use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::space::reduced::keys::Key;
use cayley_shared::space::Space;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map(String::as_str).unwrap_or("loopover:4x4");
    let started = Instant::now();
    let job = Job::new(parse_puzzle(spec, Metric::Mtm)?, None)?;
    println!("job set up in {:.2} s", started.elapsed().as_secs_f64());
    let Space::Reduced(space) = &job.space else {
        anyhow::bail!("{} has no reduced space", spec);
    };
    let keys = space.keys();
    let shards = args
        .get(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(100_000usize)
        .min(keys.classes());
    let moves: Vec<_> = job.puzzle.moves.iter().map(|m| m.perm.clone()).collect();
    let images = |shard: usize| -> Vec<Key> {
        let key = keys.rep(shard);
        moves.iter().map(|m| keys.moved(m, &key)).collect()
    };
    let calls = shards * moves.len();
    let report = |how: &str, started: Instant, sum: u64| {
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{} keys canonicalised {} in {:.3} s: {:.0} ns each (checksum {})",
            calls,
            how,
            seconds,
            seconds * 1e9 / calls as f64,
            sum
        );
    };
    let started = Instant::now();
    let mut sum = 0u64;
    for shard in 0..shards {
        sum += images(shard)
            .iter()
            .map(|image| keys.canonicalize(image).0 as u64)
            .sum::<u64>();
    }
    report("one at a time", started, sum);
    let started = Instant::now();
    let mut sum = 0u64;
    for shard in 0..shards {
        sum += keys
            .canonicalize_each(&images(shard))
            .iter()
            .map(|c| c.0 as u64)
            .sum::<u64>();
    }
    report("a shard's at once", started, sum);
    // Every move's kernel map unranks its source's key (a representative).
    let started = Instant::now();
    let mut sum = 0u64;
    for _ in 0..moves.len() {
        for shard in 0..shards {
            sum = sum.wrapping_add(keys.rep(shard)[0]);
        }
    }
    report_unranked(calls, started, sum);
    Ok(())
}

fn report_unranked(calls: usize, started: Instant, sum: u64) {
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} representatives unranked in {:.3} s: {:.1} ns each (checksum {})",
        calls,
        seconds,
        seconds * 1e9 / calls as f64,
        sum
    );
}
