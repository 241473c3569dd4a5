//! `cayley resume --max-depth D`: a search cut at its depth limit goes on
//! from the levels it has, and a job whose puzzle is ranked by its group
//! (a `perm:` file of a group smaller than its symmetric group) resumes at
//! all, and goes deeper. Tables: tests/data/loopover-mtm.csv (Jia, Zhang
//! and Xiang's Table 1) and the independent hash-set BFS of `cayley_tests`.

use cayley_tests::checkpoint::{assert_refused, assert_success};
use cayley_tests::published::published_loopover_mtm;
use cayley_tests::run::perm_file;
use cayley_tests::{cayley, json_u64s, read_json, reference_bfs, test_dir};
use std::path::Path;

/// `cayley ARGS…`, which must succeed.
fn ok(args: &[&str]) {
    assert_success(&cayley(args));
}

/// `cayley ARGS…`, which must be refused with one error line naming `needle`.
fn refused(args: &[&str], needle: &str) {
    assert_refused(&cayley(args), needle);
}

/// The depths of `out`'s result.json and whether it is complete.
fn table(out: &Path) -> (Vec<u64>, bool) {
    let json = read_json(&out.join("result.json")).expect("result.json");
    (json_u64s(&json["depths"]), json["complete"] == true)
}

#[test]
fn a_cut_search_goes_deeper_on_resume() {
    let published = published_loopover_mtm("3x3");
    for keep in ["all", "last2", "every:3"] {
        let dir = test_dir();
        let (ck, out) = (dir.path().join("ck"), dir.path().join("out"));
        let (ck, out_s) = (ck.to_str().unwrap(), out.to_str().unwrap());
        let run = ["run", "loopover:3x3", "--max-depth", "3", "--keep-levels", keep, "-q"];
        ok(&[&run[..], &["--checkpoint-dir", ck, "--out", out_s]].concat());
        assert_eq!(table(&out), (published[..4].to_vec(), false), "{keep}");
        // Not deeper than the job has: refused, the checkpoint as it was.
        let manifest = std::fs::read(Path::new(ck).join("manifest.json")).unwrap();
        refused(&["resume", ck, "--max-depth", "3"], "has reached depth 3 already");
        assert_eq!(std::fs::read(Path::new(ck).join("manifest.json")).unwrap(), manifest);
        ok(&["resume", ck, "--max-depth", "6", "-q"]);
        assert_eq!(table(&out), (published[..7].to_vec(), false), "{keep}");
        // Past the diameter: to the end, complete.
        ok(&["resume", ck, "--max-depth", "100", "-q"]);
        assert_eq!(table(&out), (published.clone(), true), "{keep}");
        let json = read_json(&out.join("result.json")).unwrap();
        assert_eq!(json["diameter"], 8);
        refused(&["resume", ck, "--max-depth", "200"], "the job is complete");
        // A plain resume of the finished job rewrites the same table.
        ok(&["resume", ck, "-q"]);
        assert_eq!(table(&out), (published.clone(), true), "{keep}");
    }
}

#[test]
fn a_job_ranked_by_its_group_resumes_and_goes_deeper() {
    // PSL(2,7), order 168, on 7 points by a 7-cycle and (1 2)(3 5): ranked
    // by its group, as 7! is 30 times larger. Its recorded plan was rebuilt
    // as blocks on resume, another job ("the checkpoint belongs to another
    // job"), before `Job::recorded`.
    let seven = vec![1u8, 2, 3, 4, 5, 6, 0];
    let pair = vec![1u8, 0, 4, 3, 2, 5, 6];
    let dir = test_dir();
    let spec = perm_file(dir.path(), "psl27.txt", &[seven.clone(), pair.clone()]);
    // Directed: the words are positive, as the reference BFS applies the
    // generators it is given.
    let expected = reference_bfs(&[seven, pair]);
    assert_eq!(expected.iter().sum::<u64>(), 168);
    let (ck, out) = (dir.path().join("ck"), dir.path().join("out"));
    let (ck, out_s) = (ck.to_str().unwrap(), out.to_str().unwrap());
    ok(&[
        "run",
        &spec,
        "--directed",
        "--max-depth",
        "3",
        "-q",
        "--checkpoint-dir",
        ck,
        "--out",
        out_s,
    ]);
    assert_eq!(table(&out), (expected[..4].to_vec(), false));
    ok(&["resume", ck, "-q"]);
    assert_eq!(table(&out), (expected[..4].to_vec(), false));
    ok(&["resume", ck, "--max-depth", "1000", "-q"]);
    assert_eq!(table(&out), (expected, true));
}
