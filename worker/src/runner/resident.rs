//! Keeps the process's resident memory within the budgets its workers
//! were given, by lowering their caches' limits while it passes them and
//! giving free slots' pages back.
//!
//! Why: the cache charges what it holds, a slot's bytes for a shard held
//! whole and a list's for a shard held as its positions, but the process
//! holds more. A slot once touched stayed resident after the shard in it
//! went (the slab hands it out again, but never gave its pages back), and
//! lists freed in LRU order leave holes in the allocator's pages, which
//! stay resident while another list shares them; so when a level's lists
//! give way to the next level's slots, both are resident. And some of the
//! heap is not charged at all (the open chunk files' indexes, the cache's
//! own maps). Measured on the 4×4 Loopover at 2 threads (`--keep-levels
//! last2`, peak RSS): to depth 10 under `--memory 3G`, 3.57 GiB (at depth
//! 10, 2.5 GiB of slots touched and 1.1 GiB of heap, of which the cache
//! charged 0.6); the complete table under `--memory 15G`, 15.77 GiB.
//!
//! How: after each task, and within it each time its file takes shards,
//! the process's resident bytes are read (`/proc/self/statm`, 6 µs here;
//! at most every 20 ms). While they pass
//! the budgets of the workers registered in the process, each worker lowers its
//! cache's limit by half its share of the excess, evicts down to it, and
//! gives back the pages of the slab's free slots (but those its shards in
//! flight take next); once they fall well below, the limit rises again,
//! up to the cache's budget. The limit never goes below half the cache's
//! budget: a budget mostly taken by tables and fixed costs cannot be met
//! by the cache alone, and the run then says so once.

use super::TaskRunner;
use crate::slab::Slab;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Resident memory is read at most this often: a sparse level's tasks
/// take a millisecond or less each, and what one adds is small.
const CHECK_EVERY: Duration = Duration::from_millis(20);

/// A worker's part: its budget registered, its cache's limit, and the
/// slab whose free slots it gives back.
pub(super) struct Resident {
    registration: Registration,
    /// When the next check is due, in nanoseconds from `since`: read by
    /// every thread each time its task's file takes shards, written only
    /// by the one that checks, so the check's lock is taken once per
    /// [`CHECK_EVERY`], not by nearly every shard computed (665,000 on the
    /// 4×4 to depth 8) on whichever core computed it.
    next_check: AtomicU64,
    since: Instant,
    fit: Mutex<Fit>,
    slab: Slab,
    /// Free slots kept resident: those the shards in flight take.
    keep: usize,
}

impl Resident {
    /// For a worker of `memory_budget` bytes whose cache has
    /// `cache_budget`, its slots from `slab`, `keep` of them in flight.
    pub fn new(memory_budget: u64, cache_budget: u64, slab: Slab, keep: usize) -> Resident {
        Resident {
            registration: Registration::new(memory_budget),
            next_check: AtomicU64::new(0),
            since: Instant::now(),
            fit: Mutex::new(Fit::new(cache_budget)),
            slab,
            keep,
        }
    }
}

impl TaskRunner {
    /// Sets the cache's limit for the process's resident memory now, and
    /// gives free slots back while it is over (see the module's notes); a
    /// thread that finds another doing it skips.
    pub(super) fn fit_cache_to_resident(&self) {
        let gate = &self.resident.next_check;
        let now = self.resident.since.elapsed().as_nanos() as u64;
        if now < gate.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut fit) = self.resident.fit.try_lock() else {
            return;
        };
        // Another thread may have checked between the load and the lock.
        if now < gate.load(Ordering::Relaxed) {
            return;
        }
        gate.store(now + CHECK_EVERY.as_nanos() as u64, Ordering::Relaxed);
        let Some(mut resident) = resident_bytes() else {
            return;
        };
        let registration = &self.resident.registration;
        let process_budget = registration.process_budget();
        if resident > process_budget
            && self
                .resident
                .slab
                .release_free(self.resident.keep, resident - process_budget)
                > 0
        {
            resident = resident_bytes().unwrap_or(resident);
        }
        let (before, was_at_floor) = (fit.limit, fit.at_floor);
        let limit = fit.next(resident, process_budget, registration.budget());
        if limit != before {
            self.store.set_limit(limit);
            if limit < before {
                self.resident.slab.release_free(self.resident.keep, before - limit);
            }
            tracing::debug!(
                "resident {} MiB against budgets of {} MiB: shard cache limited to {} MiB",
                resident >> 20,
                process_budget >> 20,
                limit >> 20
            );
        }
        if fit.at_floor && !was_at_floor {
            tracing::warn!(
                "this process holds {} MiB, more than the {} MiB of --memory, although the shard cache \
                 is down to half its budget; allow the process more memory than --memory says",
                resident >> 20,
                process_budget >> 20
            );
        }
    }
}

