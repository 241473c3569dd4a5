//! Directed generator sets (`perm:FILE --directed`): distances are lengths
//! of positive words, checked against the independent hash-set BFS (which
//! applies exactly the generators it is given, so it is directed too), the
//! group order, and words that must rebuild their states.

use cayley_tests::run::{assert_words_solve, perm_file, run_complete, shard_pieces, Finished};
use cayley_tests::{
    cayley, cayley_env, json_u64s, read_json, reference_bfs, reference_tracked_bfs, stderr_text, test_dir,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Replays every antipode's word from solved: it must build the state in
/// exactly `diameter` moves.
fn words_build_states(run: &Finished) {
    assert!(run.job.directed);
    assert!(!run.antipodes.is_empty());
    assert_words_solve(run);
}

#[test]
fn random_directed_generator_sets_match_reference_bfs() {
    let mut rng = StdRng::seed_from_u64(0xd1_7ec7ed);
    let dir = test_dir();
    for case in 0..30 {
        let n = 4 + case % 6; // 4..=9 points
        let gens: Vec<Vec<u8>> = (0..1 + case % 2)
            .map(|_| {
                let mut v: Vec<u8> = (0..n as u8).collect();
                v.shuffle(&mut rng);
                v
            })
            .filter(|g| g.iter().enumerate().any(|(i, &x)| i != x as usize))
            .collect();
        if gens.is_empty() {
            continue;
        }
        let spec = perm_file(dir.path(), &format!("directed-{}.txt", case), &gens);
        let k = if n > 7 { Some(case % (n - 6)) } else { None };
        let run = run_complete(&format!("{} --directed{} --antipodes 2", spec, shard_pieces(k)));
        let expected = reference_bfs(&gens);
        assert_eq!(run.result.depths, expected, "case {} with generators {:?}", case, gens);
        assert_eq!(run.job.group_order, expected.iter().sum::<u64>() as u128);
        if !run.job.directed {
            continue; // a generator that is an involution is its own inverse
        }
        words_build_states(&run);
    }
}

#[test]
fn directed_perm_file_and_its_tracked_coset_space() {
    // S5 by the 5-cycle and a transposition, without the 5-cycle's inverse.
    let dir = test_dir();
    let path = dir.path().join("s5.txt");
    std::fs::write(&path, "c: (1 2 3 4 5)\nt: (1 2)\n").unwrap();
    let spec = format!("perm:{} --directed", path.display());
    let gens = vec![vec![1u8, 2, 3, 4, 0], vec![1u8, 0, 2, 3, 4]];
    let run = run_complete(&format!("{} --antipodes 5", spec));
    assert!(run.job.directed);
    assert_eq!(run.job.puzzle.moves.len(), 2, "no inverse added");
    assert_eq!(run.result.depths, reference_bfs(&gens));
    assert_eq!(run.result.depths.iter().sum::<u64>(), 120);
    words_build_states(&run);
    // The undirected graph of the same file is a different, shallower table.
    let undirected = run_complete(&format!("perm:{} --antipodes 0", path.display()));
    assert!(undirected.result.depths.len() < run.result.depths.len());
    // Tracking pieces 1 and 2 of the directed graph: BFS over their places.
    let tracked = run_complete(&format!("{} --track 1,2 --antipodes 3", spec));
    let expected = reference_tracked_bfs(&gens, &[0u8, 1]);
    assert_eq!(tracked.result.depths, expected);
    assert_eq!(tracked.result.depths.iter().sum::<u64>(), 20);
    words_build_states(&tracked);
}

#[test]
fn directed_jobs_run_through_workers_and_refuse_last2() {
    let dir = test_dir();
    // S9 by the 9-cycle and a transposition (nine points: up to two key pieces).
    let gens: Vec<Vec<u8>> = vec![(1..9).chain([0]).collect(), vec![1, 0, 2, 3, 4, 5, 6, 7, 8]];
    let spec = perm_file(dir.path(), "s9.txt", &gens);
    let out = dir.path().join("out");
    // Two in-process workers over gRPC, several shards, zstd checkpoints.
    let o = cayley(&[
        "run",
        &spec,
        "--directed",
        "--workers",
        "2",
        "--shard-pieces",
        "1",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    let json = read_json(&out.join("result.json")).unwrap();
    let depths = json_u64s(&json["depths"]);
    assert_eq!(depths, reference_bfs(&gens));
    assert_eq!(json["directed"], true);
    assert_eq!(json["complete"], true);
    let refused = dir.path().join("refused");
    let refused = refused.to_str().unwrap();
    for keep in ["last2", "every:2"] {
        let o = cayley(&[
            "run",
            &spec,
            "--directed",
            "--keep-levels",
            keep,
            "-q",
            "--out",
            refused,
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr_text(&o).contains(&format!("--keep-levels {} cannot be used", keep)),
            "{}",
            stderr_text(&o)
        );
    }
    let o = cayley(&["run", "loopover:2x2", "--directed", "-q", "--out", refused]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr_text(&o).contains("--directed applies to perm: files"),
        "{}",
        stderr_text(&o)
    );
}

#[test]
fn a_directed_tracked_job_stopped_by_a_full_disk_resumes_to_the_same_table() {
    // The options ride in the job's spec string, so `resume` rebuilds the
    // same directed coset space from manifest.json alone.
    let dir = test_dir();
    let gens: Vec<Vec<u8>> = vec![(1..9).chain([0]).collect(), vec![1, 0, 2, 3, 4, 5, 6, 7, 8]];
    let path = dir.path().join("s9.txt");
    std::fs::write(&path, "g1: (1,2,3,4,5,6,7,8,9)\ng2: (1,2)\n").unwrap();
    let spec = format!("perm:{}", path.display());
    let (ck, out) = (dir.path().join("ck"), dir.path().join("out"));
    let (ck, out) = (ck.to_str().unwrap(), out.to_str().unwrap());
    let run = [
        "run",
        &spec,
        "--directed",
        "--track",
        "1-3",
        "--shard-pieces",
        "2",
        "--checkpoint-dir",
        ck,
        "--out",
        out,
        "-q",
    ];
    let o = cayley_env(&run, &[("CAYLEY_FAULT_DISK_FULL", "6:5")]);
    assert!(!o.status.success(), "the injected full disk went unnoticed");
    assert!(stderr_text(&o).contains("disk full"), "{}", stderr_text(&o));
    let o = cayley(&["resume", ck, "--out", out, "-q"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    let json = read_json(&std::path::Path::new(out).join("result.json")).unwrap();
    assert_eq!(json["puzzle"], format!("{} --directed --track 1-3", spec));
    let depths = json_u64s(&json["depths"]);
    let expected = reference_tracked_bfs(&gens, &[0u8, 1, 2]);
    assert_eq!(expected.iter().sum::<u64>(), 9 * 8 * 7);
    assert_eq!(depths, expected);
}
