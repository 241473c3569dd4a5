//! Tests of key ranking, canonicalisation and the class search.

use super::*;
use crate::puzzle::Metric;
use crate::space::reduced::test_support::{space, PERMUTATIONS, SQUARES};

const SPECS: [&str; 6] = [
    "loopover:3x4",
    "loopover:4x4",
    "loopover:2x5",
    "sliding:3x3",
    "varikon",
    SQUARES,
];

/// The plain enumeration: keys in rank order, each one not yet marked
/// starts a class whose images are then marked.
fn marking(keys: &KeySpace) -> (Vec<u64>, Vec<u32>) {
    let mut seen = vec![false; keys.total() as usize];
    let (mut reps, mut stabilizers) = (Vec::new(), Vec::new());
    for rank in 0..keys.total() {
        if seen[rank as usize] {
            continue;
        }
        let key = keys.unrank(rank);
        let mut members = 0;
        for k in 0..keys.actions.len() {
            let image = keys.rank(&keys.apply(k, &key)) as usize;
            if !seen[image] {
                seen[image] = true;
                members += 1;
            }
        }
        reps.push(rank);
        stabilizers.push(keys.actions.len() as u32 / members);
    }
    (reps, stabilizers)
}

#[test]
fn the_pruned_search_finds_the_classes_marking_finds() {
    for spec in ["loopover:3x4", "loopover:2x5", "sliding:3x3", "varikon", SQUARES] {
        let (_, r) = space(spec, Metric::Mtm);
        let keys = r.keys();
        let (reps, stabilizers) = marking(keys);
        assert_eq!(keys.reps, reps, "{}", spec);
        assert_eq!(keys.stabilizers, stabilizers, "{}", spec);
        // Cut below the first block, the first two, …, down to the
        // last but one: the same classes in the same order.
        let marked = (reps, stabilizers);
        for subtrees in [1, 2, 50, 5_000, usize::MAX] {
            assert_eq!(keys.search(subtrees), marked, "{} below {} subtrees", spec, subtrees);
        }
    }
}

#[test]
fn looking_up_the_first_block_gives_the_least_image_of_every_symmetry() {
    // Spaces whose first blocks are ranked from the table of every slot
    // set (at most 16 slots) and spaces ranked slot by slot: both are here.
    let mut ranked_from_the_table = [0, 0];
    for spec in SPECS {
        let (_, r) = space(spec, Metric::Mtm);
        let keys = r.keys();
        let first = keys.first.as_ref().expect("small spaces have the table");
        ranked_from_the_table[usize::from(first.ranks.is_some())] += 1;
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = keys.unrank(x % keys.total());
            let all = keys.least_image::<MAX_BLOCKS>(&key, 0..keys.actions.len());
            assert_eq!(keys.least_image_via::<MAX_BLOCKS>(first, &key), all, "{}", spec);
            let (class, k) = keys.canonicalize(&key);
            assert_eq!(keys.reps[class], all.0, "{}", spec);
            assert_eq!(k, all.1, "{}", spec);
            // The symmetry found maps the key onto its representative, and
            // is the least that does (the answer does not depend on the
            // order the candidates are compared in).
            let onto_rep = |k: usize| keys.apply(k, &key)[..keys.blocks()] == keys.rep(class)[..keys.blocks()];
            assert!(onto_rep(k), "{}", spec);
            assert_eq!((0..keys.actions.len()).find(|&j| onto_rep(j)), Some(k), "{}", spec);
        }
    }
    assert!(
        ranked_from_the_table.iter().all(|&n| n > 0),
        "{ranked_from_the_table:?}"
    );
}

