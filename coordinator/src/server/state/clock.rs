//! The time source of leases and worker liveness. The system clock in the
//! coordinator; a manual one in tests, which move it forward instead of
//! sleeping past a lease (a sleep only bounds the time from below, so a
//! test with a short lease could see it expire early on a loaded machine,
//! and a long one made the tests slow).

use std::sync::Arc;
#[cfg(test)]
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where "now" comes from.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl Clock {
    /// The system's monotonic clock.
    pub fn system() -> Clock {
        Clock(Arc::new(Instant::now))
    }

    /// A clock that stands still until [`ManualClock::advance`] moves it.
    #[cfg(test)]
    pub fn manual() -> (Clock, ManualClock) {
        let now = Arc::new(Mutex::new(Instant::now()));
        let read = now.clone();
        (Clock(Arc::new(move || *read.lock().expect("clock"))), ManualClock(now))
    }

    /// The current instant.
    pub fn now(&self) -> Instant {
        (self.0)()
    }

    /// Time since `earlier` (zero if `earlier` is later than now).
    pub fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }
}

/// The handle that moves a [`Clock::manual`] clock.
#[cfg(test)]
pub struct ManualClock(Arc<Mutex<Instant>>);

#[cfg(test)]
impl ManualClock {
    /// Moves the clock `by` forward.
    pub fn advance(&self, by: Duration) {
        *self.0.lock().expect("clock") += by;
    }
}
