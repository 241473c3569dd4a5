//! Measurements of this machine that `cayley plan` projects a run from:
//! the kernel's neighbour evaluations per second on a real shard of the job,
//! zstd throughput and size on bit arrays of a given density, and the
//! checkpoint disk's write and read throughput.
//!
//! Every figure is measured when asked for (a few seconds in all), never
//! taken from a table, so a projection always says what this machine did.

use crate::kernel::context::SearchContext;
use crate::kernel::task::{ShardInputs, SourceBits};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Neighbour evaluations per second of the kernel, all threads together.
#[derive(Clone, Copy, Debug)]
pub struct KernelRate {
    /// Top-down (sparse frontier): evaluations per second, fixed cost excluded.
    pub top_down: f64,
    /// Bottom-up (dense frontier, every state unseen): evaluations per second,
    /// fixed cost excluded.
    pub bottom_up: f64,
    /// Seconds of fixed work per shard and level (an empty frontier).
    pub per_shard_seconds: f64,
    /// Threads that did the work.
    pub threads: usize,
}

/// Random bit array of `words` words in which each bit is set with
/// probability `density` (exactly for 1/2, otherwise as `k` random positions
/// with repeats, `k` chosen so that the expected density is `density`).
pub fn random_bits(words: usize, density: f64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64(seed);
    if density >= 0.5 {
        return (0..words).map(|_| rng.next()).collect();
    }
    let mut out = vec![0u64; words];
    let bits = words as u64 * 64;
    if bits == 0 {
        return out;
    }
    let draws = (-(1.0 - density).ln() * bits as f64).round() as u64;
    for _ in 0..draws {
        let i = rng.next() % bits;
        out[(i / 64) as usize] |= 1 << (i % 64);
    }
    out
}

/// A small, fast, seeded generator (Steele, Lea and Flood's SplitMix64):
/// enough to scatter bits, and no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Times the kernel of `ctx` on one of its shards with random frontiers: a
/// sparse one (top-down), a dense one (bottom-up) and an empty one (the
/// fixed cost of a shard). Repeats each for at least `min_time`.
pub fn measure_kernel(ctx: &SearchContext, min_time: Duration) -> KernelRate {
    let shards = ctx.job.space.shards();
    let shard = shards / 2;
    let words = ctx.job.space.shard_words();
    let sources: Vec<u64> = ctx.source_shards(shard).into_iter().collect();
    let zeros = vec![0u64; words];
    // Padding bits of a shard stand for no state, and a top-down kernel would
    // map them out of range. Every state of the shard has a parent among
    // "every bit set", so expanding that marks exactly the valid bits (all
    // shards of a job share one layout).
    let ones = vec![!0u64; words];
    let mut valid = vec![0u64; words];
    let all = ShardInputs {
        sources: SourceBits::new(sources.iter().map(|&s| (s, ones.as_slice())).collect()),
        previous: &zeros,
        current: &zeros,
        // One shard at a time: the kernel may use the whole pool.
        split: true,
    };
    ctx.expand(shard, &all, &mut valid, &|_| {});
    let rate = |density: f64| -> (f64, f64) {
        let bits: Vec<Vec<u64>> = sources
            .iter()
            .map(|&s| {
                let mut b = random_bits(words, density, s);
                b.iter_mut().zip(&valid).for_each(|(w, v)| *w &= v);
                b
            })
            .collect();
        let inputs = ShardInputs {
            sources: SourceBits::new(sources.iter().copied().zip(bits.iter().map(Vec::as_slice)).collect()),
            previous: &zeros,
            current: &zeros,
            // One shard at a time: the kernel may use the whole pool.
            split: true,
        };
        let mut out = vec![0u64; words];
        let (mut evaluations, mut rounds) = (0u64, 0u32);
        let start = Instant::now();
        while rounds == 0 || start.elapsed() < min_time {
            evaluations += ctx.expand(shard, &inputs, &mut out, &|_| {}).evaluations;
            rounds += 1;
        }
        let seconds = start.elapsed().as_secs_f64();
        (evaluations as f64 / seconds, seconds / rounds as f64)
    };
    // The fixed cost of a shard (masks, popcounts, tables) is measured on its
    // own and taken out of the two rates, which then count lookups only.
    let (_, per_shard_seconds) = rate(0.0);
    let net =
        |(per_second, seconds): (f64, f64)| per_second * seconds / (seconds - per_shard_seconds).max(seconds / 100.0);
    KernelRate {
        top_down: net(rate(0.02)),
        bottom_up: net(rate(0.5)),
        per_shard_seconds,
        threads: rayon::current_num_threads(),
    }
}

