//! A level's bits: [`popcount`], [`test_bit`], [`any_in`], [`set_bits`] and their
//! list ([`positions`], [`set_positions`]) on a shard's words, which the
//! kernel reads as a plain `&[u64]`.

/// Number of set bits: the one count of the workspace. `count_ones` is the
/// POPCNT instruction because the workspace builds for x86-64-v2
/// (`.cargo/config.toml`); for baseline x86-64 it is a dozen instructions
/// per word (checked with `rustc -O --emit asm` and
/// `-C target-cpu=x86-64-v2`: five `popcnt`, unrolled, against none).
pub fn popcount(words: &[u64]) -> u64 {
    words.iter().map(|w| w.count_ones() as u64).sum()
}

/// Tests bit `i`.
#[inline]
pub fn test_bit(words: &[u64], i: usize) -> bool {
    (words[i >> 6] >> (i & 63)) & 1 == 1
}

/// True when a bit of `range` is set (bits past the words count as
/// clear): whether a run of shards, a chunk's, holds any of a map's.
pub fn any_in(words: &[u64], range: std::ops::Range<u64>) -> bool {
    if range.is_empty() {
        return false;
    }
    let (first, last) = ((range.start / 64) as usize, ((range.end - 1) / 64) as usize);
    let mask = |w: usize| {
        let low = if w == first {
            u64::MAX << (range.start % 64)
        } else {
            u64::MAX
        };
        let high = if w == last {
            u64::MAX >> (63 - (range.end - 1) % 64)
        } else {
            u64::MAX
        };
        low & high
    };
    (first..=last).any(|w| words.get(w).is_some_and(|word| word & mask(w) != 0))
}

/// The positions of the `count` set bits of `words`, in order, as a list:
/// the form in which the kernel reads a sparse source shard. A shard has
/// fewer than 2^32 bits.
///
/// Every set bit is listed, whatever `count` says (it sizes the list):
/// a caller that trusts a count checks it against the list's length.
/// Zero cache lines are skipped with one test: listing the 4×4 Loopover's
/// outputs (82 bits in 5,184 words at depth 8) word by word was 7.6% of
/// its time to depth 8.
pub fn positions(words: &[u64], count: u64) -> Vec<u32> {
    const LINE: usize = 8;
    let mut list = Vec::with_capacity(count as usize);
    for (l, line) in words.chunks(LINE).enumerate() {
        if line.iter().fold(0, |acc, &w| acc | w) == 0 {
            continue;
        }
        for (i, &word) in line.iter().enumerate() {
            let base = ((l * LINE + i) * 64) as u32;
            let mut bits = word;
            while bits != 0 {
                list.push(base + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
    }
    debug_assert_eq!(
        list,
        set_bits(words).map(|i| i as u32).collect::<Vec<_>>(),
        "every set bit, in order"
    );
    list
}

/// Sets the bits at `positions` (the inverse of [`positions`] on zeroed
/// words).
pub fn set_positions(words: &mut [u64], positions: &[u32]) {
    for &p in positions {
        words[(p >> 6) as usize] |= 1 << (p & 63);
    }
}

/// Positions of the set bits of `words`, in order.
pub fn set_bits(words: &[u64]) -> SetBits<'_> {
    SetBits::new(words)
}

/// Indices of the set bits of `words`, in order.
pub struct SetBits<'a> {
    words: &'a [u64],
    word: usize,
    bits: u64,
}

impl<'a> SetBits<'a> {
    fn new(words: &'a [u64]) -> SetBits<'a> {
        SetBits {
            words,
            word: 0,
            bits: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_counted_tested_and_listed() {
        let words = [0, 0b1010, 1 << 63];
        assert_eq!(popcount(&words), 3);
        assert_eq!(set_bits(&words).collect::<Vec<_>>(), vec![65, 67, 191]);
        assert_eq!(set_bits(&[]).count(), 0);
        assert_eq!(positions(&words, 3), vec![65, 67, 191]);
        let mut laid = [0; 3];
        set_positions(&mut laid, &positions(&words, 3));
        assert_eq!(laid, words);
        assert!(test_bit(&words, 67));
        assert!(!test_bit(&words, 66));
    }

    #[test]
    fn a_range_holds_a_bit_when_one_of_its_own_is_set() {
        let words = [0, 0b1010, 1 << 63];
        // Each range against the bits tested one by one.
        for start in 0..200u64 {
            for end in start..200u64 {
                let one_by_one = (start..end).any(|i| i < 192 && test_bit(&words, i as usize));
                assert_eq!(any_in(&words, start..end), one_by_one, "{}..{}", start, end);
            }
        }
        assert!(!any_in(&[], 0..10));
    }
}
