//! The checkpoint on a network filesystem (docs/cluster.md, "When things fail"): the coordinator
//! writes to a directory that an sshd of the test's own exports on
//! 127.0.0.1, and the workers see it only through an sshfs mount of it
//! (`--checkpoint-dir`), as cluster nodes see NFS. One worker is SIGKILLed
//! while it writes a chunk file. The table must be the published one
//! (tests/data/loopover-mtm.csv).
//!
//! Needs root, `openssh-server` and `sshfs`: the test is ignored unless
//! asked for (`-- --include-ignored`, or `--ignored`; `.ci/run` installs
//! them and runs it as root), and fails, saying what is missing, when asked
//! for on a machine without.

use cayley_tests::procs::{pause, signal, start_worker_with, wait_until, worker_output, Coordinator};
use cayley_tests::published_table;
use cayley_tests::sshfs::Sshfs;
use std::path::Path;
use std::time::Duration;

const TOKEN: &str = "netfs-token";
const LONG: Duration = Duration::from_secs(300);

/// The pid in a temporary chunk file's name (`C….chunk.tmp-PID-HASH`).
fn writer_of(name: &str) -> Option<u32> {
    name.split(".tmp-").nth(1)?.split('-').next()?.parse().ok()
}

/// Temporary chunk files under `levels/` of a checkpoint.
fn temporary_files(ck: &Path) -> Vec<String> {
    let Ok(levels) = std::fs::read_dir(ck.join("levels")) else {
        return Vec::new();
    };
    levels
        .flatten()
        .filter_map(|level| std::fs::read_dir(level.path()).ok())
        .flat_map(|files| files.flatten())
        .map(|f| f.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

#[test]
#[ignore = "needs root, sshd and sshfs (openssh-server, sshfs): run with --include-ignored (.ci/run does, as root)"]
fn workers_that_see_the_checkpoint_only_through_sshfs_give_the_published_table() {
    // Asked for and unable to run: a failure, never a pass.
    if let Some(why) = Sshfs::unavailable() {
        panic!("the network filesystem test cannot run here: {}", why);
    }
    let fs = Sshfs::start();
    let job = ["--no-symmetry", "--shard-pieces", "2", "--chunk-shards", "5"];
    let coordinator = Coordinator::start(&fs.export, "loopover:2x5", TOKEN, &job);
    let remote = fs.mount.join("checkpoint");
    let remote = remote.to_str().unwrap();
    let worker = |name: &str| {
        start_worker_with(
            &coordinator.url,
            TOKEN,
            &fs.mount,
            1,
            &["--checkpoint-dir", remote, "--name", name, "--patience", "60"],
        )
    };
    let mut workers = vec![worker("a"), worker("b")];
    // Catch a worker between creating its chunk file and renaming it into
    // place (its pid is in the temporary name): stop it, and kill it if
    // the file is still unfinished.
    let ck = coordinator.checkpoint.clone();
    let mut caught = None;
    assert!(
        wait_until(LONG, || {
            for name in temporary_files(&ck) {
                let Some(i) = writer_of(&name).and_then(|pid| workers.iter().position(|w| w.id() == pid)) else {
                    continue;
                };
                pause(&workers[i]);
                if temporary_files(&ck).contains(&name) {
                    caught = Some((i, name));
                    return true;
                }
                signal(&workers[i], libc::SIGCONT);
            }
            false
        }),
        "no worker was caught writing a chunk file"
    );
    let (i, name) = caught.expect("caught");
    let mut killed = workers.swap_remove(i);
    killed.kill().unwrap();
    let _ = killed.wait();
    // What it left is a temporary file, never read.
    assert!(temporary_files(&ck).contains(&name), "{} vanished", name);
    workers.push(worker("c"));
    for w in workers {
        let (ok, log) = worker_output(w, LONG);
        assert!(ok, "{}", log);
    }
    assert_eq!(coordinator.finish(LONG), published_table("loopover-mtm.csv", "2x5"));
}
