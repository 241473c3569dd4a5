//! The memory roofline of the kernels: random single-bit ORs (top-down
//! marks) and random bit tests (bottom-up probes) per second into arrays of
//! a chosen size, at 1…N threads. A kernel's evaluations per thread-second
//! (`evaluations` over `compute_seconds` of a level in `result.json`) as a
//! fraction of the rate at the size its shards' inputs take is how close
//! it runs to what the memory allows (docs/history.md, "Every core at work (issue 32)").
//!
//! `cargo run --release -p cayley-shared --example roofline -- [SIZE ...] [--threads 1,2,4] [--seconds S]`
//!
//! SIZE is bytes per thread (`40K`, `1M`, `8G`; default: 48K, 1M, 32M,
//! 1G): each thread marks into an array of its own and tests bits of a
//! shared one of that size, as a worker's threads mark into their own
//! output shards and probe shared source shards. The random indices are
//! independent, as the kernels' are within a word of the frontier, so the
//! memory system overlaps the misses.

use cayley_shared::units::{human_bytes, parse_size};
use std::time::Instant;

fn main() {
    let mut sizes = Vec::new();
    let mut threads = vec![1, 2];
    let mut seconds = 1.0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => {
                threads = args
                    .next()
                    .expect("--threads LIST")
                    .split(',')
                    .map(|t| t.parse().expect("a thread count"))
                    .collect()
            }
            "--seconds" => seconds = args.next().expect("--seconds S").parse().expect("seconds"),
            size => sizes.push(parse_size(size).expect("a size such as 40K or 1G")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![48 << 10, 1 << 20, 32 << 20, 1 << 30];
    }
    println!("bytes per thread, threads: random bit-ORs and bit-tests per second, all threads (per thread)");
    for &bytes in &sizes {
        for &n in &threads {
            let (ors, tests) = rates(bytes, n, seconds);
            println!(
                "{:>10}  {:>2} threads: OR {:>7.1} M/s ({:>6.1} per thread)  test {:>7.1} M/s ({:>6.1} per thread)",
                human_bytes(bytes as u128),
                n,
                ors / 1e6,
                ors / 1e6 / n as f64,
                tests / 1e6,
                tests / 1e6 / n as f64
            );
        }
    }
}

/// Random bit-ORs and bit-tests per second over `threads` threads with
/// arrays of `bytes` each, each kind timed for about `seconds`.
fn rates(bytes: u64, threads: usize, seconds: f64) -> (f64, f64) {
    let words = (bytes / 8).max(1) as usize;
    let shared: Vec<u64> = (0..words as u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    // Written once before timing: fresh pages would be faulted in by the
    // first marks (a 1 GiB array measured page faults, not memory).
    let mut own: Vec<Vec<u64>> = (0..threads).map(|t| vec![t as u64 | 2; words]).collect();
    // Calibrated once: the operations that take about `seconds`.
    let ops = {
        let started = Instant::now();
        let mut n = 1u64 << 16;
        let mut x = 1u64;
        while started.elapsed().as_secs_f64() < seconds / 20.0 {
            x = x.wrapping_add(mark(&mut own[0], n, x));
            n *= 2;
        }
        std::hint::black_box(x);
        n
    };
    let time = |f: &(dyn Fn(usize, &mut Vec<u64>) -> u64 + Sync), own: &mut [Vec<u64>]| {
        let started = Instant::now();
        std::thread::scope(|s| {
            for (t, mine) in own.iter_mut().enumerate() {
                s.spawn(move || std::hint::black_box(f(t, mine)));
            }
        });
        (ops * threads as u64) as f64 / started.elapsed().as_secs_f64()
    };
    let ors = time(&|t, mine| mark(mine, ops, t as u64 + 1), &mut own);
    let tests = time(&|t, _| probe(&shared, ops, t as u64 + 1), &mut own);
    (ors, tests)
}

/// A random bit index below `bits` (xorshift64, then a multiply-shift to
/// the range: no division in the timed loop).
#[inline]
fn next(x: &mut u64, bits: u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    ((u128::from(*x) * u128::from(bits)) >> 64) as u64
}

/// `ops` random single-bit ORs into `words`.
fn mark(words: &mut [u64], ops: u64, seed: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    let bits = words.len() as u64 * 64;
    for _ in 0..ops {
        let at = next(&mut x, bits);
        words[(at / 64) as usize] |= 1 << (at % 64);
    }
    x
}

/// `ops` random single-bit tests of `words`; returns the bits found set.
fn probe(words: &[u64], ops: u64, seed: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    let bits = words.len() as u64 * 64;
    let mut hits = 0;
    for _ in 0..ops {
        let at = next(&mut x, bits);
        hits += (words[(at / 64) as usize] >> (at % 64)) & 1;
    }
    hits
}
