//! One walker's jump of several moves into a kept level: the words of the
//! jump tried depth first in move order ([`descend`]), or, for jumps too
//! long to try every word, sampled at random ([`sample_descent`]); and the
//! membership tests both make ([`LevelBits`]) within a [`Budget`].

use super::{neighbour, LevelSource, WalkBudgetSpent, SHARD_LOAD_TESTS};
use crate::job::Job;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Membership tests left to a walk, shared by its threads (unbounded walks
/// never count).
pub(super) struct Budget {
    left: std::sync::atomic::AtomicU64,
    unbounded: bool,
}

impl Budget {
    pub fn new(max_probes: u64) -> Budget {
        Budget {
            left: std::sync::atomic::AtomicU64::new(max_probes),
            unbounded: max_probes == u64::MAX,
        }
    }

    /// Counts `tests` attempts against the walk's budget.
    pub fn charge(&self, tests: u64) -> anyhow::Result<()> {
        use std::sync::atomic::Ordering;
        if self.unbounded {
            return Ok(());
        }
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(tests))
            .map(|_| ())
            .map_err(|_| WalkBudgetSpent.into())
    }
}

/// Bytes of shards a step of the walk keeps at most, all its threads
/// together (less when the job's memory budget is less). A kept early
/// level is sparse, so a shard is mostly held as the positions of its set
/// bits: the 3×5 Loopover's level 8 (12,841 shards of 106 KiB, 0.2 % set)
/// then takes about 100 MB. With 32 whole shards per thread instead, its
/// jumps of four moves under `--keep-levels every:4` decompressed a shard
/// for most of their tests (838 s for 182 walkers on 2 cores).
pub const WALK_CACHE_BYTES: u64 = 1 << 30;

/// What holding a shard costs beside its words or bits.
const ENTRY_BYTES: usize = 96;

/// A shard of the level a step walks into, as the walk tests it.
enum Held {
    /// Its words.
    Words(Vec<u64>),
    /// The positions of its set bits, in order, when they take less room.
    Bits(Vec<u32>),
}

impl Held {
    fn new(words: &[u64]) -> Held {
        let count = crate::space::bits::popcount(words) as usize;
        let positions_fit = words.len() * 64 <= u32::MAX as usize;
        if positions_fit && count * 4 < words.len() * 8 {
            // Exactly as long as counted: a collected list grows by
            // doubling, and held 1.57 GB for the 1 GiB counted on the 4×4.
            let mut bits = Vec::with_capacity(count);
            bits.extend(crate::space::bits::set_bits(words).map(|b| b as u32));
            Held::Bits(bits)
        } else {
            Held::Words(words.to_vec())
        }
    }

    /// Bytes held, with the entry's own (its map slot, `Arc` and list
    /// headers): the 4×4's level 9 is some 260,000 shards of 4 KB a GiB.
    fn bytes(&self) -> usize {
        ENTRY_BYTES
            + match self {
                Held::Words(words) => words.len() * 8,
                Held::Bits(bits) => bits.len() * 4,
            }
    }

    fn test(&self, word: usize, bit: u32) -> bool {
        match self {
            Held::Words(words) => (words[word] >> bit) & 1 == 1,
            Held::Bits(bits) => bits.binary_search(&(word as u32 * 64 + bit)).is_ok(),
        }
    }
}

/// The shards of the level a step walks into that its threads have read,
/// at most `capacity` bytes: past that, a quarter of them (any) go.
pub(super) struct StepShards {
    held: Mutex<(HashMap<u64, Arc<Held>>, usize)>,
    capacity: usize,
}

impl StepShards {
    pub fn new(capacity: u64) -> StepShards {
        StepShards {
            held: Mutex::default(),
            capacity: capacity.min(usize::MAX as u64) as usize,
        }
    }

    fn get(&self, shard: u64) -> Option<Arc<Held>> {
        self.lock().0.get(&shard).cloned()
    }

