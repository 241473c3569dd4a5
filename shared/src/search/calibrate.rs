//! Measurements of this machine that `cayley plan` projects a run from:
//! the kernel's CPU time per shard on a real shard of the job at a level's
//! densities,
//! zstd throughput and size on bit arrays of a given density, and the
//! checkpoint disk's write and read throughput.
//!
//! Every figure is measured when asked for (a few seconds in all), never
//! taken from a table, so a projection always says what this machine did.

use crate::kernel::context::SearchContext;
use crate::kernel::task::{ShardInputs, SourceBits};
use crate::space::Space;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What one shard of a level costs the kernel, in CPU time of one core.
#[derive(Clone, Copy, Debug)]
pub struct ShardCost {
    /// CPU seconds per shard, fixed costs (maps, masks, popcounts) included.
    pub cpu_seconds: f64,
    /// Neighbour evaluations per shard.
    pub evaluations: f64,
    /// Whether the kernel went bottom-up (probing unseen states) rather
    /// than top-down (marking the frontier's successors).
    pub bottom_up: bool,
}

/// Random bit array of `words` words in which each bit is set with
/// probability `density` (exactly for 1/2; below it as `k` random positions
/// with repeats, `k` chosen so that the expected density is `density`;
/// above it, the complement of such an array).
pub fn random_bits(words: usize, density: f64, seed: u64) -> Vec<u64> {
    if density > 0.5 {
        // The complement of a sparse array, so that `seen` near 1 (the
        // last levels of a plan) is near 1 and not capped at 1/2.
        return random_bits(words, 1.0 - density, seed)
            .into_iter()
            .map(|w| !w)
            .collect();
    }
    let mut rng = SplitMix64(seed);
    if density == 0.5 {
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

/// The job's kernel, timed on its own shards with random levels of any
/// density: its direction choice and fixed costs included, so a plan needs
/// no constant per puzzle. Every expansion takes a shard not timed before,
/// as in a run, where each shard's maps are built once per level (timing
/// one shard over and over found them cached and the 3×5 Loopover's
/// shards 5× cheaper than its runs).
pub struct KernelProbe<'a> {
    ctx: &'a SearchContext,
    /// The next shard to time.
    next: std::sync::atomic::AtomicU64,
    /// The bits of a shard that stand for states (padding excluded; every
    /// shard of a job has the same layout).
    valid: Vec<u64>,
}

impl<'a> KernelProbe<'a> {
    /// Prepares to time the kernel of `ctx`'s job.
    pub fn new(ctx: &'a SearchContext) -> KernelProbe<'a> {
        let shard = ctx.job.space.shards() / 2;
        KernelProbe {
            ctx,
            next: std::sync::atomic::AtomicU64::new(shard + 1),
            valid: valid_bits(ctx, shard),
        }
    }

    /// The kernel's cost on a shard whose sources each hold states with
    /// probability `fill` (one at least), a fraction `frontier` of the
    /// states of those that do, and whose states were seen with
    /// probability `seen`:
    /// working out its sources and expanding it, timed on one thread (CPU
    /// time, so a busy machine measures what an idle one would), over at
    /// least 3 shards and `min_time`.
    pub fn cost(&self, fill: f64, frontier: f64, seen: f64, min_time: Duration) -> ShardCost {
        let masked = |density: f64, seed: u64| -> Vec<u64> {
            let mut b = random_bits(self.valid.len(), density, seed);
            b.iter_mut().zip(&self.valid).for_each(|(w, v)| *w &= v);
            b
        };
        // A level of its own: what the kernel measured of its directions'
        // costs at other densities does not apply (a run starts each level
        // afresh too).
        self.ctx.begin_level();
        let previous = masked(seen, 0x5eed);
        let current = vec![0u64; self.valid.len()];
        let shards = self.ctx.job.space.shards();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let run = || {
            let mut out = vec![0u64; self.valid.len()];
            let (mut evaluations, mut rounds, mut bottom_up, mut cpu) = (0u64, 0u32, 0u32, 0.0);
            let start = Instant::now();
            while rounds < 3 || start.elapsed() < min_time {
                // Shards far apart, so that they share few maps.
                let shard = self.next.fetch_add(shards / 101 + 1, Ordering::Relaxed) % shards;
                // Once untimed on the shard before, as a run expands
                // shards in order: the tables their maps share (a few
                // hundred on the 3×5 Loopover) are built once for all of
                // them, and timing each shard cold cost the plan 10× what a
                // run pays (3×5 depth 6: 53 s projected, 5.4 s real).
                // Warming the shard itself left only a third of its real
                // cost (its own maps' tables were then all built).
                let before_shard = (shard + shards - 1) % shards;
                let (sources, bits) = self.random_sources(before_shard, fill, frontier, &masked);
                let warm = self.inputs(&sources, &bits, &previous, &current);
                self.ctx.sources_changed();
                self.ctx.expand(before_shard, &warm, &mut out, &|_| {});
                let (sources, bits) = self.random_sources(shard, fill, frontier, &masked);
                let inputs = self.inputs(&sources, &bits, &previous, &current);
                self.ctx.sources_changed();
                let before = thread_cpu_seconds();
                self.ctx.source_shards(shard);
                let wall = Instant::now();
                let (stats, _) = self.ctx.expand(shard, &inputs, &mut out, &|_| {});
                cpu += match (before, thread_cpu_seconds()) {
                    (Some(a), Some(b)) => b - a,
                    _ => wall.elapsed().as_secs_f64(),
                };
                evaluations += stats.evaluations;
                bottom_up += u32::from(stats.bottom_up_blocks > stats.top_down_blocks);
                rounds += 1;
            }
            ShardCost {
                cpu_seconds: cpu / rounds as f64,
                evaluations: evaluations as f64 / rounds as f64,
                bottom_up: 2 * bottom_up > rounds,
            }
        };
        match pool {
            Ok(pool) => pool.install(run),
            Err(_) => run(),
        }
    }
}

impl KernelProbe<'_> {
    /// `shard`'s sources, each holding states with probability `fill`
    /// (the first one always) at density `frontier`.
    fn random_sources(
        &self,
        shard: u64,
        fill: f64,
        frontier: f64,
        masked: &dyn Fn(f64, u64) -> Vec<u64>,
    ) -> (Vec<u64>, Vec<Vec<u64>>) {
        let sources = self.ctx.source_shards(shard);
        let mut coins = SplitMix64(shard);
        let bits = sources
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let holds = i == 0 || (coins.next() >> 11) as f64 / (1u64 << 53) as f64 <= fill;
                masked(if holds { frontier } else { 0.0 }, s)
            })
            .collect();
        (sources, bits)
    }

    /// The kernel's inputs from [`Self::random_sources`].
    fn inputs<'b>(
        &self,
        sources: &[u64],
        bits: &'b [Vec<u64>],
        previous: &'b [u64],
        current: &'b [u64],
    ) -> ShardInputs<'b> {
        ShardInputs {
            sources: SourceBits::new(sources.iter().copied().zip(bits.iter().map(Vec::as_slice)).collect()),
            previous,
            current,
            // Timed in this thread's CPU time: the kernel must not hand
            // work to others (a worker's batches run shards side by side,
            // one per thread, too).
            split: false,
            list_up_to: 0,
            output_zeroed: false,
        }
    }
}

