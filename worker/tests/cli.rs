//! The `cayley-worker` command as an operator runs it.

use std::process::Command;

#[test]
fn help_documents_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_cayley-worker"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--coordinator",
        "--memory",
        "--token",
        "--threads",
        "--checkpoint-dir",
        "--tls-ca",
        "--patience",
    ] {
        assert!(text.contains(flag), "{} missing from --help", flag);
    }
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
fn a_malformed_memory_budget_is_refused_by_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_cayley-worker"))
        .args(["--coordinator", "http://127.0.0.1:9", "--memory", "lots"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad size 'lots'"), "{}", err);
}
