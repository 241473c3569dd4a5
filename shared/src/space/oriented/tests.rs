//! The computed class index against the tabulated one, the digit order it
//! compares arrangements by against their ranks, and the half tables of the
//! index maps against the maps applied twist by twist.

use super::arrangements::{slot_orbits, Arrangements};
use super::*;
use crate::puzzle::symmetry::oriented::find_oriented_symmetries;
use crate::puzzle::{parse_puzzle_with_file, Metric, Puzzle};

fn tws(name: &str, options: &str) -> Puzzle {
    let path = format!("{}/../tests/data/puzzles/{}", env!("CARGO_MANIFEST_DIR"), name);
    let text = std::fs::read_to_string(&path).expect("tws file");
    parse_puzzle_with_file(&format!("tws:{}{}", name, options), Metric::Mtm, Some(&text)).expect("puzzle")
}

/// The twist lattice and the symmetries found of `puzzle`.
fn lattice_and_symmetries(puzzle: &Puzzle) -> (TwistLattice, OrientedSymmetries) {
    let group_order = crate::puzzle::group::puzzle_group_order(puzzle).to_u128().unwrap();
    let lattice = OrientedSpace::lattice(puzzle, group_order).expect("independent twists");
    (lattice, find_oriented_symmetries(puzzle).expect("symmetries"))
}

/// The reduced space of `puzzle`, as `cayley` plans it.
fn planned(puzzle: &Puzzle) -> OrientedSpace {
    let (lattice, symmetries) = lattice_and_symmetries(puzzle);
    OrientedSpace::plan(puzzle, symmetries, lattice).unwrap()
}

#[test]
fn comparing_digits_by_weight_orders_arrangements_as_their_ranks() {
    // The whole 3×3×3: corners (8!) and edges (12!) are two orbits, the
    // edges' Lehmer rank the higher place value; the centres are fixed.
    let puzzle = tws("3x3x3.tws", "");
    let orbits = slot_orbits(&puzzle);
    let ranking = Arrangements::new(&puzzle, &orbits);
    assert_eq!(ranking.size(), 40_320 * 479_001_600);
    let size = ranking.size() as u64;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % size
    };
    for _ in 0..20_000 {
        // Half the pairs share the edges' rank, so the corners decide.
        let a = next();
        let b = if a % 2 == 0 {
            next()
        } else {
            a - a % 40_320 + next() % 40_320
        };
        let (cells_a, cells_b) = (ranking.unrank(a), ranking.unrank(b));
        assert_eq!(ranking.rank(&cells_a), a);
        assert_eq!(ranking.compare(&cells_a, &cells_b), a.cmp(&b), "{} against {}", a, b);
    }
}

#[test]
fn the_least_image_read_digit_by_digit_is_the_least_rank_of_every_image() {
    // The 3×3×3 without centres: corners and edges, two orbits, 48
    // symmetries; random arrangements against every image ranked whole.
    let puzzle = tws("3x3x3.tws", " --nocenters");
    let ranking = Arrangements::new(&puzzle, &slot_orbits(&puzzle));
    let symmetries = find_oriented_symmetries(&puzzle).expect("symmetries");
    assert_eq!(symmetries.order(), 48);
    let images = super::least::LeastImages::new(&ranking, &symmetries);
    let mut image = vec![0u8; puzzle.slots];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..2_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Every 50th is the solved arrangement or near it: stabilisers > 1.
        let rank = if round % 50 == 0 {
            round / 50
        } else {
            x % ranking.size() as u64
        };
        let cells = ranking.unrank(rank);
        let ranks: Vec<u64> = (0..48)
            .map(|k| {
                symmetries.conjugate_cells(k, &cells, &mut image);
                ranking.rank(&image)
            })
            .collect();
        let least = *ranks.iter().min().unwrap();
        let (found, k, stabilizer) = images.least(&ranking, &cells);
        assert_eq!(found, least, "rank {}", rank);
        assert_eq!(ranks[k], least, "rank {}", rank);
        assert_eq!(stabilizer as usize, ranks.iter().filter(|&&r| r == least).count());
        assert_eq!(images.stabilizer_if_least(&ranking, &cells).is_some(), least == rank);
    }
}

