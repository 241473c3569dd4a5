//! Chaos (docs/cluster.md, "When things fail"): a `cayley serve` coordinator and two `cayley-worker`s
//! SIGKILLed at random moments, each restarted (the coordinator with
//! `--resume` on the same address, where the surviving workers find it
//! again), until the job ends. The table must be the published one
//! (tests/data/loopover-mtm.csv) whatever the seed.
//!
//! The seed is printed; `CAYLEY_CHAOS_SEED=N` replays one.

use cayley_tests::procs::{free_port, start_worker_with, Coordinator};
use cayley_tests::{published_table, test_dir};
use rand::{Rng, SeedableRng};
use std::process::Child;
use std::time::{Duration, Instant};

const TOKEN: &str = "chaos-token";
const LONG: Duration = Duration::from_secs(240);
/// Kills per round.
const KILLS: usize = 10;
const WORKERS: usize = 2;

fn start_worker(url: &str, dir: &std::path::Path) -> Child {
    start_worker_with(url, TOKEN, dir, 1, &["--patience", "120"])
}

/// One round: returns how many times the coordinator was killed.
fn round(seed: u64) -> usize {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = test_dir();
    let listen = format!("127.0.0.1:{}", free_port());
    // 90 one-shard tasks a level: every level has a middle to kill in.
    let job = ["--no-symmetry", "--shard-pieces", "2", "--chunk-shards", "1"];
    let mut coordinator = Coordinator::start_with(&[], dir.path(), dir.path(), "loopover:2x5", TOKEN, &listen, &job);
    let url = coordinator.url.clone();
    let mut workers: Vec<Child> = (0..WORKERS).map(|_| start_worker(&url, dir.path())).collect();
    let mut coordinator_kills = 0;
    for _ in 0..KILLS {
        std::thread::sleep(Duration::from_millis(rng.random_range(0..700)));
        if coordinator.child.try_wait().expect("try_wait").is_some() {
            break; // the job ended before this kill
        }
        let victim = rng.random_range(0..=WORKERS);
        if victim == WORKERS {
            coordinator.kill();
            coordinator_kills += 1;
            // Down for a moment: the workers retry, then find it again.
            std::thread::sleep(Duration::from_millis(rng.random_range(0..1500)));
            coordinator.resume();
        } else {
            let _ = workers[victim].kill();
            let _ = workers[victim].wait();
            workers[victim] = start_worker(&url, dir.path());
        }
    }
    let table = coordinator.finish(LONG);
    assert_eq!(
        table,
        published_table("loopover-mtm.csv", "2x5"),
        "seed {} (CAYLEY_CHAOS_SEED={} replays it)",
        seed,
        seed
    );
    // A worker that was restarted just as the job ended may still be
    // looking for the coordinator; the table is what counts.
    let deadline = Instant::now() + Duration::from_secs(15);
    for mut w in workers {
        while w.try_wait().expect("try_wait").is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = w.kill();
        let _ = w.wait();
    }
    coordinator_kills
}

#[test]
fn random_kills_of_coordinator_and_workers_give_the_published_table() {
    let seed = match std::env::var("CAYLEY_CHAOS_SEED") {
        Ok(s) => s.parse().expect("CAYLEY_CHAOS_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock after 1970")
            .as_nanos() as u64,
    };
    for seed in [seed, seed.wrapping_add(1)] {
        // Printed before the round, so a failing round names its seed.
        println!("chaos seed {} (CAYLEY_CHAOS_SEED={} replays it)", seed, seed);
        let restarts = round(seed);
        println!("seed {}: exact table, {} coordinator restarts", seed, restarts);
    }
}
