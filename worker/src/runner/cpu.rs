//! CPU time of the worker's pool threads: the "busy" half of a level's
//! thread utilization.
//!
//! Why CPU time and not timers around the work: a shard split over the
//! pool (the last shards of a task, the 2×6 Loopover's every shard) runs
//! on threads that stole its pieces, where no timer of the task sees it.
//! What a pool thread burns while it has no work (rayon's few rounds of
//! yielding before it sleeps) is a few microseconds per idle spell.
//!
//! Each pool thread's CPU clock (`pthread_getcpuclockid`, taken on the
//! thread itself when it starts) is read with `clock_gettime` by whichever
//! thread closes a task, since each task reports the time since the one
//! before: the sum over a level's tasks is the pool's CPU time over the
//! level. A read costs one system call, 0.55 µs on the 2-core AMD VM,
//! where `/proc/self/task/TID/stat` (read before) took 2.7 µs and counted
//! in ticks of 10 ms: levels shorter than a tick showed 0 s busy (the
//! 4×4 Loopover's depths 2–4 at 2 threads), and a task reads every pool
//! thread's clock, 16 per task at 16 threads and 128 at 128.

use std::sync::Mutex;

/// The pool's threads and the CPU time already reported.
#[derive(Default)]
pub(super) struct PoolClock {
    /// Each pool thread's CPU clock.
    threads: Mutex<Vec<libc::clockid_t>>,
    reported: Mutex<f64>,
}

impl PoolClock {
    /// Notes the calling thread as one of the pool's (its start handler).
    pub fn register_this_thread(&self) {
        if let Some(clock) = this_thread_clock() {
            self.threads.lock().unwrap_or_else(|e| e.into_inner()).push(clock);
        }
    }

    /// CPU seconds of the pool's threads since the last call (0 where the
    /// threads' clocks cannot be read).
    pub fn since_last(&self) -> f64 {
        let now: f64 = {
            let threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
            threads.iter().filter_map(|&clock| cpu_seconds(clock)).sum()
        };
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        let delta = (now - *reported).max(0.0);
        *reported = now.max(*reported);
        delta
    }
}

/// The calling thread's CPU clock, readable from any thread of this
/// process while the thread lives (the pool's live as long as the clock's
/// owner, the task runner).
fn this_thread_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self names the calling thread, which is alive for
    // the call; pthread_getcpuclockid writes only the clockid it is given,
    // which lives on this stack frame.
    let status = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    (status == 0).then_some(clock)
}

/// User plus system CPU seconds on `clock` (`None` once its thread has
/// exited: the call then fails).
fn cpu_seconds(clock: libc::clockid_t) -> Option<f64> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only the timespec it is given, which
    // lives on this stack frame for the call; an invalid clock is an
    // error return, not undefined behaviour.
    let status = unsafe { libc::clock_gettime(clock, &mut now) };
    (status == 0).then(|| now.tv_sec as f64 + now.tv_nsec as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Burns `seconds` of the calling thread's CPU time, by its own clock
    /// (a wall-clock spin on a busy machine may burn less).
    fn spin(seconds: f64) {
        let own = this_thread_clock().expect("a thread's clock");
        let started = cpu_seconds(own).expect("readable");
        let mut x = 0u64;
        while cpu_seconds(own).expect("readable") - started < seconds {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
    }

    #[test]
    fn a_busy_thread_s_cpu_time_is_counted_and_reported_once() {
        let clock = PoolClock::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                clock.register_this_thread();
                spin(0.3);
                let busy = clock.since_last();
                assert!((0.3..0.35).contains(&busy), "{} s of a 0.3 s spin", busy);
                assert!(clock.since_last() < 0.05, "reported once");
            });
        });
    }

    #[test]
    fn another_thread_reads_each_registered_thread_s_time_to_the_millisecond() {
        // Two threads spin 5 ms each, shorter than a scheduler tick, and a
        // third reads their clocks: the ticks of /proc's stat said 0 or 10.
        let clock = PoolClock::default();
        // The threads live until their clocks are read, as a pool's do.
        let [registered, go, spun, read] = [(); 4].map(|_| std::sync::Barrier::new(3));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    clock.register_this_thread();
                    registered.wait();
                    go.wait();
                    spin(0.005);
                    spun.wait();
                    read.wait();
                });
            }
            registered.wait();
            clock.since_last();
            go.wait();
            spun.wait();
            let busy = clock.since_last();
            read.wait();
            assert!((0.01..0.015).contains(&busy), "{} s of two 5 ms spins", busy);
        });
    }
}
