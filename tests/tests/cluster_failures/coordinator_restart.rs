//! Workers that outlive their coordinator (docs/cluster.md, "When things fail") and a cluster that
//! says what is wrong: real `cayley serve` and
//! `cayley-worker` processes on 127.0.0.1. Tables are compared with
//! tests/data/loopover-mtm.csv.

use cayley_tests::checkpoint::journal;
use cayley_tests::procs::{
    free_port, pause, signal, start_worker_with, wait_until, wait_with_timeout, worker_output, Coordinator, Lines,
};
use cayley_tests::{cayley, published_table, stderr_text, test_dir};
use std::time::Duration;

const TOKEN: &str = "restart-token";
const LONG: Duration = Duration::from_secs(240);
/// 90 shards of 2 pieces, one task each: 90 tasks a level, so that a level
/// is long enough to be caught in the middle.
const MANY_TASKS: [&str; 5] = ["--no-symmetry", "--shard-pieces", "2", "--chunk-shards", "1"];

fn published_2x5() -> Vec<u64> {
    published_table("loopover-mtm.csv", "2x5")
}

#[test]
fn a_coordinator_killed_mid_level_gets_the_same_workers_back() {
    let dir = test_dir();
    let listen = format!("127.0.0.1:{}", free_port());
    let mut coordinator =
        Coordinator::start_with(&[], dir.path(), dir.path(), "loopover:2x5", TOKEN, &listen, &MANY_TASKS);
    let mut workers: Vec<_> = (0..2)
        .map(|_| start_worker_with(&coordinator.url, TOKEN, dir.path(), 1, &["--patience", "120"]))
        .collect();
    let mut logs: Vec<Lines> = workers.iter_mut().map(Lines::of).collect();
    // Level 9, the densest, partly recorded: stop the workers there so the
    // kill lands in the middle of the level, whatever the machine's speed.
    // Should this test be slow to stop them (a loaded machine) and the
    // level close meanwhile, the next level serves as well.
    let ck = coordinator.checkpoint.clone();
    let mut level = 9;
    loop {
        assert!(
            wait_until(LONG, || journal(&ck, level).len() >= 5),
            "level {} never started",
            level
        );
        workers.iter().for_each(pause);
        // Stopped, each worker has at most one result on its way: with
        // more tasks than that left, the level cannot close before the kill.
        let recorded = journal(&ck, level).len();
        if coordinator.levels_done() == level && recorded + workers.len() < 90 {
            break;
        }
        assert!(level < 11, "the workers were never stopped in the middle of a level");
        workers.iter().for_each(|w| signal(w, libc::SIGCONT));
        level += 1;
    }
    coordinator.kill();
    assert_eq!(
        coordinator.levels_done(),
        level,
        "level {} closed before the kill",
        level
    );
    workers.iter().for_each(|w| signal(w, libc::SIGCONT));
    coordinator.resume();
    // The first worker to join the new coordinator is stopped until the
    // other has joined too: alone, it could finish the job (and the
    // coordinator exit) while the other still waits out its retry back-off
    // (up to 5 s between attempts), which is no failure of either.
    let rejoined = format!("joined the coordinator at {} again", coordinator.url);
    let mut first = None;
    assert!(
        wait_until(LONG, || {
            first = logs.iter_mut().position(|log| log.text().contains(&rejoined));
            first.is_some()
        }),
        "no worker registered again: {:?}",
        logs.iter_mut().map(Lines::text).collect::<Vec<_>>()
    );
    let (first, other) = (first.expect("found"), 1 - first.expect("found"));
    pause(&workers[first]);
    let both = wait_until(LONG, || logs[other].text().contains(&rejoined));
    signal(&workers[first], libc::SIGCONT);
    assert!(both, "the other worker did not register again: {}", logs[other].text());
    for (mut worker, mut log) in workers.into_iter().zip(logs) {
        let ok = wait_with_timeout(&mut worker, LONG);
        assert!(ok, "a worker did not finish: {}", log.text());
    }
    // Exact: no task of the interrupted level was lost or counted twice.
    assert_eq!(coordinator.finish(LONG), published_2x5());
}

