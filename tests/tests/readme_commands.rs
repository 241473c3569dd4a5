//! Every command line of README.md and docs/guide.md, run as written: the ones a user types
//! on one machine from the repository root (in a test directory where
//! `tests/` is this repository's, so results land in the test's own
//! `cayley-out/`), and the cluster's three lines with their placeholders
//! filled in (HEAD: 127.0.0.1, a free port for 7070, `$TOKEN`, the shared
//! folder). The two `cargo` lines are what built the binaries under test
//! and what runs this test; the `cayley …` lines with `<…>` and `[…]` are
//! the synopsis (`coordinator/tests/cli.rs`, `worker/tests/cli.rs`).
//! Tables: `tests/data/loopover-mtm.csv` (3x3), `tests/data/cube-tables.csv`
//! (cube2-htm: the 2×2×2 cube, U R F); the 3×4 Loopover, which no source
//! tabulates, must sum to 12!.

use cayley_tests::procs::free_port;
use cayley_tests::published::{published_loopover_mtm, published_table};
use cayley_tests::{binary, json_u64s, read_json, test_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root")
}

/// README.md's indented command lines that are not the synopsis, and those
/// of docs/guide.md that README does not have; a line of commands joined by
/// `&&` gives each of them.
fn readme_commands() -> Vec<String> {
    let mut text = String::new();
    for doc in ["README.md", "docs/guide.md"] {
        text += &std::fs::read_to_string(repository().join(doc)).unwrap();
        text.push('\n');
    }
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|l| l.starts_with("    "))
        // The set-up line builds and then runs: each command on its own.
        .flat_map(|l| l.trim().split(" && "))
        .filter(|l| {
            ["cargo ", "cayley", "target/release/cayley"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .filter(|l| !l.contains('<') && !l.contains('['))
        .filter(|l| seen.insert(l.to_string()))
        .map(String::from)
        .collect()
}

/// The table a finished result folder must hold, by its puzzle.
fn check_result(dir: &Path) {
    let json = read_json(&dir.join("result.json")).expect("result.json");
    let spec = json["puzzle"].as_str().unwrap().to_string();
    let depths = json_u64s(&json["depths"]);
    if spec.contains("2x2x2.tws") {
        assert_eq!(depths, published_table("cube-tables.csv", "cube2-htm"), "{}", spec);
    } else if spec.contains("loopover-3x3.perm") || spec == "loopover:3x3" {
        assert_eq!(depths, published_loopover_mtm("3x3"), "{}", spec);
    } else if spec == "loopover:3x4" {
        assert_eq!(
            depths.iter().sum::<u64>(),
            479_001_600,
            "{}: the counts must sum to 12!",
            spec
        );
        assert_eq!(json["complete"], true);
    } else {
        panic!("no table to check {} against", spec)
    }
}

#[test]
fn every_command_line_of_the_readme_and_the_guide_runs_as_written() {
    let commands = readme_commands();
    let cargo: Vec<&String> = commands.iter().filter(|l| l.starts_with("cargo ")).collect();
    assert_eq!(cargo.len(), 2, "{:?}", cargo);
    let local: Vec<&String> = commands
        .iter()
        .filter(|l| l.starts_with("target/release/cayley "))
        .collect();
    let cluster: Vec<&String> = commands.iter().filter(|l| l.starts_with("cayley")).collect();
    assert!(local.len() >= 4, "{:?}", local);
    assert_eq!(cluster.len(), 3, "{:?}", cluster);

    let cwd = test_dir();
    std::os::unix::fs::symlink(repository().join("tests"), cwd.path().join("tests")).unwrap();
    for line in &local {
        let mut words = line.split_whitespace();
        words.next();
        let o = Command::new(binary("cayley"))
            .args(words)
            .current_dir(cwd.path())
            .env("TMPDIR", cwd.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}: {}", line, String::from_utf8_lossy(&o.stderr));
        if line.contains("3x3x3.tws --nocorners") {
            // 12! · 2^11 arrangements of the edges.
            assert!(text.contains("group order  980995276800"), "{}", text);
        }
    }
    let outputs: Vec<_> = std::fs::read_dir(cwd.path().join("cayley-out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(outputs.len(), local.iter().filter(|l| l.contains(" run ")).count());
    outputs.iter().for_each(|dir| check_result(dir));

    // The cluster, on this machine.
    let port = free_port().to_string();
    let shared = cwd.path().join("shared");
    let fill = |line: &str| -> Vec<String> {
        line.replace("0.0.0.0:7070", &format!("127.0.0.1:{}", port))
            .replace("HEAD:7070", &format!("127.0.0.1:{}", port))
            .replace("$TOKEN", "readme-token")
            .replace("/shared", shared.to_str().unwrap())
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let run = |words: Vec<String>| {
        let name = if words[0] == "cayley-worker" {
            "cayley-worker"
        } else {
            "cayley"
        };
        let mut command = Command::new(binary(name));
        command
            .args(&words[1..])
            .current_dir(cwd.path())
            .env("TMPDIR", cwd.path());
        command
    };
    let find = |start: &str| fill(cluster.iter().find(|l| l.starts_with(start)).unwrap());
    let mut serve = run(find("cayley serve"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = find("cayley status");
    let started = Instant::now();
    let answered = loop {
        let o = run(status.clone()).output().unwrap();
        if o.status.success() {
            break String::from_utf8_lossy(&o.stdout).into_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(answered.contains("loopover:3x4"), "{}", answered);
    let worker = run(find("cayley-worker")).output().unwrap();
    assert!(worker.status.success(), "{}", String::from_utf8_lossy(&worker.stderr));
    assert!(serve.wait().unwrap().success());
    check_result(&shared.join("job").join("out"));
}
