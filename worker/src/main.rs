//! `cayley-worker`: joins a cayley coordinator and computes tasks until the
//! job is over.

use cayley_shared::search::resources::{check_memory_here, check_threads_here, default_budget};
use cayley_shared::units::{human_bytes, parse_size};
use cayley_worker::{peak_rss_bytes, run_worker, WorkerConfig};
use std::path::PathBuf;
use std::time::Duration;

/// mimalloc instead of the system allocator: a task allocates small
/// buffers per shard (source lists, fiber maps, compressed frames) on every
/// thread at once; glibc's malloc and free were 8% of a worker's CPU on the
/// 4×4 Loopover with two threads, and mimalloc cut its user time by a tenth
/// (docs/history.md, "Every core at work"). Built without transparent huge
/// pages (see Cargo.toml), so that its arenas stay within a worker's
/// memory allowance.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Computes BFS tasks for a cayley coordinator. Exits 0 when the job is
/// finished. The job's checkpoint directory must be readable and writable
/// from this machine at the path the coordinator uses (a shared filesystem on
/// a cluster), or at the path given with --checkpoint-dir.
#[derive(clap::Parser, Debug)]
#[command(name = "cayley-worker", version)]
struct Args {
    /// Coordinator URL, e.g. http://10.0.0.5:7070 (https:// with --tls-ca).
    #[arg(long, value_name = "URL", value_parser = cayley_worker::args::coordinator_url)]
    coordinator: String,
    /// Memory for decompressed shards and tables, e.g. 8G or 512M [default: 60% of the
    /// memory available to this process]. Shards that do not fit are read again from the
    /// checkpoint, so any budget above one task's working set works (`cayley info` says how much).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    memory: Option<u64>,
    /// Cluster token (or set CAYLEY_TOKEN).
    #[arg(long, env = "CAYLEY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Compute threads, at least 1 (default: every core).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = cayley_worker::args::at_least_one::<u32>)]
    threads: Option<u32>,
    /// Name shown in `cayley status` (default: host name and process id).
    #[arg(long)]
    name: Option<String>,
    /// Where this machine mounts the job's checkpoint directory, if not at the coordinator's path.
    #[arg(long, value_name = "DIR")]
    checkpoint_dir: Option<PathBuf>,
    /// CA certificate (PEM) that signed the coordinator's TLS certificate.
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
    /// Seconds to keep retrying while the coordinator is unreachable: at start, and
    /// whenever it is lost mid-run (a crash, a restart with `serve --resume`, a partition).
    /// The worker then registers again and goes on if the coordinator serves the same job.
    #[arg(long, allow_hyphen_values = true, value_name = "S", default_value_t = 300, value_parser = cayley_worker::args::whole_number::<u64>)]
    patience: u64,
    /// Removed: a worker keeps no scratch files (its shards live in memory and in the
    /// job's checkpoint). Still accepted, with a warning, so that scripts written for
    /// earlier releases start; it will be refused in a later release.
    #[arg(long, value_name = "DIR", hide = true)]
    scratch: Option<PathBuf>,
    #[command(flatten)]
    fault: cayley_worker::faults::DiskFullFault,
}

fn main() {
    // Before the runtime's threads exist (see the function).
    cayley_worker::runner::prepare_open_files();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build();
    match runtime {
        Ok(runtime) => runtime.block_on(worker_main()),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {}", e);
            std::process::exit(1);
        }
    }
}

async fn worker_main() {
    let args: Args = cayley_worker::args::parse_args();
    if let Err(e) = cayley_worker::logging::init("info", std::env::var("RUST_LOG").ok()) {
        eprintln!("error: {:#}", e);
        std::process::exit(1);
    }
    if let Some(dir) = &args.scratch {
        tracing::warn!(
            "--scratch {} is no longer used and will be refused in a later release: a worker keeps no scratch files (its shards live in memory and in the job's checkpoint); drop the flag",
            dir.display()
        );
    }
    // A mount point given here must be there before the coordinator is
    // asked for anything: without it every task would fail, after the
    // worker joined and took a lease.
    let mount = match &args.checkpoint_dir {
        Some(dir) if !dir.is_dir() => Err(anyhow::anyhow!(
            "--checkpoint-dir {} is not a directory on this machine (give the folder where it mounts the job's checkpoint)",
            dir.display()
        )),
        _ => Ok(()),
    };
    let machine = mount
        .and_then(|_| args.memory.map_or(Ok(()), check_memory_here))
        .and_then(|_| args.threads.map_or(Ok(()), check_threads_here));
    if let Err(e) = machine {
        eprintln!("error: {:#}", e);
        std::process::exit(1);
    }
    let name = args.name.unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "worker".into());
        format!("{}-{}", host.trim(), std::process::id())
    });
    let memory = args.memory.unwrap_or_else(|| default_budget(1));
    let config = WorkerConfig {
        coordinator: args.coordinator,
        token: args.token,
        memory,
        // 0 asks the worker for every core.
        threads: args.threads.unwrap_or(0) as usize,
        name,
        checkpoint_dir: args.checkpoint_dir,
        tls_ca: args.tls_ca,
        patience: Duration::from_secs(args.patience),
        job: None,
        // A worker's checkpoint is the job's own: always durable.
        write: args.fault.write_options(true),
        in_process: None,
    };
    match run_worker(config).await {
        Ok(summary) if summary.finished => {
            tracing::info!(
                "job finished; this worker computed {} tasks; memory budget {}, shard cache peak {}, peak RSS {}",
                summary.tasks,
                human_bytes(memory as u128),
                human_bytes(summary.cache_peak as u128),
                peak_rss_bytes().map_or("unknown".into(), |b| human_bytes(b as u128))
            );
        }
        Ok(summary) => {
            eprintln!("error: the coordinator stopped the job: {}", summary.reason);
            std::process::exit(3);
        }
        Err(e) => {
            eprintln!("error: {:#}", e);
            std::process::exit(1);
        }
    }
}