    /// Keeps `held` as `shard` unless it alone is over the capacity.
    fn insert(&self, shard: u64, held: Arc<Held>) {
        if held.bytes() > self.capacity {
            return;
        }
        let mut guard = self.lock();
        let (shards, bytes) = &mut *guard;
        if let Some(old) = shards.remove(&shard) {
            *bytes -= old.bytes();
        }
        while *bytes + held.bytes() > self.capacity {
            let mut going = shards.len().div_ceil(4);
            shards.retain(|_, h| {
                let keep = going == 0;
                if !keep {
                    going -= 1;
                    *bytes -= h.bytes();
                }
                keep
            });
        }
        *bytes += held.bytes();
        shards.insert(shard, held);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (HashMap<u64, Arc<Held>>, usize)> {
        // Entries go in and out whole: a panic elsewhere leaves none half-made.
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Membership in one level, through the step's shared shards.
pub(super) struct LevelBits<'a> {
    pub job: &'a Job,
    pub source: &'a dyn LevelSource,
    pub level: u32,
    pub shards: &'a StepShards,
    pub budget: &'a Budget,
    /// Where this thread reads a shard (fully overwritten each time).
    pub buffer: Vec<u64>,
}

impl LevelBits<'_> {
    fn contains(&mut self, state: &[u8]) -> anyhow::Result<bool> {
        self.budget.charge(1)?;
        let (shard, word, bit) = self.job.space.locate(state);
        Ok(self.load(shard)?.test(word, bit))
    }

    /// `shard`, from the step's shards or read (outside their lock: two
    /// threads may read the same shard, one copy is kept).
    fn load(&mut self, shard: u64) -> anyhow::Result<Arc<Held>> {
        if let Some(held) = self.shards.get(shard) {
            return Ok(held);
        }
        // A load reads and decompresses a whole shard (megabytes): it
        // costs as many tests as the cheap lookups it stands for, so a
        // bounded walk that jumps between shards ends in seconds, not
        // hours (cyclic-coxeter:14's jump 48 → 26 read ~400 shards a
        // second and would have spent its 2^22 tests in some 3 hours).
        self.budget.charge(SHARD_LOAD_TESTS)?;
        self.buffer.resize(self.job.space.shard_words(), 0);
        self.source.shard_into(self.level, shard, &mut self.buffer)?;
        let held = Arc::new(Held::new(&self.buffer));
        self.shards.insert(shard, held.clone());
        Ok(held)
    }

    /// The least `index` among `candidates` (shard, word, bit, index),
    /// sorted, whose bit is set in the level: each shard looked up once.
    fn first_member(&mut self, candidates: &[(u64, u32, u8, u32)]) -> anyhow::Result<Option<u32>> {
        self.budget.charge(candidates.len() as u64)?;
        let mut first: Option<u32> = None;
        for group in candidates.chunk_by(|a, b| a.0 == b.0) {
            let held = self.load(group[0].0)?;
            let hit = group
                .iter()
                .filter(|c| held.test(c.1 as usize, c.2 as u32))
                .map(|c| c.3)
                .min();
            first = match (first, hit) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(first)
    }
}

/// Leaves of the tree of words of a fixed length from one state, depth
/// first in move order: each with its word and the state it ends in.
/// Undirected: moves towards solved; directed: moves that lead to the state.
struct Leaves<'a> {
    job: &'a Job,
    steps: usize,
    /// The states on the current path, each with its next move to try.
    stack: Vec<(Vec<u8>, usize)>,
    /// The moves from the start to the last state of `stack`.
    path: Vec<usize>,
    /// The last move of the leaf returned last.
    last: usize,
}

impl<'a> Leaves<'a> {
    fn new(job: &'a Job, pos: &[u8], steps: u32) -> Leaves<'a> {
        Leaves {
            job,
            steps: steps as usize,
            stack: vec![(pos.to_vec(), 0)],
            path: Vec::with_capacity(steps as usize),
            last: 0,
        }
    }

    /// The word of the leaf returned last.
    fn word(&self) -> Vec<usize> {
        let mut word = self.path.clone();
        word.push(self.last);
        word
    }
}

impl Iterator for Leaves<'_> {
    /// The state a leaf ends in (its word: [`Leaves::word`]).
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let moves = self.job.puzzle.moves.len();
        loop {
            let (at, next_move) = self.stack.last_mut()?;
            if *next_move == moves {
                self.stack.pop();
                self.path.pop();
                continue;
            }
            let i = *next_move;
            *next_move += 1;
            let Some(next) = neighbour(self.job, at, i) else {
                continue;
            };
            if self.stack.len() == self.steps {
                self.last = i;
                return Some(next);
            }
            self.stack.push((next, 0));
            self.path.push(i);
        }
    }
}

