//! A chunk's index: which of its shards hold set bits, and for each of
//! those where its frame is and what it holds. In memory it is the same
//! whatever the file's version; on disk (from version 7) it is a bitmap of
//! the non-empty shards and their entries, after the frames.

use super::{u64_at, ShardEntry, ENTRY_LEN};

/// Index entries of 32 bytes each (offset, length, popcount, checksum),
/// as every version writes them.
pub(super) fn decode_entries(bytes: &[u8]) -> Vec<ShardEntry> {
    (bytes.chunks_exact(ENTRY_LEN))
        .map(|raw| ShardEntry {
            offset: u64_at(raw, 0),
            length: u64_at(raw, 8),
            popcount: u64_at(raw, 16),
            checksum: u64_at(raw, 24),
        })
        .collect()
}

/// The index of a chunk of `shards` shards.
#[derive(Debug)]
pub(super) struct ShardIndex {
    shards: usize,
    /// Bit `i` set: shard `i` holds set bits.
    present: Box<[u64]>,
    /// Non-empty shards before each word of `present`.
    ranks: Box<[u32]>,
    /// The non-empty shards' entries, in shard order.
    entries: Vec<ShardEntry>,
    /// Their set bits, packed: a worker reads a target shard's 26 inputs'
    /// counts from indexes of many files, and from 32-byte entries that
    /// was a cache miss each (9.6 % of a 1-thread run of the 4×4 Loopover
    /// to depth 8, `perf`).
    popcounts: Box<[u64]>,
}

impl ShardIndex {
    /// The index of a chunk whose shards are `entries`, one per shard (an
    /// entry of no set bit: an empty shard).
    pub(super) fn from_entries(entries: &[ShardEntry]) -> ShardIndex {
        let mut present = vec![0u64; entries.len().div_ceil(64)].into_boxed_slice();
        for (i, e) in entries.iter().enumerate() {
            if e.popcount > 0 {
                present[i / 64] |= 1 << (i % 64);
            }
        }
        let nonempty = entries.iter().filter(|e| e.popcount > 0).copied().collect();
        ShardIndex::from_parts(entries.len(), present, nonempty)
    }

    /// The index of a chunk of `shards` empty shards.
    pub(super) fn empty(shards: usize) -> ShardIndex {
        let present = vec![0u64; shards.div_ceil(64)].into_boxed_slice();
        ShardIndex::from_parts(shards, present, Vec::new())
    }

    fn from_parts(shards: usize, present: Box<[u64]>, entries: Vec<ShardEntry>) -> ShardIndex {
        let mut ranks = Vec::with_capacity(present.len());
        let mut before = 0u32;
        for word in present.iter() {
            ranks.push(before);
            before += word.count_ones();
        }
        ShardIndex {
            shards,
            popcounts: entries.iter().map(|e| e.popcount).collect(),
            present,
            ranks: ranks.into_boxed_slice(),
            entries,
        }
    }

    /// The on-disk form (version 7): the bitmap, then the entries.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.present.len() * 8 + self.entries.len() * ENTRY_LEN);
        for word in self.present.iter() {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        for e in &self.entries {
            for v in [e.offset, e.length, e.popcount, e.checksum] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        bytes
    }

    /// Reads the on-disk form of a chunk of `shards` shards: its length
    /// must be that of its bitmap and of one entry per bit set, and no bit
    /// past the last shard may be set. Where the frames lie is the
    /// reader's to check.
    pub(super) fn decode(shards: usize, bytes: &[u8]) -> Result<ShardIndex, &'static str> {
        let words = shards.div_ceil(64);
        if bytes.len() < words * 8 {
            return Err("index shorter than its bitmap");
        }
        let present: Box<[u64]> = (0..words).map(|w| u64_at(bytes, w * 8)).collect();
        if shards % 64 != 0 && present[words - 1] >> (shards % 64) != 0 {
            return Err("index names a shard past the chunk's");
        }
        let nonempty: usize = present.iter().map(|w| w.count_ones() as usize).sum();
        if bytes.len() != words * 8 + nonempty * ENTRY_LEN {
            return Err("index length does not match its bitmap");
        }
        Ok(ShardIndex::from_parts(
            shards,
            present,
            decode_entries(&bytes[words * 8..]),
        ))
    }

