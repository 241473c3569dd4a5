//! The `cayley-worker` command as an operator runs it.

use std::collections::BTreeSet;
use std::process::Command;

/// The `--flags` of `text`, without `--help` and `--version`.
fn flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .filter(|w| !["--help", "--version"].contains(w))
        .map(str::to_string)
        .collect()
}

#[test]
fn help_documents_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_cayley-worker"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The README's synopsis of the worker (README.md, "Using it"): the
    // `cayley-worker` line and its continuation lines.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let synopsis: String = readme
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("cayley-worker --coordinator"))
        .take_while(|l| l.trim_start().starts_with("cayley-worker") || l.trim_start().starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let documented = flags(&synopsis);
    // Every option the binary takes, in --help and in the README, and
    // nothing either mentions that the binary does not take.
    for flag in [
        "--coordinator",
        "--memory",
        "--token",
        "--threads",
        "--name",
        "--checkpoint-dir",
        "--tls-ca",
        "--patience",
    ] {
        assert!(text.contains(flag), "{} missing from --help", flag);
    }
    // Options: the first flag of each line of --help that starts with one
    // (descriptions mention others, such as `serve --resume`).
    let options: String = text
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(flags(&options), documented, "--help against README.md");
    assert_eq!(documented.len(), 8, "{:?}", documented);
    assert!(text.contains("shared filesystem"), "{}", text);
}

#[test]
fn an_unreachable_coordinator_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cayley-worker"))
        .args(["--coordinator", "http://127.0.0.1:9", "--patience", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // Where, why and for how long, then the final error.
    assert!(
        err.contains("connecting to the coordinator at http://127.0.0.1:9"),
        "{}",
        err
    );
    assert!(
        err.contains("error: no coordinator at http://127.0.0.1:9 (connection refused); gave up after 1 s"),
        "{}",
        err
    );
    assert!(!err.contains("panicked"), "{}", err);
}

#[test]
fn bad_values_are_one_error_line_and_status_1() {
    for (arg, value, needle) in [
        ("--memory", "lots", "bad size 'lots'"),
        ("--threads", "0", "'0' is not a whole number of at least 1"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cayley-worker"))
            .args(["--coordinator", "http://127.0.0.1:9", arg, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}", err);
        assert_eq!(err.trim().lines().count(), 1, "{}", err);
        assert!(
            err.starts_with("error: ") && err.contains(arg) && err.contains(needle),
            "{}",
            err
        );
    }
}
