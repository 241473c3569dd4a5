//! `cayley`: computes exact distance tables of Cayley graphs of permutation
//! puzzles. See `cayley --help` and README.md. The commands live in the
//! library of this crate (`lib.rs`); this file parses and dispatches.

use cayley_coordinator::{cli, commands};

/// mimalloc instead of the system allocator: a task allocates small
/// buffers per shard (source lists, fiber maps, compressed frames) on every
/// thread at once; glibc's malloc and free were 8% of a worker's CPU on the
/// 4×4 Loopover with two threads, and mimalloc cut its user time by a tenth
/// (docs/history.md, "Every core at work"). Built without transparent huge
/// pages (see Cargo.toml), so that its arenas stay within a worker's
/// memory allowance.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // While the process has one thread (see the function): `run` and
    // `resume` embed workers.
    cayley_worker::runner::prepare_open_files();
    quiet_on_closed_stdout();
    let cli: cli::Cli = cayley_worker::args::parse_args();
    // `serve` logs workers joining and leaving; the other commands only
    // warnings, since `run` and `resume` embed workers whose per-task log
    // would drown the progress display. RUST_LOG overrides either.
    let default_log = match cli.command {
        cli::Command::Serve(_) => "info",
        _ => "warn",
    };
    if let Err(e) = cayley_worker::logging::init(default_log, std::env::var("RUST_LOG").ok()) {
        eprintln!("error: {:#}", e);
        std::process::exit(1);
    }
    if let Some(threads) = cli.command.threads() {
        confine_threads(threads);
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

/// `--threads N` holds for the whole command. The workers and the antipode
/// walk have pools of their own, but the work before the workers start
/// (the reduced spaces' class enumeration: `cayley run loopover:4x4
/// --max-depth 1` takes 0.48 s on two threads, 0.93 s on one) runs on
/// rayon's global pool, which otherwise takes every core. `N` is checked
/// against the cores later, with the command's other arguments (hence the
/// cap here). Done in the binary, not the command, since the global pool
/// is the process's and the tests run commands side by side in one
/// process.
fn confine_threads(threads: u32) {
    let cores = cayley_shared::search::resources::cores_here();
    let threads = (threads as usize).min(cores.max(1));
    // Fails only when the pool was built already; it then keeps its size.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
}

/// `cayley info … | head` closes stdout early; `println!` then panics with
/// "Broken pipe". Like any Unix filter, stop quietly instead (status 141,
/// as if killed by SIGPIPE); every other panic keeps the default report.
/// The same for stderr (`cayley run … 2>&1 | head`): a panic there on a
/// coordinator thread left the run spinning on a core for good; now the
/// process ends, and its checkpoint keeps every level written. Progress
/// lines themselves ignore a closed stderr (`progress.rs`).
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        let printing = message.contains("failed printing to stdout") || message.contains("failed printing to stderr");
        if printing && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
