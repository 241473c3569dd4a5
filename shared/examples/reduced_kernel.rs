//! Times the reduced kernel alone on random shards at the densities of a
//! chosen level (no files, no coordinator, no cache): the dense-level
//! kernel figures of docs/history.md.
//!
//! `cargo run --release -p cayley-shared --example reduced_kernel -- loopover:4x4 SHARDS SOURCE SEEN [threads]`
//!
//! SOURCE is the share of each source shard's states set (the level `F_d`),
//! SEEN the share of the target's states already seen (`F_{d-1} ∪ F_d`); the
//! 4×4 Loopover's depth 12 reads F_11 at 0.31 with 0.35 seen, depth 11 F_10
//! at 0.036 with 0.04 seen. Shards are run side by side, one per thread, as
//! a worker's batches run them. Prints the direction the kernel took, its
//! evaluations and nanoseconds per evaluation per thread.

use cayley_shared::job::Job;
use cayley_shared::kernel::context::SearchContext;
use cayley_shared::kernel::task::{ShardInputs, SourceBits, TaskStats};
use cayley_shared::puzzle::{parse_puzzle, Metric};
use rayon::prelude::*;
use std::time::Instant;

/// Random bits, each set with probability `p` (xorshift from `seed`).
fn random_bits(words: usize, p: f64, seed: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let threshold = (p * u32::MAX as f64) as u64;
    (0..words)
        .map(|_| {
            (0..64).fold(0u64, |w, b| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                w | (u64::from((x & 0xffff_ffff) < threshold) << b)
            })
        })
        .collect()
}

/// One target shard's inputs: its sources, its seen set and `F_d(B)`.
struct Inputs {
    sources: Vec<(u64, Vec<u64>)>,
    seen: Vec<u64>,
    current: Vec<u64>,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map_or("loopover:4x4", |s| s.as_str());
    let shards: u64 = args.get(2).map_or(Ok(64), |s| s.parse())?;
    let source_share: f64 = args.get(3).map_or(Ok(0.31), |s| s.parse())?;
    let seen_share: f64 = args.get(4).map_or(Ok(0.35), |s| s.parse())?;
    let threads: usize = args.get(5).map_or(Ok(2), |s| s.parse())?;
    let planned = Instant::now();
    let job = Job::new(parse_puzzle(spec, Metric::Mtm)?, None)?;
    let ctx = SearchContext::new(job);
    let words = ctx.job.space.shard_words();
    println!("{}: planned in {:.1} s", spec, planned.elapsed().as_secs_f64());
    // Spread over the space, so that keys with symmetries and without mix.
    let step = (ctx.job.space.shards() / shards).max(1);
    let targets: Vec<u64> = (0..shards).map(|i| i * step).collect();
    let inputs: Vec<Inputs> = targets
        .iter()
        .map(|&t| {
            let sources = ctx
                .source_shards(t)
                .into_iter()
                .map(|s| (s, random_bits(words, source_share, s + 1)))
                .collect();
            let seen = random_bits(words, seen_share, t + 7);
            Inputs {
                sources,
                seen,
                current: vec![0u64; words],
            }
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let started = Instant::now();
    let stats: Vec<TaskStats> = pool.install(|| {
        targets
            .par_iter()
            .zip(&inputs)
            .map(|(&t, i)| {
                let inputs = ShardInputs {
                    sources: SourceBits::new(i.sources.iter().map(|(s, w)| (*s, &w[..])).collect()),
                    previous: &i.seen,
                    current: &i.current,
                    split: false,
                    list_up_to: 0,
                    output_zeroed: true,
                };
                let mut out = vec![0u64; words];
                ctx.expand(t, &inputs, &mut out, &|_| {}).0
            })
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let total = stats.iter().fold(TaskStats::default(), |a, &s| a.plus(s));
    println!(
        "{} shards: {} top-down, {} bottom-up; {} found, {} evaluations in {:.3} s: {:.2} ns per evaluation per thread, {:.2} ms per shard per thread",
        shards,
        total.top_down_blocks,
        total.bottom_up_blocks,
        total.found,
        total.evaluations,
        seconds,
        seconds * threads as f64 * 1e9 / total.evaluations.max(1) as f64,
        seconds * threads as f64 * 1e3 / shards as f64
    );
    Ok(())
}
