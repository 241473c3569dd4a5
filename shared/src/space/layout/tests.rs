use super::*;

#[test]
fn sizes_multiply_out() {
    for (n, even) in [(4, false), (6, false), (9, true), (10, false), (12, false)] {
        let l = Layout::plan(n, even, None, 0, None).unwrap();
        assert_eq!(l.blocks() as u128 * l.block_states() as u128, l.states());
        assert_eq!(l.shards() * l.blocks_per_shard(), l.blocks());
        assert!(l.shard_bytes() as u128 <= TARGET_SHARD_BYTES || l.shard_pieces == l.key_pieces());
    }
}

#[test]
fn shards_are_cut_finer_until_a_node_has_enough_or_they_would_be_too_small() {
    for n in 8..=15 {
        for even in [false, true] {
            let l = Layout::plan(n, even, None, 0, None).unwrap();
            let finer = (l.shard_pieces < l.key_pieces()).then(|| l.with_shard_pieces(l.shard_pieces + 1));
            assert!(l.shard_bytes() as u128 <= TARGET_SHARD_BYTES, "{n} {even}: {l:?}");
            let enough = l.shards() >= MIN_SHARDS || l.level_bytes() as u128 <= TARGET_SHARD_BYTES;
            let too_small = finer.is_none_or(|f| f.shard_bytes() < MIN_SPLIT_SHARD_BYTES);
            assert!(enough || too_small, "{n} {even}: {l:?}");
            // The plan is the coarsest that does this: one step coarser
            // had shards over the target, or too few of a level over it.
            if l.shard_pieces > 0 {
                let coarser = l.with_shard_pieces(l.shard_pieces - 1);
                let too_few = coarser.shards() < MIN_SHARDS && l.level_bytes() as u128 > TARGET_SHARD_BYTES;
                assert!(too_few || coarser.shard_bytes() as u128 > TARGET_SHARD_BYTES);
            }
        }
    }
    // 12! (the 2×6 Loopover unreduced, pancake:12): 132 shards of
    // 444 KiB, no longer 12 of 4.8 MiB; 12!/2 (sliding:3x4) 132 of 225
    // KiB; 11!, a level of 4.8 MiB, stays one shard.
    let twelve = Layout::plan(12, false, None, 0, None).unwrap();
    assert_eq!((twelve.shards(), twelve.shard_bytes()), (132, 720 * 79 * 8));
    assert_eq!(Layout::plan(12, true, None, 0, None).unwrap().shards(), 132);
    assert_eq!(Layout::plan(11, false, None, 0, None).unwrap().shards(), 1);
}

#[test]
fn index_roundtrip_for_every_state_of_small_spaces() {
    for (n, even) in [(4, false), (5, true), (8, false), (9, true)] {
        let l = Layout::plan(n, even, None, 0, None).unwrap();
        let mut count = 0u64;
        for block in 0..l.blocks() {
            for low in 0..l.block_states() {
                let idx = StateIndex { block, low };
                let state = l.state_at(idx);
                let perm = crate::puzzle::perm::Perm::from_images(state.clone()).unwrap();
                assert!(!even || perm.is_even());
                assert_eq!(l.index_of(&state), idx);
                count += 1;
            }
        }
        assert_eq!(count as u128, l.states());
    }
}

/// Every state a plain BFS reaches has the parity the rule gives, and
/// the layout ranks exactly that half, each state once.
#[test]
fn a_sliding_puzzle_ranks_its_reachable_half() {
    use crate::puzzle::{parse_puzzle, Metric};
    for spec in ["sliding:2x3", "sliding:3x3 --no-symmetry", "sliding:2x4"] {
        let puzzle = parse_puzzle(spec, Metric::Mtm).unwrap();
        let rule = ParityRule::find(&puzzle).expect("a sliding puzzle has a parity rule");
        let odd = |state: &[u8]| !Perm::from_images(state.to_vec()).unwrap().is_even();
        let mut seen = std::collections::HashSet::from([puzzle.solved.clone()]);
        let mut frontier = vec![puzzle.solved.clone()];
        while let Some(state) = frontier.pop() {
            assert_eq!(odd(&state), rule.parity_of_key(&state), "{}: {:?}", spec, state);
            for m in &puzzle.moves {
                if let Some(next) = puzzle.apply(m, &state) {
                    if seen.insert(next.clone()) {
                        frontier.push(next);
                    }
                }
            }
        }
        let layout = Layout::plan(puzzle.slots, false, Some(rule), puzzle.guarded_pieces().len(), None).unwrap();
        assert_eq!(layout.parity, Some(rule));
        assert_eq!(layout.states(), seen.len() as u128, "{}: ranked = reachable", spec);
        for block in 0..layout.blocks() {
            for low in 0..layout.block_states() {
                let idx = StateIndex { block, low };
                let state = layout.state_at(idx);
                assert!(seen.contains(&state), "{}: {:?} is not reachable", spec, state);
                assert_eq!(layout.index_of(&state), idx);
            }
        }
    }
}

#[test]
fn moves_without_one_guarded_piece_have_no_parity_rule() {
    use crate::puzzle::{parse_puzzle, Metric};
    for spec in ["loopover:2x3", "loopover:3x3", "turnstyle:12"] {
        let puzzle = parse_puzzle(spec, Metric::Mtm).unwrap();
        assert_eq!(ParityRule::find(&puzzle), None, "{}", spec);
    }
}

/// The low table never has more entries than the space has states
/// (beyond the smallest table), and large spaces keep the default.
#[test]
fn the_low_table_is_no_bigger_than_the_space() {
    let smallest = crate::kernel::lowtable::table_bytes(MIN_LOW_PIECES) / 2;
    for n in 2..=MAX_RANKED_POINTS {
        for even in [false, true] {
            let l = Layout::plan(n, even, None, 0, None).unwrap();
            let entries = crate::kernel::lowtable::table_bytes(l.low_pieces) as u128 / 2;
            assert!(l.low_pieces <= n, "{n} pieces");
            assert!(
                entries <= l.states().max(smallest as u128),
                "{n} pieces, even {even}: L = {}",
                l.low_pieces
            );
            if l.states() >= 5040 * 5040 {
                assert_eq!(l.low_pieces, DEFAULT_LOW_PIECES, "{n} pieces, even {even}");
            }
        }
    }
}

#[test]
fn refuses_what_cannot_be_ranked() {
    let err = Layout::plan(25, true, None, 0, None).unwrap_err().to_string();
    assert!(err.contains("7.756e24"), "{}", err);
    assert!(Layout::plan(12, false, None, 0, Some(9)).is_err());
}
