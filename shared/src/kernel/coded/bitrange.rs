//! Bit ranges that need not start on a word: a coded block is `W` bits at
//! bit `block · W`, and `W` is rarely a multiple of 64 (2187 for a cube's
//! corners). The kernel copies a block into an aligned buffer, works there,
//! and ORs the result back.

/// Copies bits `start .. start + len` of `words` into `out[0 .. ⌈len/64⌉]`,
/// bit 0 first; bits past `len` in the last word are cleared.
#[inline]
pub(super) fn extract(words: &[u64], start: usize, len: usize, out: &mut [u64]) {
    let n = len.div_ceil(64);
    let (first, shift) = (start / 64, start % 64);
    for (i, o) in out[..n].iter_mut().enumerate() {
        let lo = words[first + i] >> shift;
        let hi = match (shift, words.get(first + i + 1)) {
            (0, _) | (_, None) => 0,
            (_, Some(&next)) => next << (64 - shift),
        };
        *o = lo | hi;
    }
    if len % 64 != 0 {
        out[n - 1] &= (1u64 << (len % 64)) - 1;
    }
}

/// ORs `bits` (aligned, as [`extract`] makes them, nothing set past `len`)
/// into `words` at bit `start`.
#[inline]
pub(super) fn or_into(words: &mut [u64], start: usize, len: usize, bits: &[u64]) {
    let (first, shift) = (start / 64, start % 64);
    for (i, &b) in bits[..len.div_ceil(64)].iter().enumerate() {
        if b == 0 {
            continue;
        }
        words[first + i] |= b << shift;
        if shift != 0 && b >> (64 - shift) != 0 {
            words[first + i + 1] |= b >> (64 - shift);
        }
    }
}

/// Number of set bits of `a | b`. Plain `count_ones`: the workspace builds
/// for x86-64-v2 (`.cargo/config.toml`), where it is the POPCNT
/// instruction, like [`crate::space::bits::popcount`].
pub(super) fn popcount_or(a: &[u64], b: &[u64]) -> u64 {
    a.iter().zip(b).map(|(x, y)| (x | y).count_ones() as u64).sum()
}

/// True when some bit of `start .. start + len` is set.
#[inline]
pub(super) fn any_in(words: &[u64], start: usize, len: usize) -> bool {
    let end = start + len;
    let (first, last) = (start / 64, (end - 1) / 64);
    let head = u64::MAX << (start % 64);
    let tail = u64::MAX >> (63 - (end - 1) % 64);
    if first == last {
        return words[first] & head & tail != 0;
    }
    words[first] & head != 0 || words[first + 1..last].iter().any(|&w| w != 0) || words[last] & tail != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_round_trip_at_any_offset() {
        let words: Vec<u64> = (0..6u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7))
            .collect();
        let bit = |w: &[u64], i: usize| w[i / 64] >> (i % 64) & 1;
        for start in [0, 1, 63, 64, 65, 100] {
            for len in [1, 63, 64, 65, 129, 200] {
                if start + len > 6 * 64 {
                    continue;
                }
                let mut buf = [0u64; 6];
                extract(&words, start, len, &mut buf);
                for i in 0..len.div_ceil(64) * 64 {
                    let want = if i < len { bit(&words, start + i) } else { 0 };
                    assert_eq!(bit(&buf, i), want, "start {} len {} bit {}", start, len, i);
                }
                let ones = (start..start + len).filter(|&i| bit(&words, i) == 1).count() as u64;
                let mut range = [0u64; 6];
                extract(&words, start, len, &mut range);
                assert_eq!(crate::space::bits::popcount(&range), ones);
                assert_eq!(popcount_or(&range, &[0; 6]), ones);
                let any = ones > 0;
                assert_eq!(any_in(&words, start, len), any, "start {} len {}", start, len);
                let mut back = vec![0u64; 6];
                or_into(&mut back, start, len, &buf);
                for i in 0..6 * 64 {
                    let want = if (start..start + len).contains(&i) {
                        bit(&words, i)
                    } else {
                        0
                    };
                    assert_eq!(bit(&back, i), want, "start {} len {} bit {}", start, len, i);
                }
            }
        }
    }

    #[test]
    fn any_in_sees_a_single_bit_exactly() {
        for one in [0usize, 63, 64, 130, 383] {
            let mut words = vec![0u64; 6];
            words[one / 64] |= 1 << (one % 64);
            for start in 0..384 {
                for len in [1, 2, 64, 65, 200] {
                    if start + len <= 384 {
                        let want = (start..start + len).contains(&one);
                        assert_eq!(
                            any_in(&words, start, len),
                            want,
                            "bit {} start {} len {}",
                            one,
                            start,
                            len
                        );
                    }
                }
            }
        }
    }
}