/// Leaves tested together at first; each batch without a hit makes the
/// next four times bigger, up to [`MAX_BATCH`].
const FIRST_BATCH: usize = 64;

/// Leaves tested together at most (a few MB of states and words).
const MAX_BATCH: usize = 1 << 14;

/// The first state of `level` found `steps` moves from `pos`, depth first
/// in move order, with those moves appended to `word`.
///
/// The leaves are tested in batches, each located, sorted by shard and
/// tested one shard at a time, and the batch's first hit in depth-first
/// order taken: the same word a test of one leaf after another finds, but a
/// shard is read once a batch instead of whenever the walk comes back to it
/// (one after another, the 3×5 Loopover's jumps of four moves under
/// `--keep-levels every:4` decompressed a shard for most of their tests).
pub(super) fn descend(
    job: &Job,
    pos: &[u8],
    steps: u32,
    word: &mut Vec<usize>,
    level: &mut LevelBits,
) -> anyhow::Result<Option<Vec<u8>>> {
    let mut leaves = Leaves::new(job, pos, steps);
    let mut size = FIRST_BATCH;
    // Leaves of earlier batches: a batch keeps only where its leaves lie,
    // and the hit's word is found again by counting leaves up to it.
    let mut tested = 0;
    loop {
        let mut located: Vec<(u64, u32, u8, u32)> = leaves
            .by_ref()
            .take(size)
            .enumerate()
            .map(|(k, state)| {
                let (shard, w, bit) = job.space.locate(&state);
                (shard, w as u32, bit as u8, k as u32)
            })
            .collect();
        if located.is_empty() {
            return Ok(None);
        }
        let batch = located.len();
        located.sort_unstable();
        if let Some(k) = level.first_member(&located)? {
            let mut again = Leaves::new(job, pos, steps);
            let end = again
                .nth(tested + k as usize)
                .expect("the same leaves in the same order");
            word.extend(again.word());
            return Ok(Some(end));
        }
        tested += batch;
        size = (size * 4).min(MAX_BATCH);
    }
}

/// xorshift64: the sampled walk needs moves drawn evenly, not a
/// cryptographic or statistically strong generator.
pub(super) struct WordRng(pub u64);

impl WordRng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) % n as u64) as usize
    }
}

/// A jump longer than [`crate::files::checkpoint::MAX_KEEP_STRIDE`]: random
/// words of `steps` moves until one ends in `level`, appended to `word`;
/// the budget of `level` bounds the attempts. Depth first, every word
/// under a first move that does not go down is tried in vain (the 4×4
/// STM's jump 17 → 10 spent 2^22 tests in the subtrees of its first three
/// moves without a hit); each sampled word succeeds with the chance that
/// all its moves go down.
pub(super) fn sample_descent(
    job: &Job,
    pos: &[u8],
    steps: u32,
    word: &mut Vec<usize>,
    level: &mut LevelBits,
    rng: &mut WordRng,
) -> anyhow::Result<Option<Vec<u8>>> {
    let moves = &job.puzzle.moves;
    let mut tried = Vec::with_capacity(steps as usize);
    loop {
        tried.clear();
        let mut state = Some(pos.to_vec());
        for _ in 0..steps {
            let i = rng.below(moves.len());
            tried.push(i);
            state = state.and_then(|s| neighbour(job, &s, i));
        }
        match state {
            Some(end) if level.contains(&end)? => {
                word.extend_from_slice(&tried);
                return Ok(Some(end));
            }
            Some(_) => {}
            // A guarded move that does not apply: counted all the same.
            None => level.budget.charge(1)?,
        }
    }
}

#[cfg(test)]
mod tests;
