//! A network filesystem for a test: an `sshd` of its own on 127.0.0.1 (its
//! own host and client keys, in a temporary directory) exporting a
//! directory, mounted with `sshfs` (FUSE over SFTP). Both are Debian
//! packages (`openssh-server`, `sshfs`); `.ci/run` installs them.
//!
//! sshfs is a network filesystem with the properties cayley must not rely
//! on: no flock across clients, attribute caching, every operation a round
//! trip. Renames use OpenSSH's `posix-rename@openssh.com`, atomic and
//! replacing, as on NFS.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running sshd and the mount of its export.
pub struct Sshfs {
    sshd: Child,
    /// The directory as the server sees it (the coordinator's view).
    pub export: PathBuf,
    /// The same directory through sshfs (the workers' view).
    pub mount: PathBuf,
    _dir: tempfile::TempDir,
}

/// Runs a command; panics with its stderr when it fails.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {}", program, e));
    assert!(
        out.status.success(),
        "{} {}: {}",
        program,
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Sshfs {
    /// Why this machine cannot run the test, or `None`.
    pub fn unavailable() -> Option<String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Some("needs root (sshd, FUSE mounts)".into());
        }
        for needed in ["/usr/sbin/sshd", "/usr/bin/sshfs", "/usr/bin/ssh-keygen", "/dev/fuse"] {
            if !Path::new(needed).exists() {
                return Some(format!("{} is missing (apt-get install openssh-server sshfs)", needed));
            }
        }
        None
    }

    /// Starts sshd on a free port of 127.0.0.1 and mounts its export.
    pub fn start() -> Sshfs {
        // On the disk, not in /dev/shm: the figures compare with the local disk.
        let dir = tempfile::Builder::new()
            .prefix("cayley-sshfs-")
            .tempdir()
            .expect("temporary directory");
        let p = |name: &str| dir.path().join(name);
        let s = |path: &Path| path.to_str().expect("UTF-8 path").to_string();
        for key in ["host_key", "client_key"] {
            run("ssh-keygen", &["-q", "-t", "ed25519", "-N", "", "-f", &s(&p(key))]);
        }
        std::fs::copy(p("client_key.pub"), p("authorized_keys")).expect("authorized_keys");
        let export = p("export");
        let mount = p("mount");
        std::fs::create_dir_all(&export).expect("export directory");
        std::fs::create_dir_all(&mount).expect("mount point");
        // sshd's privilege separation directory (made by its service unit,
        // which is not started here).
        std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        let port = crate::procs::free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\n\
             AuthorizedKeysFile {auth}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\n",
            host = s(&p("host_key")),
            pid = s(&p("sshd.pid")),
            auth = s(&p("authorized_keys")),
        );
        std::fs::write(p("sshd_config"), config).expect("sshd_config");
        let sshd = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f", &s(&p("sshd_config"))])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sshd");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not listen on 127.0.0.1:{}", port);
            std::thread::sleep(Duration::from_millis(50));
        }
        let options = format!(
            "port={},IdentityFile={},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,LogLevel=ERROR",
            port,
            s(&p("client_key"))
        );
        run(
            "sshfs",
            &[&format!("root@127.0.0.1:{}", s(&export)), &s(&mount), "-o", &options],
        );
        Sshfs {
            sshd,
            export,
            mount,
            _dir: dir,
        }
    }
}

impl Drop for Sshfs {
    fn drop(&mut self) {
        let unmounted = Command::new("fusermount3")
            .arg("-u")
            .arg(&self.mount)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
        }
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}