/// Budgets of the workers of this process (`cayley run` embeds several).
static REGISTERED: AtomicU64 = AtomicU64::new(0);

/// A worker's budget counted in the process's while it lives.
struct Registration {
    budget: u64,
}

impl Registration {
    pub fn new(budget: u64) -> Registration {
        REGISTERED.fetch_add(budget, Ordering::Relaxed);
        Registration { budget }
    }

    /// The process's budgets: this worker's and those of the others alive.
    pub fn process_budget(&self) -> u64 {
        REGISTERED.load(Ordering::Relaxed).max(self.budget)
    }

    pub fn budget(&self) -> u64 {
        self.budget
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        REGISTERED.fetch_sub(self.budget, Ordering::Relaxed);
    }
}

/// Resident bytes of this process (`/proc/self/statm`), where the kernel
/// says.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages = statm.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(pages * crate::slab::page_size() as u64)
}

/// One worker's cache limit as resident memory goes.
#[derive(Debug, Clone, PartialEq)]
struct Fit {
    /// The cache's budget: the limit never passes it.
    cache_budget: u64,
    /// The cache's limit now.
    pub limit: u64,
    /// The limit reached its floor while resident memory was over.
    pub at_floor: bool,
}

/// Resident memory this far below the budgets (a fraction of them) lets
/// the limit rise again: closer, the limit would go up and down with the
/// allocator's purges.
const RISE_BELOW: u64 = 32;

impl Fit {
    fn new(cache_budget: u64) -> Fit {
        Fit {
            cache_budget,
            limit: cache_budget,
            at_floor: false,
        }
    }

    /// The lowest limit: half the cache's budget.
    fn floor(&self) -> u64 {
        self.cache_budget / 2
    }

    /// The limit for `resident` bytes in a process whose workers have
    /// `process_budget` bytes, of which this worker `own_budget`: lower by
    /// half this worker's share of the excess, or higher by half its share
    /// of the room once there is room enough. Half, since what eviction
    /// gives back shows only at the next check: slots at once, the
    /// allocator's pages as their last lists go.
    fn next(&mut self, resident: u64, process_budget: u64, own_budget: u64) -> u64 {
        let share =
            |bytes: u64| (u128::from(bytes) * u128::from(own_budget) / u128::from(process_budget.max(1))) as u64;
        if resident > process_budget {
            let lowered = self.limit.saturating_sub(share(resident - process_budget) / 2);
            self.at_floor = lowered < self.floor();
            self.limit = lowered.max(self.floor());
        } else {
            let room = process_budget - resident;
            if room > process_budget / RISE_BELOW {
                self.limit = (self.limit + share(room) / 2).min(self.cache_budget);
                self.at_floor = false;
            }
        }
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_limit_falls_by_half_the_excess_and_comes_back_with_room() {
        let mut fit = Fit::new(900 * MIB);
        // Within the budget, close to it: nothing changes.
        assert_eq!(fit.next(990 * MIB, 1000 * MIB, 1000 * MIB), 900 * MIB);
        // 100 MiB over: the limit falls by half of it, and again while over.
        assert_eq!(fit.next(1100 * MIB, 1000 * MIB, 1000 * MIB), 850 * MIB);
        assert_eq!(fit.next(1040 * MIB, 1000 * MIB, 1000 * MIB), 830 * MIB);
        // Well below the budget: half the room comes back, up to the budget.
        assert_eq!(fit.next(900 * MIB, 1000 * MIB, 1000 * MIB), 880 * MIB);
        assert_eq!(fit.next(500 * MIB, 1000 * MIB, 1000 * MIB), 900 * MIB);
        assert!(!fit.at_floor);
    }

    #[test]
    fn a_worker_answers_its_share_and_the_limit_stops_at_half() {
        let mut fit = Fit::new(400 * MIB);
        // Two workers of 500 MiB in one process, 200 MiB over: this one's
        // share is 100 MiB, and it gives up half of that.
        assert_eq!(fit.next(1200 * MIB, 1000 * MIB, 500 * MIB), 350 * MIB);
        assert!(!fit.at_floor);
        // Far over: half the cache's budget, and said.
        assert_eq!(fit.next(2000 * MIB, 1000 * MIB, 500 * MIB), 200 * MIB);
        assert!(fit.at_floor);
        // Room again: no longer at the floor.
        assert_eq!(fit.next(500 * MIB, 1000 * MIB, 500 * MIB), 325 * MIB);
        assert!(!fit.at_floor);
    }

    #[test]
    fn registrations_sum_while_they_live() {
        // Other tests' workers may be registered too: only lower bounds.
        let a = Registration::new(7 * MIB);
        {
            let b = Registration::new(5 * MIB);
            assert!(a.process_budget() >= 12 * MIB && b.process_budget() >= 12 * MIB);
        }
        assert!(a.process_budget() >= 7 * MIB);
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }
}
