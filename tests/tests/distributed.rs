//! The cluster path with real processes on 127.0.0.1: `cayley serve` plus
//! `cayley-worker`s. Tables are checked against tests/data/loopover-mtm.csv
//! or the independent hash-set BFS of `cayley_tests`.

use cayley_tests::cube::{cube_sticker_generators, cube_tws};
use cayley_tests::procs::{pause, signal, start_worker, wait_until, worker_output, Coordinator};
use cayley_tests::published::{published_loopover_mtm, published_table};
use cayley_tests::{loopover_generators, reference_bfs, reference_tracked_bfs};
use std::time::Duration;

const TOKEN: &str = "test-token-1234";
const LONG: Duration = Duration::from_secs(240);

/// Runs `puzzle` with `workers` worker processes; returns the table.
fn run_with_workers(puzzle: &str, workers: usize, extra: &[&str]) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), puzzle, TOKEN, extra);
    let children: Vec<_> = (0..workers)
        .map(|_| start_worker(&coordinator.url, TOKEN, dir.path(), 1))
        .collect();
    for child in children {
        let (ok, err) = worker_output(child, LONG);
        assert!(ok, "worker failed: {}", err);
    }
    coordinator.finish(LONG)
}

#[test]
fn one_two_and_four_workers_give_the_published_tables() {
    for workers in [1, 2, 4] {
        assert_eq!(
            // Reduced by the board's 20 symmetries: 26 classes of keys.
            run_with_workers("loopover:2x5", workers, &[]),
            published_loopover_mtm("2x5"),
            "{} workers",
            workers
        );
        assert_eq!(
            run_with_workers("loopover:3x3", workers, &["--no-symmetry", "--shard-pieces", "2"]),
            published_loopover_mtm("3x3"),
            "{} workers",
            workers
        );
    }
}

#[test]
fn a_worker_killed_mid_level_does_not_change_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), "loopover:2x5", TOKEN, &["--lease-secs", "3"]);
    let mut victim = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    let survivor = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    // Kill the victim in the middle of a dense level (depth 8 of 12).
    assert!(
        wait_until(LONG, || coordinator.levels_done() >= 8),
        "the job did not reach level 8"
    );
    victim.kill().unwrap(); // SIGKILL
    let _ = victim.wait();
    let (ok, err) = worker_output(survivor, LONG);
    assert!(ok, "surviving worker failed: {}", err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("2x5"));
}

/// A worker holds two leases at once (the next task starts on the threads
/// the first no longer needs). Stopped past its lease period, it loses
/// them mid-computation; resumed, it drops those tasks or has their
/// reports refused, goes on with new ones, and the table stands.
#[test]
fn a_worker_paused_past_its_leases_drops_the_tasks_in_flight_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // 132 one-shard tasks a level, leases of 2 s that expire rather than
    // being won by backup copies.
    let mut job = cayley_tests::procs::ONE_SHARD_TASKS_SHORT_LEASES.to_vec();
    job.push("--no-backup-tasks");
    let mut coordinator = Coordinator::start(dir.path(), "pancake:12", TOKEN, &job);
    let paused = start_worker(&coordinator.url, TOKEN, dir.path(), 2);
    let steady = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    // Paused in the dense levels (10–12 of 14, a second or more each),
    // not at a level's start, when a worker may be between leases; resumed
    // as soon as a lease of its expired, well before the job ends.
    assert!(
        wait_until(LONG, || coordinator.levels_done() >= 10),
        "the job did not reach level 10"
    );
    std::thread::sleep(Duration::from_millis(300));
    pause(&paused);
    coordinator.wait_for_line("expired; re-issuing it", Duration::from_secs(30));
    signal(&paused, libc::SIGCONT);
    let (ok, err) = worker_output(paused, LONG);
    assert!(ok, "the paused worker failed: {}", err);
    // Its lease gone, a task in flight is either dropped when the worker
    // hears so, or finished and its report refused: either way the worker
    // goes on, and the table below stands.
    let lost = err.matches("dropped task").count() + err.matches("did not accept task").count();
    assert!(lost >= 1, "no task in flight was dropped or refused: {}", err);
    let (ok, err) = worker_output(steady, LONG);
    assert!(ok, "{}", err);
    assert_eq!(
        coordinator.finish(LONG),
        published_table("cayleypy-growth.csv", "pancake:12")
    );
}

