//! CPU time of the worker's pool threads: the "busy" half of a level's
//! thread utilization.
//!
//! Why CPU time and not timers around the work: a shard split over the
//! pool (the last shards of a task, the 2×6 Loopover's every shard) runs
//! on threads that stole its pieces, where no timer of the task sees it.
//! What a pool thread burns while it has no work (rayon's few rounds of
//! yielding before it sleeps) is a few microseconds per idle spell.
//!
//! Read from `/proc/self/task/TID/stat` (user and system time, in clock
//! ticks of 10 ms): no unsafe code, and the sum over a level's tasks is
//! exact up to one tick per thread, since each task reports the time
//! since the one before. Each thread's file is opened once and read again
//! from its start (procfs makes the text anew on every read at offset 0):
//! opening it for every task was 3 % of the CPU of the 4×4 Loopover's
//! depths 1–6, where a level is 309 tasks that find next to nothing.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

/// Clock ticks per second of `/proc`'s times (`USER_HZ`, 100 on Linux
/// whatever the kernel's own tick rate).
const TICKS_PER_SECOND: f64 = 100.0;

/// The pool's threads and the CPU time already reported.
#[derive(Default)]
pub(super) struct PoolClock {
    /// Each pool thread's `stat` file, open.
    threads: Mutex<Vec<File>>,
    reported: Mutex<f64>,
}

impl PoolClock {
    /// Notes the calling thread as one of the pool's (its start handler).
    pub fn register_this_thread(&self) {
        let stat = this_thread_id().and_then(|tid| File::open(format!("/proc/self/task/{}/stat", tid)).ok());
        if let Some(stat) = stat {
            self.threads.lock().unwrap_or_else(|e| e.into_inner()).push(stat);
        }
    }

    /// CPU seconds of the pool's threads since the last call (0 where
    /// `/proc` cannot be read).
    pub fn since_last(&self) -> f64 {
        let now: f64 = {
            let threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
            threads.iter().filter_map(thread_cpu_seconds).sum()
        };
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        let delta = (now - *reported).max(0.0);
        *reported = now.max(*reported);
        delta
    }
}

/// The kernel's id of the calling thread, from `/proc/thread-self`
/// (a link to `PID/task/TID`).
fn this_thread_id() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// User plus system CPU seconds of the thread whose `stat` file this is
/// (`None` once the thread has exited).
fn thread_cpu_seconds(stat: &File) -> Option<f64> {
    // The line is about 300 bytes: the command name is at most 15.
    let mut buf = [0u8; 1024];
    let len = stat.read_at(&mut buf, 0).ok()?;
    let stat = std::str::from_utf8(&buf[..len]).ok()?;
    // The command name (field 2) may hold spaces: fields are counted after
    // its closing parenthesis, where field 3 (the state) comes first, so
    // utime (14) and stime (15) are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user + system) as f64 / TICKS_PER_SECOND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_s_cpu_time_is_counted_and_reported_once() {
        let clock = PoolClock::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                clock.register_this_thread();
                let started = std::time::Instant::now();
                let mut x = 0u64;
                while started.elapsed().as_millis() < 300 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                let busy = clock.since_last();
                assert!((0.2..0.5).contains(&busy), "{} s of a 0.3 s spin", busy);
                assert!(clock.since_last() < 0.05, "reported once");
            });
        });
    }
}