#[test]
fn computed_classes_are_the_tabulated_ones() {
    // The 2×2×2 (U R F): 7! arrangements of the moving corners, all
    // reachable; the 6 symmetries of slots and twists that fix the corner
    // the moves leave in place.
    let puzzle = tws("2x2x2.tws", "");
    let (lattice, symmetries) = lattice_and_symmetries(&puzzle);
    assert_eq!(symmetries.order(), 6);
    let table = OrientedSpace::plan_with(&puzzle, symmetries.clone(), lattice.clone(), true).unwrap();
    let computed = OrientedSpace::plan_with(&puzzle, symmetries, lattice, false).unwrap();
    assert!(matches!(table.index, ClassIndex::Table { .. }));
    assert!(matches!(computed.index, ClassIndex::Computed { .. }));
    // The same classes in the same order: at least 7!/6 of them.
    assert!(computed.classes() >= 5040 / 6, "{}", computed.classes());
    assert_eq!(computed.reps, table.reps);
    assert_eq!(computed.stabilizer, table.stabilizer);
    assert_eq!(computed.shard_first, table.shard_first);
    let mut image = vec![0u8; puzzle.slots];
    for rank in 0..table.arrangements.size() as u64 {
        let cells = table.arrangements.unrank(rank);
        let (class, k) = computed.canonical(&cells);
        assert_eq!(class, table.canonical(&cells).0, "rank {}", rank);
        // The element found maps the arrangement onto its representative.
        computed.symmetries.conjugate_cells(k, &cells, &mut image);
        assert_eq!(image, computed.rep(class), "rank {}", rank);
    }
    // The index is smaller than the table; the predecessor cache comes on
    // top of both: a u32 per class and move (9 moves).
    let cache = computed.classes() as u64 * 9 * 4;
    assert_eq!(computed.predecessor_cache_bytes(), cache);
    assert_eq!(table.predecessor_cache_bytes(), cache);
    assert!(computed.table_bytes() < table.table_bytes());
    // Kept predecessors are the ones found afresh, asked twice.
    let modulus = puzzle.coding.as_ref().map(|c| &c.modulus[..]);
    let inverses: Vec<_> = puzzle.moves.iter().map(|m| m.undoing(modulus)).collect();
    for class in 0..computed.classes() {
        let rep = computed.rep(class);
        let fresh: Vec<_> = inverses
            .iter()
            .map(|inverse| computed.find_predecessor(&rep, inverse))
            .collect();
        let (mut first, mut again, mut tabulated) = (Vec::new(), Vec::new(), Vec::new());
        computed.predecessors_of(class, &inverses, &mut first);
        computed.predecessors_of(class, &inverses, &mut again);
        table.predecessors_of(class, &inverses, &mut tabulated);
        assert_eq!(first, fresh, "class {class}");
        assert_eq!(again, fresh, "class {class}, kept");
        let classes = |found: &[(usize, usize)]| found.iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(classes(&tabulated), classes(&fresh), "class {class}");
    }
}

/// Every index map's half tables, for each class, move and symmetry, give
/// the index of the twists the map makes of every valid twist vector,
/// and those twists are valid again (the derived flip included).
fn assert_tables_apply_the_maps(space: &OrientedSpace, puzzle: &Puzzle, classes: usize) {
    let modulus = puzzle.coding.as_ref().map(|c| &c.modulus[..]);
    let inverses: Vec<_> = puzzle.moves.iter().map(|m| m.undoing(modulus)).collect();
    let split = space.split();
    let step = (space.classes() / classes).max(1);
    for class in (0..space.classes()).step_by(step) {
        let rep = space.rep(class);
        for inverse in inverses.iter().map(Some).chain([None]) {
            for k in 0..space.order() {
                let map = AffineMap::new(space, &rep, inverse, k);
                for forward in [false, true] {
                    let (lo, hi) = map.tables(space, forward);
                    for index in crate::space::bits::set_bits(space.valid()) {
                        let twists = map.apply(space, &space.twists_at(index as u64), forward);
                        let image = space.join().of(lo[index % split as usize], hi[index / split as usize]);
                        assert_eq!(
                            u64::from(image),
                            space.twist_index(&twists),
                            "class {class}, element {k}"
                        );
                        assert_eq!(space.twists_at(u64::from(image)), twists, "class {class}, element {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn flips_store_only_even_vectors_and_their_tables_apply_the_maps() {
    // The 3×3×3's edges under U, R, F: nine edges that flip, the other
    // three fixed. A block holds the 2^8 flip vectors of even sum.
    let puzzle = tws("3x3x3.tws", " --nocorners --nocenters --moves U,R,F");
    let space = planned(&puzzle);
    assert_eq!(space.join(), Join::Xor);
    assert_eq!(space.block_states(), 256);
    assert_eq!(
        crate::space::bits::popcount(space.valid()),
        256,
        "every stored vector valid"
    );
    for index in 0..256 {
        let twists = space.twists_at(index);
        assert_eq!(
            twists.iter().map(|&t| u32::from(t)).sum::<u32>() % 2,
            0,
            "index {index}"
        );
        assert_eq!(space.twist_index(&twists), index);
    }
    assert_tables_apply_the_maps(&space, &puzzle, 40);
}

#[test]
fn corner_twists_keep_every_digit_and_their_tables_apply_the_maps() {
    // The 2×2×2: twists mod 3, so no digit is derived and the tables add.
    let puzzle = tws("2x2x2.tws", "");
    let space = planned(&puzzle);
    assert_eq!(space.join(), Join::Add);
    assert_eq!(crate::space::bits::popcount(space.valid()) * 3, space.block_states());
    assert_tables_apply_the_maps(&space, &puzzle, 20);
}
