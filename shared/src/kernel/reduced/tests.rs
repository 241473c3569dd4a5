//! The reduced kernel against independent computations: steps and fiber
//! maps against moving and conjugating states, and the three ways to
//! expand a shard against each other and against probing every unseen
//! state's predecessors through `locate`.

use super::*;
use crate::kernel::task::SourceBits;
use crate::puzzle::{Metric, Puzzle};
use crate::space::reduced::fiber::MapForm;
use crate::space::reduced::test_support::{space, walk, SQUARES};
use proptest::prelude::*;

#[test]
fn every_shard_is_a_target_of_each_of_its_sources() {
    // Sliding puzzles and the Varikon box have guarded moves.
    for spec in ["loopover:3x3", "loopover:3x4", "sliding:3x3", "varikon", SQUARES] {
        let (p, r) = space(spec, Metric::Mtm);
        let moves = ReducedMoves::new(&p, &r);
        let targets: Vec<Vec<u64>> = (0..r.shards()).map(|a| moves.target_shards(&r, a)).collect();
        let mut pairs = 0;
        for b in 0..r.shards() {
            for a in moves.source_shards(&r, b) {
                assert!(
                    targets[a as usize].binary_search(&b).is_ok(),
                    "{}: {} reads {}",
                    spec,
                    b,
                    a
                );
                pairs += 1;
            }
        }
        assert!(pairs > 0, "{}: no source at all", spec);
    }
}

/// A shard's targets are the classes of each move's image of its key,
/// canonicalised one by one here, whether they come from the step table
/// (moves closed under inverses, no guards) or are worked out.
#[test]
fn targets_are_the_classes_of_the_moved_keys() {
    for spec in ["loopover:3x4", "loopover:2x5", SQUARES] {
        let (p, r) = space(spec, Metric::Mtm);
        let moves = ReducedMoves::new(&p, &r);
        let keys = r.keys();
        for a in (0..r.shards()).step_by(5) {
            let key = r.key(a);
            let mut images: Vec<u64> = p
                .moves
                .iter()
                .map(|m| keys.canonicalize(&keys.moved(&m.perm, &key)).0 as u64)
                .collect();
            images.sort_unstable();
            images.dedup();
            assert_eq!(moves.target_shards(&r, a), images, "{} shard {}", spec, a);
        }
    }
}

/// Where moves have guards, a shard's targets are exactly the shards of
/// the states its states reach by the moves that apply to them: every
/// shard's stored state at bit 0 (its representative key) moved by the
/// puzzle's own `apply`, which refuses a move whose guard fails, and each
/// image located afresh.
#[test]
fn guarded_targets_are_the_shards_legal_moves_reach() {
    // Every shard of the small ones, one in 997 of the 15-puzzle's 6 million.
    for (spec, every) in [("sliding:3x3", 1), ("varikon", 1), ("sliding:4x4", 997)] {
        let (p, r) = space(spec, Metric::Mtm);
        let moves = ReducedMoves::new(&p, &r);
        assert!(p.moves.iter().any(|m| m.guard.is_some()), "{}: no guards", spec);
        for a in (0..r.shards()).step_by(every) {
            let state = r.state_at(a, 0);
            assert_eq!(r.locate(&state).0, a, "{} shard {}", spec, a);
            let mut reached: Vec<u64> = (p.moves.iter())
                .filter_map(|m| p.apply(m, &state))
                .map(|next| r.locate(&next).0)
                .collect();
            reached.sort_unstable();
            reached.dedup();
            assert_eq!(moves.target_shards(&r, a), reached, "{} shard {}", spec, a);
        }
    }
}

