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

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Nanoseconds per mark and per probe before a level has measured any.
const PRIOR_MARK_NANOS: f64 = 1.3;
const PRIOR_PROBE_NANOS: f64 = 2.8;

/// Evaluations a direction needs on a level before its measured average
/// replaces the prior (a few shards' worth).
const MIN_SAMPLE: u64 = 1 << 20;

/// Expansions a thread records on its own before adding them to the
/// shared totals. Why: every thread adding to the totals' one cache line
/// for every shard it expanded, and reading it for the next, moved that
/// line between the cores at every shard; a line every thread writes is
/// what more cores wait on most. The estimates only need a level's
/// averages, and a level expands thousands of shards.
const BATCH: u32 = 64;

/// Running totals of one level's expansions, shared by the threads. On
/// cache lines of their own (128 bytes: a line and the one fetched with
/// it): they are a field of the moves, whose tables every thread reads
/// for every shard, and a record on a line shared with those would make
/// those reads miss on the other cores.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct DirectionCosts {
    mark_nanos: AtomicU64,
    marks: AtomicU64,
    probe_nanos: AtomicU64,
    probes: AtomicU64,
    /// Unseen states of the shards expanded bottom-up.
    probed_states: AtomicU64,
    /// Counts the resets: records a thread kept from before the last one
    /// are dropped, not added to the next level's totals.
    resets: AtomicU64,
}

/// A thread's records not yet added to the totals of the costs at
/// `owner` (its address, compared, never followed) since reset `resets`.
/// (Costs made later at a freed one's address may get up to a batch of
/// its records: a heuristic's input, never a count of states.)
#[derive(Clone, Copy, Default)]
struct Pending {
    owner: usize,
    resets: u64,
    records: u32,
    /// mark_nanos, marks, probe_nanos, probes, probed_states.
    totals: [u64; 5],
}

thread_local! {
    static PENDING: Cell<Pending> = const {
        Cell::new(Pending {
            owner: 0,
            resets: 0,
            records: 0,
            totals: [0; 5],
        })
    };
}

impl DirectionCosts {
    /// Forgets the running level's figures.
    pub fn reset(&self) {
        self.resets.fetch_add(1, Ordering::Relaxed);
        for total in self.totals() {
            total.store(0, Ordering::Relaxed);
        }
    }

    fn totals(&self) -> [&AtomicU64; 5] {
        [
            &self.mark_nanos,
            &self.marks,
            &self.probe_nanos,
            &self.probes,
            &self.probed_states,
        ]
    }

    pub(crate) fn record_top_down(&self, nanos: u64, marks: u64) {
        self.record([nanos, marks, 0, 0, 0]);
    }

    pub(crate) fn record_bottom_up(&self, nanos: u64, probes: u64, unseen: u64) {
        self.record([0, 0, nanos, probes, unseen]);
    }

    /// Adds `figures` to this thread's records, and those to the shared
    /// totals every [`BATCH`] records.
    fn record(&self, figures: [u64; 5]) {
        let owner = self as *const DirectionCosts as usize;
        let resets = self.resets.load(Ordering::Relaxed);
        PENDING.with(|pending| {
            let mut p = pending.get();
            if (p.owner, p.resets) != (owner, resets) {
                p = Pending {
                    owner,
                    resets,
                    ..Pending::default()
                };
            }
            p.records += 1;
            for (kept, figure) in p.totals.iter_mut().zip(figures) {
                *kept += figure;
            }
            if p.records >= BATCH {
                self.add_to_totals(&p.totals);
                p.records = 0;
                p.totals = [0; 5];
            }
            pending.set(p);
        });
    }

    fn add_to_totals(&self, figures: &[u64; 5]) {
        for (total, &figure) in self.totals().into_iter().zip(figures) {
            if figure > 0 {
                total.fetch_add(figure, Ordering::Relaxed);
            }
        }
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
        // Measured: marks cost 4 ns, probes 1 ns, 3 probes per state. A
        // thread's records count once it has made a batch of them.
        let part = MIN_SAMPLE / BATCH as u64;
        for _ in 0..BATCH / 2 {
            costs.record_top_down(2 * 4 * part, 2 * part);
            costs.record_bottom_up(2 * 3 * part, 2 * 3 * part, 2 * part);
        }
        assert_eq!(costs.estimates(1000, 100, 24), (4000.0, 300.0));
        assert_eq!(costs.bottom_up_limit(1000, 24), 4000 / 3);
        costs.reset();
        assert_eq!(costs.estimates(1000, 100, 24).0, 1000.0 * PRIOR_MARK_NANOS);
    }

    #[test]
    fn a_thread_adds_its_records_a_batch_at_a_time_and_drops_them_on_reset() {
        let costs = DirectionCosts::default();
        for _ in 0..BATCH - 1 {
            costs.record_top_down(3, 1);
        }
        assert_eq!(costs.marks.load(Ordering::Relaxed), 0, "kept by the thread");
        costs.record_top_down(3, 1);
        assert_eq!(costs.marks.load(Ordering::Relaxed), BATCH as u64);
        assert_eq!(costs.mark_nanos.load(Ordering::Relaxed), 3 * BATCH as u64);
        // Records from before a reset, or of other costs, do not count.
        costs.record_top_down(3, 1);
        costs.reset();
        let other = DirectionCosts::default();
        other.record_top_down(5, 1);
        for _ in 0..BATCH - 1 {
            costs.record_top_down(3, 1);
        }
        assert_eq!(costs.marks.load(Ordering::Relaxed), 0);
        costs.record_top_down(3, 1);
        assert_eq!(costs.marks.load(Ordering::Relaxed), BATCH as u64);
        assert_eq!(other.marks.load(Ordering::Relaxed), 0);
    }
}
