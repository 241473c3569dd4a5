use super::test_support::{space, walk, PERMUTATIONS, SQUARES};
use super::*;
use crate::puzzle::{parse_puzzle, Metric};
use proptest::prelude::*;

#[test]
fn enumerated_classes_agree_with_burnside_and_cover_every_key() {
    for spec in [
        "loopover:2x3",
        "loopover:3x3",
        "loopover:2x4",
        "loopover:3x4",
        "sliding:3x3",
        "varikon",
        SQUARES,
    ] {
        let (_, r) = space(spec, Metric::Mtm);
        let keys = r.keys();
        let mut slot_blocks = Vec::new();
        let p = parse_puzzle(spec, Metric::Mtm).unwrap();
        for b in r.blocks() {
            slot_blocks.push(b.iter().map(|&piece| p.solved[piece as usize]).collect::<Vec<u8>>());
        }
        let burnside = plan::burnside_classes(&r.symmetries.slots, &slot_blocks, keys.domains());
        assert_eq!(keys.classes() as u128, burnside, "{}", spec);
        // Class sizes (|Σ| / |Stab|) add up to the number of keys.
        let covered: u64 = (0..keys.classes())
            .map(|c| r.symmetries.order() as u64 / keys.stabilizer(c) as u64)
            .sum();
        assert_eq!(covered, keys.total(), "{}", spec);
    }
}

#[test]
fn four_by_four_reduces_by_all_128_board_symmetries() {
    let p = parse_puzzle("loopover:4x4", Metric::Mtm).unwrap();
    let full = crate::puzzle::symmetry::Symmetries::generate(&p, &p.symmetries).unwrap();
    assert_eq!(full.order(), 128);
    let groups = [groups::Candidate {
        group: full,
        generators: p.symmetries.clone(),
    }];
    let best = plan::choose(&p, &groups, false).unwrap();
    assert_eq!(best.symmetries.order(), 128);
    assert_eq!(best.blocks.len(), 4, "the parity classes (r mod 2, c mod 2)");
    // Within 2% of 16!/128, the fewest a reduction by these 128 can store.
    let ideal = crate::space::rank::factorial(16) / 128;
    assert!(best.stored() < ideal * 102 / 100, "{} vs {}", best.stored(), ideal);
}

/// The 3×3×3's corner and edge permutations reduce by the cube's 48
/// symmetries to within 1% of `8!·12!/2 / 48` stored bits, with keys
/// ranked only where pieces go (34,650 edge colourings or fewer would do;
/// ranking over all 20 slots would not fit `MAX_KEYS`).
#[test]
fn the_cube_permutations_reduce_by_48_with_keys_in_their_orbits() {
    let (_, r) = space(PERMUTATIONS, Metric::Mtm);
    assert_eq!(r.symmetries.order(), 48);
    let order = crate::space::rank::factorial(8) * crate::space::rank::factorial(12) / 2;
    let ideal = order / 48;
    assert!(
        r.states() >= ideal && r.states() < ideal * 101 / 100,
        "{} vs {}",
        r.states(),
        ideal
    );
    let unrestricted = crate::space::rank::factorial(20)
        / r.blocks()
            .iter()
            .map(|b| crate::space::rank::factorial(b.len()))
            .product::<u128>();
    assert!(unrestricted > plan::MAX_KEYS && (r.keys().total() as u128) < plan::MAX_KEYS);
}

