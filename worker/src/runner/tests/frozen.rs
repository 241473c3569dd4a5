//! The level tasks read, held still for them (`runner/frozen.rs`).

use super::*;

/// Level by level, the shards of the level read that the cache holds:
/// with room for every level, all of them are held still for the level's
/// tasks, with the chunk files of the level that can hold states and the
/// shards their indexes count empty; with the smallest budget, a level they take more than half of is
/// not, and either way the table is the published one.
#[test]
fn a_level_is_held_still_where_it_fits_half_the_budget() {
    // Shards held as lists (reduced) and as words (the block layout, 3,024
    // shards of 120 states: the smallest budget holds a third of a level);
    // chunks of 7 shards do not line up with the 64 shards of a word of
    // the level's map of empty shards.
    for (spec, k, chunk_shards) in [("loopover:3x3", None, 7), ("loopover:3x3 --no-symmetry", Some(4), 64)] {
        let job = job(spec, k, chunk_shards);
        for budget in [64 << 20, requirements(&job).min_worker_bytes] {
            let dir = checkpoint();
            let runner = TaskRunner::new(job.clone(), dir.path(), budget, 2, WRITE).unwrap();
            let (mut depths, mut frozen, mut not, mut left_closed) = (vec![1], 0, 0, 0);
            for from in 0..8 {
                let mut held = 0;
                runner
                    .store
                    .each_stripe(|h| held += h.cache.shards_of_level(from).0.len());
                match &runner.enter(from).unwrap().view.frozen {
                    Some(level) => {
                        assert_eq!(level.len(), held, "{} level {}", spec, from);
                        // Every file with states is open; where the last
                        // level's sparse map said which shards could gain
                        // states (the reduced space), only files with such
                        // shards are.
                        let chunking = &runner.ctx.job.chunking;
                        let with_states = (0..chunking.chunks())
                            .filter(|&c| {
                                chunking
                                    .shards_of(c)
                                    .any(|s| runner.indexed_count(from, s).unwrap() > 0)
                            })
                            .count();
                        let chunks = chunking.chunks() as usize;
                        assert!(
                            (with_states..=chunks).contains(&level.readers()),
                            "{} level {}: {} files open, {} with states",
                            spec,
                            from,
                            level.readers(),
                            with_states
                        );
                        left_closed += chunks - level.readers();
                        for shard in 0..runner.ctx.job.space.shards() {
                            let empty = runner.indexed_count(from, shard).unwrap() == 0;
                            assert_eq!(level.holds_none((from, shard)), empty, "{} shard {}", spec, shard);
                            assert!(!level.holds_none((from + 1, shard)), "another level is not known here");
                        }
                        frozen += 1;
                    }
                    None => not += 1,
                }
                let chunks = 0..runner.ctx.job.chunking.chunks();
                depths.push(
                    chunks
                        .map(|c| runner.compute_chunk(from, c, &|_, _| {}).unwrap().states)
                        .sum(),
                );
            }
            assert_eq!(depths, published("3x3"), "{} budget {}", spec, budget);
            if k.is_none() && budget == 64 << 20 {
                assert!(left_closed > 0, "{}: files known empty were opened", spec);
            }
            if budget == 64 << 20 {
                assert_eq!((frozen, not), (7, 1), "{}: every level but the 0th held still", spec);
            } else {
                assert!(not > 1, "{}: the smallest budget held {} levels still", spec, frozen);
            }
        }
    }
}
