//! Misuse, as a table: every command with a bad value (negative, zero, too
//! large for this machine, the wrong type, a file where a folder belongs, a
//! folder of unrelated files, a port in use, a URL without a scheme) exits
//! with status 1 and one `error:` line that names what was wrong, before
//! any level is computed and before anything is created: the test's
//! directory (the working directory, TMPDIR and every path given) is the
//! same file for file afterwards.
//!
//! Placeholders in a case's arguments: `{dir}` the test's directory (it
//! holds `a-file`, a regular file, and `junk/notes.txt`, a folder of
//! unrelated files), `{ck}` a checkpoint of a finished Loopover 2×3 run
//! made before the snapshot (for `resume`), `{done}` the folder of its
//! results, `{busy}` an address a listener
//! of the test holds, `{run}` and `{serve}` a valid command line to add
//! one bad option to.

use cayley_tests::{binary, test_dir};
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const RUN: &str = "run loopover:2x3 --checkpoint-dir {dir}/ck --out {dir}/out";
const SERVE: &str = "serve loopover:2x3 --checkpoint-dir {dir}/sck --out {dir}/sout";

/// `(binary, arguments, needles)`: the arguments split at spaces after the
/// placeholders `{run}` and `{serve}` are expanded; every needle must be in
/// the error line.
const CASES: &[(&str, &str, &[&str])] = &[
    // run: counts and sizes
    ("cayley", "{run} --threads 0", &["--threads", "at least 1"]),
    ("cayley", "{run} --threads -1", &["--threads", "at least 1"]),
    ("cayley", "{run} --threads two", &["--threads", "'two'"]),
    ("cayley", "{run} --threads 100000", &["--threads 100000", "or fewer"]),
    ("cayley", "{run} --workers 0", &["--workers", "at least 1"]),
    ("cayley", "{run} --workers -2", &["--workers", "at least 1"]),
    // A thread each: 3 workers ran on 3 threads where 2 were asked for.
    (
        "cayley",
        "{run} --workers 3 --threads 2",
        &["--workers 3", "(--threads 2)", "--workers 2 or fewer"],
    ),
    (
        "cayley",
        "{run} --memory lots",
        &["--memory", "bad size 'lots'", "e.g. 8G"],
    ),
    ("cayley", "{run} --memory -5G", &["--memory", "'-5G'"]),
    ("cayley", "{run} --memory 100T", &["--memory 100.0 TiB", "or less"]),
    (
        "cayley",
        "{run} --memory 1K",
        &["memory budget of 1.0 KiB is too small", "--memory"],
    ),
    ("cayley", "{run} --max-depth -1", &["--max-depth", "not a whole number"]),
    // A whole number past the type's largest: "not a whole number" before.
    (
        "cayley",
        "{run} --max-depth 99999999999",
        &["--max-depth", "'99999999999' is too large", "at most 4294967295"],
    ),
    // Depth 0 is the solved state alone: it computed depth 1 and said so.
    ("cayley", "{run} --max-depth 0", &["--max-depth", "'0'", "at least 1"]),
    (
        "cayley",
        "{run} --max-depth deep",
        &["--max-depth", "not a whole number"],
    ),
    ("cayley", "{run} --antipodes -3", &["--antipodes", "not a whole number"]),
    (
        "cayley",
        "{run} --shard-pieces -1",
        &["--shard-pieces", "not a whole number"],
    ),
    ("cayley", "{run} --chunk-shards 0", &["--chunk-shards", "at least 1"]),
    ("cayley", "{run} --keep-levels every:9", &["every:9", "from 2 to 4"]),
    ("cayley", "{run} --keep-levels junk", &["--keep-levels", "junk"]),
    ("cayley", "{run} --metric qtm", &["--metric", "known: mtm, stm"]),
    (
        "cayley",
        "{run} --thread 2",
        &["unexpected argument '--thread'", "'--threads'"],
    ),
    // run: puzzles
    (
        "cayley",
        "run sliding:5x5 --out {dir}/out",
        &["'sliding:5x5' is too large", "R·C ≤ 20"],
    ),
    (
        "cayley",
        "run rubik:3 --out {dir}/out",
        &["unknown puzzle family 'rubik'", "known families"],
    ),
    // One kind of move: a table labelled stm would be the mtm one.
    (
        "cayley",
        "run pancake:6 --metric stm --out {dir}/out",
        &["'pancake:6'", "--metric stm applies to loopover: and tws:"],
    ),
    (
        "cayley",
        "serve sliding:2x3 --metric stm --checkpoint-dir {dir}/sck --out {dir}/sout",
        &["'sliding:2x3'", "--metric stm applies to"],
    ),
    (
        "cayley",
        "bound varikon --metric stm",
        &["'varikon'", "--metric stm applies to"],
    ),
    // More slots than a reduced layout holds (64): it panicked planning.
    (
        "cayley",
        "run loopover:9x9 --out {dir}/out",
        &["'loopover:9x9' cannot be searched"],
    ),
    ("cayley", "run loopover:0x3 --out {dir}/out", &["loopover:0x3"]),
    (
        "cayley",
        "run loopover:2x3 --track 99 --out {dir}/out",
        &["--track 99", "no piece is labelled '99'"],
    ),
    (
        "cayley",
        "run loopover:2x3 --moves U --out {dir}/out",
        &["--moves", "tws: files"],
    ),
    (
        "cayley",
        "run loopover:2x3 --directed --out {dir}/out",
        &["--directed", "perm: files"],
    ),
    (
        "cayley",
        "run perm:{dir}/missing.perm --out {dir}/out",
        &["missing.perm"],
    ),
    ("cayley", "run tws:{dir}/missing.tws --out {dir}/out", &["missing.tws"]),
    (
        "cayley",
        "run tws:{dir}/a-file --out {dir}/out",
        &["a-file:1", "not supported"],
    ),
    // run: paths
    // A file in the way: "File exists (os error 17)" before.
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/ck --out {dir}/a-file",
        &["--out", "a-file is a file, not a folder"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/ck --out {dir}/a-file/out",
        &["cannot write results to", "a-file/out", "--out"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/ck --out /proc/cayley-out",
        &["cannot write results to /proc/cayley-out", "--out"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/a-file/ck --out {dir}/out",
        &["a-file/ck", "--checkpoint-dir"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/a-file --out {dir}/out",
        &["--checkpoint-dir", "a-file"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {dir}/junk --out {dir}/out",
        &["--checkpoint-dir", "notes.txt", "new or empty directory"],
    ),
    (
        "cayley",
        "run loopover:2x3 --scratch {dir}/a-file --out {dir}/out",
        &["--scratch", "a-file"],
    ),
    (
        "cayley",
        "run loopover:2x3 --checkpoint-dir {ck} --out {dir}/out",
        &["already holds a checkpoint", "cayley resume"],
    ),
    // resume
    ("cayley", "resume", &["required", "CHECKPOINT_DIR"]),
    ("cayley", "resume {dir}/nothing", &["not a cayley checkpoint directory"]),
    // Results already there: another job's, or this job's to a greater
    // depth, were replaced without a word.
    (
        "cayley",
        "run loopover:2x4 --checkpoint-dir {dir}/ck --out {done}",
        &["holds the results of another job, loopover:2x3 (mtm)", "--out"],
    ),
    (
        "cayley",
        "run loopover:2x3 --max-depth 3 --checkpoint-dir {dir}/ck --out {done}",
        &["complete table of loopover:2x3 (mtm) to depth 7", "--max-depth 3"],
    ),
    (
        "cayley",
        "serve loopover:2x4 --checkpoint-dir {dir}/sck --out {done}",
        &["holds the results of another job, loopover:2x3 (mtm)"],
    ),
    ("cayley", "resume {dir}/a-file", &["not a cayley checkpoint directory"]),
    ("cayley", "resume {dir}/junk", &["not a cayley checkpoint directory"]),
    (
        "cayley",
        "resume {ck} --memory 100T",
        &["--memory 100.0 TiB", "or less"],
    ),
    ("cayley", "resume {ck} --memory -1G", &["--memory", "'-1G'"]),
    (
        "cayley",
        "resume {ck} --threads 100000",
        &["--threads 100000", "or fewer"],
    ),
    ("cayley", "resume {ck} --threads 0", &["--threads", "at least 1"]),
    ("cayley", "resume {ck} --workers 0", &["--workers", "at least 1"]),
    (
        "cayley",
        "resume {ck} --workers 2 --threads 1",
        &["--workers 2", "(--threads 1)"],
    ),
    (
        "cayley",
        "resume {ck} --scratch {dir}/s",
        &["unexpected argument '--scratch'"],
    ),
    (
        "cayley",
        "resume {ck} --out {dir}/a-file/out",
        &["cannot write results to", "--out"],
    ),
    // serve
    (
        "cayley",
        "serve loopover:2x3 --checkpoint-dir {dir}/sck",
        &["required", "--out"],
    ),
    ("cayley", "{serve} --lease-secs 0", &["--lease-secs", "at least 1"]),
    ("cayley", "{serve} --lease-secs -5", &["--lease-secs", "at least 1"]),
    (
        "cayley",
        "{serve} --listen {busy}",
        &["cannot listen on", "--listen", "in use"],
    ),
    (
        "cayley",
        "{serve} --listen nonsense",
        &["cannot listen on nonsense", "--listen"],
    ),
    (
        "cayley",
        "{serve} --listen 127.0.0.1:99999",
        &["--listen", "invalid port"],
    ),
    ("cayley", "{serve} --tls-cert {dir}/cert.pem", &["--tls-key"]),
    (
        "cayley",
        "{serve} --tls-cert {dir}/cert.pem --tls-key {dir}/key.pem",
        &["cannot read --tls-cert", "cert.pem"],
    ),
    // It stopped only after the checkpoint and the result folder were made.
    (
        "cayley",
        "{serve} --listen 127.0.0.1:0 --tls-cert {dir}/junk/notes.txt --tls-key {dir}/junk/notes.txt",
        &["--tls-cert", "notes.txt", "not a PEM certificate and its private key"],
    ),
    (
        "cayley",
        "{serve} --max-depth -1",
        &["--max-depth", "not a whole number"],
    ),
    ("cayley", "{serve} --max-depth 0", &["--max-depth", "at least 1"]),
    ("cayley", "{serve} --keep-levels every:1", &["every:1", "from 2 to 4"]),
    (
        "cayley",
        "serve loopover:2x3 --checkpoint-dir {dir}/sck --out {dir}/a-file/out",
        &["cannot write results to", "--out"],
    ),
    (
        "cayley",
        "serve loopover:2x3 --checkpoint-dir {dir}/a-file/ck --out {dir}/sout",
        &["cannot create checkpoint directory"],
    ),
    (
        "cayley",
        "serve loopover:2x3 --checkpoint-dir {dir}/junk --out {dir}/sout",
        &["--checkpoint-dir", "notes.txt"],
    ),
    (
        "cayley",
        "serve loopover:2x3 --checkpoint-dir {dir}/sck --resume",
        &["holds no checkpoint to resume"],
    ),
    (
        "cayley",
        "serve sliding:5x5 --checkpoint-dir {dir}/sck --out {dir}/sout",
        &["'sliding:5x5' is too large"],
    ),
    // status
    (
        "cayley",
        "status --coordinator 127.0.0.1:7070",
        &["--coordinator", "e.g. http://127.0.0.1:7070"],
    ),
    (
        "cayley",
        "status --coordinator http://127.0.0.1",
        &["--coordinator", "no host and port"],
    ),
    (
        "cayley",
        "status --coordinator http://127.0.0.1:1",
        &["no coordinator at", "--coordinator"],
    ),
    (
        "cayley",
        "status --coordinator https://127.0.0.1:1 --tls-ca {dir}/ca.pem",
        &["cannot read CA certificate", "ca.pem"],
    ),
    (
        "cayley",
        "status --coordinator https://127.0.0.1:1",
        &["speaks TLS", "--tls-ca FILE"],
    ),
    // info
    (
        "cayley",
        "info loopover:2x3 --memory 100T",
        &["--memory 100.0 TiB", "or less"],
    ),
    ("cayley", "info loopover:2x3 --memory -1G", &["--memory", "'-1G'"]),
    (
        "cayley",
        "info loopover:2x3 --max-depth -1",
        &["--max-depth", "not a whole number"],
    ),
    (
        "cayley",
        "info loopover:2x3 --max-depth 0",
        &["--max-depth", "at least 1"],
    ),
    ("cayley", "info sliding:5x5", &["sliding:RxC has at most 20"]),
    ("cayley", "info turnstyle:22", &["turnstyle:N takes N from 4 to 21"]),
    (
        "cayley",
        "info loopover:2x3 --metric qtm",
        &["--metric", "known: mtm, stm"],
    ),
    // plan
    ("cayley", "plan loopover:2x3 --nodes 0", &["--nodes", "at least 1"]),
    ("cayley", "plan loopover:2x3 --cores -4", &["--cores", "at least 1"]),
    ("cayley", "plan loopover:2x3 --memory lots", &["--memory", "bad size"]),
    (
        "cayley",
        "plan loopover:2x3 --levels {dir}/missing.csv",
        &["cannot read", "missing.csv"],
    ),
    (
        "cayley",
        "plan loopover:2x3 --levels {dir}/a-file",
        &["a-file", "expected depth,count"],
    ),
    // Refused before seconds of calibration, not after them.
    (
        "cayley",
        "plan loopover:2x3 --checkpoint-dir {dir}/a-file",
        &["cannot write a file in", "a-file", "--checkpoint-dir"],
    ),
    (
        "cayley",
        "plan loopover:4x4 --memory 50M --checkpoint-dir {dir}",
        &[
            "memory budget of 50.0 MiB is too small for 'loopover:4x4'",
            "--memory 111.0 MiB or more",
        ],
    ),
    (
        "cayley",
        "plan loopover:2x3 --checkpoint-dir {dir}/missing",
        &["cannot write a file in", "missing", "--checkpoint-dir"],
    ),
    // bound
    ("cayley", "bound", &["required", "PUZZLE"]),
    ("cayley", "bound unknown:3", &["unknown puzzle family 'unknown'"]),
    (
        "cayley",
        "bound loopover:2x3 --metric qtm",
        &["--metric", "known: mtm, stm"],
    ),
    (
        "cayley",
        "bound loopover:2x3 --track 99",
        &["no piece is labelled '99'"],
    ),
    // the worker
    ("cayley-worker", "", &["required", "--coordinator"]),
    (
        "cayley-worker",
        "--coordinator 127.0.0.1:47999",
        &["--coordinator", "e.g. http://127.0.0.1:47999"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --memory -5G",
        &["--memory", "'-5G'"],
    ),
    // Refused before the coordinator is asked: every task would fail.
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --checkpoint-dir {dir}/missing",
        &["--checkpoint-dir", "missing", "not a directory on this machine"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --checkpoint-dir {dir}/a-file",
        &["--checkpoint-dir", "a-file", "not a directory on this machine"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --memory 100T",
        &["--memory 100.0 TiB", "or less"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --threads 0",
        &["--threads", "at least 1"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --threads 100000",
        &["--threads 100000", "or fewer"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --patience -1",
        &["--patience", "not a whole number"],
    ),
    (
        "cayley-worker",
        "--coordinator https://127.0.0.1:1 --tls-ca {dir}/ca.pem",
        &["cannot read CA certificate", "ca.pem"],
    ),
    // Each of these retried for --patience seconds, or was ignored.
    (
        "cayley-worker",
        "--coordinator https://127.0.0.1:1",
        &["speaks TLS", "--tls-ca FILE"],
    ),
    (
        "cayley-worker",
        "--coordinator http://127.0.0.1:1 --tls-ca {dir}/junk/notes.txt",
        &["--tls-ca", "notes.txt", "https://"],
    ),
    (
        "cayley-worker",
        "--coordinator https://127.0.0.1:1 --tls-ca {dir}/junk/notes.txt",
        &["notes.txt is not a PEM certificate"],
    ),
];

/// Every file and folder under `root` with its size and modification time.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut seen = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            seen.insert(path, (if meta.is_dir() { 0 } else { meta.len() }, meta.modified().ok()));
        }
    }
    seen
}

/// What was wrong with one case, or None when it was refused as it should.
fn check(binary_name: &str, line: &str, needles: &[&str]) -> Option<String> {
    let dir = test_dir();
    let root = dir.path();
    std::fs::write(root.join("a-file"), b"in the way\n").unwrap();
    std::fs::create_dir_all(root.join("junk")).unwrap();
    std::fs::write(root.join("junk").join("notes.txt"), b"my notes\n").unwrap();
    let (cwd, tmp) = (root.join("cwd"), root.join("tmp"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let ck = root.join("done-ck");
    let done = root.join("done-out");
    if line.contains("{ck}") || line.contains("{done}") {
        let made = Command::new(binary("cayley"))
            .args(["run", "loopover:2x3", "-q", "--checkpoint-dir"])
            .arg(&ck)
            .arg("--out")
            .arg(&done)
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    }
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let expanded = line
        .replace("{run}", RUN)
        .replace("{serve}", SERVE)
        .replace("{dir}", root.to_str().unwrap())
        .replace("{ck}", ck.to_str().unwrap())
        .replace("{done}", done.to_str().unwrap())
        .replace("{busy}", &busy.local_addr().unwrap().to_string());
    let before = snapshot(root);
    let output = Command::new(binary(binary_name))
        .args(expanded.split_whitespace())
        .current_dir(&cwd)
        .env("TMPDIR", &tmp)
        .env_remove("CAYLEY_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    let after = snapshot(root);
    let mut problems = Vec::new();
    if output.status.code() != Some(1) {
        problems.push(format!("exit status {:?}", output.status.code()));
    }
    if err.trim().lines().count() != 1 || !err.starts_with("error: ") || err.contains("panicked") {
        problems.push("not one `error:` line".to_string());
    }
    problems.extend(
        needles
            .iter()
            .filter(|n| !err.contains(*n))
            .map(|n| format!("no {:?}", n)),
    );
    if before != after {
        let changed: Vec<_> = after
            .keys()
            .filter(|p| before.get(*p) != after.get(*p))
            .chain(before.keys().filter(|p| !after.contains_key(*p)))
            .collect();
        problems.push(format!("the file system changed: {:?}", changed));
    }
    (!problems.is_empty()).then(|| {
        format!(
            "{} {}: {} -- stderr: {}",
            binary_name,
            line,
            problems.join("; "),
            err.trim()
        )
    })
}

#[test]
fn every_misuse_is_one_error_line_before_anything_is_made() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(binary_name, line, needles)| check(binary_name, line, needles))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn cayley_alone_prints_its_help_and_exits_1() {
    let output = Command::new(binary("cayley")).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("Usage: cayley <COMMAND>") && err.contains("run"),
        "{}",
        err
    );
}

/// Output of `binary args…` with TMPDIR and the working directory in a
/// fresh test directory.
fn output_of(binary_name: &str, args: &[&str]) -> std::process::Output {
    let dir = test_dir();
    Command::new(binary(binary_name))
        .args(args)
        .current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .output()
        .unwrap()
}

#[test]
fn the_removed_worker_scratch_flag_is_accepted_with_a_warning() {
    // A cluster script of an earlier release still starts; the worker then
    // fails only for the coordinator that is not there.
    let o = output_of(
        "cayley-worker",
        &[
            "--coordinator",
            "http://127.0.0.1:1",
            "--patience",
            "0",
            "--scratch",
            "/var/tmp/x",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", err);
    assert!(err.contains("--scratch /var/tmp/x is no longer used"), "{}", err);
    assert!(err.contains("no coordinator at http://127.0.0.1:1"), "{}", err);
}

/// A TMPDIR that names a file: the run's default scratch is refused as
/// that, naming TMPDIR and `--scratch` (it said "File exists" of a
/// `--scratch` the user never gave), and nothing is left.
#[test]
fn a_tmpdir_that_is_a_file_is_named_as_the_scratch() {
    let dir = test_dir();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a folder\n").unwrap();
    let out = dir.path().join("out");
    let o = Command::new(binary("cayley"))
        .args(["run", "loopover:2x3", "-q", "--out"])
        .arg(&out)
        .current_dir(dir.path())
        .env("TMPDIR", &file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", err);
    assert!(
        err.contains(&format!(
            "{} (the temporary folder, from TMPDIR; choose another with --scratch) is a file",
            file.display()
        )),
        "{}",
        err
    );
    assert!(!out.exists(), "a refused run left its result folder");
}

/// A 13-cycle and a 3-cycle generate A₁₃, whose found symmetries (a
/// reflection of the cycle) would only halve it: `info` says they go
/// unused and why, rather than only that symmetries were found.
#[test]
fn info_says_why_found_symmetries_go_unused() {
    let dir = test_dir();
    let file = dir.path().join("a13.perm");
    std::fs::write(&file, "a: (1,2,3,4,5,6,7,8,9,10,11,12,13)\nb: (1,2,3)\n").unwrap();
    let o = output_of("cayley", &["info", &format!("perm:{}", file.display())]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("found: a group of order 2"), "{}", text);
    assert!(
        text.contains("symmetries are not used: the found symmetries would store")
            && text.contains("below a 4-fold reduction"),
        "{}",
        text
    );
    // 13!/2: the even permutations of 13 points.
    assert!(text.contains("group order  3113510400"), "{}", text);
}

/// Loopover boards of more than 64 cells have symmetries that no reduced
/// layout can hold (its slot sets are 64-bit): `info` and `run` planned
/// one anyway and panicked (an index past the binomial table). Now `info`
/// shows the board, its group order (`S_66`, seed Theorem 5.2.3, as 66!
/// computed here) and why it cannot be searched, and `run` refuses it.
#[test]
fn boards_past_64_cells_are_planned_without_reduction() {
    let o = output_of("cayley", &["info", "loopover:2x33"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !stderr.contains("panicked"), "{}", stderr);
    let mut digits = vec![1u32]; // 66!, little-endian decimal digits
    for n in 2..=66u32 {
        let mut carry = 0;
        for d in digits.iter_mut() {
            let v = *d * n + carry;
            *d = v % 10;
            carry = v / 10;
        }
        while carry > 0 {
            digits.push(carry % 10);
            carry /= 10;
        }
    }
    let order: String = digits.iter().rev().map(|d| char::from(b'0' + *d as u8)).collect();
    assert!(text.contains(&format!("group order  {order}\n")), "{}", text);
    assert!(text.contains("'loopover:2x33' cannot be searched"), "{}", text);
}

/// The 3×3×3's corner and edge permutations are reduced by the cube's 48
/// symmetries (found, not declared), to within 1% of `8!·12!/2 / 48`.
#[test]
fn info_reduces_the_cube_permutations_by_its_48_symmetries() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/puzzles/3x3x3-permutations.perm");
    let o = output_of("cayley", &["info", &format!("perm:{}", file.display())]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // 8! · 12! / 2: corners and edges each any arrangement, of equal parity.
    assert!(text.contains("group order  9656672256000"), "{}", text);
    assert!(text.contains("reduced by a group of 48 symmetries"), "{}", text);
    let stored: u128 = text
        .lines()
        .find_map(|l| l.strip_prefix("states       ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no stored states in {}", text));
    let ideal = 9_656_672_256_000u128 / 48;
    assert!(stored >= ideal && stored * 100 < ideal * 101, "{} vs {}", stored, ideal);
}

#[test]
fn info_says_when_a_budget_is_too_small() {
    let o = output_of("cayley", &["info", "loopover:2x3", "--memory", "8"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        text.contains("`cayley run` refuses it: a memory budget of 8 B is too small"),
        "{}",
        text
    );
}

#[test]
fn help_marks_what_is_required_and_lists_only_what_applies() {
    let serve = String::from_utf8_lossy(&output_of("cayley", &["serve", "--help"]).stdout).into_owned();
    assert!(serve.contains("required, except with --resume"), "{}", serve);
    let resume = String::from_utf8_lossy(&output_of("cayley", &["resume", "--help"]).stdout).into_owned();
    assert!(!resume.contains("--scratch"), "{}", resume);
}

#[test]
fn progress_lines_off_a_terminal_carry_the_rate() {
    let dir = test_dir();
    let out = dir.path().join("out");
    let o = output_of(
        "cayley",
        &["run", "loopover:2x3", "--threads", "1", "--out", out.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{}", err);
    let levels: Vec<&str> = err.lines().filter(|l| l.starts_with("depth ")).collect();
    // Loopover 2×3 MTM has depths 1–7 (tests/data/loopover-mtm.csv).
    assert_eq!(levels.len(), 7, "{}", err);
    assert!(levels.iter().all(|l| l.contains(" states/s")), "{}", err);
    // The header comes before the first level, on its own line.
    let header = err.lines().position(|l| l.contains("memory budget")).expect("header");
    let first = err.lines().position(|l| l.starts_with("depth ")).unwrap();
    assert!(header < first, "{}", err);
}

#[test]
fn on_a_terminal_the_header_has_a_line_of_its_own() {
    // `script` (util-linux) gives the run a pseudo-terminal, where the
    // level bars are drawn; the first bar used to be drawn before the
    // header, which then shared its line.
    let dir = test_dir();
    let command = format!(
        "{} run loopover:2x5 --threads 1 --out {}",
        binary("cayley").display(),
        dir.path().join("out").display()
    );
    let o = Command::new("script")
        .args(["-qfc", &command, "/dev/null"])
        .env("TMPDIR", dir.path())
        .output()
        .expect("script (util-linux) runs the command on a pseudo-terminal");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("loopover:2x5 (mtm): ") && !first.contains("depth"),
        "{:?}",
        first
    );
    assert!(text.contains("depth   1 ["), "no bar drawn: {:?}", text);
}
