//! Command-line interface definitions.

use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::puzzle::{job_spec_with, Metric, TwsOptions};
use cayley_shared::search::resources::{check_memory_here, check_threads_here, cores_here};
use cayley_shared::units::parse_size;
use cayley_worker::args::{at_least_one, whole_number};
use cayley_worker::faults::{DiskFullFault, FreeSpaceFault};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Exact distance tables ("God's number") of permutation puzzles.
#[derive(Parser, Debug)]
#[command(name = "cayley", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute the full depth table of a puzzle on this machine (a coordinator
    /// plus in-process workers).
    Run(RunArgs),
    /// Serve a job to `cayley-worker` processes on other machines.
    Serve(ServeArgs),
    /// Continue an interrupted job from its checkpoint directory on this machine.
    Resume(ResumeArgs),
    /// Show the progress of a running coordinator.
    Status(StatusArgs),
    /// Show a puzzle's generators, group order, shard plan and the memory
    /// and disk a run needs, without running it.
    Info(InfoArgs),
    /// Project how long a job would take on a cluster (nodes x cores x memory)
    /// from kernel, zstd and disk throughput measured on this machine.
    Plan(PlanArgs),
    /// Counting lower bound on the diameter: canonical move sequences per length.
    Bound(BoundArgs),
}

/// Which puzzle and how to cut it.
#[derive(Args, Debug, Clone)]
pub struct PuzzleArgs {
    /// Puzzle spec: loopover:RxC, sliding:RxC, varikon, turnstyle:N, turnstyle-cayley:N,
    /// pancake:N, burnt-pancake:N, reversals:N, lrx:N (or lrx:N:K), top-spin:N (or :N:K), coxeter:N,
    /// cyclic-coxeter:N, transpositions:N, star:N, perm:FILE or tws:FILE (see README.md).
    pub puzzle: String,
    /// Metric: `mtm` (shift a line by any amount = 1 move) or `stm` (one cell = 1 move).
    #[arg(long, default_value = "mtm")]
    pub metric: Metric,
    /// Track only these pieces (labels, comma-separated, ranges like 1-8); all other
    /// pieces become identical, so the search runs on the coset space.
    #[arg(long, value_name = "PIECES")]
    pub track: Option<String>,
    /// perm: files only: search the directed Cayley graph of the generators as
    /// written (no inverses added); distances are word lengths of positive words.
    #[arg(long)]
    pub directed: bool,
    /// tws: files only: keep only these moves, as twsearch's --moves does (`U` keeps U, U2
    /// and U'; `R2` keeps R2 alone).
    #[arg(long, value_name = "MOVES")]
    pub moves: Option<String>,
    /// tws: files only: leave out these sets (comma-separated names).
    #[arg(long, value_name = "SETS")]
    pub omit: Option<String>,
    /// tws: files only: leave out the center sets (names starting `ce`), as twsearch does.
    #[arg(long)]
    pub nocenters: bool,
    /// tws: files only: leave out the corner sets (names like `c?r…`), as twsearch does.
    #[arg(long)]
    pub nocorners: bool,
    /// tws: files only: leave out the edge sets (names starting `ed`), as twsearch does.
    #[arg(long)]
    pub noedges: bool,
    /// Search every state instead of one per class of symmetric states (by default a
    /// puzzle with symmetries, such as Loopover, is reduced by them when that pays).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Number of leading pieces (or piece classes) whose slots form the shard key
    /// (default: chosen so a shard's bit array is at most 8 MiB, and a level over
    /// 8 MiB has at least 64 shards while they stay at least 128 KiB).
    #[arg(long, allow_hyphen_values = true, value_name = "K", value_parser = whole_number::<usize>)]
    pub shard_pieces: Option<usize>,
    /// Shards per task and chunk file (default: chunks of about 64 MiB, and at
    /// least 16 chunks per level when there are that many shards).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = at_least_one::<u64>)]
    pub chunk_shards: Option<u64>,
}

impl PuzzleArgs {
    /// The job's spec string: the puzzle, with its tracked pieces if any.
    pub fn spec(&self) -> String {
        let options = TwsOptions {
            moves: self
                .moves
                .as_ref()
                .map(|m| m.split(',').map(|s| s.trim().to_string()).collect()),
            omit: self
                .omit
                .iter()
                .flat_map(|o| o.split(','))
                .map(|s| s.trim().to_string())
                .collect(),
            no_centers: self.nocenters,
            no_corners: self.nocorners,
            no_edges: self.noedges,
        };
        let puzzle = format!("{}{}", self.puzzle.trim(), options.suffix());
        job_spec_with(&puzzle, self.directed, self.no_symmetry, self.track.as_deref())
    }
}

