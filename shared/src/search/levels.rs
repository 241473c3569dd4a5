//! How many states each level of a search will hold, before (or partway
//! through) running it: what `cayley plan` projects times from and
//! `cayley info` plans the disk of `--keep-levels every:K` with.
//!
//! Levels already counted (a checkpoint, a finished table) are taken as
//! they are. The rest follow a random-graph recurrence: each state not yet
//! reached is reached at the next depth with probability `1 − e^(−λ)`,
//! where `λ = b·n/T` is the expected number of its neighbours in the
//! frontier (`n` states of `T`), so
//!
//! ```text
//! n_{k+1} = (T − S_k) · (1 − e^(−b_k·n_k/T))
//! ```
//!
//! with `S_k` the states up to depth `k`. It grows by `b_k` while the
//! frontier is small, saturates when most states are seen, and leaves a
//! tail of small levels, ending at the first level below one state. The
//! branching `b_k` is the growth of the canonical words of the counting
//! bound (`bound.rs`); after counted levels, the branching that gives the
//! last counted level from the one before. On the 4×4 Loopover from
//! the bound alone it puts 14 levels against the real 14, each within
//! 2.1× of the real count up to depth 11, but saturates a level early
//! (depth 12 at 0.47 of the real; docs/history.md, "The first hour of a new user"); on narrow
//! boards with many short relations (2×7) the middle levels come out up
//! to 28× too large, so counted levels are worth giving.

use crate::job::Job;
use crate::search::bound::puzzle_bound;

/// Modelled states per level (index = depth), summing to the reachable
/// states. `counted` are the levels known so far (depth 0 first). `None`
/// when the job has no counting bound (guarded moves) and fewer than two
/// levels are counted, or its state count is not known.
pub fn modelled_levels(job: &Job, counted: &[u64]) -> Option<Vec<f64>> {
    let total = job.reachable_states? as f64;
    let words = canonical_words(job);
    let known: Vec<f64> = counted.iter().map(|&c| c as f64).collect();
    if known.len() < 2 && words.is_none() {
        return None;
    }
    let mut levels = if known.is_empty() { vec![1.0] } else { known };
    let mut seen: f64 = levels.iter().sum();
    // After counted levels, the branching that explains the last of them.
    let fitted = (levels.len() >= 2).then(|| {
        let (before, last) = (levels[levels.len() - 2], levels[levels.len() - 1]);
        let unseen = total - (seen - last);
        -(total / before) * (1.0 - (last / unseen).min(1.0 - 1e-12)).ln()
    });
    while seen < total - 0.5 {
        let k = levels.len() - 1;
        // (Without counted levels there are words: checked above.)
        let branching = fitted.unwrap_or_else(|| words.as_deref().map_or(1.0, |w| branching_of_words(w, k)));
        let frontier = levels[k];
        let next = (total - seen) * -(-branching * frontier / total).exp_m1();
        if next < 1.0 || levels.len() > 10_000 {
            // The last states: a tail the recurrence no longer reaches.
            *levels.last_mut().expect("level 0") += total - seen;
            break;
        }
        levels.push(next);
        seen += next;
    }
    Some(levels)
}

/// Canonical words of each length (not cumulative), if the puzzle has a
/// counting bound.
fn canonical_words(job: &Job) -> Option<Vec<f64>> {
    let bound = puzzle_bound(&job.puzzle).ok()?;
    let cumulative: Vec<f64> = bound
        .cumulative
        .iter()
        .map(|c| c.to_u128().map_or(f64::INFINITY, |c| c as f64))
        .collect();
    Some(
        cumulative
            .iter()
            .enumerate()
            .map(|(k, &c)| if k == 0 { c } else { c - cumulative[k - 1] })
            .collect(),
    )
}

/// Growth of the canonical words from length `k` to `k + 1`; past the
/// bound's table, its last growth.
fn branching_of_words(words: &[f64], k: usize) -> f64 {
    let k = k.min(words.len().saturating_sub(2));
    words[k + 1] / words[k].max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::{parse_puzzle, Metric};

    fn job(spec: &str) -> Job {
        Job::new(parse_puzzle(spec, Metric::Mtm).unwrap(), None).unwrap()
    }

    const STATES_2X5: f64 = 3_628_800.0;

    /// Loopover 2×5 MTM, published: tests/data/loopover-mtm.csv.
    fn published() -> Vec<u64> {
        cayley_tests::published::published_loopover_mtm("2x5")
    }

    fn within(model: &[f64], depths: std::ops::Range<usize>, low: f64, high: f64) {
        let published = published();
        for d in depths {
            let ratio = model[d] / published[d] as f64;
            assert!(
                ratio >= low && ratio <= high,
                "depth {}: {} vs {}",
                d,
                model[d],
                published[d]
            );
        }
    }

    #[test]
    fn levels_hold_every_state_once_and_start_as_the_words_do() {
        let job = job("loopover:2x5");
        let levels = modelled_levels(&job, &[]).unwrap();
        assert!((levels.iter().sum::<f64>() - STATES_2X5).abs() < 1.0, "{:?}", levels);
        // Depths 0–2 are the canonical words, as in the published table.
        within(&levels, 0..3, 0.999, 1.001);
        // Saturation and a tail: more levels than the counting bound's.
        let bound = puzzle_bound(&job.puzzle).unwrap().bound;
        assert!(levels.len() > bound + 1, "{} levels, bound {}", levels.len(), bound);
        // The shape up to the widest level, within 4× (the model grows as
        // the words do, faster than the real levels from depth 4 on).
        within(&levels, 3..9, 0.25, 4.0);
    }

    #[test]
    fn counted_levels_are_kept_and_the_rest_continue_them() {
        let job = job("loopover:2x5");
        let published = published();
        let levels = modelled_levels(&job, &published[..8]).unwrap();
        within(&levels, 0..8, 1.0, 1.0);
        assert!((levels.iter().sum::<f64>() - STATES_2X5).abs() < 1.0, "{:?}", levels);
        // Continued with the branching that explains depth 7, the three
        // widest levels come within a factor of 2.
        within(&levels, 8..11, 0.5, 2.0);
        // A complete table stays as it is.
        let whole = modelled_levels(&job, &published).unwrap();
        assert_eq!(whole, published.iter().map(|&c| c as f64).collect::<Vec<_>>());
    }

    #[test]
    fn guarded_puzzles_need_counted_levels() {
        let job = job("sliding:3x3");
        assert!(modelled_levels(&job, &[]).is_none());
        let levels = modelled_levels(&job, &[1, 2, 4, 8]).unwrap();
        assert!((levels.iter().sum::<f64>() - 181_440.0).abs() < 1.0);
    }
}