#[test]
fn a_worker_with_a_wrong_token_is_refused_and_the_others_finish() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), "loopover:3x3", TOKEN, &[]);
    let intruder = start_worker(&coordinator.url, "not-the-token", dir.path(), 1);
    let (ok, err) = worker_output(intruder, LONG);
    assert!(!ok, "a wrong token was accepted");
    assert!(
        err.contains("missing or wrong cluster token") && err.contains("with --token or CAYLEY_TOKEN"),
        "{}",
        err
    );
    let honest = start_worker(&coordinator.url, TOKEN, dir.path(), 2);
    let (ok, err) = worker_output(honest, LONG);
    assert!(ok, "{}", err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("3x3"));
}

#[test]
fn a_worker_joining_after_level_3_gets_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(
        dir.path(),
        "loopover:2x5",
        TOKEN,
        &["--no-symmetry", "--shard-pieces", "2", "--lease-secs", "2"],
    );
    let early = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    assert!(
        wait_until(LONG, || coordinator.levels_done() >= 4),
        "level 3 never finished"
    );
    // A 2x5 level takes milliseconds, so the early worker could finish the job before the
    // late one has registered. Pause it until two more levels are done: they can only have
    // been computed by the late worker (the early one's lease, if it held one, expires).
    pause(&early);
    let paused_at = coordinator.levels_done();
    let late = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    let progressed = wait_until(LONG, || coordinator.levels_done() >= paused_at + 2);
    signal(&early, libc::SIGCONT);
    assert!(progressed, "no level finished while the early worker was paused");
    let (ok, late_err) = worker_output(late, LONG);
    assert!(ok, "{}", late_err);
    let (ok, early_err) = worker_output(early, LONG);
    assert!(ok, "{}", early_err);
    let tasks = |log: &str| -> u64 {
        log.lines()
            .find_map(|l| l.split("computed ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    assert!(tasks(&late_err) > 0, "the late worker computed no task: {}", late_err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("2x5"));
}

#[test]
fn status_reports_workers_and_progress() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), "loopover:2x5", TOKEN, &[]);
    let worker = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    assert!(wait_until(LONG, || coordinator.levels_done() >= 3));
    let out = std::process::Command::new(cayley_tests::procs::binary("cayley"))
        .args(["status", "--coordinator", &coordinator.url, "--token", TOKEN])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("loopover:2x5"), "{}", text);
    assert!(text.contains("workers   1"), "{}", text);
    // Reported depths so far are a prefix of the published table.
    let wrong = std::process::Command::new(cayley_tests::procs::binary("cayley"))
        .args(["status", "--coordinator", &coordinator.url, "--token", "nope"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("missing or wrong cluster token"));
    let (ok, err) = worker_output(worker, LONG);
    assert!(ok, "{}", err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("2x5"));
}

