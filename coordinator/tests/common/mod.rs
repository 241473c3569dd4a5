//! Helpers shared by the `cayley` CLI tests.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `cayley` with `args`.
pub fn cayley(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cayley"))
        .args(args)
        .output()
        .expect("run cayley")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts one clear `error:` line containing every needle, exit status 1.
pub fn assert_refused(args: &[&str], needles: &[&str]) {
    let o = cayley(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{:?}: {}", args, err);
    assert!(!err.contains("panicked"), "{:?}: {}", args, err);
    assert_eq!(err.trim().lines().count(), 1, "{:?}: {}", args, err);
    assert!(err.starts_with("error: "), "{:?}: {}", args, err);
    for needle in needles {
        assert!(err.contains(needle), "{:?}: {}", args, err);
    }
}