/// The bits of `shard` (of any shard: all have one layout) that stand for
/// states. A reduced space says so per row. Other spaces: every state has
/// a parent among "every bit set", so expanding that marks exactly the
/// valid bits (the reduced kernel cannot be asked: it maps each set bit
/// through a row table that has no entry for padding bits, and the 3×5
/// Loopover's rows of 7,200 states in 113 words made `cayley plan` panic).
fn valid_bits(ctx: &SearchContext, shard: u64) -> Vec<u64> {
    let words = ctx.job.space.shard_words();
    if let Space::Reduced(space) = &ctx.job.space {
        let fiber = space.fiber();
        return (0..words).map(|w| fiber.valid_mask(w % fiber.row_words())).collect();
    }
    if let Space::Oriented(space) = &ctx.job.space {
        // Every valid twist vector of each class's block; none in padding.
        let bw = space.block_words();
        let mut valid = vec![0u64; words];
        for position in 0..space.shard_classes(shard).len() {
            valid[position * bw..(position + 1) * bw].copy_from_slice(space.valid());
        }
        return valid;
    }
    let sources = ctx.source_shards(shard);
    let zeros = vec![0u64; words];
    let ones = vec![!0u64; words];
    let mut valid = vec![0u64; words];
    let all = ShardInputs {
        sources: SourceBits::new(sources.iter().map(|&s| (s, ones.as_slice())).collect()),
        previous: &zeros,
        current: &zeros,
        // One shard at a time: the kernel may use the whole pool.
        split: true,
        list_up_to: 0,
        output_zeroed: false,
    };
    ctx.sources_changed();
    ctx.expand(shard, &all, &mut valid, &|_| {});
    valid
}

