use super::*;
use std::collections::HashSet;

/// A codec for `cells`/`twists`/`modulus` under the given moves.
fn codec(cells: &[u8], twists: &[u8], modulus: &[u8], moves: &[(Vec<u8>, Vec<u8>)], k: Option<usize>) -> Codec {
    let input = CodecInput {
        solved_cells: cells,
        solved_twists: twists,
        modulus,
        wild: &[],
        moves: moves.iter().map(|(p, t)| (&p[..], &t[..])).collect(),
        group_order: None,
        guarded_slots: 0,
    };
    Codec::plan(&input, k).unwrap()
}

/// Every rank decodes to a distinct state that encodes back to it, and the
/// shard of a rank is the shard of its key classes' slots.
fn assert_perfect(c: &Codec) {
    let n = c.slots();
    let mut seen = HashSet::new();
    for rank in 0..c.states() as u64 {
        let mut cells = vec![0u8; n];
        let mut twists = vec![0u8; n];
        c.unrank(rank, &mut cells, &mut twists);
        assert_eq!(c.rank(&cells, &twists), rank, "cells {:?} twists {:?}", cells, twists);
        assert!(seen.insert((cells.clone(), twists.clone())));
        let (shard, _) = c.split(rank);
        let masks: Vec<u64> = c.classes[..c.shard_classes]
            .iter()
            .map(|d| (0..n).filter(|&s| cells[s] == d.class).fold(0, |m, s| m | 1 << s) & d.orbit)
            .collect();
        assert_eq!(c.shard_of_masks(&masks), shard);
        assert_eq!(c.key_masks(shard), masks);
    }
}

#[test]
fn a_class_spread_over_orbits_has_one_digit_per_orbit() {
    // Class 0 has two pieces in orbit {0,1,2} and one in the fixed slot 3.
    let moves = [(vec![1, 2, 0, 3], vec![])];
    let c = codec(&[0, 1, 0, 0], &[0; 4], &[1; 4], &moves, Some(2));
    assert_eq!(c.states(), 3);
    assert_perfect(&c);
}

#[test]
fn tracked_pieces_rank_partial_permutations() {
    // 6 slots, pieces 0..3 tracked, 3 identical: 6·5·4 arrangements.
    let cycle = (vec![1, 2, 3, 4, 5, 0], vec![]);
    for k in 0..=3 {
        let c = codec(
            &[0, 1, 2, 3, 3, 3],
            &[0; 6],
            &[1; 6],
            std::slice::from_ref(&cycle),
            Some(k),
        );
        assert_eq!(c.states(), 120);
        assert_perfect(&c);
    }
}

#[test]
fn identical_pieces_in_two_orbits() {
    // Orbit {0..4} holds classes 0 (two pieces) and 1 (three); orbit {5,6,7}
    // holds class 2 (one) and class 3 (two): C(5,2)·C(3,1) = 30 states.
    let moves = [(vec![1, 2, 3, 4, 0, 6, 7, 5], vec![])];
    for k in 0..=2 {
        let c = codec(&[0, 0, 1, 1, 1, 2, 3, 3], &[0; 8], &[1; 8], &moves, Some(k));
        assert_eq!(c.states(), 30);
        assert_perfect(&c);
    }
}

#[test]
fn twists_are_ranked_and_a_kept_sum_implies_the_last() {
    // Four 3-twist slots; the move cycles them and twists two by +1 and +2
    // (sum 0 mod 3), so the last slot's twist is implied: 4!·3³ states.
    let keeps = [(vec![1, 2, 3, 0], vec![1, 2, 0, 0])];
    let c = codec(&[0, 1, 2, 3], &[0; 4], &[3; 4], &keeps, None);
    assert_eq!(c.states(), 24 * 27);
    assert_perfect(&c);
    // A move twisting one slot alone breaks the invariant: all 3⁴ twists.
    let breaks = [(vec![1, 2, 3, 0], vec![1, 0, 0, 0])];
    let c = codec(&[0, 1, 2, 3], &[0; 4], &[3; 4], &breaks, Some(2));
    assert_eq!(c.states(), 24 * 81);
    assert_perfect(&c);
}

#[test]
fn implied_twist_follows_the_solved_sum() {
    let keeps = [(vec![1, 2, 0], vec![1, 1, 1])];
    let c = codec(&[0, 0, 0], &[2, 0, 0], &[3; 3], &keeps, None);
    let mut cells = [0u8; 3];
    let mut twists = [0u8; 3];
    for rank in 0..c.states() as u64 {
        c.unrank(rank, &mut cells, &mut twists);
        assert_eq!(twists.iter().map(|&t| t as u32).sum::<u32>() % 3, 2);
    }
}

#[test]
fn refuses_what_cannot_be_ranked() {
    let cells: Vec<u8> = (0..30).collect();
    let moves = [((1..30).chain([0]).collect::<Vec<u8>>(), vec![])];
    let input = CodecInput {
        solved_cells: &cells,
        solved_twists: &[0; 30],
        modulus: &[1; 30],
        wild: &[],
        moves: moves.iter().map(|(p, t)| (&p[..], &t[..])).collect(),
        group_order: None,
        guarded_slots: 0,
    };
    assert!(matches!(
        Codec::plan(&input, None),
        Err(CodecError::TooManyStates { .. })
    ));
    let small = CodecInput {
        solved_cells: &cells[..4],
        solved_twists: &[0; 4],
        modulus: &[1; 4],
        wild: &[],
        moves: vec![],
        group_order: None,
        guarded_slots: 0,
    };
    assert!(Codec::plan(&small, Some(5)).is_err());
}
