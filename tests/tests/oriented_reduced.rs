//! Distinct oriented pieces reduced by their symmetries of slots and twists
//! (shared/src/space/oriented.rs, shared/src/kernel/oriented.rs), through
//! `cayley run` on `.tws` files built from the cube's geometry
//! (tests/src/cube.rs):
//! - the 2×2×2 with all six faces (48 symmetries) gives Jerry Bryan's
//!   published tables in both metrics (tests/data/cube-tables.csv), and
//!   its antipodes' words solve them;
//! - <U, R> (4 symmetries; small enough to be reduced for any saving) gives
//!   the states and the classes of symmetric states per depth of a plain
//!   search over sticker permutations, classes named by their least
//!   conjugate under the cube's motions that keep {U, R} (both written from
//!   the geometry, not from cayley's symmetry search);
//! - the tipless pyraminx, and its edges alone (flips only: each block
//!   stores only the flips of even sum, the last flip derived), against a
//!   plain search of the tetrahedron's stickers, class by class.

use cayley_shared::space::Space;
use cayley_tests::cube::{cube_sticker_generators, cube_sticker_symmetries, cube_tws};
use cayley_tests::pyraminx::{
    edge_stickers_only, pyraminx_sticker_generators, pyraminx_sticker_symmetries, pyraminx_tws,
};
use cayley_tests::run::{assert_words_solve, run_complete, Finished};
use cayley_tests::symmetry::classes_by_depth;
use cayley_tests::{cayley, cayley_env, json_u64s, published_table, read_json, test_dir};

/// Runs the 2×2×2 with `faces` in `metric`; checks that it was reduced by
/// `order` symmetries and that its antipodes' words solve them.
fn run_reduced(faces: &str, metric: &str, order: usize) -> Finished {
    let dir = test_dir();
    let path = dir.path().join("cube.tws");
    std::fs::write(&path, cube_tws(2, faces)).unwrap();
    let run = run_complete(&format!("tws:{} --metric {metric} --antipodes 5", path.display()));
    let Space::Oriented(space) = &run.job.space else {
        panic!("{faces}: reduced by its symmetries of slots and twists")
    };
    assert_eq!(space.order(), order, "{faces}: symmetries");
    assert!(space.states() < run.job.group_order, "{faces}: fewer bits than states");
    assert_words_solve(&run);
    run
}

#[test]
fn the_six_face_cube_reduced_by_48_symmetries_gives_the_published_tables() {
    for (metric, name) in [("mtm", "corners-htm"), ("stm", "corners-qtm")] {
        let run = run_reduced("URFDLB", metric, 48);
        assert_eq!(run.result.depths, published_table("cube-tables.csv", name), "{metric}");
    }
}

#[test]
fn a_small_reduced_cube_matches_a_plain_search_state_by_state_and_class_by_class() {
    let run = run_reduced("UR", "mtm", 4);
    let motions = cube_sticker_symmetries(2, "UR");
    assert_eq!(motions.len(), 4, "the motions fixing the UR edge");
    let (states, classes) = classes_by_depth(&cube_sticker_generators(2, "UR", true), &motions);
    assert_eq!(states.iter().sum::<u64>(), 29_160);
    assert_eq!(run.result.depths, states);
    assert_eq!(run.result.depths_reduced, classes);
}

#[test]
fn a_reduced_cube_stopped_by_a_full_disk_resumes_to_the_published_table() {
    // The manifest records no shard pieces for a reduced job, and resume
    // must plan the same reduced space from it (same fingerprint).
    let dir = test_dir();
    let path = dir.path().join("cube.tws");
    std::fs::write(&path, cube_tws(2, "URFDLB")).unwrap();
    let (ck, out) = (dir.path().join("ck"), dir.path().join("out"));
    let spec = format!("tws:{}", path.display());
    let (ck_arg, out_arg) = (ck.to_str().unwrap(), out.to_str().unwrap());
    let args = ["run", &spec, "--checkpoint-dir", ck_arg, "--out", out_arg, "-q"];
    let stopped = cayley_env(&args, &[("CAYLEY_FAULT_DISK_FULL", "7:3")]);
    assert!(!stopped.status.success(), "the injected full disk went unnoticed");
    let resumed = cayley(&["resume", ck_arg, "-q"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let result = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(
        json_u64s(&result["depths"]),
        published_table("cube-tables.csv", "corners-htm")
    );
    assert_eq!(result["symmetries"], 48);
}

/// Runs the tipless pyraminx with `options`, checks that it was reduced by
/// the tetrahedron's 24 motions, that its states and classes per depth
/// are those of a plain search of `generators` under `motions` (sticker
/// permutations) and that its antipodes' words solve them. Returns the
/// bits a block holds.
fn assert_pyraminx_matches(options: &str, generators: &[Vec<u8>], motions: &[Vec<u8>], positions: u64) -> u64 {
    let dir = test_dir();
    let path = dir.path().join("pyraminx.tws");
    std::fs::write(&path, pyraminx_tws()).unwrap();
    let run = run_complete(&format!("tws:{}{} --antipodes 5", path.display(), options));
    let Space::Oriented(space) = &run.job.space else {
        panic!("{options}: reduced by its symmetries of slots and twists")
    };
    assert_eq!(motions.len(), 24, "the tetrahedron's rotations and mirror images");
    assert_eq!(space.order(), 24, "{options}");
    let (states, classes) = classes_by_depth(generators, motions);
    assert_eq!(states.iter().sum::<u64>(), positions, "{options}");
    assert_eq!(run.result.depths, states, "{options}");
    assert_eq!(run.result.depths_reduced, classes, "{options}");
    assert_words_solve(&run);
    space.block_states()
}

#[test]
fn the_tipless_pyraminx_reduced_by_its_24_symmetries_matches_a_plain_search() {
    // Axial pieces turn in place (free twists, orbits of one slot) and
    // edges form a second orbit: arrangements ranked orbit by orbit.
    let generators = pyraminx_sticker_generators();
    let motions = pyraminx_sticker_symmetries();
    let block = assert_pyraminx_matches("", &generators, &motions, 933_120);
    assert_eq!(block, 81 * 64, "four free axial twists, six edge flips");
}

#[test]
fn the_pyraminx_edges_stored_as_even_flips_only_match_a_plain_search() {
    // Six edges, flips only, their sum even: a block keeps 2^5 flip
    // vectors (the sixth flip is the sum of the others) and the index
    // maps are affine over GF(2).
    let generators = edge_stickers_only(&pyraminx_sticker_generators());
    let motions = edge_stickers_only(&pyraminx_sticker_symmetries());
    // Even permutations of six edges, even flips.
    let block = assert_pyraminx_matches(" --omit AXIAL", &generators, &motions, 360 * 32);
    assert_eq!(block, 32, "only the even flip vectors of six edges");
}
