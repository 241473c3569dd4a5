//! Loopover MTM depth tables from tests/data/published.md (seed
//! paper 002 and independent computations), reproduced by `cayley run`.

use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_tests::run::{run_complete, shard_pieces};

/// The table of `cayley run SPEC`; with a shard plan `K` when given,
/// which applies to Loopover without its symmetry reduction only.
fn table(spec: &str, k: Option<usize>) -> Vec<u64> {
    let spec = match k {
        Some(_) => format!("{} --no-symmetry", spec),
        None => spec.to_string(),
    };
    let run = run_complete(&format!("{}{} --antipodes 3", spec, shard_pieces(k)));
    assert_eq!(
        run.result.depths.iter().map(|&c| c as u128).sum::<u128>(),
        run.job.group_order
    );
    run.result.depths
}

#[test]
fn loopover_2x2() {
    assert_eq!(table("loopover:2x2", None), vec![1, 4, 10, 8, 1]);
}

#[test]
fn loopover_2x3() {
    assert_eq!(table("loopover:2x3", None), vec![1, 7, 31, 115, 274, 253, 36, 3]);
}

#[test]
fn loopover_2x4() {
    assert_eq!(
        table("loopover:2x4", None),
        vec![1, 10, 63, 352, 1623, 5890, 14345, 15772, 2264]
    );
}

#[test]
fn loopover_2x5() {
    let expected = vec![
        1, 13, 106, 790, 4845, 25771, 121338, 472506, 1251350, 1484825, 258645, 8295, 315,
    ];
    assert_eq!(table("loopover:2x5", None), expected);
    // Cutting the space into many shards must not change the table.
    assert_eq!(table("loopover:2x5", Some(2)), expected);
}

#[test]
fn loopover_3x3_seed_table_1() {
    let expected = vec![1, 12, 96, 736, 5208, 28674, 89497, 54741, 2475];
    assert_eq!(table("loopover:3x3", None), expected);
    assert_eq!(table("loopover:3x3", Some(2)), expected);
}

#[test]
fn group_orders_follow_seed_theorem_5_2_3() {
    // S_{RC} when R·C is even, A_{RC} when R and C are both odd.
    for (r, c) in [(2, 2), (2, 3), (3, 3), (3, 4), (3, 5), (4, 4), (2, 7)] {
        let job = Job::new(
            parse_puzzle(&format!("loopover:{}x{}", r, c), Metric::Mtm).unwrap(),
            None,
        )
        .unwrap();
        let full: u128 = (1..=(r * c) as u128).product();
        let expected = if r % 2 == 1 && c % 2 == 1 { full / 2 } else { full };
        assert_eq!(job.group_order, expected, "{}x{}", r, c);
    }
}

/// Two in-process workers race for the chunks of the 3×3's sparse early
/// levels: one worker's sparse map records a chunk as gaining nothing
/// while the other holds its lease. That is the job working as built, so a
/// quiet run prints its table and nothing on standard error. Before the
/// coordinator's reply said so, 16 of 20 such runs warned of "rejected"
/// reports; five runs here all had to be quiet.
#[test]
fn loopover_3x3_on_two_workers_is_quiet() {
    let dir = cayley_tests::test_dir();
    let out = dir.path().join("out");
    let published = cayley_tests::published::published_loopover_mtm("3x3");
    for round in 0..5 {
        let o = cayley_tests::cayley(&[
            "run",
            "loopover:3x3",
            "--workers",
            "2",
            "--threads",
            "2",
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--scratch",
            dir.path().to_str().unwrap(),
        ]);
        let stderr = cayley_tests::stderr_text(&o);
        assert!(o.status.success(), "round {round}: {stderr}");
        assert_eq!(stderr, "", "round {round}: a quiet run printed this");
        let json = cayley_tests::read_json(&out.join("result.json")).expect("result.json");
        assert_eq!(cayley_tests::json_u64s(&json["depths"]), published, "round {round}");
    }
}
