//! Partitions (docs/cluster.md, "When things fail"): the coordinator and the workers run in network
//! namespaces this test makes (`tests/src/netns.rs`), and a worker's link
//! is cut and healed mid-task and mid-report. Tables are compared with
//! tests/data/loopover-mtm.csv.
//!
//! Needs root and iproute2: the tests are ignored unless asked for
//! (`-- --include-ignored`, or `--ignored`; `.ci/run` runs them as root),
//! and fail, saying what is missing, when asked for on a machine without.

use cayley_tests::netns::Net;
use cayley_tests::procs::{pause, signal, start_worker_under, wait_until, wait_with_timeout, Coordinator, Lines};
use cayley_tests::{binary, published_table, test_dir};
use std::process::{Child, Command};
use std::time::Duration;

const TOKEN: &str = "partition-token";
const LONG: Duration = Duration::from_secs(240);
/// 90 one-shard tasks a level, leases of 2 s.
fn job() -> Vec<&'static str> {
    let mut job = vec!["--no-symmetry"];
    job.extend(cayley_tests::procs::ONE_SHARD_TASKS_SHORT_LEASES);
    job
}
/// The namespaces; panics, saying why, when this machine cannot make them:
/// a test that was asked for and could not run must not pass.
fn net() -> Net {
    if let Some(why) = Net::unavailable() {
        panic!("the partition tests cannot make network namespaces here: {}", why);
    }
    Net::new(1)
}

/// A coordinator in its namespace (listening on its links and its
/// loopback, nowhere else), the worker behind link 0 ("cut-off") and one
/// beside the coordinator ("steady").
struct Cluster {
    coordinator: Option<Coordinator>,
    cut_off: Child,
    cut_off_log: Lines,
    steady: Child,
    _dir: tempfile::TempDir,
    /// Dropped last: the processes in the namespaces go first.
    net: Net,
}

fn cluster(net: Net) -> Cluster {
    let dir = test_dir();
    let inside = Net::exec(&net.coordinator_ns);
    let coordinator = Coordinator::start_with(
        &inside,
        dir.path(),
        dir.path(),
        "loopover:2x5",
        TOKEN,
        "0.0.0.0:7070",
        &job(),
    );
    let url = format!("http://{}:7070", net.coordinator_addr(0));
    let patient = ["--patience", "120", "--name"];
    let mut cut_off = start_worker_under(
        &Net::exec(&net.worker_ns[0]),
        &url,
        TOKEN,
        dir.path(),
        1,
        &[&patient[..], &["cut-off"]].concat(),
    );
    let cut_off_log = Lines::of(&mut cut_off);
    let steady = start_worker_under(
        &inside,
        "http://127.0.0.1:7070",
        TOKEN,
        dir.path(),
        1,
        &[&patient[..], &["steady"]].concat(),
    );
    Cluster {
        coordinator: Some(coordinator),
        cut_off,
        cut_off_log,
        steady,
        _dir: dir,
        net,
    }
}

impl Cluster {
    fn levels_done(&self) -> usize {
        self.coordinator.as_ref().expect("running").levels_done()
    }

