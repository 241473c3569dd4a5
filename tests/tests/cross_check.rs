//! `cayley run` against the independent hash-set BFS of `cayley_tests`.

use cayley_shared::puzzle::perm::Perm;
use cayley_tests::run::{assert_words_solve, perm_file, run_complete, shard_pieces};
use cayley_tests::{loopover_generators, reference_bfs, test_dir};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// The table and group order of `cayley run ARGS`.
fn run_table(args: &str) -> (Vec<u64>, u128) {
    let run = run_complete(&format!("{} --antipodes 2", args));
    (run.result.depths, run.job.group_order)
}

#[test]
fn loopover_stm_matches_reference_bfs() {
    for (r, c) in [(2, 3), (2, 4), (3, 3)] {
        let expected = reference_bfs(&loopover_generators(r, c, true));
        let (depths, order) = run_table(&format!("loopover:{}x{} --metric stm", r, c));
        assert_eq!(depths, expected, "loopover:{}x{} stm", r, c);
        assert_eq!(order, expected.iter().sum::<u64>() as u128);
    }
}

#[test]
fn loopover_mtm_generators_match_reference_bfs() {
    // Also checks the puzzle module builds the same generators as the rules.
    let expected = reference_bfs(&loopover_generators(2, 4, false));
    let (depths, _) = run_table("loopover:2x4 --no-symmetry --shard-pieces 1");
    assert_eq!(depths, expected);
}

/// A random permutation of `n` points.
fn random_perm(n: usize, rng: &mut StdRng) -> Vec<u8> {
    let mut v: Vec<u8> = (0..n as u8).collect();
    v.shuffle(rng);
    v
}

#[test]
fn random_generator_sets_match_reference_bfs() {
    let mut rng = StdRng::seed_from_u64(0x5eed_ca11);
    let dir = test_dir();
    for case in 0..40 {
        let n = 3 + case % 7; // 3..=9 points
        let count = 1 + case % 3;
        // The generators of the perm file, and with their inverses, which
        // `perm:` adds, those of the reference.
        let mut written: Vec<Vec<u8>> = Vec::new();
        let mut gens: Vec<Vec<u8>> = Vec::new();
        for _ in 0..count {
            let g = random_perm(n, &mut rng);
            if g.iter().enumerate().all(|(i, &x)| i == x as usize) || gens.contains(&g) {
                continue;
            }
            let inv = Perm::from_images(g.clone()).unwrap().inverse().images().to_vec();
            written.push(g.clone());
            for p in [g, inv] {
                if !gens.contains(&p) {
                    gens.push(p);
                }
            }
        }
        if gens.is_empty() {
            continue;
        }
        let expected = reference_bfs(&gens);
        let spec = perm_file(dir.path(), &format!("random-{}.txt", case), &written);
        let k = if n > 7 { Some(case % (n - 6)) } else { None };
        let (depths, order) = run_table(&format!("{}{}", spec, shard_pieces(k)));
        assert_eq!(depths, expected, "case {} with generators {:?}", case, gens);
        assert_eq!(
            order,
            expected.iter().sum::<u64>() as u128,
            "Schreier–Sims order, case {}",
            case
        );
    }
}

#[test]
fn antipode_words_solve_their_states_in_diameter_moves() {
    let run = run_complete("loopover:2x5 --antipodes 10");
    assert_eq!(run.antipodes.len(), 10);
    // Solved is the identity: checked here without the puzzle's own test.
    assert!(run.job.puzzle.solved.iter().enumerate().all(|(i, &s)| i == s as usize));
    assert_words_solve(&run);
}