/// Layouts of one orbit and blocks of one size add nothing to the job's
/// fingerprint (their checkpoints resume as before); those with domains or
/// reordered digits name them, so older files are not read as theirs.
#[test]
fn only_new_layouts_mark_the_fingerprint() {
    for spec in ["loopover:3x4", "loopover:4x4", "sliding:3x3", "varikon"] {
        assert_eq!(space(spec, Metric::Mtm).1.layout_marks(), "", "{}", spec);
    }
    let cube = space(PERMUTATIONS, Metric::Mtm).1.layout_marks();
    assert!(cube.contains("domains=[") && cube.contains("digits=["), "{}", cube);
    assert!(space(SQUARES, Metric::Mtm).1.layout_marks().contains("domains=["));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// The stored form of a state is the same shard for its whole orbit,
    /// decodes to a member of the orbit, and locating it again finds itself.
    #[test]
    fn canonical_form_is_idempotent_and_constant_on_orbits(
        which in 0usize..6, seed in any::<u64>(), steps in 0usize..40,
    ) {
        let spec = ["loopover:3x4", "loopover:3x3", "loopover:2x5", "sliding:3x3", "varikon", SQUARES][which];
        let (p, r) = space(spec, Metric::Mtm);
        let state = walk(&p, seed, steps);
        let (shard, word, bit) = r.locate(&state);
        let index = word * 64 + bit as usize;
        let stored = r.state_at(shard, index);
        prop_assert!(r.symmetries.orbit(&state).contains(&stored));
        prop_assert_eq!(r.locate(&stored), (shard, word, bit));
        for k in 0..r.symmetries.order() {
            let image = r.symmetries.conjugate(k, &state);
            prop_assert_eq!(r.locate(&image).0, shard);
        }
    }
}

/// A map's rows in order, counted up digit by digit, are its rows one by
/// one (halved spaces too: 3×3 Loopover moves are even), and a map of
/// digit tables sends every state where the map of whole rows does.
#[test]
fn rows_in_order_are_each_row_in_either_form() {
    for spec in ["loopover:3x3", "loopover:3x4", "sliding:3x3", SQUARES] {
        let (p, r) = space(spec, Metric::Mtm);
        let row_states = r.fiber().row_states() as usize;
        let targets = |t: fiber::RowTable| (0..row_states).map(|c| t.at(c)).collect::<Vec<u64>>();
        for shard in [0, r.shards() / 3, r.shards() - 1] {
            let key = r.key(shard);
            let identity = crate::puzzle::perm::Perm::identity(p.solved.len());
            let map_of = |form| r.fiber_map(&key, &p.moves[0].perm, &identity, form).0;
            let whole = map_of(MapForm::Rows);
            let rows: Vec<(u64, Vec<u64>)> = whole.rows().map(|(b, t)| (b, targets(t))).collect();
            assert_eq!(rows.len() as u64, r.fiber().rows(), "{}", spec);
            assert!(whole.rows().all(|(_, t)| t.whole().is_some()));
            let digits = map_of(MapForm::Digits);
            assert!(
                digits.rows().all(|(_, t)| t.whole().is_none()),
                "{}: a map of digit tables was built of whole rows",
                spec
            );
            for (form, map) in [("rows", &whole), ("digits", &digits)] {
                for (i, (base, table)) in rows.iter().enumerate() {
                    let (b, t) = map.row(i as u64);
                    assert_eq!(
                        (*base, table),
                        (b, &targets(t)),
                        "{} {} shard {} row {}",
                        spec,
                        form,
                        shard,
                        i
                    );
                }
            }
        }
    }
}

/// Classes counted by Burnside's lemma over a shard's stabiliser are the
/// orbits counted one by one: sets closed under the stabiliser, made of a
/// few states and their images.
#[test]
fn classes_in_a_shard_are_its_orbits() {
    for spec in ["loopover:3x3", "loopover:2x5", "loopover:3x4", SQUARES] {
        let (_, r) = space(spec, Metric::Mtm);
        let rw = r.fiber().row_words();
        let mut checked = 0;
        for shard in (0..r.shards()).filter(|&s| r.keys.stabilizer(s as usize) > 1).take(5) {
            let stabilizer = r.keys.stabilizer_elements(shard as usize);
            let orbit = |bit: usize| -> Vec<usize> {
                let y = r.state_at(shard, bit);
                stabilizer
                    .iter()
                    .map(|&k| {
                        let (s, w, b) = r.locate(&r.symmetries.conjugate(k, &y));
                        assert_eq!(s, shard, "{}: the stabiliser keeps the shard", spec);
                        w * 64 + b as usize
                    })
                    .collect()
            };
            let valid: Vec<usize> = (0..r.shard_words() * 64)
                .filter(|&i| r.fiber().valid_mask((i / 64) % rw) >> (i % 64) & 1 == 1)
                .collect();
            // A few orbits (each symmetry's fixed states tried one by
            // one), and every state (its fixed states listed).
            for step in [valid.len() / 23 + 1, 1] {
                let mut words = vec![0u64; r.shard_words()];
                for &bit in valid.iter().step_by(step) {
                    for i in orbit(bit) {
                        words[i / 64] |= 1 << (i % 64);
                    }
                }
                let listed: Vec<u32> = (0..words.len() * 64)
                    .filter(|&i| words[i / 64] >> (i % 64) & 1 == 1)
                    .map(|i| i as u32)
                    .collect();
                let orbits: std::collections::BTreeSet<usize> = listed
                    .iter()
                    .map(|&i| orbit(i as usize).into_iter().min().expect("the identity at least"))
                    .collect();
                let count = listed.len() as u64;
                assert_eq!(
                    r.classes_in(shard, &words, count),
                    orbits.len() as u64,
                    "{} shard {}, {} states",
                    spec,
                    shard,
                    count
                );
            }
            checked += 1;
        }
        assert!(checked > 0, "{}: no shard with a stabiliser", spec);
    }
}

