//! How many leases a worker holds at once.
//!
//! A task that computes shards holds a **window** of shards in flight,
//! which the memory budget has room for [`TaskRunner::tasks_at_once`]
//! times: the worker has room for that many windows' worth of shards. A
//! task counts a whole window against that from its lease until it enters
//! its level and knows its chunk: then it counts only the shards it
//! computes, when fewer (the level's sparse map), none once it says that
//! no shard of its chunk can gain a state, and none once its shards are
//! all in its file (its fsync and report to go). Another lease is asked
//! for while a whole window fits beside what the tasks hold; leases beyond
//! the windows go to tasks of that kind: two a compute thread, at most 32.
//!
//! Why: the first levels of a big space are mostly empty chunks (the 4×4
//! Loopover's depths 1–4: 219–307 of 309), and each costs a lease, a file
//! and a report, about 0.4 ms end to end on 2 cores with the checkpoint
//! in memory, most of it waiting on the other side. With two leases those
//! waits came one after the other: depths 1–4 took 0.49–0.54 s, and 0.36–
//! 0.42 s with these leases (docs/history.md, "Empty chunks beside the
//! two windows"). Counting shards, not tasks: the tasks of a sparse level
//! compute a few shards each (the 4×4's depth 5: 2,143 shards in 247
//! tasks), each with about 0.3 ms of its own outside the threads (its
//! file, its handing to the pool and back, its report), and the few tasks
//! whole windows allowed left the threads idle between them.
//!
//! [`TaskRunner::tasks_at_once`]: crate::runner::TaskRunner::tasks_at_once

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Leases for empty tasks beyond the windows, per compute thread.
const EMPTY_LEASES_PER_THREAD: usize = 2;

/// At most this many leases for empty tasks beyond the windows: each runs
/// on a blocking thread and holds an open file and its chunk's index.
const MAX_EMPTY_LEASES: usize = 32;

/// The shards in flight held and the lease limit of one worker.
pub(super) struct Windows {
    /// Shards held by tasks (a whole window each until they know better).
    held: AtomicUsize,
    /// Woken when shards are let go of before their task ends.
    freed: Notify,
    /// Shards in one window.
    window: usize,
    /// Shards the budget has room for: its windows' worth.
    room: usize,
    /// Leases at most, windows included.
    leases: usize,
}

impl Windows {
    /// Room for `windows` windows (at least one) of `window` shards (at
    /// least one), on a pool of `threads`.
    pub fn new(windows: usize, window: usize, threads: usize) -> Arc<Windows> {
        let (windows, window) = (windows.max(1), window.max(1));
        let empty = (EMPTY_LEASES_PER_THREAD * threads).clamp(EMPTY_LEASES_PER_THREAD, MAX_EMPTY_LEASES);
        Arc::new(Windows {
            held: AtomicUsize::new(0),
            freed: Notify::new(),
            window,
            room: windows * window,
            leases: windows + empty,
        })
    }

    /// True when another task may be leased beside `running` ones: a
    /// whole window fits beside the shards held, and the lease limit is
    /// not reached.
    pub fn room(&self, running: usize) -> bool {
        self.held.load(Ordering::Acquire) + self.window <= self.room && running < self.leases
    }

    /// Leases at most.
    #[cfg(test)]
    pub fn leases(&self) -> usize {
        self.leases
    }

    /// A window for a task just leased, shrunk when the task says it
    /// computes fewer shards, let go of when it says it is empty or done
    /// with its shards, or when the hold is dropped.
    pub fn hold(self: &Arc<Self>) -> WindowHold {
        self.held.fetch_add(self.window, Ordering::AcqRel);
        WindowHold {
            windows: self.clone(),
            held: AtomicUsize::new(self.window),
        }
    }

    /// Waits until shards are let go of (a wake-up that came before the
    /// wait is kept).
    pub async fn freed(&self) {
        self.freed.notified().await
    }
}

/// One task's window.
pub(super) struct WindowHold {
    windows: Arc<Windows>,
    /// Shards this task still holds.
    held: AtomicUsize,
}

impl WindowHold {
    /// Holds at most `shards` from now on (never more than before).
    pub fn shrink_to(&self, shards: usize) {
        let before = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| Some(held.min(shards)))
            .unwrap_or_else(|held| held);
        let freed = before.saturating_sub(shards);
        if freed > 0 {
            self.windows.held.fetch_sub(freed, Ordering::AcqRel);
            self.windows.freed.notify_one();
        }
    }

    /// Lets go of the window (later calls do nothing).
    pub fn release(&self) {
        self.shrink_to(0);
    }
}

impl Drop for WindowHold {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tasks_free_their_window_and_leases_stay_bounded() {
        let windows = Windows::new(2, 8, 2);
        assert_eq!(windows.leases(), 6, "two windows and two empty tasks a thread");
        let a = windows.hold();
        let b = windows.hold();
        assert!(!windows.room(2), "both windows held");
        a.release();
        a.release();
        assert!(windows.room(2), "an empty task lets its window go, once");
        let c = windows.hold();
        assert!(!windows.room(3));
        drop(b);
        assert!(windows.room(3), "a task that ends lets its window go");
        assert!(!windows.room(windows.leases()), "never more leases than the limit");
        drop((a, c));
        assert!(windows.room(0));
        assert_eq!(Windows::new(0, 1, 1).leases(), 3, "at least one window");
        assert_eq!(Windows::new(2, 8, 128).leases(), 2 + MAX_EMPTY_LEASES);
    }

    #[test]
    fn tasks_of_a_few_shards_share_the_room_of_a_window() {
        let windows = Windows::new(2, 8, 2);
        let a = windows.hold();
        let b = windows.hold();
        assert!(!windows.room(2));
        a.shrink_to(3);
        assert!(!windows.room(2), "5 shards free, a window is 8");
        b.shrink_to(5);
        assert!(windows.room(2), "3 + 5 held, room for a whole window");
        let c = windows.hold();
        assert!(!windows.room(3));
        b.shrink_to(9);
        assert!(!windows.room(3), "a hold never grows");
        c.shrink_to(0);
        assert!(windows.room(3));
        drop((a, b, c));
        // Tasks of one shard: as many as the leases allow (each leased
        // while a whole window fits: 8 tasks of one shard would).
        let held: Vec<WindowHold> = (0..windows.leases())
            .map(|running| {
                assert!(windows.room(running), "{running} running");
                let hold = windows.hold();
                hold.shrink_to(1);
                hold
            })
            .collect();
        assert!(!windows.room(windows.leases()));
        drop(held);
        assert_eq!(windows.held.load(Ordering::Acquire), 0, "every shard given back");
    }

    #[tokio::test]
    async fn a_window_let_go_before_the_wait_still_wakes_it() {
        let windows = Windows::new(1, 4, 1);
        let hold = windows.hold();
        hold.shrink_to(2);
        tokio::time::timeout(std::time::Duration::from_secs(5), windows.freed())
            .await
            .expect("woken");
    }
}