#[test]
fn a_worker_started_before_its_coordinator_says_where_and_why_then_joins() {
    let dir = test_dir();
    let listen = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{}", listen);
    let mut worker = start_worker_with(&url, TOKEN, dir.path(), 1, &["--patience", "120"]);
    let mut log = Lines::of(&mut worker);
    let first = log.wait_for("connecting to the coordinator", LONG);
    assert!(
        first.ends_with(&format!("connecting to the coordinator at {}", url)),
        "{}",
        first
    );
    let retrying = log.wait_for("retrying for", LONG);
    assert!(
        retrying.contains(&format!("no coordinator at {} (connection refused); retrying for", url)),
        "{}",
        retrying
    );
    let coordinator = Coordinator::start_with(&[], dir.path(), dir.path(), "loopover:2x5", TOKEN, &listen, &[]);
    let ok = wait_with_timeout(&mut worker, LONG);
    let text = log.text();
    assert!(ok, "{}", text);
    // Its stderr is a pipe, not a terminal: no colour codes.
    assert!(!text.contains('\u{1b}'), "ANSI escape codes in a piped log: {}", text);
    assert_eq!(coordinator.finish(LONG), published_2x5());
}

#[test]
fn status_without_a_coordinator_says_so_in_one_line() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let out = cayley(&["status", "--coordinator", &url, "--token", TOKEN]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: no coordinator at {} (connection refused); check --coordinator\n",
            url
        )
    );
    let out = cayley(&["status", "--coordinator", "http://no-such-host.invalid:7070"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_text(&out),
        "error: no coordinator at http://no-such-host.invalid:7070 (host name not found); check --coordinator\n"
    );
}

/// `cayley status` of the coordinator at `url`.
fn status(url: &str) -> String {
    let out = cayley(&["status", "--coordinator", url, "--token", TOKEN]);
    assert!(out.status.success(), "{}", stderr_text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_killed_worker_is_shown_lost_and_no_longer_counted() {
    let dir = test_dir();
    let mut extra = MANY_TASKS.to_vec();
    extra.extend(["--lease-secs", "2"]);
    let coordinator = Coordinator::start(dir.path(), "loopover:2x5", TOKEN, &extra);
    let mut first = start_worker_with(&coordinator.url, TOKEN, dir.path(), 1, &["--name", "first"]);
    assert!(
        wait_until(LONG, || coordinator.levels_done() >= 3),
        "level 2 never finished"
    );
    first.kill().unwrap(); // SIGKILL: nothing said on the way out
    let _ = first.wait();
    // Its report stream breaks at once, or (idle) it is silent for a lease
    // period: either way it is lost, listed as such and not counted.
    let mut text = String::new();
    assert!(
        wait_until(LONG, || {
            text = status(&coordinator.url);
            text.contains("workers   0 (1 lost")
        }),
        "the killed worker is still counted: {}",
        text
    );
    assert!(text.contains("first") && text.contains("lost, last heard"), "{}", text);
    let second = start_worker_with(&coordinator.url, TOKEN, dir.path(), 1, &["--name", "second"]);
    let (ok, log) = worker_output(second, LONG);
    assert!(ok, "{}", log);
    assert_eq!(coordinator.finish(LONG), published_2x5());
}

#[test]
fn a_worker_finding_another_job_at_the_address_exits_saying_so() {
    let dir = test_dir();
    let listen = format!("127.0.0.1:{}", free_port());
    let first = dir.path().join("first");
    let mut coordinator = Coordinator::start_with(&[], &first, dir.path(), "loopover:2x5", TOKEN, &listen, &MANY_TASKS);
    let worker = start_worker_with(&coordinator.url, TOKEN, dir.path(), 1, &["--patience", "120"]);
    assert!(
        wait_until(LONG, || coordinator.levels_done() >= 3),
        "level 2 never finished"
    );
    pause(&worker);
    coordinator.kill();
    // Another job (another puzzle, another checkpoint) on the same address.
    let second = dir.path().join("second");
    let other = Coordinator::start_with(&[], &second, dir.path(), "loopover:3x3", TOKEN, &listen, &[]);
    signal(&worker, libc::SIGCONT);
    let (ok, log) = worker_output(worker, LONG);
    assert!(!ok, "the worker went on with another job: {}", log);
    let expected = format!("error: the coordinator at {} now serves loopover:3x3", other.url);
    assert!(log.contains(&expected), "{}", log);
    // The other job is untouched by it and runs to its published table.
    let fresh = start_worker_with(&other.url, TOKEN, dir.path(), 1, &[]);
    let (ok, log) = worker_output(fresh, LONG);
    assert!(ok, "{}", log);
    assert_eq!(other.finish(LONG), published_table("loopover-mtm.csv", "3x3"));
}