/// Options shared by every command that runs workers on this machine.
#[derive(Args, Debug, Clone)]
pub struct LocalArgs {
    /// Directory for result.json, depths.csv, depths.svg and antipodes.txt, created and
    /// checked before any work; refused when it holds another job's results or this
    /// job's to a greater depth [default: ./cayley-out/<puzzle>-<metric>; `resume`: the
    /// folder the job was started with]
    // The text above is the option's --help (clap), not rustdoc markup.
    #[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// In-process workers, at least 1 and at most the threads (each gets an equal share of the threads and of --memory).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub workers: u32,
    /// Threads in all, at least 1, for the workers and for the work before and after them (default: every core).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = at_least_one::<u32>)]
    pub threads: Option<u32>,
    /// Memory for decompressed shards and tables, all workers together, e.g. 8G
    /// [default: 60% of the memory available]. Shards that do not fit are read again
    /// from the checkpoint; `cayley info` gives the smallest budget that works.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,
    /// How many antipodes to report (states at the maximum depth, one per class of
    /// symmetric states, each with a shortest word); at most as many as --memory
    /// holds while they are listed, about 1–2 KiB each (a warning says when).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 10, value_parser = whole_number::<usize>)]
    pub antipodes: usize,
    /// Print only the final table (no progress bars).
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub fault: DiskFullFault,
}

impl Command {
    /// The `--threads` of a command that computes on this machine (`run`,
    /// `resume`), when given.
    pub fn threads(&self) -> Option<u32> {
        match self {
            Command::Run(args) => args.local.threads,
            Command::Resume(args) => args.local.threads,
            _ => None,
        }
    }
}