    /// Where shard `i`'s entry is among the non-empty shards', if it has one.
    #[inline]
    fn slot(&self, i: usize) -> Option<usize> {
        assert!(i < self.shards, "shard {} of a chunk of {}", i, self.shards);
        let word = self.present[i / 64];
        let bit = 1u64 << (i % 64);
        (word & bit != 0).then(|| self.ranks[i / 64] as usize + (word & (bit - 1)).count_ones() as usize)
    }

    /// Shard `i`'s entry (all zero for an empty shard).
    pub(super) fn entry(&self, i: usize) -> ShardEntry {
        self.slot(i).map_or_else(ShardEntry::default, |s| self.entries[s])
    }

    /// Shard `i`'s set bits.
    #[inline]
    pub(super) fn popcount(&self, i: usize) -> u64 {
        self.slot(i).map_or(0, |s| self.popcounts[s])
    }

    /// The non-empty shards, in order, with their entries.
    pub(super) fn nonempty(&self) -> impl Iterator<Item = (usize, ShardEntry)> + '_ {
        // Each word's set bits, lowest first, one step per bit.
        let shards = (self.present.iter().enumerate()).flat_map(|(w, &word)| {
            std::iter::successors(Some(word).filter(|&x| x != 0), |&x| {
                Some(x & (x - 1)).filter(|&y| y != 0)
            })
            .map(move |x| w * 64 + x.trailing_zeros() as usize)
        });
        shards.zip(self.entries.iter().copied())
    }

    /// The non-empty shards' entries, in shard order.
    pub(super) fn entries(&self) -> &[ShardEntry] {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries one per shard, non-empty where `set` says.
    fn entries(shards: usize, set: &[usize]) -> Vec<ShardEntry> {
        (0..shards)
            .map(|i| match set.contains(&i) {
                true => ShardEntry {
                    offset: 1000 + i as u64,
                    length: 7,
                    popcount: 3 + i as u64,
                    checksum: 99 * i as u64,
                },
                false => ShardEntry::default(),
            })
            .collect()
    }

    /// Every shard's entry and count survive the on-disk form, and the
    /// non-empty shards are listed in order, across words of the bitmap.
    #[test]
    fn entries_read_back_through_the_bitmap() {
        for (shards, set) in [
            (1, vec![]),
            (1, vec![0]),
            (64, vec![0, 63]),
            (1479, vec![5, 64, 65, 700, 1478]),
        ] {
            let all = entries(shards, &set);
            let index = ShardIndex::decode(shards, &ShardIndex::from_entries(&all).encode()).unwrap();
            for (i, e) in all.iter().enumerate() {
                assert_eq!(index.entry(i), *e, "{} shards: shard {}", shards, i);
                assert_eq!(index.popcount(i), e.popcount);
            }
            let listed: Vec<usize> = index.nonempty().map(|(i, _)| i).collect();
            assert_eq!(listed, set);
        }
    }

    /// A bitmap and entries that do not agree, or a bit past the chunk, are
    /// refused.
    #[test]
    fn inconsistent_indexes_are_refused() {
        let good = ShardIndex::from_entries(&entries(70, &[3, 69])).encode();
        assert!(ShardIndex::decode(70, &good[..good.len() - 1]).is_err());
        assert!(ShardIndex::decode(70, &good[..15]).is_err());
        let mut extra_bit = good.clone();
        extra_bit[0] |= 1;
        assert!(ShardIndex::decode(70, &extra_bit).is_err());
        let mut past = good.clone();
        past[15] |= 0x80;
        assert!(ShardIndex::decode(70, &past).is_err());
    }
}
