//! How many leases a worker holds at once.
//!
//! A task that computes shards holds a **window** of shards in flight,
//! which the memory budget has room for [`TaskRunner::tasks_at_once`]
//! times. A task counts against that from its lease until it says that no
//! shard of its chunk can gain a state (the level's sparse map, known once
//! it has entered the level), or that its shards are all in its file (its
//! fsync and report to go): it then holds no window. Leases beyond the
//! windows go to tasks of that kind: two a compute thread, at most 32.
//!
//! Why: the first levels of a big space are mostly empty chunks (the 4×4
//! Loopover's depths 1–4: 219–307 of 309), and each costs a lease, a file
//! and a report, about 0.4 ms end to end on 2 cores with the checkpoint
//! in memory, most of it waiting on the other side. With two leases those
//! waits came one after the other: depths 1–4 took 0.49–0.54 s, and 0.36–
//! 0.42 s with these leases (docs/history.md, "Empty chunks beside the
//! two windows").
//!
//! [`TaskRunner::tasks_at_once`]: crate::runner::TaskRunner::tasks_at_once

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Leases for empty tasks beyond the windows, per compute thread.
const EMPTY_LEASES_PER_THREAD: usize = 2;

/// At most this many leases for empty tasks beyond the windows: each runs
/// on a blocking thread and holds an open file and its chunk's index.
const MAX_EMPTY_LEASES: usize = 32;

/// The windows held and the lease limit of one worker.
pub(super) struct Windows {
    /// Tasks that hold a window, or may.
    held: AtomicUsize,
    /// Woken when a window is let go of before its task ends.
    freed: Notify,
    /// Windows the budget has room for.
    windows: usize,
    /// Leases at most, windows included.
    leases: usize,
}

impl Windows {
    /// Room for `windows` windows (at least one), on a pool of `threads`.
    pub fn new(windows: usize, threads: usize) -> Arc<Windows> {
        let windows = windows.max(1);
        let empty = (EMPTY_LEASES_PER_THREAD * threads).clamp(EMPTY_LEASES_PER_THREAD, MAX_EMPTY_LEASES);
        Arc::new(Windows {
            held: AtomicUsize::new(0),
            freed: Notify::new(),
            windows,
            leases: windows + empty,
        })
    }

    /// True when another task may be leased beside `running` ones: a
    /// window is free and the lease limit is not reached.
    pub fn room(&self, running: usize) -> bool {
        self.held.load(Ordering::Acquire) < self.windows && running < self.leases
    }

    /// Leases at most.
    #[cfg(test)]
    pub fn leases(&self) -> usize {
        self.leases
    }

    /// A window for a task just leased, let go of when the task says it is
    /// empty or when the hold is dropped.
    pub fn hold(self: &Arc<Self>) -> WindowHold {
        self.held.fetch_add(1, Ordering::AcqRel);
        WindowHold {
            windows: self.clone(),
            released: AtomicBool::new(false),
        }
    }

    /// Waits until a window is let go of (a wake-up that came before the
    /// wait is kept).
    pub async fn freed(&self) {
        self.freed.notified().await
    }
}

/// One task's window.
pub(super) struct WindowHold {
    windows: Arc<Windows>,
    released: AtomicBool,
}

impl WindowHold {
    /// Lets go of the window (once; later calls do nothing).
    pub fn release(&self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            self.windows.held.fetch_sub(1, Ordering::AcqRel);
            self.windows.freed.notify_one();
        }
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
        let windows = Windows::new(2, 2);
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
        assert_eq!(Windows::new(0, 1).leases(), 3, "at least one window");
        assert_eq!(Windows::new(2, 128).leases(), 2 + MAX_EMPTY_LEASES);
    }

    #[tokio::test]
    async fn a_window_let_go_before_the_wait_still_wakes_it() {
        let windows = Windows::new(1, 1);
        let hold = windows.hold();
        hold.release();
        tokio::time::timeout(std::time::Duration::from_secs(5), windows.freed())
            .await
            .expect("woken");
    }
}