/// CPU seconds this thread has run (`CLOCK_THREAD_CPUTIME_ID`), where the
/// system says. `/proc/thread-self/schedstat`, read before, advances only
/// at scheduler ticks: kernels shorter than a tick measured 0 s, and the
/// 4×4 Loopover's bottom-up depths 12 and 13 were projected to cost no
/// compute at all (764 s and 391 s in the real run).
fn thread_cpu_seconds() -> Option<f64> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only the timespec it is given, which
    // lives on this stack frame for the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| now.tv_sec as f64 + now.tv_nsec as f64 / 1e9)
}

/// A bit array of one density as the chunk files store it, and zstd's
/// throughput on it on one thread.
#[derive(Clone, Copy, Debug)]
pub struct ZstdSample {
    /// Fraction of bits set.
    pub density: f64,
    /// Stored bytes per raw byte, as the chunk writer stores the array
    /// (a list of its bits when sparse, zstd frames, or raw words).
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
            let stored = crate::files::format::PreparedShard::new(&bits)?.stored_bytes();
            Ok(ZstdSample {
                density,
                ratio: stored as f64 / raw.len() as f64,
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

/// A temporary file in the directory whose filesystem is to be measured,
/// removed when dropped. Made before anything is measured, so that a
/// directory that cannot be written is refused at once (`cayley plan
/// --checkpoint-dir /proc` failed only after seconds of calibration).
pub struct DiskProbe(tempfile::NamedTempFile);

impl DiskProbe {
    /// The probe's file in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<DiskProbe> {
        Ok(DiskProbe(
            tempfile::Builder::new().prefix(".cayley-calibrate-").tempfile_in(dir)?,
        ))
    }

    /// Writes `bytes` to the file (fsynced), reads them back, and removes it.
    pub fn measure(self, bytes: usize) -> std::io::Result<DiskRates> {
        measure_disk(self.0, bytes)
    }
}

fn measure_disk(mut file: tempfile::NamedTempFile, bytes: usize) -> std::io::Result<DiskRates> {
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

    /// A reduced space whose rows end in padding bits (the 2×5 Loopover's
    /// rows end within a word) is timed without marking them (`cayley plan
    /// loopover:2x5` panicked), and its valid bits are as many as its
    /// shard's states.
    #[test]
    fn the_probe_times_a_space_with_padded_rows() {
        let puzzle = crate::puzzle::parse_puzzle("loopover:2x5", crate::puzzle::Metric::Mtm).unwrap();
        let ctx = SearchContext::new(crate::job::Job::new(puzzle, None).unwrap());
        let Space::Reduced(space) = &ctx.job.space else {
            panic!("loopover:3x4 is reduced");
        };
        assert_ne!(space.fiber().row_states() % 64, 0, "rows with padding");
        let probe = KernelProbe::new(&ctx);
        let valid = crate::space::bits::popcount(&probe.valid);
        assert_eq!(valid, space.fiber().states());
        let cost = probe.cost(1.0, 1.0, 0.0, Duration::ZERO);
        assert!(cost.evaluations > 0.0 && cost.cpu_seconds > 0.0, "{:?}", cost);
    }

    #[test]
    fn random_bits_have_about_the_asked_density() {
        for asked in [0.001, 0.25, 0.5, 0.9, 0.999] {
            let bits = random_bits(4096, asked, 1);
            let density = crate::space::bits::popcount(&bits) as f64 / (4096.0 * 64.0);
            assert!((density - asked).abs() < 0.01, "{} for {}", density, asked);
        }
    }

    #[test]
    fn sparse_bits_compress_far_better_than_dense_ones() {
        let samples = measure_zstd(&[0.001, 0.5], 1 << 20).unwrap();
        assert!(samples[0].ratio < 0.1, "{:?}", samples[0]);
        // Random bits at density 1/2 carry one bit of entropy per bit.
        assert!(samples[1].ratio > 0.95, "{:?}", samples[1]);
    }
}
