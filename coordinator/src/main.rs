//! `cayley`: computes exact distance tables of Cayley graphs of permutation
//! puzzles. See `cayley --help` and README.md. The commands live in the
//! library of this crate (`lib.rs`); this file parses and dispatches.

use cayley_coordinator::{cli, commands};

fn main() {
    quiet_on_closed_stdout();
    let cli: cli::Cli = cayley_worker::args::parse_args();
    if std::env::var_os("CAYLEY_LOG").is_some() {
        use std::io::IsTerminal;
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("CAYLEY_LOG"))
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .init();
    }
    let outcome = match cli.command {
        cli::Command::Run(args) => commands::run::run(args).map(drop),
        cli::Command::Serve(args) => commands::serve::serve(args),
        cli::Command::Resume(args) => commands::resume::resume(args),
        cli::Command::Status(args) => commands::status::status(args),
        cli::Command::Info(args) => commands::info::info(args),
        cli::Command::Plan(args) => commands::plan::plan(args),
        cli::Command::Bound(args) => commands::bound::bound(args),
    };
    if let Err(err) = outcome {
        eprintln!("error: {:#}", err);
        std::process::exit(1);
    }
}

/// `cayley info … | head` closes stdout early; `println!` then panics with
/// "Broken pipe". Like any Unix filter, stop quietly instead (status 141,
/// as if killed by SIGPIPE); every other panic keeps the default report.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
