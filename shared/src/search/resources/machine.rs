//! What this machine can give a process: memory and cores, and the checks
//! that refuse a `--memory` or `--threads` it cannot give, with the same
//! words in every command (`run`, `resume`, `info`, `cayley-worker`).

use super::{cgroup, DEFAULT_MEMORY_SHARE};
use crate::units::human_bytes;

/// Memory this process may use: `MemAvailable`, lowered to the cgroup's
/// limit (containers, Slurm) when that is smaller.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    };
    let available = field("MemAvailable:").or_else(|| field("MemTotal:"))?;
    Some(cgroup::memory_left().map_or(available, |c| c.min(available)))
}

/// The default memory budget of one worker when `workers` share this machine.
pub fn default_budget(workers: usize) -> u64 {
    default_budget_of(available_memory(), workers)
}

/// The default memory budget of one worker when `workers` share a machine
/// with `available` bytes available (4 GiB when that is unknown).
pub fn default_budget_of(available: Option<u64>, workers: usize) -> u64 {
    let available = available.unwrap_or(4 << 30);
    (available as f64 * DEFAULT_MEMORY_SHARE) as u64 / workers.max(1) as u64
}

/// Cores this process may run on (its CPU affinity and cgroup quota).
pub fn cores_here() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuses a budget (`--memory`, all of this process's workers together)
/// above the memory this process may use. A worker maps its whole budget
/// at start, so a larger one failed later with "Cannot allocate memory"
/// after the checkpoint was made, and the `resume` it suggested failed
/// the same way; the budget is a ceiling, so anything up to what is
/// available works.
pub fn check_memory_here(budget: u64) -> anyhow::Result<()> {
    check_memory_against(budget, available_memory())
}

fn check_memory_against(budget: u64, available: Option<u64>) -> anyhow::Result<()> {
    match available {
        Some(available) if budget > available => anyhow::bail!(
            "--memory {} is more than this machine can give this process ({} available: MemAvailable, or the cgroup's limit when lower); give --memory {} or less, or leave it out for {:.0}% of what is available",
            human_bytes(budget as u128),
            human_bytes(available as u128),
            size_argument(available),
            DEFAULT_MEMORY_SHARE * 100.0
        ),
        _ => Ok(()),
    }
}

/// `bytes` rounded down to a `--memory` argument: whole GiB (`22G`), or
/// whole MiB below one GiB.
fn size_argument(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{}G", bytes >> 30)
    } else {
        format!("{}M", bytes >> 20)
    }
}

/// Refuses `--threads` above the cores this process may run on: more
/// threads than cores only take turns (`--threads 1000` on 2 cores ran
/// 17× slower, its threads evicting each other's caches).
pub fn check_threads_here(threads: u32) -> anyhow::Result<()> {
    check_threads_against(threads, cores_here())
}

fn check_threads_against(threads: u32, cores: usize) -> anyhow::Result<()> {
    if threads as usize > cores {
        anyhow::bail!(
            "--threads {} is more than the {} core(s) this process may run on; give --threads {} or fewer (more threads than cores only take turns), or leave it out for every core",
            threads,
            cores,
            cores
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_and_threads_beyond_the_machine_are_refused_naming_the_flag() {
        let gib = 1u64 << 30;
        assert!(check_memory_against(8 * gib, Some(16 * gib)).is_ok());
        assert!(check_memory_against(16 * gib, Some(16 * gib)).is_ok());
        let e = check_memory_against(24 * gib, Some(16 * gib)).unwrap_err().to_string();
        assert!(
            e.contains("--memory 24.0 GiB") && e.contains("--memory 16G or less"),
            "{}",
            e
        );
        // Unknown memory (no /proc): nothing to check against.
        assert!(check_memory_against(u64::MAX, None).is_ok());
        assert!(check_threads_against(2, 2).is_ok());
        let e = check_threads_against(1000, 2).unwrap_err().to_string();
        assert!(
            e.contains("--threads 1000") && e.contains("--threads 2 or fewer"),
            "{}",
            e
        );
    }

    #[test]
    fn this_machine_has_memory_and_a_core() {
        assert!(cores_here() >= 1);
        assert!(available_memory().is_some_and(|m| m > 0));
    }
}
