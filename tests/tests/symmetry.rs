//! Symmetry reduction end to end (docs/ARCHITECTURE.md, "Symmetry reduction"): `cayley run` reduces Loopover
//! and the other families with symmetries by default, and its tables are
//! the published ones (tests/data/loopover-mtm.csv) or those of the plain
//! hash-set BFS; its class counts are Burnside's, computed from centraliser
//! sizes, and per depth those of a brute-force BFS over every state.

use cayley_tests::published::published_loopover_mtm;
use cayley_tests::symmetry::{burnside_classes, classes_by_depth, closure, loopover_symmetry};
use cayley_tests::{
    cayley, cube_adjacency, grid_adjacency, json_u64s, loopover_generators, reference_bfs, reference_blank_bfs,
    run_complete, stderr_text, test_dir,
};

/// `cayley run SPEC extra…` into a fresh folder; its result.json.
fn run(spec: &str, extra: &[&str]) -> serde_json::Value {
    let dir = test_dir();
    run_complete(&dir.path().join("out"), spec, extra)
}

/// The group a result says it was reduced by, rebuilt from the board.
fn group_of(json: &serde_json::Value, rows: usize, cols: usize) -> Vec<Vec<u8>> {
    let names: Vec<&str> = json["symmetry_generators"]
        .as_array()
        .expect("generators")
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let gens: Vec<Vec<u8>> = names.iter().map(|n| loopover_symmetry(rows, cols, n)).collect();
    let group = closure(&gens);
    assert_eq!(group.len() as u64, json["symmetries"].as_u64().unwrap());
    group
}

#[test]
fn reduced_loopover_tables_are_the_published_ones() {
    for board in ["2x2", "2x3", "2x4", "2x5", "3x3"] {
        let spec = format!("loopover:{}", board);
        let json = run(&spec, &[]);
        assert!(json["symmetries"].as_u64().unwrap() > 1, "{} was not reduced", spec);
        assert_eq!(json_u64s(&json["depths"]), published_loopover_mtm(board), "{}", spec);
        // Fewer bits than states were stored.
        let stored: u64 = json_u64s(&json["depths_stored"]).iter().sum();
        assert!(stored < json["states"].as_u64().unwrap(), "{}", spec);
    }
    // And the same without reduction.
    let plain = run("loopover:2x5", &["--no-symmetry"]);
    assert_eq!(plain["symmetries"], 1);
    assert_eq!(json_u64s(&plain["depths"]), published_loopover_mtm("2x5"));
}

#[test]
fn reduced_stm_tables_equal_the_reference_bfs() {
    for (r, c) in [(2, 3), (2, 4), (3, 3)] {
        let json = run(&format!("loopover:{}x{}", r, c), &["--metric", "stm"]);
        assert!(json["symmetries"].as_u64().unwrap() > 1);
        assert_eq!(
            json_u64s(&json["depths"]),
            reference_bfs(&loopover_generators(r, c, true))
        );
    }
}

#[test]
fn class_counts_are_those_of_a_brute_force_search() {
    for (r, c, stm) in [(2, 3, false), (2, 4, false), (3, 3, false), (2, 4, true)] {
        let metric = if stm { "stm" } else { "mtm" };
        let json = run(&format!("loopover:{}x{}", r, c), &["--metric", metric]);
        let group = group_of(&json, r, c);
        let (states, classes) = classes_by_depth(&loopover_generators(r, c, stm), &group);
        assert_eq!(json_u64s(&json["depths"]), states, "{}x{} {}", r, c, metric);
        assert_eq!(json_u64s(&json["depths_reduced"]), classes, "{}x{} {}", r, c, metric);
    }
}

#[test]
fn class_totals_follow_burnside_and_states_sum_to_the_group_order() {
    // 3×4: 12! states; 3×3: the even permutations (tests/data/published.md).
    for (r, c, alternating) in [(3, 4, false), (3, 3, true), (2, 5, false)] {
        let json = run(&format!("loopover:{}x{}", r, c), &[]);
        let order: u128 = (1..=(r * c) as u128).product::<u128>() / if alternating { 2 } else { 1 };
        let states: u128 = json_u64s(&json["depths"]).iter().map(|&x| x as u128).sum();
        assert_eq!(states, order, "{}x{}", r, c);
        let classes: u128 = json_u64s(&json["depths_reduced"]).iter().map(|&x| x as u128).sum();
        assert_eq!(
            classes,
            burnside_classes(&group_of(&json, r, c), alternating),
            "{}x{}",
            r,
            c
        );
    }
}

#[test]
fn guarded_puzzles_reduce_by_the_reflections_that_keep_the_blank_home() {
    let sliding = run("sliding:3x3", &[]);
    assert_eq!(sliding["symmetries"], 2, "the transpose");
    assert_eq!(
        json_u64s(&sliding["depths"]),
        reference_blank_bfs(&grid_adjacency(3, 3))
    );
    let varikon = run("varikon", &[]);
    assert_eq!(varikon["symmetries"], 6, "exchanges of the three axes");
    assert_eq!(json_u64s(&varikon["depths"]), reference_blank_bfs(&cube_adjacency()));
}

#[test]
fn antipodes_of_a_reduced_run_name_their_class() {
    let json = run("loopover:2x4", &["--antipodes", "5"]);
    let group = group_of(&json, 2, 4);
    for a in json["antipodes"].as_array().unwrap() {
        let labels: Vec<u8> = a["state"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().parse::<u8>().unwrap() - 1)
            .collect();
        // Position notation from the slot contents, then its class.
        let mut state = vec![0u8; labels.len()];
        for (slot, &piece) in labels.iter().enumerate() {
            state[piece as usize] = slot as u8;
        }
        let class: std::collections::HashSet<Vec<u8>> = group
            .iter()
            .map(|s| cayley_tests::symmetry::conjugate(s, &state))
            .collect();
        assert_eq!(a["class_size"].as_u64().unwrap(), class.len() as u64);
        assert_eq!(a["word"].as_str().unwrap().split_whitespace().count(), 8);
    }
}

#[test]
fn a_perm_file_may_declare_symmetries_and_a_false_one_is_refused() {
    let dir = test_dir();
    let good = dir.path().join("a5.txt");
    // A5 from (1 2 3) and (3 4 5) (tests/data/published.md); (1 5)(2 4) swaps the two
    // generators' roles, up to inverses.
    std::fs::write(&good, "a: (1,2,3)\nb: (3,4,5)\nsymmetry flip: (1,5)(2,4)\n").unwrap();
    let spec = format!("perm:{}", good.display());
    let json = run(&spec, &[]);
    assert_eq!(json["symmetries"], 2);
    let gens = vec![
        vec![1, 2, 0, 3, 4],
        vec![0, 1, 3, 4, 2],
        vec![2, 0, 1, 3, 4],
        vec![0, 1, 4, 2, 3],
    ];
    assert_eq!(json_u64s(&json["depths"]), reference_bfs(&gens));
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "a: (1,2,3)\nb: (3,4,5)\nsymmetry twist: (1,4)\n").unwrap();
    let o = cayley(&["info", &format!("perm:{}", bad.display())]);
    let err = stderr_text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.txt:3") && err.contains("'twist' is not a symmetry"),
        "{}",
        err
    );
    assert_eq!(err.trim().lines().count(), 1, "{}", err);
}