impl LocalArgs {
    /// Refuses `--memory` and `--threads` beyond what this machine can
    /// give (one wording for `run`, `resume`, `info` and `cayley-worker`).
    pub fn check_here(&self) -> anyhow::Result<()> {
        if let Some(memory) = self.memory {
            check_memory_here(memory)?;
        }
        if let Some(threads) = self.threads {
            check_threads_here(threads)?;
        }
        // Each worker runs on threads of its own: more workers than threads
        // ran one thread each, more than `--threads` asked for (`run
        // loopover:2x4 --workers 8 --threads 2` ran 8).
        let threads = self.threads.map_or(cores_here(), |t| t as usize);
        if self.workers as usize > threads {
            let given = match self.threads {
                Some(t) => format!("--threads {}", t),
                None => "the cores this process may run on".to_string(),
            };
            anyhow::bail!(
                "--workers {} needs a thread for each worker, but only {} are allowed ({}); give --workers {} or fewer",
                self.workers,
                threads,
                given,
                threads
            );
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
    #[command(flatten)]
    pub local: LocalArgs,
    /// Stop after depth D (1 or more); the table is then marked partial.
    #[arg(long, allow_hyphen_values = true, value_name = "D", value_parser = at_least_one::<u32>)]
    pub max_depth: Option<u32>,
    /// Keep the job's checkpoint (zstd level files + manifest.json) in DIR, so an
    /// interrupted run can be continued with `cayley resume DIR`. Without it the
    /// checkpoint lives in a temporary directory that is removed after a successful run.
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Where the temporary checkpoint goes when --checkpoint-dir is not given
    /// [default: /dev/shm for a checkpoint of at most 64 MiB when TMPDIR is unset,
    /// else the system temp dir].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Whether TMPDIR was set when the arguments were read: a user who
    /// chose a temp dir gets it, not /dev/shm (read here, with the
    /// arguments, so that no code below the commands reads the environment).
    #[arg(skip = std::env::var_os("TMPDIR").is_some())]
    pub tmpdir_set: bool,
    /// Which levels stay on disk: `all`; `every:K` (K = 2..4: the two live levels and every
    /// K-th, about 1/K of the disk, antipodes still get shortest words); or `last2` (what the
    /// next level reads and the small early levels, up to 1/8 of a raw level in all; smallest
    /// disk; antipodes get words when those early levels reach within 4 moves of the deepest).
    #[arg(long, value_name = "all|every:K|last2", default_value = "all")]
    pub keep_levels: KeepLevels,
    /// Start even when the checkpoint's planned disk (an upper bound: see `cayley info`) is
    /// more than is free; a disk that fills up stops the job cleanly, to be resumed.
    #[arg(long)]
    pub ignore_disk_check: bool,
    #[command(flatten)]
    pub fault: FreeSpaceFault,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
    /// Address to listen on. Use a non-loopback address only with --token (and TLS
    /// on untrusted networks).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7070")]
    pub listen: String,
    /// The job's checkpoint directory; workers read and write level files here, so on a
    /// cluster it must be a shared filesystem mounted at the same path everywhere (or
    /// workers pass --checkpoint-dir).
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: PathBuf,
    /// Directory for the result files, created and checked before any work (refused when
    /// it holds another job's results); required, except with --resume (then the folder the
    /// job was started with, unless given another).
    #[arg(long, value_name = "DIR", required_unless_present = "resume")]
    pub out: Option<PathBuf>,
    /// Cluster token every RPC must carry (or set CAYLEY_TOKEN). Without one, a random
    /// token is generated and printed.
    #[arg(long, env = "CAYLEY_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Seconds a worker may go silent before its task is re-issued (at least 1).
    #[arg(long, allow_hyphen_values = true, value_name = "S", default_value_t = 30, value_parser = at_least_one::<u32>)]
    pub lease_secs: u32,
    /// Continue the job recorded in --checkpoint-dir. Workers still running from the
    /// previous coordinator (on the same address) register again and go on.
    #[arg(long)]
    pub resume: bool,
    /// Never give an idle worker a second copy of a straggling task (by default, once a
    /// level's queue is empty, the task expected to finish last is copied; the first
    /// result wins).
    #[arg(long)]
    pub no_backup_tasks: bool,
    /// Stop after depth D (1 or more); the table is then marked partial.
    #[arg(long, allow_hyphen_values = true, value_name = "D", value_parser = at_least_one::<u32>)]
    pub max_depth: Option<u32>,
    /// Which levels stay on disk: `all`, `every:K` (K = 2..4) or `last2` (see `cayley run --help`).
    #[arg(long, value_name = "all|every:K|last2", default_value = "all")]
    pub keep_levels: KeepLevels,
    /// Start even when the planned checkpoint disk is more than is free (see `cayley run --help`).
    #[arg(long)]
    pub ignore_disk_check: bool,
    /// TLS certificate (PEM); with --tls-key, workers connect with https:// and --tls-ca.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// How many antipodes to report; at most as many as 60% of this machine's
    /// available memory holds while they are listed, about 1–2 KiB each.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 10, value_parser = whole_number::<usize>)]
    pub antipodes: usize,
    /// Print only the final table.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub fault: FreeSpaceFault,
}

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// Checkpoint directory of the job (the one holding manifest.json).
    pub checkpoint_dir: PathBuf,
    #[command(flatten)]
    pub local: LocalArgs,
    /// Go on to depth D, deeper than the job has reached: a job cut at
    /// --max-depth continues from the levels it has (a D past the diameter
    /// runs it to its end, complete); without it the job keeps its limit.
    #[arg(long, allow_hyphen_values = true, value_name = "D", value_parser = at_least_one::<u32>)]
    pub max_depth: Option<u32>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Coordinator URL, e.g. http://127.0.0.1:7070.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:7070", value_parser = cayley_worker::args::coordinator_url)]
    pub coordinator: String,
    /// Cluster token (or set CAYLEY_TOKEN).
    #[arg(long, env = "CAYLEY_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// CA certificate (PEM) for a TLS coordinator.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
}

/// `cayley plan`.
#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
    /// Machines in the cluster, one worker each.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub nodes: u32,
    /// Cores per machine [default: this machine's].
    #[arg(long, allow_hyphen_values = true, value_name = "C", value_parser = at_least_one::<u32>)]
    pub cores: Option<u32>,
    /// Memory of each machine's worker, e.g. 128G [default: 60% of the memory available here].
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,
    /// A directory on the checkpoint's filesystem, where disk throughput is
    /// measured (256 MiB written, fsynced, read and removed) [default: the current directory].
    /// When it holds this job's manifest, its completed levels are used as counted levels.
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Counted levels of this job: a depths.csv, result.json or manifest.json (of a finished
    /// or partial run); the levels after them are modelled.
    #[arg(long, value_name = "FILE")]
    pub levels: Option<PathBuf>,
}

/// `cayley info`.
#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    #[command(flatten)]
    pub puzzle: PuzzleArgs,
    /// Memory budget per worker to plan with [default: 60% of the memory available here].
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,
    /// Checkpoint directory to check for disk space [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Plan the disk of a search that stops after depth D, 1 or more (as `run --max-depth D`).
    #[arg(long, allow_hyphen_values = true, value_name = "D", value_parser = at_least_one::<u32>)]
    pub max_depth: Option<u32>,
    #[command(flatten)]
    pub fault: FreeSpaceFault,
}

/// Which puzzle to bound.
#[derive(Args, Debug)]
pub struct BoundArgs {
    /// Puzzle spec, e.g. `loopover:4x4` (any family whose moves are not guarded).
    pub puzzle: String,
    /// Metric: `mtm` (shift a line by any amount = 1 move) or `stm` (one cell = 1 move).
    #[arg(long, default_value = "mtm")]
    pub metric: Metric,
    /// Track only these pieces (as for `cayley run`): the bound is for the coset space.
    #[arg(long, value_name = "PIECES")]
    pub track: Option<String>,
}
