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
