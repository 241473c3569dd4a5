//! The job's last level, as a lease says (`Task.last_level`): nothing of
//! it is kept for a next level.

use super::*;

/// A lease that says its level is the job's last (`--max-depth`): the
/// level's count is the published one, and nothing of it stays in the
/// cache for a next level, where without the word its outputs do; and a
/// later lease for that level that does not say so keeps them again.
#[test]
fn the_last_level_keeps_nothing_for_a_next() {
    // Shards held as lists (reduced) and as words (the block layout).
    for (spec, k) in [("loopover:3x3", None), ("loopover:3x3 --no-symmetry", Some(2))] {
        let last = 5;
        let mut held = Vec::new();
        for said in [false, true] {
            let dir = checkpoint();
            let runner = TaskRunner::new(job(spec, k, 8), dir.path(), 64 << 20, 2, WRITE).unwrap();
            let mut depths = vec![1];
            for from in 0..last {
                runner.note_lease(from + 1, said && from + 1 == last);
                let chunks = 0..runner.ctx.job.chunking.chunks();
                depths.push(
                    chunks
                        .map(|c| runner.compute_chunk(from, c, &|_, _| {}).unwrap().states)
                        .sum(),
                );
            }
            assert_eq!(depths, published("3x3")[..=last as usize], "{}", spec);
            let mut n = 0;
            runner.store.each_stripe(|h| n += h.cache.held_for(last));
            held.push(n);
            if said {
                // The job resumed deeper: the level is computed again, kept.
                runner.note_lease(last, false);
                let chunks = 0..runner.ctx.job.chunking.chunks();
                for c in chunks {
                    runner.compute_chunk(last - 1, c, &|_, _| {}).unwrap();
                }
                let mut again = 0;
                runner.store.each_stripe(|h| again += h.cache.held_for(last));
                assert!(again > 0, "{}: unsaid again, level {} stays", spec, last);
            }
        }
        assert!(held[0] > 0, "{}: unsaid, level {} stays for a next", spec, last);
        assert_eq!(held[1], 0, "{}: said last, nothing of level {} stays", spec, last);
    }
}