    /// `cayley status`, from inside the coordinator's namespace.
    fn status(&self) -> String {
        let inside = Net::exec(&self.net.coordinator_ns);
        let out = Command::new(inside[0])
            .args(&inside[1..])
            .arg(binary("cayley"))
            .args(["status", "--coordinator", "http://127.0.0.1:7070", "--token", TOKEN])
            .output()
            .expect("run cayley status");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The state column of a worker's status line ("busy", "idle 0 s", "lost, …").
    fn state_of(&self, name: &str) -> String {
        self.tasks_and_state_of(name).1
    }

    /// A worker's line of `cayley status`.
    fn line_of(&self, name: &str) -> String {
        let status = self.status();
        status
            .lines()
            .find(|l| l.contains(&format!(" {} ", name)))
            .unwrap_or_else(|| panic!("no worker {} in {}", name, status))
            .to_string()
    }

    /// A worker's id (`#2` in its status line).
    fn id_of(&self, name: &str) -> u64 {
        let line = self.line_of(name);
        line.trim_start()
            .strip_prefix('#')
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no worker id in {}", line))
    }

    /// How many leases of worker `id` the coordinator has said expired.
    /// The expiry itself, not the worker shown lost: status shows a worker
    /// lost once it is silent for a lease period, up to a second (the
    /// coordinator's clock) before its lease is expired, and a report that
    /// arrives in that second is still on time.
    fn expiries_of(&mut self, id: u64) -> usize {
        let said = format!("held by worker {} expired", id);
        let coordinator = self.coordinator.as_mut().expect("running");
        coordinator.stderr_text().matches(&said).count()
    }

    /// The tasks a worker has done and its state, as `cayley status` shows them.
    fn tasks_and_state_of(&self, name: &str) -> (u64, String) {
        let line = self.line_of(name);
        let tasks = line
            .split(" tasks")
            .next()
            .and_then(|l| l.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no task count in {}", line));
        let state = line.rsplit("evals/s").next().unwrap_or_default().trim().to_string();
        (tasks, state)
    }

    /// Whether the coordinator, with both workers stopped, sees the cut-off
    /// worker holding a lease: busy, and still busy with the same task count
    /// a moment later. A result it sent just before it stopped may still be
    /// on its way (the coordinator, on a loaded machine, slow to take it
    /// in): the worker then looks busy with a task it has in fact finished,
    /// and nothing it sends into the cut would be late. Such a result shows
    /// as a change between the two looks.
    fn cut_off_holds_a_lease(&self) -> bool {
        std::thread::sleep(Duration::from_millis(300));
        let first = self.tasks_and_state_of("cut-off");
        if first.1 != "busy" {
            return false;
        }
        std::thread::sleep(Duration::from_millis(300));
        self.tasks_and_state_of("cut-off") == first
    }

    /// Late reports refused so far.
    fn late_reports(&self) -> u64 {
        let status = self.status();
        status
            .lines()
            .find_map(|l| l.strip_prefix("leases "))
            .and_then(|l| l.split(" expired, ").nth(1))
            .and_then(|l| l.split_whitespace().next())
            .map_or(0, |n| n.parse().expect("a count"))
    }

    /// Both workers finish and the table is the published one; returns the
    /// cut-off worker's log.
    fn finish(mut self) -> String {
        let ok = wait_with_timeout(&mut self.cut_off, LONG);
        let log = self.cut_off_log.text();
        assert!(ok, "the cut-off worker failed: {}", log);
        let ok = wait_with_timeout(&mut self.steady, LONG);
        assert!(ok, "the steady worker failed");
        let coordinator = self.coordinator.take().expect("running");
        assert_eq!(coordinator.finish(LONG), published_table("loopover-mtm.csv", "2x5"));
        log
    }
}

impl Drop for Cluster {
    /// A failed test leaves no worker behind (the coordinator kills itself
    /// on drop); the namespaces go after them.
    fn drop(&mut self) {
        for worker in [&mut self.cut_off, &mut self.steady] {
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }
}

#[test]
#[ignore = "needs root and iproute2 (network namespaces): run with --include-ignored (.ci/run does, as root)"]
fn a_report_sent_into_a_cut_link_arrives_late_and_is_refused() {
    let mut c = cluster(net());
    assert!(wait_until(LONG, || c.levels_done() >= 3), "level 2 never finished");
    let cut_off = c.id_of("cut-off");
    let mut caught = false;
    for _ in 0..20 {
        // Catch the cut-off worker holding a lease, everyone stopped.
        pause(&c.cut_off);
        pause(&c.steady);
        // Counted before the lease is seen held, so that its expiry cannot
        // be among them.
        let expired_before = c.expiries_of(cut_off);
        if !c.cut_off_holds_a_lease() {
            signal(&c.cut_off, libc::SIGCONT);
            signal(&c.steady, libc::SIGCONT);
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let late_before = c.late_reports();
        // Mid-task: the link goes down; the worker, woken, finishes its task
        // and sends progress and its result into the cut link (mid-report).
        c.net.cut(0);
        signal(&c.cut_off, libc::SIGCONT);
        assert!(
            wait_until(LONG, || c.expiries_of(cut_off) > expired_before),
            "the cut-off worker's lease never expired"
        );
        let state = c.state_of("cut-off");
        assert!(state.starts_with("lost"), "{}", state);
        c.net.heal(0);
        // TCP delivers what was sent into the cut: too late for the lease.
        assert!(
            wait_until(LONG, || c.late_reports() > late_before),
            "no late report refused after the heal: {}",
            c.status()
        );
        signal(&c.steady, libc::SIGCONT);
        caught = true;
        break;
    }
    assert!(caught, "the cut-off worker was never caught holding a lease");
    let log = c.finish();
    // The worker heard that its lease was gone and went on with other tasks.
    assert!(log.contains("is unknown or expired"), "{}", log);
}

#[test]
#[ignore = "needs root and iproute2 (network namespaces): run with --include-ignored (.ci/run does, as root)"]
fn a_worker_behind_a_long_partition_comes_back_and_computes_again() {
    let mut c = cluster(net());
    assert!(wait_until(LONG, || c.levels_done() >= 3), "level 2 never finished");
    // One way: everything the cut-off worker sends is dropped. The steady
    // worker is stopped so that the job waits for the partition to heal.
    pause(&c.steady);
    c.net.drop_outgoing(0);
    assert!(
        wait_until(LONG, || c.state_of("cut-off").starts_with("lost")),
        "the cut-off worker is not shown lost"
    );
    // The worker notices (keepalive or a call's timeout) and retries.
    c.cut_off_log.wait_for("lost the coordinator", LONG);
    c.net.stop_dropping(0);
    c.cut_off_log.wait_for("reached the coordinator", LONG);
    // The job moves again with the steady worker still stopped: the
    // cut-off worker, back under its old id, computes.
    let levels = c.levels_done();
    assert!(
        wait_until(LONG, || c.levels_done() > levels),
        "no level finished after the heal"
    );
    assert_ne!(c.state_of("cut-off").split(',').next(), Some("lost"));
    signal(&c.steady, libc::SIGCONT);
    let log = c.finish();
    assert!(
        !log.contains("joined the coordinator at"),
        "registered anew instead of going on: {}",
        log
    );
}