/// Every entry of the step table, filled shard by shard in an order where
/// most of them come from the other end of their pair of shards
/// ([`steps::ReverseSteps`]), names the source working the step out again
/// names, and a symmetry that takes the move's predecessors of the shard's
/// states to the source's own key (its representative): checked on
/// states, moved back and conjugated.
#[test]
fn step_table_entries_take_predecessors_to_their_source() {
    for spec in ["loopover:3x4", "loopover:2x5", SQUARES] {
        let (p, r) = space(spec, Metric::Mtm);
        let moves = ReducedMoves::new(&p, &r);
        assert!(moves.has_table(), "{} fits the table", spec);
        moves.steps(&r, 0);
        let elsewhere: usize = (1..r.shards()).map(|shard| moves.known_steps(shard)).sum();
        assert!(
            elsewhere > 0,
            "{}: shard 0's steps gave none of its sources' steps",
            spec
        );
        let order = (0..r.shards()).step_by(7).chain((0..r.shards()).filter(|s| s % 7 != 0));
        for shard in order {
            moves.steps(&r, shard);
        }
        for shard in 0..r.shards() {
            let steps = moves.steps(&r, shard);
            assert_eq!(
                moves.steps(&r, shard),
                steps,
                "{} shard {}: the table changed",
                spec,
                shard
            );
            let worked_out = moves.work_out_steps(&r, shard);
            let y = r.state_at(shard, 0);
            for (g, step) in steps.into_iter().enumerate() {
                let step = step.expect("no guards");
                assert_eq!(
                    Some(step.source),
                    worked_out[g].map(|s| s.source),
                    "{} shard {} move {}",
                    spec,
                    shard,
                    g
                );
                let x = p.apply_backwards(&p.moves[g], &y).expect("no guards");
                let z = r.symmetries.conjugate(step.symmetry, &x);
                let blocks = r.fiber().blocks();
                assert_eq!(
                    r.fiber().key_of(&z)[..blocks],
                    r.key(step.source)[..blocks],
                    "{} shard {} move {}: not the source's own key",
                    spec,
                    shard,
                    g
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Both fiber maps of every move agree with moving the state and
    /// conjugating it by the step's symmetry.
    #[test]
    fn fiber_maps_agree_with_moving_and_conjugating(
        which in 0usize..6, seed in any::<u64>(), steps in 0usize..40, stm in any::<bool>(),
    ) {
        let spec = ["loopover:3x4", "loopover:3x3", "loopover:2x5", "sliding:3x3", "varikon", SQUARES][which];
        let metric = if stm { Metric::Stm } else { Metric::Mtm };
        let (p, r) = space(spec, metric);
        let moves = ReducedMoves::new(&p, &r);
        let y = walk(&p, seed, steps);
        let (shard, word, bit) = r.locate(&y);
        let y_index = (word * 64 + bit as usize) as u64;
        let y = r.state_at(shard, y_index as usize);
        let row_bits = r.fiber().row_words() as u64 * 64;
        for (g, step) in moves.steps(&r, shard).into_iter().enumerate() {
            let m = &p.moves[g];
            let x = p.apply_backwards(m, &y);
            let Some(step) = step else {
                prop_assert!(x.is_none(), "move {} is legal here", m.name);
                continue;
            };
            let Some(x) = x else { continue };
            let z = r.symmetries.conjugate(step.symmetry, &x);
            let (z_shard, z_word, z_bit) = r.locate(&z);
            prop_assert_eq!(z_shard, step.source);
            let key = r.key(step.source);
            prop_assert_eq!(r.fiber().key_of(&z)[..r.fiber().blocks()].to_vec(), key[..r.fiber().blocks()].to_vec());
            let z_index = r.fiber().encode(&z, &key);
            let back = moves.backward(&r, &r.key(shard), g, step);
            prop_assert_eq!(back.apply(y_index, row_bits), z_index);
            for form in [MapForm::Rows, MapForm::Digits] {
                let forth = moves.forward_map(&r, &r.key(shard), g, step, form);
                prop_assert_eq!(forth.apply(z_index, row_bits), y_index, "{:?}", form);
            }
            let _ = (z_word, z_bit);
        }
    }
}

/// Random valid bits of a fiber, each set with probability about
/// `1 / 2^sparsity`.
fn random_fiber(space: &ReducedSpace, seed: &mut u64, sparsity: u32) -> Vec<u64> {
    let rw = space.fiber().row_words();
    let mut next = || {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed ^ (*seed >> 29)
    };
    (0..space.shard_words())
        .map(|w| (0..sparsity).fold(u64::MAX, |acc, _| acc & next()) & space.fiber().valid_mask(w % rw))
        .collect()
}

/// `words`, states of `shard`, with their images under every symmetry
/// that fixes the shard's key. A level's states are closed so (a symmetry
/// keeps the distance from solved), and then any symmetry that takes a key
/// to its representative finds the same bits, not only the one `locate`
/// takes: the step table may hold another ([`steps::ReverseSteps`]).
fn closed_under_stabilizer(space: &ReducedSpace, shard: u64, mut words: Vec<u64>) -> Vec<u64> {
    let key = space.key(shard);
    let fixing: Vec<usize> = (0..space.symmetries.order())
        .filter(|&k| space.keys().apply(k, &key) == key)
        .collect();
    let states: Vec<usize> = (0..words.len() * 64)
        .filter(|&i| words[i / 64] >> (i % 64) & 1 == 1)
        .collect();
    for i in states {
        let state = space.state_at(shard, i);
        for &k in &fixing {
            let image = space.fiber().encode(&space.symmetries.conjugate(k, &state), &key);
            words[image as usize / 64] |= 1 << (image % 64);
        }
    }
    words
}

/// `F_{d+1}(shard)` state by state: an unseen state is found when one of
/// its predecessors, located in the space like any state, is set in its
/// source.
fn brute_force(p: &Puzzle, r: &ReducedSpace, shard: u64, inputs: &ShardInputs) -> Vec<u64> {
    let mut out = vec![0u64; r.shard_words()];
    let rw = r.fiber().row_words();
    for (w, word) in out.iter_mut().enumerate() {
        let unseen = !(inputs.previous[w] | inputs.current[w]) & r.fiber().valid_mask(w % rw);
        for b in 0..64 {
            if unseen >> b & 1 == 0 {
                continue;
            }
            let y = r.state_at(shard, w * 64 + b);
            let found = p.moves.iter().any(|m| {
                p.apply_backwards(m, &y).is_some_and(|x| {
                    let (s, xw, xb) = r.locate(&x);
                    inputs.sources.get(s)[xw] >> xb & 1 == 1
                })
            });
            *word |= u64::from(found) << b;
        }
    }
    out
}

/// How a test gives the kernel its sources.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Listed {
    /// Words only.
    No,
    /// Words and the list of positions.
    Also,
    /// The list only (empty words), as a worker's cache holds sparse shards.
    Only,
}

/// Top-down on one thread and on the pool (each reading the sources' words
/// or their lists of positions, with or without the words), bottom-up on
/// one thread and on the pool, and the direction `expand_reduced` picks all
/// find what probing every unseen state's predecessors finds.
#[test]
fn every_direction_finds_what_brute_force_finds() {
    for spec in ["loopover:3x3", "loopover:2x5", "sliding:3x3", SQUARES] {
        let (p, space) = space(spec, Metric::Mtm);
        let moves = ReducedMoves::new(&p, &space);
        let mut seed = 7u64;
        let shards = space.shards();
        for (shard, sparsity) in [
            (0u64, 6),
            (1 % shards, 3),
            (5 % shards, 1),
            (shards - 1, 8),
            (shards / 2, 0),
        ] {
            let sources: Vec<(u64, Vec<u64>)> = moves
                .source_shards(&space, shard)
                .into_iter()
                .chain([shard])
                .collect::<std::collections::BTreeSet<u64>>()
                .into_iter()
                .map(|s| {
                    (
                        s,
                        closed_under_stabilizer(&space, s, random_fiber(&space, &mut seed, sparsity)),
                    )
                })
                .collect();
            let previous = random_fiber(&space, &mut seed, 2);
            let current: Vec<u64> = random_fiber(&space, &mut seed, 2)
                .iter()
                .zip(&previous)
                .map(|(c, p)| c & !p)
                .collect();
            // Listed as a worker lists sparse sources (here every one),
            // with their words or (as a worker's cache holds them) without.
            let lists: Vec<Vec<u32>> = sources
                .iter()
                .map(|(_, w)| crate::space::bits::positions(w, crate::space::bits::popcount(w)))
                .collect();
            let inputs = |split, listed: Listed, list_up_to, output_zeroed| ShardInputs {
                sources: SourceBits::with_counts(
                    sources
                        .iter()
                        .zip(&lists)
                        .map(|((s, w), list)| {
                            let count = crate::space::bits::popcount(w);
                            let words = if listed == Listed::Only { &[][..] } else { &w[..] };
                            (*s, words, count, (listed != Listed::No).then_some(&list[..]))
                        })
                        .collect(),
                ),
                previous: &previous,
                current: &current,
                split,
                list_up_to,
                output_zeroed,
            };
            let expected = brute_force(&p, &space, shard, &inputs(false, Listed::No, 0, false));
            let steps: Vec<(usize, Step, u64)> = moves
                .steps(&space, shard)
                .into_iter()
                .enumerate()
                .filter_map(|(g, s)| s.map(|s| (g, s, inputs(false, Listed::No, 0, false).sources.count(s.source))))
                .collect();
            let sources_total: u64 = steps.iter().map(|s| s.2).sum();
            // An output given all zero (as a worker's buffers come) is
            // marked as it is; any other is cleared first.
            for ((split, listed), zeroed) in [false, true]
                .into_iter()
                .flat_map(|split| [Listed::No, Listed::Also, Listed::Only].map(|l| (split, l)))
                .flat_map(|c| [(c, false), (c, true)])
            {
                let fill = if zeroed { 0 } else { u64::MAX };
                let inputs = |list_up_to| inputs(split, listed, list_up_to, zeroed);
                let unlisted = inputs(0);
                let task = Expansion {
                    space: &space,
                    moves: &moves,
                    key: space.key(shard),
                    inputs: &unlisted,
                };
                let mut out = vec![fill; space.shard_words()];
                let (stats, _) = top_down::expand(&task, &steps, sources_total, &mut out);
                assert_eq!(
                    out, expected,
                    "{} shard {}: top-down, split {}, listed {:?}",
                    spec, shard, split, listed
                );
                assert_eq!(
                    stats.evaluations, sources_total,
                    "top-down expands every source bit once"
                );
                // Its count, and its list of the states found under each
                // limit, against the expected words bit by bit: no list
                // past the limit.
                let want: Vec<u32> = (0..expected.len() * 64)
                    .filter(|&i| expected[i / 64] >> (i % 64) & 1 == 1)
                    .map(|i| i as u32)
                    .collect();
                assert_eq!(
                    stats.found,
                    want.len() as u64,
                    "{} shard {}: top-down's count",
                    spec,
                    shard
                );
                let found = want.len() as u64;
                for limit in [u64::MAX, 0, found, found.saturating_sub(1)] {
                    let limited = inputs(limit);
                    let task = Expansion {
                        inputs: &limited,
                        ..task
                    };
                    let mut out = vec![fill; space.shard_words()];
                    let (stats, kernel_list) = top_down::expand(&task, &steps, sources_total, &mut out);
                    assert_eq!(out, expected);
                    assert_eq!(stats.found, found);
                    let kept = limit > 0 && found <= limit;
                    assert_eq!(
                        kernel_list,
                        kept.then(|| want.clone()),
                        "{} shard {}: top-down's list, limit {}",
                        spec,
                        shard,
                        limit
                    );
                }
                let mut out = vec![fill; space.shard_words()];
                bottom_up::expand(&task, &steps, &mut out);
                assert_eq!(
                    out, expected,
                    "{} shard {}: bottom-up, split {}, listed {:?}",
                    spec, shard, split, listed
                );
                let mut out = vec![fill; space.shard_words()];
                let listing = inputs(u64::MAX);
                let (stats, kernel_list) = expand_reduced(&space, &moves, shard, &listing, &mut out, &|_| {});
                assert_eq!(out, expected, "{} shard {}: expand_reduced", spec, shard);
                assert_eq!(
                    stats.found,
                    expected.iter().map(|w| u64::from(w.count_ones())).sum::<u64>()
                );
                // Listed when top-down ran (bottom-up leaves it to the caller).
                assert!(kernel_list.is_none_or(|l| l == want), "{} shard {}", spec, shard);
            }
        }
    }
}
