//! The engine against the independent hash-set BFS of `cayley_tests`.

use cayley_shared::job::Job;
use cayley_shared::puzzle::perm::Perm;
use cayley_shared::puzzle::{from_generators, parse_puzzle, Metric, Puzzle};
use cayley_shared::search::engine::{search, SearchConfig, Silent};
use cayley_tests::{loopover_generators, reference_bfs};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

fn engine_table(puzzle: Puzzle, shard_pieces: Option<usize>) -> (Vec<u64>, u128) {
    let job = Job::new(puzzle, shard_pieces).unwrap();
    let outcome = search(
        &job,
        &SearchConfig {
            threads: 2,
            antipodes: 2,
            ..Default::default()
        },
        &Silent,
    )
    .unwrap();
    (outcome.depths, job.group_order)
}

#[test]
fn loopover_stm_matches_reference_bfs() {
    for (r, c) in [(2, 3), (2, 4), (3, 3)] {
        let expected = reference_bfs(&loopover_generators(r, c, true));
        let (depths, order) = engine_table(
            parse_puzzle(&format!("loopover:{}x{}", r, c), Metric::Stm).unwrap(),
            None,
        );
        assert_eq!(depths, expected, "loopover:{}x{} stm", r, c);
        assert_eq!(order, expected.iter().sum::<u64>() as u128);
    }
}

#[test]
fn loopover_mtm_generators_match_reference_bfs() {
    // Also checks the puzzle module builds the same generators as the rules.
    let expected = reference_bfs(&loopover_generators(2, 4, false));
    let (depths, _) = engine_table(parse_puzzle("loopover:2x4", Metric::Mtm).unwrap(), Some(1));
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
    for case in 0..40 {
        let n = 3 + case % 7; // 3..=9 points
        let count = 1 + case % 3;
        let mut gens: Vec<Vec<u8>> = Vec::new();
        for _ in 0..count {
            let g = random_perm(n, &mut rng);
            let inv = Perm::from_images(g.clone()).unwrap().inverse().images().to_vec();
            for p in [g, inv] {
                if !gens.contains(&p) && p.iter().enumerate().any(|(i, &x)| i != x as usize) {
                    gens.push(p);
                }
            }
        }
        if gens.is_empty() {
            continue;
        }
        let expected = reference_bfs(&gens);
        let perms = gens.iter().map(|g| Perm::from_images(g.clone()).unwrap()).collect();
        let puzzle = from_generators(&format!("random-{}", case), n, perms);
        let shard_pieces = if n > 7 { Some(case % (n - 6)) } else { None };
        let (depths, order) = engine_table(puzzle, shard_pieces);
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
    let job = Job::new(parse_puzzle("loopover:2x5", Metric::Mtm).unwrap(), None).unwrap();
    let outcome = search(
        &job,
        &SearchConfig {
            threads: 2,
            antipodes: 10,
            ..Default::default()
        },
        &Silent,
    )
    .unwrap();
    let diameter = outcome.depths.len() - 1;
    assert_eq!(outcome.antipodes.len(), 10);
    for a in &outcome.antipodes {
        assert_eq!(a.solution.len(), diameter);
        let mut state = a.state.clone();
        for &m in &a.solution {
            state = job.puzzle.apply(&job.puzzle.moves[m], &state).unwrap();
        }
        assert!(
            state.iter().enumerate().all(|(i, &s)| i == s as usize),
            "word does not solve {:?}",
            a.state
        );
    }
}