#[test]
fn workers_get_a_perm_file_they_cannot_see() {
    // The coordinator reads gens.txt relative to its own directory; the
    // worker runs elsewhere and gets the definition over the protocol.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("coordinator-home");
    let away = dir.path().join("worker-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&away).unwrap();
    std::fs::write(home.join("gens.txt"), "a: (1,2,3)\nb: (3,4,5)\n").unwrap();
    let coordinator = Coordinator::start_in(dir.path(), &home, "perm:gens.txt", TOKEN, &[]);
    let worker = start_worker(&coordinator.url, TOKEN, &away, 1);
    let (ok, err) = worker_output(worker, LONG);
    assert!(ok, "{}", err);
    let depths = coordinator.finish(LONG);
    // D'Eon and Nehaniv, §5 (tests/data/published.md): A5 by (1 2 3), (3 4 5): 60 elements, longest word 6, one antipode.
    assert_eq!(depths.iter().sum::<u64>(), 60);
    assert_eq!(depths.len(), 7);
    assert_eq!(depths.last(), Some(&1));
}

#[test]
fn serve_resume_takes_a_cut_job_deeper() {
    let dir = tempfile::tempdir().unwrap();
    let published = published_loopover_mtm("2x5");
    let run = |extra: &[&str]| {
        let coordinator = Coordinator::start(dir.path(), "loopover:2x5", TOKEN, extra);
        let worker = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
        let (ok, err) = worker_output(worker, LONG);
        assert!(ok, "{}", err);
        coordinator
    };
    assert_eq!(run(&["--max-depth", "3"]).finish_partial(LONG), published[..4]);
    // The same command line again: the job's own limit changes nothing.
    assert_eq!(
        run(&["--max-depth", "3", "--resume"]).finish_partial(LONG),
        published[..4]
    );
    assert_eq!(run(&["--max-depth", "100", "--resume"]).finish(LONG), published);
}

#[test]
fn a_worker_joins_a_job_ranked_by_its_group() {
    // PSL(2,7) on 7 points (a 7-cycle and (1 2)(3 5), order 168): ranked
    // by its group. A worker rebuilt it from the coordinator's shard count
    // as blocks, and refused to work ("plans differently"), before
    // `Job::recorded`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("psl27.txt"), "a: (1,2,3,4,5,6,7)\nb: (1,2)(3,5)\n").unwrap();
    let coordinator = Coordinator::start_in(dir.path(), dir.path(), "perm:psl27.txt", TOKEN, &[]);
    let worker = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    let (ok, err) = worker_output(worker, LONG);
    assert!(ok, "{}", err);
    // Undirected: the generators and the 7-cycle's inverse.
    let expected = reference_bfs(&[
        vec![1, 2, 3, 4, 5, 6, 0],
        vec![6, 0, 1, 2, 3, 4, 5],
        vec![1, 0, 4, 3, 2, 5, 6],
    ]);
    assert_eq!(expected.iter().sum::<u64>(), 168);
    assert_eq!(coordinator.finish(LONG), expected);
}

#[test]
fn tls_coordinator_with_a_ca_verified_worker() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let dir = tempfile::tempdir().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca, &ca_key)
        .unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (ca_pem, cert_pem, key_pem) = (
        write("ca.pem", ca.pem()),
        write("cert.pem", server.pem()),
        write("key.pem", server_key.serialize_pem()),
    );
    let coordinator = Coordinator::start(
        dir.path(),
        "loopover:3x3",
        TOKEN,
        &["--tls-cert", &cert_pem, "--tls-key", &key_pem],
    );
    assert!(coordinator.url.starts_with("https://"), "{}", coordinator.url);
    // Without the CA the worker cannot connect; with it, it finishes the job.
    let blind = start_worker(&coordinator.url, TOKEN, dir.path(), 1);
    let (ok, _) = worker_output(blind, LONG);
    assert!(!ok, "a worker without the CA connected");
    let worker = cayley_tests::procs::start_worker_with(&coordinator.url, TOKEN, dir.path(), 2, &["--tls-ca", &ca_pem]);
    let (ok, err) = worker_output(worker, LONG);
    assert!(ok, "{}", err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("3x3"));
}

#[test]
fn a_worker_that_cannot_read_the_checkpoint_leaves_and_the_others_finish() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::start(dir.path(), "loopover:3x3", TOKEN, &[]);
    // A mount point with nothing mounted on it: the folder is there, the
    // checkpoint is not. (A folder that is not there at all is refused
    // before the worker joins: tests/tests/misuse.rs.)
    let missing = dir.path().join("not-mounted");
    std::fs::create_dir(&missing).unwrap();
    let lost = cayley_tests::procs::start_worker_with(
        &coordinator.url,
        TOKEN,
        dir.path(),
        1,
        &["--checkpoint-dir", missing.to_str().unwrap()],
    );
    let (ok, err) = worker_output(lost, LONG);
    assert!(!ok, "a worker without the checkpoint directory succeeded");
    assert!(err.contains("not readable from this worker"), "{}", err);
    let good = start_worker(&coordinator.url, TOKEN, dir.path(), 2);
    let (ok, err) = worker_output(good, LONG);
    assert!(ok, "{}", err);
    assert_eq!(coordinator.finish(LONG), published_loopover_mtm("3x3"));
}

#[test]
fn coded_jobs_run_on_worker_processes() {
    // An oriented .tws file the workers cannot see (2×2×2, U and R quarter
    // turns), cut into many shards: the table of the independent BFS over
    // sticker permutations.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("coordinator-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("ur.tws"), cube_tws(2, "UR")).unwrap();
    let coordinator = Coordinator::start_in(
        dir.path(),
        &home,
        "tws:ur.tws",
        TOKEN,
        &["--metric", "stm", "--shard-pieces", "3"],
    );
    let workers: Vec<_> = (0..2)
        .map(|_| start_worker(&coordinator.url, TOKEN, dir.path(), 1))
        .collect();
    for worker in workers {
        let (ok, err) = worker_output(worker, LONG);
        assert!(ok, "{}", err);
    }
    assert_eq!(
        coordinator.finish(LONG),
        reference_bfs(&cube_sticker_generators(2, "UR", false))
    );
    // Tracked pieces travel in the job's spec string to the workers.
    let depths = run_with_workers("loopover:3x3", 2, &["--track", "1-4", "--shard-pieces", "2"]);
    let gens = loopover_generators(3, 3, false);
    let expected = reference_tracked_bfs(&gens, &[0u8, 1, 2, 3]);
    assert_eq!(depths, expected);
}
