use super::*;
use crate::puzzle::{parse_puzzle, Metric};
use std::collections::VecDeque;

/// Every level of a whole space, from a plain breadth-first search
/// over a hash map of states (not the engine's levels).
struct BfsLevels {
    depth: HashMap<Vec<u8>, u32>,
    levels: Vec<HashMap<u64, Vec<u64>>>,
    words: usize,
}

impl BfsLevels {
    fn new(job: &Job) -> BfsLevels {
        let solved = job.puzzle.solved.clone();
        let mut depth = HashMap::from([(solved.clone(), 0u32)]);
        let mut queue = VecDeque::from([solved]);
        while let Some(state) = queue.pop_front() {
            let d = depth[&state];
            for m in &job.puzzle.moves {
                if let Some(next) = job.puzzle.apply(m, &state) {
                    depth.entry(next.clone()).or_insert_with(|| {
                        queue.push_back(next);
                        d + 1
                    });
                }
            }
        }
        let words = job.space.shard_words();
        let mut levels = vec![HashMap::new(); *depth.values().max().unwrap() as usize + 1];
        for (state, &d) in &depth {
            let (shard, word, bit) = job.space.locate(state);
            let shard_words: &mut Vec<u64> = levels[d as usize].entry(shard).or_insert_with(|| vec![0; words]);
            shard_words[word] |= 1 << bit;
        }
        BfsLevels { depth, levels, words }
    }
}

impl LevelSource for BfsLevels {
    fn shard(&self, level: u32, shard: u64) -> anyhow::Result<Vec<u64>> {
        let words = self.levels.get(level as usize).and_then(|l| l.get(&shard));
        Ok(words.cloned().unwrap_or_else(|| vec![0; self.words]))
    }
}

/// The first word of `steps` moves from `pos`, in move order, ending at
/// depth `target`: leaf after leaf, by the search's depths.
fn first_word(job: &Job, bfs: &BfsLevels, pos: &[u8], steps: u32, target: u32) -> Option<(Vec<usize>, Vec<u8>)> {
    if steps == 0 {
        return (bfs.depth[pos] == target).then(|| (Vec::new(), pos.to_vec()));
    }
    (0..job.puzzle.moves.len()).find_map(|i| {
        let next = neighbour(job, pos, i)?;
        let (mut word, end) = first_word(job, bfs, &next, steps - 1, target)?;
        word.insert(0, i);
        Some((word, end))
    })
}

/// A sparse shard is held as its set bits, a dense one as its words,
/// both answering as the words do; the step's shards stay within their
/// bytes, however the sizes come.
#[test]
fn step_shards_hold_sparse_shards_as_bits_within_their_bytes() {
    let mut sparse = vec![0u64; 100];
    sparse[3] = 1 << 5;
    sparse[99] = 1 << 63;
    let dense: Vec<u64> = (0..100u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    for words in [&sparse, &dense] {
        let held = Held::new(words);
        for (w, &word) in words.iter().enumerate() {
            for bit in 0..64 {
                assert_eq!(held.test(w, bit), (word >> bit) & 1 == 1);
            }
        }
    }
    assert!(matches!(Held::new(&sparse), Held::Bits(_)) && Held::new(&sparse).bytes() == ENTRY_BYTES + 8);
    assert!(matches!(Held::new(&dense), Held::Words(_)) && Held::new(&dense).bytes() == ENTRY_BYTES + 800);
    let shards = StepShards::new(2_000);
    for shard in 0..50 {
        let words = if shard % 3 == 0 { &dense } else { &sparse };
        shards.insert(shard, Arc::new(Held::new(words)));
        let guard = shards.lock();
        let (held, bytes) = &*guard;
        assert_eq!(*bytes, held.values().map(|h| h.bytes()).sum::<usize>());
        assert!(*bytes <= 2_000, "{} bytes held", bytes);
        assert!(held.contains_key(&shard), "the newest stays");
    }
    shards.insert(99, Arc::new(Held::Words(vec![0; 1_000])));
    assert!(shards.get(99).is_none(), "one shard over the capacity is not kept");
}

/// Batches of leaves sorted by shard find the word that testing one
/// leaf after another in move order finds, across batch boundaries
/// (three moves of six are 216 leaves, past the first batch of 64),
/// and nothing when the level is out of reach.
#[test]
fn batched_descent_finds_the_first_word_in_move_order() {
    // 7! states in 42 shards of 120 (pancakes have no symmetries to
    // reduce by from N = 5 on).
    let job = Job::new(parse_puzzle("pancake:7", Metric::Mtm).unwrap(), Some(2)).unwrap();
    assert_eq!(job.space.shards(), 42);
    let bfs = BfsLevels::new(&job);
    let budget = Budget::new(u64::MAX);
    let mut late = 0;
    let mut states: Vec<(&Vec<u8>, u32)> = bfs.depth.iter().map(|(s, &d)| (s, d)).collect();
    states.sort();
    for (state, d) in states.into_iter().step_by(7) {
        for steps in 1..=3.min(d) {
            for target in [d - steps, d.saturating_sub(steps + 1)] {
                let shards = StepShards::new(WALK_CACHE_BYTES);
                let mut level = LevelBits {
                    job: &job,
                    source: &bfs,
                    level: target,
                    shards: &shards,
                    budget: &budget,
                    buffer: Vec::new(),
                };
                let mut word = vec![99];
                let found = descend(&job, state, steps, &mut word, &mut level).unwrap();
                let expected = first_word(&job, &bfs, state, steps, target);
                match expected {
                    Some((moves, end)) => {
                        late += (moves.iter().fold(0, |k, &i| k * 6 + i) >= FIRST_BATCH) as u32;
                        assert_eq!(found.as_ref(), Some(&end), "{:?} {} moves to {}", state, steps, target);
                        assert_eq!(word[1..], moves[..]);
                    }
                    None => assert_eq!((found, word.len()), (None, 1), "{:?} to {}", state, target),
                }
            }
        }
    }
    assert!(late > 0, "no word was found past the first batch");
}