/// zstd on a bit array of one density: compressed size and throughput of
/// one thread.
#[derive(Clone, Copy, Debug)]
pub struct ZstdSample {
    /// Fraction of bits set.
    pub density: f64,
    /// Compressed bytes per raw byte.
    pub ratio: f64,
    /// Raw bytes compressed per second.
    pub compress: f64,
    /// Raw bytes decompressed per second.
    pub decompress: f64,
}

/// Measures zstd at the checkpoint's level on `bytes` of random bits of
/// each density. Random bits are the worst case: real frontiers compress
/// better (loopover:2x6's densest level to 0.36 of its raw size, where
/// random bits of that density stay near 1.0).
pub fn measure_zstd(densities: &[f64], bytes: usize) -> std::io::Result<Vec<ZstdSample>> {
    let words = bytes / 8;
    densities
        .iter()
        .map(|&density| {
            let bits = random_bits(words, density, 7);
            // Little-endian words, as the chunk files hold them.
            let raw: Vec<u8> = bits.iter().flat_map(|w| w.to_le_bytes()).collect();
            let start = Instant::now();
            let mut encoder = zstd::stream::Encoder::new(Vec::new(), crate::files::format::ZSTD_LEVEL)?;
            encoder.write_all(&raw)?;
            let packed = encoder.finish()?;
            let compress = raw.len() as f64 / start.elapsed().as_secs_f64();
            let start = Instant::now();
            let mut unpacked = Vec::with_capacity(raw.len());
            zstd::stream::Decoder::new(packed.as_slice())?.read_to_end(&mut unpacked)?;
            let decompress = raw.len() as f64 / start.elapsed().as_secs_f64();
            if unpacked != raw {
                return Err(std::io::Error::other("zstd round trip changed the data"));
            }
            Ok(ZstdSample {
                density,
                ratio: packed.len() as f64 / raw.len() as f64,
                compress,
                decompress,
            })
        })
        .collect()
}

/// Throughput of a directory's filesystem.
#[derive(Clone, Copy, Debug)]
pub struct DiskRates {
    /// Bytes per second written and fsynced.
    pub write: f64,
    /// Bytes per second read back (from the page cache when the kernel kept
    /// the file, so an upper bound).
    pub read: f64,
}

/// Writes `bytes` to a temporary file in `dir` (fsynced), reads it back,
/// and removes it.
pub fn measure_disk(dir: &Path, bytes: usize) -> std::io::Result<DiskRates> {
    let mut file = tempfile::Builder::new().prefix(".cayley-calibrate-").tempfile_in(dir)?;
    let block = vec![0x5au8; 1 << 20];
    let start = Instant::now();
    for _ in 0..bytes.div_ceil(block.len()) {
        file.write_all(&block)?;
    }
    file.as_file().sync_all()?;
    let write = bytes as f64 / start.elapsed().as_secs_f64();
    let mut reader = std::fs::File::open(file.path())?;
    let mut buf = vec![0u8; 1 << 20];
    let start = Instant::now();
    while reader.read(&mut buf)? > 0 {}
    let read = bytes as f64 / start.elapsed().as_secs_f64();
    Ok(DiskRates { write, read })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_bits_have_about_the_asked_density() {
        let bits = random_bits(4096, 0.25, 1);
        let density = crate::kernel::bits::popcount(&bits) as f64 / (4096.0 * 64.0);
        assert!((density - 0.25).abs() < 0.01, "{}", density);
    }

    #[test]
    fn sparse_bits_compress_far_better_than_dense_ones() {
        let samples = measure_zstd(&[0.001, 0.5], 1 << 20).unwrap();
        assert!(samples[0].ratio < 0.1, "{:?}", samples[0]);
        // Random bits at density 1/2 carry one bit of entropy per bit.
        assert!(samples[1].ratio > 0.95, "{:?}", samples[1]);
    }
}
