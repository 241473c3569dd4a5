//! Progress of the coded table kernel, reported per unit of 64 words.

use crate::space::bits::popcount;
use std::sync::atomic::{AtomicU64, Ordering};

/// Progress in units of 64 words, whatever the groups: each unit is
/// reported once, by the group holding its last word (the shard's last
/// unit at the end), with the states found by the groups done since the
/// previous report, so the counts add up.
pub(super) struct Units<'a> {
    words: usize,
    on_unit: &'a (dyn Fn(u64) + Sync),
    carry: AtomicU64,
    total: AtomicU64,
}

impl<'a> Units<'a> {
    pub(super) fn new(words: usize, on_unit: &'a (dyn Fn(u64) + Sync)) -> Units<'a> {
        Units {
            words,
            on_unit,
            carry: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }

    /// A group covering words `first ..` (`chunk`) is done.
    pub(super) fn done(&self, first: usize, chunk: &[u64]) {
        let found = popcount(chunk);
        self.carry.fetch_add(found, Ordering::Relaxed);
        self.total.fetch_add(found, Ordering::Relaxed);
        let last_unit = (self.words - 1) / 64;
        // Units whose last word lies in this group, the shard's last excepted.
        let ends = (first..first + chunk.len())
            .filter(|&w| (w % 64 == 63) && w / 64 != last_unit)
            .count();
        if ends > 0 {
            (self.on_unit)(self.carry.swap(0, Ordering::Relaxed));
            (1..ends).for_each(|_| (self.on_unit)(0));
        }
    }

    /// Reports the shard's last unit with whatever is left; returns the
    /// states found in the whole shard.
    pub(super) fn finish(self) -> u64 {
        (self.on_unit)(self.carry.into_inner());
        self.total.into_inner()
    }
}
