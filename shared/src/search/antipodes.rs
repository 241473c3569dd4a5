//! Antipodes: states at the maximum depth, each with a shortest solving word
//! found by walking back through the levels (from depth `d`, some move leads
//! to a state of depth `d − 1`; with only every K-th level kept, some K moves
//! lead to depth `d − K`).

use crate::files::checkpoint::MAX_KEEP_STRIDE;
use crate::job::Job;
use crate::space::bits::set_bits;
use anyhow::Context;
pub use descent::WALK_CACHE_BYTES;
use descent::{descend, sample_descent, Budget, LevelBits, StepShards, WordRng};

mod descent;

/// A state at maximum depth with a shortest solving word.
#[derive(Clone, Debug)]
pub struct Antipode {
    /// Position notation `p[piece] = slot`, or coded notation.
    pub state: Vec<u8>,
    /// Move indices that take the state back to solved, in order (directed
    /// graphs: that build it from solved); empty when the earlier levels
    /// were not kept.
    pub solution: Vec<usize>,
}

/// Where the walk reads level bits from; shared by the walk's threads.
pub trait LevelSource: Sync {
    /// The words of `(level, shard)`.
    fn shard(&self, level: u32, shard: u64) -> anyhow::Result<Vec<u64>>;

    /// [`Self::shard`] into `words` (fully overwritten): a source that can
    /// read into a buffer says so here, and a walker thread reading
    /// thousands of shards then neither allocates nor zeroes one for each
    /// (zeroing was a quarter of the 3×5 Loopover's walk under
    /// `--keep-levels every:4`).
    fn shard_into(&self, level: u32, shard: u64, words: &mut [u64]) -> anyhow::Result<()> {
        words.copy_from_slice(&self.shard(level, shard)?);
        Ok(())
    }

    /// Words `at` (ascending word numbers) of `(level, shard)`. A source
    /// that can read part of a shard says so here: a grouped step of the
    /// walk tests a few bits of each shard it reads.
    fn words(&self, level: u32, shard: u64, at: &[u32]) -> anyhow::Result<Vec<u64>> {
        Ok(words_at(&self.shard(level, shard)?, at))
    }

    /// The set bits of `(level, shard)` when known without reading it (a
    /// chunk file's index has them); `None` when not.
    fn popcount(&self, _level: u32, _shard: u64) -> anyhow::Result<Option<u64>> {
        Ok(None)
    }
}

/// The words `at` of a whole shard's `words`.
pub fn words_at(words: &[u64], at: &[u32]) -> Vec<u64> {
    at.iter().map(|&w| words[w as usize]).collect()
}

/// Levels of at most this many shards (and [`WALK_GROUPED_BYTES`]) are
/// walked depth first even one move at a time.
const WALK_SHARDS: usize = 32;

/// Raw bytes of a level above which a one-move step is grouped by shard
/// even when the level has few shards (see [`find_antipodes`]).
const WALK_GROUPED_BYTES: u64 = 16 << 20;

/// The walk gave up: it tested as many states for membership in a kept
/// level as it was allowed to ([`find_antipodes`]'s `max_probes`).
#[derive(Debug, thiserror::Error)]
#[error("the antipode walk used up its membership tests before reaching solved")]
pub struct WalkBudgetSpent;

/// Attempts a walk with a jump longer than [`MAX_KEEP_STRIDE`] may make in
/// all (2^22, a few minutes of shard reads at most). Such a jump samples
/// random words (`sample_descent`) instead of trying all `moves^K`; the
/// 4×4 Loopover STM under `last2` (17 → 10, seven moves of 16) found its
/// three words in 4 s.
pub const LONG_WALK_PROBES: u64 = 1 << 22;

/// Membership tests one shard load of a bounded walk counts for: the
/// budget of [`LONG_WALK_PROBES`] then allows 1,024 loads, about 10 s of
/// reading 5 MiB shards, however scattered the sampled words land.
pub const SHARD_LOAD_TESTS: u64 = 1 << 12;

