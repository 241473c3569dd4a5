//! The memory limits of this process's cgroups. A job scheduler (Slurm,
//! systemd, Kubernetes without a cgroup namespace) puts a process deep in
//! the hierarchy, `/sys/fs/cgroup/<path>`, with the limit on its own group
//! or on any ancestor; only a container with its own cgroup namespace sees
//! its group at the mount's root. So the group is taken from
//! `/proc/self/cgroup` and every group from it up to the root is read, the
//! smallest room left winning.

use std::path::Path;

/// v1 writes "no limit" as a huge number (`LONG_MAX` rounded to pages).
const V1_NO_LIMIT: u64 = 1 << 60;

/// Memory left under the tightest cgroup limit of this process, if any.
pub(super) fn memory_left() -> Option<u64> {
    memory_left_in(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup"))
}

/// [`memory_left`] with the process's cgroup file and the cgroup mount as
/// parameters (the tests build a fake tree). An unreadable cgroup file
/// leaves the mount's root groups, v2 then v1, as before `/proc` was read.
fn memory_left_in(self_cgroup: &Path, mount: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(self_cgroup).unwrap_or_else(|_| "0::/\n1:memory:/\n".into());
    let mut left: Option<u64> = None;
    for line in text.lines() {
        // "hierarchy-id:controllers:path"; v2's controllers are empty.
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let found = if controllers.is_empty() {
            walk_up(mount, path, "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            walk_up(
                &mount.join("memory"),
                path,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            None
        };
        left = match (left, found) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    left
}

/// The smallest `limit - usage` of the groups from `root/path` up to
/// `root`; groups without a limit ("max" in v2) or without the files (a
/// path this mount does not show) are skipped.
fn walk_up(root: &Path, path: &str, limit_file: &str, usage_file: &str) -> Option<u64> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let leaf = root.join(path.trim_start_matches('/'));
    leaf.ancestors()
        .take_while(|dir| dir.starts_with(root))
        .filter_map(|dir| {
            let limit = read(&dir.join(limit_file)).filter(|&l| l < V1_NO_LIMIT)?;
            Some(limit.saturating_sub(read(&dir.join(usage_file)).unwrap_or(0)))
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Writes `files` (relative path, contents) under a fresh directory.
    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        }
        let mount = dir.path().join("cg");
        (dir, mount)
    }

    #[test]
    fn v2_takes_the_tightest_limit_from_the_group_up_to_the_root() {
        let (dir, mount) = tree(&[
            ("self", "0::/job/step\n"),
            // The root says nothing (a host's root group has no memory.max).
            ("cg/memory.current", "999999\n"),
            // The job's limit, 4000 with 1000 used: 3000 left ...
            ("cg/job/memory.max", "4000\n"),
            ("cg/job/memory.current", "1000\n"),
            // ... tighter than the step's 5000 limit with 500 used.
            ("cg/job/step/memory.max", "5000\n"),
            ("cg/job/step/memory.current", "500\n"),
        ]);
        assert_eq!(memory_left_in(&dir.path().join("self"), &mount), Some(3000));
        // The step's own limit, once smaller, wins.
        std::fs::write(mount.join("job/step/memory.max"), "2000\n").unwrap();
        assert_eq!(memory_left_in(&dir.path().join("self"), &mount), Some(1500));
    }

    #[test]
    fn v2_without_any_limit_is_unlimited() {
        let (dir, mount) = tree(&[
            ("self", "0::/user.slice/session\n"),
            ("cg/user.slice/memory.max", "max\n"),
            ("cg/user.slice/session/memory.max", "max\n"),
        ]);
        assert_eq!(memory_left_in(&dir.path().join("self"), &mount), None);
    }

    #[test]
    fn a_namespaced_container_reads_the_mount_root() {
        let (dir, mount) = tree(&[
            ("self", "0::/\n"),
            ("cg/memory.max", "8192\n"),
            ("cg/memory.current", "192\n"),
        ]);
        assert_eq!(memory_left_in(&dir.path().join("self"), &mount), Some(8000));
        // Without a readable /proc/self/cgroup the root is still read.
        assert_eq!(memory_left_in(&dir.path().join("missing"), &mount), Some(8000));
    }

    #[test]
    fn v1_reads_the_memory_controllers_hierarchy() {
        let (dir, mount) = tree(&[
            ("self", "5:cpu,cpuacct:/slurm/job\n4:memory:/slurm/job\n"),
            ("cg/memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("cg/memory/slurm/memory.limit_in_bytes", "9223372036854771712\n"),
            ("cg/memory/slurm/job/memory.limit_in_bytes", "6000\n"),
            ("cg/memory/slurm/job/memory.usage_in_bytes", "2500\n"),
            // Another controller's files are not memory limits.
            ("cg/cpu,cpuacct/slurm/job/memory.limit_in_bytes", "1\n"),
        ]);
        assert_eq!(memory_left_in(&dir.path().join("self"), &mount), Some(3500));
    }
}
