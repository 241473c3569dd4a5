//! Running the in-process engine from tests, and checking its words.

use cayley_shared::job::Job;
use cayley_shared::puzzle::Puzzle;
use cayley_shared::search::engine::{search, SearchConfig, SearchOutcome, Silent};

/// Plans `puzzle` with `shard_pieces`, searches it completely on two
/// threads keeping up to `antipodes` antipodes, and returns both.
pub fn run_complete(puzzle: Puzzle, shard_pieces: Option<usize>, antipodes: usize) -> (Job, SearchOutcome) {
    let job = Job::new(puzzle, shard_pieces).unwrap();
    let config = SearchConfig {
        threads: 2,
        antipodes,
        ..Default::default()
    };
    let outcome = search(&job, &config, &Silent).unwrap();
    assert!(outcome.complete);
    (job, outcome)
}

/// Replays every antipode's word: it must solve the state in exactly
/// `diameter` legal moves.
pub fn assert_words_solve(job: &Job, outcome: &SearchOutcome) {
    let diameter = outcome.depths.len() - 1;
    for a in &outcome.antipodes {
        assert_eq!(a.solution.len(), diameter);
        let mut state = a.state.clone();
        for &m in &a.solution {
            state = job.puzzle.apply(&job.puzzle.moves[m], &state).expect("a legal move");
        }
        assert!(job.puzzle.is_solved(&state), "word does not solve {:?}", a.state);
    }
}