/// Picks the first `limit` states of level `depth` and finds a shortest
/// solving word for each through the earlier levels that are `kept` (level
/// 0 always is), testing at most `max_probes` states for membership in a
/// kept level (else [`WalkBudgetSpent`]). From depth `d` the walk goes to the nearest kept level
/// `t < d` in exactly `d − t` moves: any such path is shortest, since no
/// move changes the depth by more than one. With every level kept, that is
/// one move at a time.
///
/// Walkers go side by side on the current rayon pool. On a level of many
/// or big shards, a one-move step tests the walkers' neighbours together,
/// grouped by the shard they fall in, so each shard is read once per round
/// whatever the number of walkers (the 4×4 Loopover's 124 walkers had read
/// a shard for most of their neighbours, one walker after another: 178 s
/// on two cores). Otherwise, and for longer steps, each walker's words are
/// searched depth first, a run of neighbouring walkers per thread, every
/// thread through the step's shards, at most `cache_bytes` of them (see
/// [`WALK_CACHE_BYTES`]).
pub fn find_antipodes(
    job: &Job,
    source: &dyn LevelSource,
    depth: u32,
    limit: usize,
    kept: &(dyn Fn(u32) -> bool + Sync),
    max_probes: u64,
    cache_bytes: u64,
) -> anyhow::Result<Vec<Antipode>> {
    let budget = Budget::new(max_probes);
    let states = first_states(job, source, depth, limit)?;
    let mut walkers: Vec<Walker> = states
        .into_iter()
        .enumerate()
        .map(|(i, state)| Walker {
            start: state.clone(),
            at: state,
            word: Vec::new(),
            // Fixed seeds: the same checkpoint lists the same words.
            rng: WordRng(0x5eed_a171_90de ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        })
        .collect();
    let mut d = depth;
    while d > 0 {
        let target = (0..d).rev().find(|&l| l == 0 || kept(l)).unwrap_or(0);
        let stride = d - target;
        // One move, on a level of many or big shards: grouped by shard,
        // each shard read once a round for all walkers. Depth first, the
        // walkers' runs (four per thread) each read the shards their
        // neighbours fall in: on the 2×6 unreduced (12 shards of 5 MiB a
        // level) every shard of every level once per run, 1.2–1.5 s of a
        // 7.8 s job at two threads (0.6–0.9 s grouped). On a small level
        // those reads cost less than sorting the candidates
        // (`transpositions:9 --no-symmetry`'s 40,320 walkers: 0.5 s depth
        // first, 0.8 s grouped).
        let level_bytes = job.space.shards() * job.space.shard_bytes();
        if stride == 1 && (job.space.shards() > WALK_SHARDS as u64 || level_bytes > WALK_GROUPED_BYTES) {
            step_grouped(job, source, target, &mut walkers, &budget)?;
        } else {
            step_each(job, source, target, stride, &mut walkers, &budget, cache_bytes)?;
        }
        d = target;
    }
    anyhow::ensure!(
        walkers.iter().all(|w| job.puzzle.is_solved(&w.at)),
        "walking back did not end at the solved state; the level files are inconsistent"
    );
    Ok(walkers
        .into_iter()
        .map(|mut w| {
            if job.directed {
                // Recorded from the state back; the word builds it from solved.
                w.word.reverse();
            }
            Antipode {
                state: w.start,
                solution: w.word,
            }
        })
        .collect())
}

/// One antipode on its way back to solved.
struct Walker {
    start: Vec<u8>,
    at: Vec<u8>,
    word: Vec<usize>,
    rng: WordRng,
}

/// The neighbour of `pos` under move `i` towards solved (directed graphs:
/// the state move `i` leads from), if the move applies.
fn neighbour(job: &Job, pos: &[u8], i: usize) -> Option<Vec<u8>> {
    let m = &job.puzzle.moves[i];
    if job.directed {
        job.puzzle.apply_backwards(m, pos)
    } else {
        job.puzzle.apply(m, pos)
    }
}

/// A walker's neighbour located in its level: (shard, word, bit, walker,
/// move), 24 bytes; a step holds moves times the walkers at most.
type Candidate = (u64, u32, u8, u32, u16);

/// Moves whose neighbours a round of [`step_grouped`] tests per walker:
/// most walkers find a move down among their first few, and testing every
/// move of every walker at once had made `transpositions:10
/// --no-symmetry`'s walk (100,000 walkers, 45 moves) three times slower.
const MOVES_PER_ROUND: usize = 4;

/// One move for every walker into `level`: the first move, in move order,
/// whose neighbour is in the level (as a depth-first search would pick).
/// In rounds of [`MOVES_PER_ROUND`] moves, the walkers still looking have
/// those moves' neighbours located, sorted by shard, and each shard read
/// once and tested for all of them, shards side by side.
fn step_grouped(
    job: &Job,
    source: &dyn LevelSource,
    level: u32,
    walkers: &mut [Walker],
    budget: &Budget,
) -> anyhow::Result<()> {
    use rayon::prelude::*;
    let moves = job.puzzle.moves.len();
    let mut first = vec![u16::MAX; walkers.len()];
    for round in (0..moves).step_by(MOVES_PER_ROUND) {
        let tried = round..(round + MOVES_PER_ROUND).min(moves);
        let mut candidates: Vec<Candidate> = walkers
            .par_iter()
            .zip(&first)
            .enumerate()
            .filter(|(_, (_, &found))| found == u16::MAX)
            .flat_map_iter(|(w, (walker, _))| {
                tried.clone().filter_map(move |i| {
                    let next = neighbour(job, &walker.at, i)?;
                    let (shard, word, bit) = job.space.locate(&next);
                    Some((shard, word as u32, bit as u8, w as u32, i as u16))
                })
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        budget.charge(candidates.len() as u64)?;
        candidates.par_sort_unstable();
        let groups: Vec<&[Candidate]> = candidates.chunk_by(|a, b| a.0 == b.0).collect();
        budget.charge(groups.len() as u64 * SHARD_LOAD_TESTS)?;
        let hits: Vec<Vec<(u32, u16)>> = groups
            .par_iter()
            .map(|group| {
                // Sorted: each word once, in order.
                let mut at: Vec<u32> = group.iter().map(|c| c.1).collect();
                at.dedup();
                let words = source.words(level, group[0].0, &at)?;
                Ok(group
                    .iter()
                    .filter(|c| {
                        let i = at.partition_point(|&w| w < c.1);
                        (words[i] >> c.2) & 1 == 1
                    })
                    .map(|c| (c.3, c.4))
                    .collect())
            })
            .collect::<anyhow::Result<_>>()?;
        for (w, i) in hits.into_iter().flatten() {
            first[w as usize] = first[w as usize].min(i);
        }
        if first.iter().all(|&i| i != u16::MAX) {
            break;
        }
    }
    walkers.par_iter_mut().zip(first).try_for_each(|(walker, i)| {
        anyhow::ensure!(
            i != u16::MAX,
            "no move from depth {} reaches depth {} while walking back; the level files are inconsistent",
            level + 1,
            level
        );
        walker.at = neighbour(job, &walker.at, i as usize).expect("it applied when located");
        walker.word.push(i as usize);
        Ok(())
    })
}

/// A step of `stride` moves into `level` for every walker: depth first in
/// move order when `moves^stride` words are few enough to try
/// ([`MAX_KEEP_STRIDE`]), else random words until one lands. Runs of
/// neighbouring walkers (nearby states) go to the threads, which all read
/// through the step's shared shards (at most `cache_bytes`).
fn step_each(
    job: &Job,
    source: &dyn LevelSource,
    level: u32,
    stride: u32,
    walkers: &mut [Walker],
    budget: &Budget,
    cache_bytes: u64,
) -> anyhow::Result<()> {
    use rayon::prelude::*;
    let run = walkers.len().div_ceil(4 * rayon::current_num_threads()).max(1);
    let shards = StepShards::new(cache_bytes);
    walkers.par_chunks_mut(run).try_for_each(|run| {
        let mut bits = LevelBits {
            job,
            source,
            level,
            shards: &shards,
            budget,
            buffer: Vec::new(),
        };
        for walker in run {
            let mut word = Vec::new();
            let end = if stride > MAX_KEEP_STRIDE {
                sample_descent(job, &walker.at, stride, &mut word, &mut bits, &mut walker.rng)?
            } else {
                descend(job, &walker.at, stride, &mut word, &mut bits)?
            };
            let end = end.with_context(|| {
                format!(
                    "no {} move(s) from depth {} reach depth {} while walking back; the level files are inconsistent",
                    stride,
                    level + stride,
                    level
                )
            })?;
            walker.word.extend(word);
            walker.at = end;
        }
        Ok(())
    })
}

/// Whether the walk from `depth` to solved through the `kept` levels (level
/// 0 always is) jumps at most [`MAX_KEEP_STRIDE`] moves at a time: a jump
/// of `s` moves tries up to `moves^s` words per state, so longer ones are
/// not attempted and the antipodes come without words.
pub fn walk_fits(depth: u32, kept: &dyn Fn(u32) -> bool) -> bool {
    let mut d = depth;
    while d > 0 {
        let target = (0..d).rev().find(|&l| l == 0 || kept(l)).unwrap_or(0);
        if d - target > MAX_KEEP_STRIDE {
            return false;
        }
        d = target;
    }
    true
}

/// The first `limit` states of level `depth` in rank order, one per class
/// of symmetric states: a reduced space stores a class once per member of
/// its key's stabiliser (3×3 Loopover's depth 8: 151 stored bits for 78
/// classes), and those members all sit in the representative key's shard.
/// Shards the source knows empty are not read: the 4×4 Loopover's depth 3
/// (6,264 states in 499,961 shards) read every shard for its 10 states, 1.4
/// s of a `--max-depth 3` run of 2.4 s.
pub fn first_states(job: &Job, source: &dyn LevelSource, depth: u32, limit: usize) -> anyhow::Result<Vec<Vec<u8>>> {
    let space = &job.space;
    let mut states = Vec::new();
    for shard in 0..space.shards() {
        if states.len() >= limit {
            break;
        }
        if source.popcount(depth, shard)? == Some(0) {
            continue;
        }
        let words = source.shard(depth, shard)?;
        let mut classes = std::collections::HashSet::new();
        let symmetric = space.stores_classes_more_than_once(shard);
        for bit in set_bits(&words) {
            if states.len() >= limit {
                break;
            }
            let state = space.state_at(shard, bit);
            // The least member names the class.
            if symmetric && !classes.insert(space.least_of_class(&state)) {
                continue;
            }
            states.push(state);
        }
    }
    Ok(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level source whose deepest level holds the last state of the
    /// space and whose other levels are empty, counting the loads the walk
    /// makes (those of the other levels).
    struct OneStateSource {
        words: usize,
        depth: u32,
        last_shard: u64,
        loads: std::sync::atomic::AtomicU64,
    }

    impl LevelSource for OneStateSource {
        fn shard(&self, level: u32, shard: u64) -> anyhow::Result<Vec<u64>> {
            let mut words = vec![0u64; self.words];
            if level == self.depth {
                if shard == self.last_shard {
                    words[self.words - 1] = 1 << 63;
                }
            } else {
                self.loads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(words)
        }
    }

    /// [`OneStateSource`] with an index: it knows every shard's count, and
    /// counts every read.
    struct IndexedSource(OneStateSource);

    impl LevelSource for IndexedSource {
        fn shard(&self, level: u32, shard: u64) -> anyhow::Result<Vec<u64>> {
            self.0.loads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0.shard(level, shard)
        }

        fn popcount(&self, level: u32, shard: u64) -> anyhow::Result<Option<u64>> {
            Ok(Some((level == self.0.depth && shard == self.0.last_shard) as u64))
        }
    }

    #[test]
    fn the_first_states_skip_shards_the_index_shows_empty() {
        let puzzle = crate::puzzle::parse_puzzle("pancake:10", crate::puzzle::Metric::Mtm).unwrap();
        let job = Job::new(puzzle, Some(2)).unwrap();
        let last = job.space.shards() - 1;
        let one = || OneStateSource {
            words: job.space.shard_words(),
            depth: 10,
            last_shard: last,
            loads: Default::default(),
        };
        let expected = vec![job.space.state_at(last, job.space.shard_words() * 64 - 1)];
        // Without an index every shard is read; with one, only the last.
        assert_eq!(first_states(&job, &one(), 10, 5).unwrap(), expected);
        let indexed = IndexedSource(one());
        assert_eq!(first_states(&job, &indexed, 10, 5).unwrap(), expected);
        assert_eq!(indexed.0.loads.into_inner(), 1);
    }

    #[test]
    fn a_bounded_walk_stops_after_a_bounded_number_of_shard_loads() {
        // 10! states in 90 shards (pancakes have no symmetries to reduce
        // by from N = 5 on); a jump of 10 moves into an empty level
        // never succeeds, so the walk spends its whole budget. Counted in
        // tests alone it would load a shard for most of its 2^22 tests.
        let puzzle = crate::puzzle::parse_puzzle("pancake:10", crate::puzzle::Metric::Mtm).unwrap();
        let job = Job::new(puzzle, Some(2)).unwrap();
        assert_eq!(job.space.shards(), 90);
        let source = OneStateSource {
            words: job.space.shard_words(),
            depth: 10,
            last_shard: job.space.shards() - 1,
            loads: Default::default(),
        };
        let kept = |l: u32| l == 0 || l == 10;
        let err = find_antipodes(&job, &source, 10, 1, &kept, LONG_WALK_PROBES, WALK_CACHE_BYTES).unwrap_err();
        assert!(err.is::<WalkBudgetSpent>(), "{:#}", err);
        let loads = source.loads.into_inner();
        assert!(loads > 0);
        assert!(loads <= LONG_WALK_PROBES / SHARD_LOAD_TESTS, "{} shard loads", loads);
    }

    #[test]
    fn a_walk_fits_when_no_jump_is_longer_than_the_stride() {
        assert!(walk_fits(14, &|_| true));
        assert!(walk_fits(0, &|_| false));
        assert!(walk_fits(MAX_KEEP_STRIDE, &|_| false));
        assert!(!walk_fits(MAX_KEEP_STRIDE + 1, &|_| false));
        // The 4×4 under last2: 14 and 13 live, 1..=9 early; 13 → 9 is 4.
        assert!(walk_fits(14, &|l| l <= 9 || l >= 13));
        assert!(!walk_fits(14, &|l| l <= 8 || l >= 13));
        // Every third level: jumps of 3.
        assert!(walk_fits(20, &|l| l % 3 == 0 || l >= 19));
    }
}
