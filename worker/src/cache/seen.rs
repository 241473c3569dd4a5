//! The seen sets a cache holds: for a shard, the union of its levels below
//! a level, kept so that a task need not read them one by one, and the
//! marks of unions known empty (a bit per shard, never a buffer).

use super::{Bits, Seen, ShardCache, SEEN};

impl ShardCache {
    /// True when `shard`'s union of the levels below `below` is held, as a
    /// buffer or as the mark of an empty one.
    #[cfg(test)]
    pub fn holds_seen(&self, below: u32, shard: u64) -> bool {
        let marked = self.empty_seen.get(&below).is_some_and(|bits| {
            bits.get((shard / 64) as usize)
                .is_some_and(|w| w >> (shard % 64) & 1 != 0)
        });
        marked || self.entries.contains_key(&(SEEN | below, shard))
    }

    /// Takes out the union of `shard`'s levels below `below`, if held.
    pub fn take_seen(&mut self, below: u32, shard: u64) -> Option<Seen> {
        if self.take_empty_seen(below, shard) {
            return Some(Seen::Empty(self.zero_buffer()));
        }
        let entry = self.entries.remove(&(SEEN | below, shard))?;
        self.order.remove(&entry.queued);
        self.used -= entry.bytes;
        Some(entry.bits.into_seen(self))
    }

    /// Keeps the union of `shard`'s levels below `below` if there is free
    /// room, as the first candidate for eviction (it only saves work). An
    /// empty union is kept as a mark.
    pub fn offer_seen(&mut self, below: u32, shard: u64, union: Bits) {
        if union.count() == 0 {
            self.mark_empty_seen(below, shard);
            return;
        }
        self.offer((SEEN | below, shard), union);
    }

    /// The union below `below` becomes the union below `below + 1`, for a
    /// shard empty at level `below`.
    pub fn carry_seen(&mut self, below: u32, shard: u64) {
        if self.take_empty_seen(below, shard) {
            self.mark_empty_seen(below + 1, shard);
            return;
        }
        let Some(entry) = self.entries.remove(&(SEEN | below, shard)) else {
            return;
        };
        self.order.remove(&entry.queued);
        self.used -= entry.bytes;
        self.offer((SEEN | (below + 1), shard), entry.bits);
    }

    /// [`Self::carry_seen`] for each of this cache's shards that gains
    /// nothing at level `below` (its bit clear in `targets`, the level's
    /// sparse map); `own` lists this cache's shards, whose unions below
    /// level 0 are empty. Done at the level's start, for every shard: those
    /// of chunks the coordinator records empty without a task are never
    /// passed over one by one, and before this they lost their union for
    /// the rest of the search (nearly every shard of the 3×3×3 edges with
    /// a sparse map at depth 1: its depth 13 then took 96.8 s, not 32.0).
    /// The marks move a word at a time.
    pub fn carry_seen_past(&mut self, below: u32, targets: &[u64], own: impl Iterator<Item = u64>) {
        let gains_nothing = |shard: u64| {
            targets
                .get((shard / 64) as usize)
                .is_none_or(|word| word >> (shard % 64) & 1 == 0)
        };
        if below == 0 {
            own.filter(|&shard| gains_nothing(shard))
                .for_each(|shard| self.mark_empty_seen(1, shard));
        } else if let Some(marks) = self.empty_seen.get_mut(&below) {
            let carried: Vec<u64> = marks
                .iter_mut()
                .enumerate()
                .map(|(i, mark)| {
                    let target = targets.get(i).copied().unwrap_or(0);
                    let carried = *mark & !target;
                    *mark &= target;
                    carried
                })
                .collect();
            let next = self.empty_seen.entry(below + 1).or_default();
            if next.len() < carried.len() {
                next.resize(carried.len(), 0);
            }
            next.iter_mut().zip(&carried).for_each(|(n, c)| *n |= c);
        }
        let held: Vec<u64> = self
            .entries
            .keys()
            .filter(|&&(level, shard)| level == SEEN | below && gains_nothing(shard))
            .map(|&(_, shard)| shard)
            .collect();
        held.into_iter().for_each(|shard| self.carry_seen(below, shard));
    }

    /// Notes that `shard`'s union below `below` is empty.
    fn mark_empty_seen(&mut self, below: u32, shard: u64) {
        let bits = self.empty_seen.entry(below).or_default();
        let word = (shard / 64) as usize;
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        bits[word] |= 1 << (shard % 64);
    }

    /// Clears and returns the mark of an empty union.
    fn take_empty_seen(&mut self, below: u32, shard: u64) -> bool {
        let Some(bits) = self.empty_seen.get_mut(&below) else {
            return false;
        };
        let (word, bit) = ((shard / 64) as usize, 1u64 << (shard % 64));
        let marked = bits.get(word).is_some_and(|w| w & bit != 0);
        if marked {
            bits[word] &= !bit;
        }
        marked
    }
}
