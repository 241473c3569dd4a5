//! Inputs around a run (the table of bad input is tests/tests/misuse.rs):
//! `resume` writes to the folder the run was started with; default result folders
//! have no stray dashes; the run header counts moves, not guarded
//! generators. Tables: Loopover 2×3 MTM from tests/data/loopover-mtm.csv.

mod common;

use cayley_tests::checkpoint::printed_resume_dir;
use common::{cayley, stderr, stdout};
use std::path::Path;
use std::process::Command;

/// Published depth table of Loopover 2×3 MTM, tests/data/loopover-mtm.csv.
fn loopover_2x3() -> Vec<u64> {
    cayley_tests::published::published_loopover_mtm("2x3")
}

/// `cayley args…` run in `cwd`, with extra environment.
fn cayley_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cayley"))
        .current_dir(cwd)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run cayley")
}

fn depths(out: &Path) -> Vec<u64> {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    json["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn the_printed_resume_command_writes_to_the_folder_the_run_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let (out, elsewhere) = (dir.path().join("results"), dir.path().join("elsewhere"));
    std::fs::create_dir(&elsewhere).unwrap();
    for kept in [false, true] {
        let mut args = vec!["run", "loopover:2x3", "-q", "--out", out.to_str().unwrap()];
        let ck = dir.path().join("ck");
        let scratch = dir.path().join("scratch");
        if kept {
            args.extend(["--checkpoint-dir", ck.to_str().unwrap()]);
        } else {
            args.extend(["--scratch", scratch.to_str().unwrap()]);
        }
        // Stopped by an injected full disk while writing level 3: the result
        // folder exists (made up front) but holds nothing yet.
        let o = cayley_in(dir.path(), &args, &[("CAYLEY_FAULT_DISK_FULL", "3:0")]);
        assert_eq!(o.status.code(), Some(1), "the injected full disk went unnoticed");
        assert!(out.is_dir() && !out.join("result.json").exists());
        // Exactly the printed command, from another directory.
        let printed = printed_resume_dir(&stderr(&o));
        let o = cayley_in(&elsewhere, &["resume", printed.to_str().unwrap()], &[]);
        let err = stderr(&o);
        assert!(o.status.success(), "{}", err);
        assert!(err.contains(&format!("results go to {}", out.display())), "{}", err);
        assert_eq!(depths(&out), loopover_2x3());
        assert!(
            !elsewhere.join("cayley-out").exists(),
            "resume fell back to the default folder"
        );
        std::fs::remove_dir_all(&out).unwrap();
        if !kept {
            // The run's temporary checkpoint is removed by the resume that
            // finishes it, as the run would have, and the resume says so.
            assert!(!printed.exists(), "{} is left", printed.display());
            assert!(
                stdout(&o).contains("removed the temporary checkpoint"),
                "{}",
                stdout(&o)
            );
            continue;
        }
        // Another folder, once given, is the one the next resume keeps.
        let other = dir.path().join("other");
        let o = cayley(&[
            "resume",
            printed.to_str().unwrap(),
            "-q",
            "--out",
            other.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = cayley_in(&elsewhere, &["resume", printed.to_str().unwrap()], &[]);
        assert!(stderr(&o).contains(&format!("results go to {}", other.display())));
        assert_eq!(depths(&other), loopover_2x3());
        std::fs::remove_dir_all(&other).unwrap();
        std::fs::remove_dir_all(&printed).unwrap();
    }
}

#[test]
fn default_result_folders_have_single_dashes() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let o = cayley_in(
        dir.path(),
        &[
            "run",
            "loopover:2x3",
            "--no-symmetry",
            "-q",
            "--scratch",
            scratch.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("cayley-out").join("loopover-2x3-no-symmetry-mtm");
    assert_eq!(depths(&out), loopover_2x3());
}

#[test]
fn the_run_header_counts_moves_and_guarded_generators_apart() {
    let dir = tempfile::tempdir().unwrap();
    let header = |spec: &str| {
        let out = dir.path().join(spec.replace(':', "-"));
        let o = cayley(&["run", spec, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o).lines().next().unwrap_or_default().to_string()
    };
    // 2×3 board: 7 pairs of neighbouring cells, a slide each way.
    let sliding = header("sliding:2x3");
    assert!(
        sliding.contains(", 4 moves (D L R U) as 14 guarded generators,"),
        "{}",
        sliding
    );
    // Loopover 2×3 MTM: 2 rows × 2 shifts + 3 columns × 1 shift, as many
    // as the published table's depth 1.
    let loopover = header("loopover:2x3");
    assert!(loopover.contains(", 7 moves,"), "{}", loopover);
    assert!(!loopover.contains("generators"), "{}", loopover);
}

#[test]
fn a_budget_too_small_for_the_default_plan_runs_a_finer_one_within_it() {
    // Loopover 2×4 without symmetry is one shard of 5.2 KiB with 80.6 KiB of
    // tables: a task needs 112.1 KiB, so 100K does not hold the default
    // plan. Left to cayley, the plan becomes the finer one that fits, which
    // runs within the same budget to the published table
    // (tests/data/loopover-mtm.csv); asked for, the plan is refused and the
    // finer one named.
    let dir = tempfile::tempdir().unwrap();
    let base = ["run", "loopover:2x4", "--no-symmetry", "--memory", "100K"];
    let out = dir.path().join("out");
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let ran = cayley_in(dir.path(), &args, &[]);
    let note = String::from_utf8_lossy(&ran.stderr).to_string();
    assert!(ran.status.success(), "{}", note);
    assert!(note.contains("planned with --shard-pieces "), "{}", note);
    assert_eq!(depths(&out), cayley_tests::published::published_loopover_mtm("2x4"));
    let info = cayley_in(dir.path(), &["info", "loopover:2x4", "--no-symmetry"], &[]);
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    let default_pieces = info
        .lines()
        .find_map(|l| l.strip_prefix("shard plan   "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no shard plan in: {}", info))
        .to_string();
    let mut asked: Vec<&str> = base.to_vec();
    asked.extend(["--shard-pieces", &default_pieces]);
    let refused = cayley_in(dir.path(), &asked, &[]);
    let message = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(!refused.status.success(), "{}", message);
    assert!(message.contains("or --shard-pieces "), "{}", message);
}

#[test]
fn no_finer_shard_plan_is_named_when_it_would_rank_more_states() {
    // M11 (order 7,920) on 11 points is ranked by its group; with
    // --shard-pieces the command line plans the block layout of all 11!
    // arrangements, so a refusal must not offer that as the way out.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m11.perm");
    std::fs::write(&file, "a: (1,2,3,4,5,6,7,8,9,10,11)\nb: (3,7,11,8)(4,10,5,6)\n").unwrap();
    let spec = format!("perm:{}", file.display());
    let refused = cayley_in(dir.path(), &["run", &spec, "--memory", "1K"], &[]);
    let message = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(
        !refused.status.success() && message.contains("is too small"),
        "{}",
        message
    );
    assert!(!message.contains("--shard-pieces"), "{}", message);
}