/// The states a stabiliser's symmetry fixes, listed from its map's digits,
/// are those whose state the symmetry leaves as it is, tried one by one;
/// past the limit none are listed.
#[test]
fn fixed_states_listed_are_those_a_symmetry_fixes() {
    let mut listed = 0;
    for spec in ["loopover:3x3", "loopover:2x5", "loopover:3x4", SQUARES] {
        let (_, r) = space(spec, Metric::Mtm);
        let row_bits = r.fiber().row_words() as u64 * 64;
        let valid: Vec<u64> = (0..r.shard_words() as u64 * 64)
            .filter(|&i| r.fiber().valid_mask(((i / 64) % (row_bits / 64)) as usize) >> (i % 64) & 1 == 1)
            .collect();
        for shard in (0..r.shards()).filter(|&s| r.keys.stabilizer(s as usize) > 1).take(3) {
            let key = r.key(shard);
            for k in r.keys.stabilizer_elements(shard as usize) {
                let (slots, pieces) = (&r.symmetries.slots[k], &r.symmetries.pieces[k]);
                let (map, _) = r.fiber_map(&key, slots, pieces, MapForm::Digits);
                let targets = r.fiber().digit_targets(pieces);
                let Some(states) = map.fixed_states(&targets, row_bits, usize::MAX) else {
                    continue;
                };
                let mut fixed = Vec::new();
                states.for_each(|i| fixed.push(i));
                assert_eq!(fixed.len(), states.len());
                fixed.sort_unstable();
                let tried: Vec<u64> = valid
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let y = r.state_at(shard, i as usize);
                        r.symmetries.conjugate(k, &y) == y
                    })
                    .collect();
                assert_eq!(fixed, tried, "{} shard {} symmetry {}", spec, shard, k);
                if !fixed.is_empty() {
                    assert!(map.fixed_states(&targets, row_bits, fixed.len() - 1).is_none());
                }
                listed += 1;
            }
        }
    }
    assert!(listed > 0, "no map in digit form");
}

/// The tables' bound rises to an eighth of a worker's budget (at most the
/// cap) only when the rest still holds a whole level and the step table,
/// and never falls.
#[test]
fn tables_take_an_eighth_of_a_budget_that_holds_a_level_besides() {
    let (_, r) = space("loopover:3x4", Metric::Mtm);
    let own = r.tables.bound() as u64;
    let steps = r.step_table_bytes();
    // An eighth of the budget, a byte short of leaving the level and the
    // step table beside it: unchanged.
    let budget = (own + 1) * 8;
    let short = (budget - budget / 8 - steps) as u128 + 1;
    r.fit_tables_to(budget, short);
    assert_eq!(r.tables.bound() as u64, own, "raised beside a level that does not fit");
    r.fit_tables_to(budget, short - 1);
    assert_eq!(r.tables.bound() as u64, budget / 8, "an eighth of the budget");
    r.fit_tables_to(budget / 2, 0);
    assert_eq!(r.tables.bound() as u64, budget / 8, "a smaller budget lowered it");
    r.fit_tables_to(1 << 40, 1 << 30);
    assert_eq!(r.tables.bound(), tables::MAX_TABLE_CACHE_BYTES, "past the cap");
}