/// Canonicalising keys together gives each its own canonical form:
/// a shard's images under the moves, and random keys, some repeated.
#[test]
fn keys_canonicalised_together_are_canonicalised_each() {
    for spec in SPECS {
        let (puzzle, r) = space(spec, Metric::Mtm);
        let keys = r.keys();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.unrank(x % keys.total())
        };
        for _ in 0..200 {
            let key = random();
            let mut batch: Vec<Key> = puzzle
                .moves
                .iter()
                .map(|m| {
                    let mut image = [0u64; MAX_BLOCKS];
                    for b in 0..keys.blocks() {
                        image[b] = map_mask(&m.perm, key[b]);
                    }
                    image
                })
                .collect();
            batch.push(random());
            batch.push(batch[0]);
            let each: Vec<(usize, usize)> = batch.iter().map(|k| keys.canonicalize(k)).collect();
            assert_eq!(keys.canonicalize_each(&batch), each, "{}", spec);
        }
        assert!(keys.canonicalize_each(&[]).is_empty());
    }
}

/// Every representative is found at its position, and no other rank
/// is: in a real space (crowded into few coarse ranges) and in made-up
/// lists, one crowded at the start and one of a few far apart.
#[test]
fn the_rank_index_finds_exactly_the_representatives() {
    let (_, r) = space("loopover:3x4", Metric::Mtm);
    let keys = r.keys();
    let crowded: Vec<u64> = (0..5_000).chain((0..50).map(|i| 1_000_000 + 977 * i)).collect();
    let scattered = vec![3, 1 << 20, (1 << 20) + 1, 5 << 30];
    let cases = [
        (keys.reps.clone(), keys.total()),
        (crowded, 2_000_000),
        (scattered, 6 << 30),
    ];
    for (reps, total) in cases {
        let index = RankIndex::new(&reps, total);
        for (at, &rank) in reps.iter().enumerate() {
            assert_eq!(index.find(&reps, rank), Some(at));
            for other in [rank + 1, rank.wrapping_sub(1)] {
                if reps.binary_search(&other).is_err() {
                    assert_eq!(index.find(&reps, other), None, "rank {}", other);
                }
            }
        }
        assert_eq!(index.find(&reps, total + (1 << 40)), None);
    }
}

/// Each block's domain is the slots its pieces' move orbits cover,
/// joined until domains are equal or disjoint: a block spanning two
/// orbits joins them, and joins every block that meets either.
#[test]
fn domains_are_the_move_orbits_their_pieces_reach_joined() {
    let p = crate::puzzle::parse_puzzle(SQUARES, Metric::Mtm).unwrap();
    let moves: Vec<&Perm> = p.moves.iter().map(|m| &m.perm).collect();
    let mask = |slots: &[u8]| slots.iter().fold(0u64, |m, &s| m | 1 << s);
    // Slots alone: the squares group's five orbits (two corner
    // tetrads, three edge slices; slots numbered from 0).
    let alone: Vec<Vec<u8>> = (0..20).map(|s| vec![s]).collect();
    let domains = block_domains(20, &moves, &p.solved, &alone);
    let tetrads = [mask(&[0, 3, 5, 6]), mask(&[1, 2, 4, 7])];
    let slices = [mask(&[8, 11, 16, 19]), mask(&[9, 10, 17, 18]), mask(&[12, 13, 14, 15])];
    for (s, d) in domains.iter().enumerate() {
        let orbit = tetrads.iter().chain(&slices).find(|o| *o & 1 << s != 0).unwrap();
        assert_eq!(d, orbit, "slot {}", s);
    }
    // A block of corners and an edge joins the corners with the edge's
    // slice, and then the edges' blocks that meet that slice.
    let mixed = [
        vec![0, 1, 6, 7],
        vec![2, 3, 4, 5, 8],
        vec![9, 10, 12, 13, 19],
        vec![11, 16],
        vec![14, 15, 17, 18],
    ];
    assert_eq!(block_domains(20, &moves, &p.solved, &mixed), vec![(1 << 20) - 1; 5]);
    // The whole cube's face turns: corners and edges.
    let p = crate::puzzle::parse_puzzle(PERMUTATIONS, Metric::Mtm).unwrap();
    let moves: Vec<&Perm> = p.moves.iter().map(|m| &m.perm).collect();
    let domains = block_domains(20, &moves, &p.solved, &alone);
    assert!(domains[..8].iter().all(|&d| d == 0xff));
    assert!(domains[8..].iter().all(|&d| d == 0xfff << 8));
}
