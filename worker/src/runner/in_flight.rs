//! How many tasks a worker computes side by side, and how many shards each
//! holds in flight, out of the memory the budget leaves beside the cache.
//!
//! Why it grows with the threads: a task's shards are written in order, so
//! one slow shard holds its task's window while the shards behind it wait,
//! and a task's last shards, its file's fsync and its report leave threads
//! without work unless another task runs. On the 16-core machine
//! (2026-11-28, docs/history.md "On 16 cores, second call") one worker of
//! 16 threads, with 2 tasks and 56 shards in flight, kept the 4×4
//! Loopover's depth 8 85–87 % busy in 7.99 s; `--workers 4` of 4 threads
//! each (8 tasks, 128 shards in flight) kept it 94 % busy in 7.52 s, and
//! the job to depth 8 took 10.65 s against 11.74–12.55 s. Below 8 threads
//! nothing changes: 2 tasks, a room of 64 MiB.

/// Bytes of inputs and outputs held for the shards in flight beyond the
/// first, per [`THREADS_PER_TASK`] threads and at least once (the 4×4
/// Loopover's window of 8 holds 7.8 MiB more).
const ROOM_PER_TASK_THREADS: u64 = 64 << 20;

/// Threads for which one more task runs side by side.
const THREADS_PER_TASK: usize = 4;

/// Shards in flight per thread: several, so that a thread that finishes a
/// sparse shard early finds another while a slow one is written.
const WINDOW_PER_THREAD: usize = 4;

/// Tasks a worker computes side by side when the budget has room: the
/// client holds that many windows' worth of shards, a whole window for
/// each task until it says it computes fewer (`client/windows.rs`).
const MIN_TASKS_AT_ONCE: usize = 2;

/// Most tasks side by side, whatever the threads.
const MAX_TASKS_AT_ONCE: usize = 8;

/// Tasks side by side and shards in flight per task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InFlight {
    /// Tasks computed side by side.
    pub tasks: usize,
    /// Shards in flight in one task.
    pub window: usize,
}

impl InFlight {
    /// For `threads` threads, shards whose inputs and output take `item`
    /// bytes, and a cache of `cache_budget` bytes: the room beyond the
    /// first shard is at most a quarter of the cache.
    pub fn plan(threads: usize, item: u64, cache_budget: u64) -> InFlight {
        let threads = threads.max(1);
        let wanted = (threads / THREADS_PER_TASK).clamp(MIN_TASKS_AT_ONCE, MAX_TASKS_AT_ONCE);
        let room = (ROOM_PER_TASK_THREADS * (threads / THREADS_PER_TASK).max(1) as u64)
            .max(wanted as u64 * item)
            .min(cache_budget / 4);
        let fit = (room / item.max(1)) as usize + 1;
        if fit < MIN_TASKS_AT_ONCE {
            return InFlight { tasks: 1, window: 1 };
        }
        let tasks = wanted.min(fit);
        InFlight {
            tasks,
            window: (fit / tasks).clamp(1, WINDOW_PER_THREAD * threads),
        }
    }

    /// Shards held outside the cache beyond the first.
    pub fn extra_shards(&self) -> u64 {
        (self.tasks * self.window - 1) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    /// The 4×4 Loopover's item: 29 shards of 40.5 KiB.
    const ITEM_4X4: u64 = 29 * 41_472;
    /// A space of 12! in 12 shards of 4.99 MB (the 2×6 Loopover unreduced
    /// before `layout::MIN_SHARDS`, or with `--shard-pieces 1`): 21 shards.
    const ITEM_2X6: u64 = 21 * 4_989_600;
    /// The same space in its default plan, 132 shards of 444 KiB.
    const ITEM_2X6_132: u64 = 21 * 455_040;

    #[test]
    fn below_eight_threads_two_tasks_share_a_room_of_64_mib() {
        // The plan before the threads counted: 64 MiB (or two items) beyond
        // the first shard, split between two tasks.
        for threads in 1..=7 {
            let fit = ((64u64 << 20) / ITEM_4X4) as usize + 1;
            let plan = InFlight::plan(threads, ITEM_4X4, 15 * GIB);
            let window = (fit / 2).clamp(1, 4 * threads);
            assert_eq!(plan, InFlight { tasks: 2, window }, "{threads} threads");
        }
        assert_eq!(InFlight::plan(2, ITEM_2X6, 4 * GIB), InFlight { tasks: 2, window: 1 });
    }

    #[test]
    fn sixteen_threads_run_four_tasks_with_four_times_the_room() {
        let plan = InFlight::plan(16, ITEM_4X4, 20 * GIB);
        assert_eq!(plan.tasks, 4);
        assert!(plan.extra_shards() * ITEM_4X4 <= 4 * (64 << 20));
        assert!(plan.tasks * plan.window >= 8 * 16, "{plan:?}");
        // Big shards: one each, four tasks, so only four shards are
        // fetched, compressed and settled at once; the 2×6's default plan
        // holds 28.
        assert_eq!(InFlight::plan(16, ITEM_2X6, 20 * GIB), InFlight { tasks: 4, window: 1 });
        assert_eq!(
            InFlight::plan(16, ITEM_2X6_132, 20 * GIB),
            InFlight { tasks: 4, window: 7 }
        );
        assert_eq!(InFlight::plan(128, ITEM_4X4, 100 * GIB).tasks, MAX_TASKS_AT_ONCE);
    }

    #[test]
    fn the_room_never_takes_more_than_a_quarter_of_the_cache() {
        for threads in [1, 2, 16, 64] {
            for cache in [GIB / 2, GIB, 4 * GIB] {
                for item in [ITEM_4X4, ITEM_2X6, 300 << 20] {
                    let plan = InFlight::plan(threads, item, cache);
                    assert!(plan.tasks >= 1 && plan.window >= 1);
                    if plan.extra_shards() > 0 {
                        assert!(
                            plan.extra_shards() * item <= cache / 4,
                            "{threads} {cache} {item}: {plan:?}"
                        );
                    }
                }
            }
        }
        // No room for a second shard: one task, one shard.
        assert_eq!(InFlight::plan(16, 300 << 20, GIB), InFlight { tasks: 1, window: 1 });
    }
}
