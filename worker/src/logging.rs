//! The one logging setup of both binaries: `tracing` events to stderr,
//! filtered by `RUST_LOG` (`RUST_LOG=debug`, `RUST_LOG=cayley=info,warn`),
//! without colour codes unless stderr is a terminal (logs go to files,
//! journals and `kubectl logs`). A command's own output (tables, `info`,
//! the result summary) is not logging and goes to stdout as before.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Installs the subscriber; `rust_log` is the `RUST_LOG` variable, which
/// `main` reads, and `default` the filter when it is unset or empty (an
/// invalid one is refused: the caller prints it as the usual `error:`
/// line). Call once, at the top of `main`.
pub fn init(default: &str, rust_log: Option<String>) -> anyhow::Result<()> {
    let filter = match rust_log {
        Some(given) if !given.trim().is_empty() => EnvFilter::try_new(&given)
            .map_err(|e| anyhow::anyhow!("RUST_LOG={:?} is not a log filter: {}", given, e))?,
        _ => EnvFilter::new(default),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot set up logging: {}", e))
}
