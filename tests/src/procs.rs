//! Real processes for the distributed tests: a `cayley serve` coordinator
//! and `cayley-worker`s on 127.0.0.1 (or in network namespaces, see
//! `netns.rs`), killed and restarted at will.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use crate::binary;

/// The stderr of a child, read line by line on a thread.
pub struct Lines {
    rx: mpsc::Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl Lines {
    /// Takes `child`'s piped stderr.
    pub fn of(child: &mut Child) -> Lines {
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { rx, seen: Vec::new() }
    }

    /// Waits for a line containing `needle` (seen before or arriving
    /// within `timeout`).
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line with {:?} within {:?}; stderr so far: {:#?}",
                    needle, timeout, self.seen
                ),
            }
        }
    }

    /// Every line so far, those not yet collected included.
    pub fn text(&mut self) -> String {
        self.seen.extend(self.rx.try_iter());
        self.seen.join("\n")
    }
}

/// A running coordinator whose stderr is collected line by line.
pub struct Coordinator {
    pub child: Child,
    pub url: String,
    pub checkpoint: PathBuf,
    pub out: PathBuf,
    lines: Lines,
    /// Stderr of the processes before the last resume.
    earlier: String,
    /// Program and arguments, to start it again with `--resume`.
    command: Vec<OsString>,
    cwd: PathBuf,
}

impl Coordinator {
    /// Starts `cayley serve PUZZLE` on an ephemeral port of 127.0.0.1.
    pub fn start(dir: &Path, puzzle: &str, token: &str, extra: &[&str]) -> Coordinator {
        Coordinator::start_in(dir, dir, puzzle, token, extra)
    }

    /// Same as [`Coordinator::start`], running in directory `cwd`.
    pub fn start_in(dir: &Path, cwd: &Path, puzzle: &str, token: &str, extra: &[&str]) -> Coordinator {
        Coordinator::start_with(&[], dir, cwd, puzzle, token, "127.0.0.1:0", extra)
    }

