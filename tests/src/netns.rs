//! Network namespaces a test makes for itself, so it can cut a worker off
//! the network and heal it: one namespace for the coordinator, one per
//! worker that is to be partitioned, each joined to the coordinator's by
//! its own veth pair. Addresses come from 198.51.100.0/24 (TEST-NET-2,
//! RFC 5737: documentation only, never routed) and exist only inside these
//! namespaces, which have no other link and no default route: nothing
//! they send can leave them. Everything is deleted when the [`Net`] is
//! dropped (deleting a namespace deletes its end of each veth pair, and so
//! the pair).
//!
//! Needs root and iproute2's `ip`; [`Net::unavailable`] says why not, so
//! a test can fail with that message.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Numbers namespaces made by this process.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// The namespaces of one test.
pub struct Net {
    /// The coordinator's namespace.
    pub coordinator_ns: String,
    /// The namespace of each partitionable worker.
    pub worker_ns: Vec<String>,
    /// The device of each worker's end of its link (in its namespace).
    devices: Vec<String>,
}

/// Runs `ip ARGS`; panics with its stderr when it fails.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Net {
    /// Why this machine cannot make namespaces (not root, no `ip`, no
    /// kernel support), or `None` when it can.
    pub fn unavailable() -> Option<String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Some("needs root (ip netns add)".into());
        }
        // Unique even when tests of one process probe at once.
        let name = format!("cyprobe{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        match Command::new("ip").args(["netns", "add", &name]).output() {
            Ok(o) if o.status.success() => {
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
                None
            }
            Ok(o) => Some(format!(
                "ip netns add failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Some(format!("cannot run ip (iproute2): {}", e)),
        }
    }

    /// A coordinator namespace and `workers` worker namespaces, worker `i`
    /// at 198.51.100.(4i+2) and the coordinator at 198.51.100.(4i+1) on
    /// the link to it; every link up.
    pub fn new(workers: usize) -> Net {
        // Interface names hold at most 15 bytes.
        let tag = format!(
            "cy{}{}",
            std::process::id() % 100_000,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let coordinator_ns = format!("{}c", tag);
        let mut net = Net {
            coordinator_ns: coordinator_ns.clone(),
            worker_ns: Vec::new(),
            devices: Vec::new(),
        };
        ip(&["netns", "add", &coordinator_ns]);
        ip(&["-n", &coordinator_ns, "link", "set", "lo", "up"]);
        for i in 0..workers {
            let ns = format!("{}w{}", tag, i);
            ip(&["netns", "add", &ns]);
            net.worker_ns.push(ns.clone());
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            let (near, far) = (format!("{}c{}", tag, i), format!("{}w{}", tag, i));
            ip(&[
                "link",
                "add",
                &near,
                "netns",
                &coordinator_ns,
                "type",
                "veth",
                "peer",
                "name",
                &far,
                "netns",
                &ns,
            ]);
            ip(&[
                "-n",
                &coordinator_ns,
                "addr",
                "add",
                &format!("{}/30", Net::host(i, 1)),
                "dev",
                &near,
            ]);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/30", Net::host(i, 2)),
                "dev",
                &far,
            ]);
            ip(&["-n", &coordinator_ns, "link", "set", &near, "up"]);
            ip(&["-n", &ns, "link", "set", &far, "up"]);
            net.devices.push(far);
        }
        net
    }

    fn host(link: usize, end: usize) -> String {
        format!("198.51.100.{}", 4 * link + end)
    }

    /// The coordinator's address as worker `i` reaches it.
    pub fn coordinator_addr(&self, i: usize) -> String {
        Net::host(i, 1)
    }

    /// The command prefix that runs a program in namespace `ns`.
    pub fn exec(ns: &str) -> [&str; 4] {
        ["ip", "netns", "exec", ns]
    }

    /// Takes worker `i`'s link down: nothing passes either way (both ends
    /// lose carrier) until [`Net::heal`].
    pub fn cut(&self, i: usize) {
        ip(&["-n", &self.worker_ns[i], "link", "set", &self.devices[i], "down"]);
    }

    /// Brings worker `i`'s link back up (the kernel restores its route).
    pub fn heal(&self, i: usize) {
        ip(&["-n", &self.worker_ns[i], "link", "set", &self.devices[i], "up"]);
    }

    /// Drops, silently, every packet worker `i` sends to the coordinator
    /// (a blackhole route in its namespace): a one-way partition, the link
    /// stays up and the coordinator's packets still arrive.
    pub fn drop_outgoing(&self, i: usize) {
        let to = format!("{}/32", self.coordinator_addr(i));
        ip(&["-n", &self.worker_ns[i], "route", "add", "blackhole", &to]);
    }

    /// Undoes [`Net::drop_outgoing`].
    pub fn stop_dropping(&self, i: usize) {
        let to = format!("{}/32", self.coordinator_addr(i));
        ip(&["-n", &self.worker_ns[i], "route", "del", "blackhole", &to]);
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in self.worker_ns.iter().chain([&self.coordinator_ns]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
