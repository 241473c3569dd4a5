//! Which direction expands a shard more cheaply, from what the kernel has
//! measured on the running level.
//!
//! Top-down costs one mark per source state; bottom-up one probe per
//! unseen state and move until a hit. Counting alone (the rule "bottom-up
//! when unseen × moves ≤ 2 × sources") assumed a probe as cheap as a mark
//! and a hit after half the moves. Measured on the 4×4 Loopover, a probe
//! costs about twice a mark (2.8 ns against 1.3 ns on random shards,
//! `shared/examples/reduced_kernel.rs`: a probe reads a source shard out
//! of order, a mark writes into the one target), and a state of its depth
//! 12 needed 8 probes of 24 on average. So each level starts from those
//! priors and replaces them with its own averages as shards finish:
//! nanoseconds per mark, per probe, and probes per unseen state.

use std::sync::atomic::{AtomicU64, Ordering};

/// Nanoseconds per mark and per probe before a level has measured any.
const PRIOR_MARK_NANOS: f64 = 1.3;
const PRIOR_PROBE_NANOS: f64 = 2.8;

/// Evaluations a direction needs on a level before its measured average
/// replaces the prior (a few shards' worth).
const MIN_SAMPLE: u64 = 1 << 20;

/// Running totals of one level's expansions, shared by the threads.
#[derive(Debug, Default)]
pub struct DirectionCosts {
    mark_nanos: AtomicU64,
    marks: AtomicU64,
    probe_nanos: AtomicU64,
    probes: AtomicU64,
    /// Unseen states of the shards expanded bottom-up.
    probed_states: AtomicU64,
}

impl DirectionCosts {
    /// Forgets the running level's figures.
    pub fn reset(&self) {
        for total in [
            &self.mark_nanos,
            &self.marks,
            &self.probe_nanos,
            &self.probes,
            &self.probed_states,
        ] {
            total.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn record_top_down(&self, nanos: u64, marks: u64) {
        self.mark_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.marks.fetch_add(marks, Ordering::Relaxed);
    }

    pub(crate) fn record_bottom_up(&self, nanos: u64, probes: u64, unseen: u64) {
        self.probe_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.probes.fetch_add(probes, Ordering::Relaxed);
        self.probed_states.fetch_add(unseen, Ordering::Relaxed);
    }

    /// The most unseen states for which bottom-up, with `moves` moves to
    /// probe, is expected to cost less than top-down over `sources` source
    /// states.
    pub fn bottom_up_limit(&self, sources: u64, moves: u64) -> u64 {
        let (top_down, per_unseen) = self.estimates(sources, 1, moves);
        (top_down / per_unseen.max(1e-9)) as u64
    }

    /// Expected nanoseconds of top-down over `sources` source states and of
    /// bottom-up over `unseen` states with `moves` moves to probe.
    pub fn estimates(&self, sources: u64, unseen: u64, moves: u64) -> (f64, f64) {
        let average = |nanos: &AtomicU64, count: &AtomicU64, prior: f64| {
            let n = count.load(Ordering::Relaxed);
            if n < MIN_SAMPLE {
                prior
            } else {
                nanos.load(Ordering::Relaxed) as f64 / n as f64
            }
        };
        let mark = average(&self.mark_nanos, &self.marks, PRIOR_MARK_NANOS);
        let probe = average(&self.probe_nanos, &self.probes, PRIOR_PROBE_NANOS);
        let probes_per_state = {
            let probes = self.probes.load(Ordering::Relaxed);
            let states = self.probed_states.load(Ordering::Relaxed);
            if probes < MIN_SAMPLE || states == 0 {
                moves as f64 / 2.0
            } else {
                (probes as f64 / states as f64).min(moves as f64)
            }
        };
        (sources as f64 * mark, unseen as f64 * probes_per_state * probe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priors_give_way_to_the_level_s_own_averages() {
        let costs = DirectionCosts::default();
        let (top_down, bottom_up) = costs.estimates(1000, 100, 24);
        assert_eq!(top_down, 1000.0 * PRIOR_MARK_NANOS);
        assert_eq!(bottom_up, 100.0 * 12.0 * PRIOR_PROBE_NANOS);
        // Measured: marks cost 4 ns, probes 1 ns, 3 probes per state.
        costs.record_top_down(4 * MIN_SAMPLE, MIN_SAMPLE);
        costs.record_bottom_up(3 * MIN_SAMPLE, 3 * MIN_SAMPLE, MIN_SAMPLE);
        assert_eq!(costs.estimates(1000, 100, 24), (4000.0, 300.0));
        assert_eq!(costs.bottom_up_limit(1000, 24), 4000 / 3);
        costs.reset();
        assert_eq!(costs.estimates(1000, 100, 24).0, 1000.0 * PRIOR_MARK_NANOS);
    }
}