    /// Starts `cayley serve PUZZLE --listen LISTEN` under the command
    /// `prefix` (e.g. `ip netns exec NS`), in `cwd`, with its checkpoint
    /// and results in `dir`.
    pub fn start_with(
        prefix: &[&str],
        dir: &Path,
        cwd: &Path,
        puzzle: &str,
        token: &str,
        listen: &str,
        extra: &[&str],
    ) -> Coordinator {
        let checkpoint = dir.join("checkpoint");
        let out = dir.join("out");
        let mut command: Vec<OsString> = prefix.iter().map(OsString::from).collect();
        command.push(binary("cayley").into());
        for arg in ["serve", puzzle, "--listen", listen, "--token", token, "-q"] {
            command.push(arg.into());
        }
        command.extend(["--checkpoint-dir".into(), checkpoint.clone().into_os_string()]);
        command.extend(["--out".into(), out.clone().into_os_string()]);
        command.extend(extra.iter().map(OsString::from));
        let (child, lines) = spawn_serve(&command, cwd);
        let mut c = Coordinator {
            child,
            url: String::new(),
            checkpoint,
            out,
            lines,
            earlier: String::new(),
            command,
            cwd: cwd.to_path_buf(),
        };
        let line = c.wait_for_line("serving ", Duration::from_secs(30));
        let url = line
            .split(" on ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .expect("address in banner");
        c.url = url.trim().to_string();
        c
    }

    /// SIGKILLs the coordinator (nothing is saved on the way out).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the same command again with `--resume` (on the same address
    /// when it was a fixed one) and waits until it serves.
    pub fn resume(&mut self) {
        let mut command = self.command.clone();
        command.push("--resume".into());
        let (child, lines) = spawn_serve(&command, &self.cwd);
        self.child = child;
        let mut before = std::mem::replace(&mut self.lines, lines);
        self.earlier.push_str(&before.text());
        self.earlier.push_str("\n--- resumed ---\n");
        self.wait_for_line("serving ", Duration::from_secs(30));
    }

    /// Waits for a stderr line containing `needle`.
    pub fn wait_for_line(&mut self, needle: &str, timeout: Duration) -> String {
        self.lines.wait_for(needle, timeout)
    }

    /// Everything the coordinator (and the ones before a resume) wrote to
    /// stderr so far.
    pub fn stderr_text(&mut self) -> String {
        format!("{}{}", self.earlier, self.lines.text())
    }

    /// Waits for the coordinator to exit (it writes the results last) and
    /// returns the table of its complete result.json; panics with its stderr
    /// when it failed.
    pub fn finish(self, timeout: Duration) -> Vec<u64> {
        self.finish_as(timeout, true)
    }

    /// Same as [`Coordinator::finish`] for a job stopped by `--max-depth`:
    /// its result.json says it is not complete.
    pub fn finish_partial(self, timeout: Duration) -> Vec<u64> {
        self.finish_as(timeout, false)
    }

    fn finish_as(mut self, timeout: Duration, complete: bool) -> Vec<u64> {
        let ok = wait_with_timeout(&mut self.child, timeout);
        let text = self.stderr_text();
        assert!(ok, "coordinator failed: {}", text);
        self.depths(complete)
    }

    /// Number of completed levels recorded in the manifest (0 if unreadable).
    pub fn levels_done(&self) -> usize {
        std::fs::read(self.checkpoint.join("manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|m| m["levels"].as_array().map(|l| l.len()))
            .unwrap_or(0)
    }

    fn depths(&self, complete: bool) -> Vec<u64> {
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(self.out.join("result.json")).expect("result.json")).expect("json");
        assert_eq!(json["complete"], complete);
        json["depths"]
            .as_array()
            .expect("depths")
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    }
}

fn spawn_serve(command: &[OsString], cwd: &Path) -> (Child, Lines) {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cayley serve");
    let lines = Lines::of(&mut child);
    (child, lines)
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 that nothing listened on a moment ago, for a
/// coordinator that must come back on the same address.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Starts a `cayley-worker` in directory `cwd`.
pub fn start_worker(url: &str, token: &str, cwd: &Path, threads: u32) -> Child {
    start_worker_with(url, token, cwd, threads, &[])
}

/// Starts a `cayley-worker` with extra arguments, in directory `cwd`.
pub fn start_worker_with(url: &str, token: &str, cwd: &Path, threads: u32, extra: &[&str]) -> Child {
    start_worker_under(&[], url, token, cwd, threads, extra)
}

/// Starts a `cayley-worker` under the command `prefix` (e.g. `ip netns
/// exec NS`); `--patience 10` unless `extra` gives one.
pub fn start_worker_under(prefix: &[&str], url: &str, token: &str, cwd: &Path, threads: u32, extra: &[&str]) -> Child {
    let threads = threads.to_string();
    let mut command: Vec<OsString> = prefix.iter().map(OsString::from).collect();
    command.push(binary("cayley-worker").into());
    let patience: &[&str] = if extra.contains(&"--patience") {
        &[]
    } else {
        &["--patience", "10"]
    };
    Command::new(&command[0])
        .args(&command[1..])
        .args(["--coordinator", url, "--token", token, "--threads", &threads])
        .args(patience)
        .args(extra)
        .current_dir(cwd)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cayley-worker")
}

/// Stops a child process and returns only once every one of its threads is
/// stopped. kill(2) returns as soon as the signal is queued: a thread running
/// on the other core (or inside a write) goes on for a moment, so a test that
/// snapshots a directory right after SIGSTOP could see that last write land.
pub fn pause(child: &Child) {
    signal(child, libc::SIGSTOP);
    let tasks = format!("/proc/{}/task", child.id());
    let all_stopped = || {
        let Ok(entries) = std::fs::read_dir(&tasks) else {
            return true; // exited: nothing runs any more
        };
        entries.flatten().all(|task| {
            // "tid (comm) STATE …": comm may hold spaces and parentheses.
            std::fs::read_to_string(task.path().join("stat")).map_or(true, |stat| {
                let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                matches!(state.and_then(|r| r.chars().next()), Some('T' | 't' | 'Z' | 'X') | None)
            })
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !all_stopped() {
        assert!(Instant::now() < deadline, "pid {} did not stop within 30 s", child.id());
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Sends `sig` to a child process (e.g. SIGCONT after [`pause`]).
pub fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) with the pid of a child we have not yet waited for; no memory is shared.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({}) failed", sig);
}

/// Waits for a process, killing it after `timeout`; true when it exited 0.
pub fn wait_with_timeout(child: &mut Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process did not finish within {:?}", timeout);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a worker and returns (exit success, stderr text).
pub fn worker_output(mut child: Child, timeout: Duration) -> (bool, String) {
    let ok = wait_with_timeout(&mut child, timeout);
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        use std::io::Read;
        let _ = err.read_to_string(&mut text);
    }
    (ok, text)
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits for a process and returns whether it exited 0 and its peak
/// resident memory in bytes, as the kernel accounted it (`wait4`'s
/// `ru_maxrss`).
pub fn wait_with_peak_rss(child: Child, timeout: Duration) -> (bool, u64) {
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + timeout;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of the plain C struct
        // wait4 fills in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own unreaped child (the `Child` is consumed
        // here, so std never waits for it), and both out-pointers point to
        // live, writable locals of the right types.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            return (ok, usage.ru_maxrss as u64 * 1024);
        }
        assert!(reaped == 0, "wait4 failed for process {}", pid);
        if Instant::now() > deadline {
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("process did not finish within {:?}", timeout);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Memory a worker process has beyond its `--memory` budget: the program,
/// the async runtime and thread stacks, one output shard and one compressed
/// frame in flight.
pub const WORKER_ALLOWANCE: u64 = 48 << 20;

/// Runs one `cayley-worker --memory BUDGET` (2 threads) for the coordinator
/// at `url` until it exits; asserts it succeeded and that its peak RSS
/// stayed within the budget plus [`WORKER_ALLOWANCE`].
pub fn run_worker_within(url: &str, token: &str, cwd: &Path, budget: u64) {
    let worker = start_worker_with(url, token, cwd, 2, &["--memory", &budget.to_string()]);
    let (ok, peak) = wait_with_peak_rss(worker, Duration::from_secs(600));
    assert!(ok, "the worker failed");
    assert!(
        peak <= budget + WORKER_ALLOWANCE,
        "peak RSS {} MiB exceeds the budget of {} MiB plus {} MiB",
        peak >> 20,
        budget >> 20,
        WORKER_ALLOWANCE >> 20
    );
}

/// Options that cut a job into one-shard tasks with leases of 2 s: many
/// short tasks, so that a paused or cut-off worker holds some when it
/// stops, and its leases expire within a test's patience.
pub const ONE_SHARD_TASKS_SHORT_LEASES: [&str; 6] = ["--shard-pieces", "2", "--chunk-shards", "1", "--lease-secs", "2"];
