//! A sparse shard stored as the list of its set bits: [`LIST_MAGIC`], then
//! the first position and each following gap less one, as LEB128 varints.
//!
//! Why: a shard of a few set bits in hundreds of thousands cost a zstd
//! compression of all its words (40.5 KiB on the 4×4 Loopover, 17% of a
//! worker's time to depth 8) and an xxh3 of them, where the list is made
//! from the positions the worker lists anyway. It is also smaller: on
//! random shards of 331,776 bits, 2.0 bytes a bit against zstd's 2.7 at
//! 82 bits set, 1.1 against 1.6 at one bit in 64 (`zstd -1`).

/// The first bytes of a listed shard. A zstd frame starts with
/// `28 B5 2F FD` (or `5? 2A 4D 18`, a skippable frame), so a list cannot
/// be taken for one.
pub const LIST_MAGIC: &[u8; 4] = b"CYLP";

/// A shard with at most one set bit in this many is stored as its list.
/// Up to here the list is smaller than zstd's frame at every density (one
/// in 64: 5,876 against 8,162 bytes); its positions take at most half the
/// shard's bytes while it is written.
pub const LIST_DENSITY: u64 = 64;

/// Whether a shard of `bits` bits, `popcount` of them set, is stored as
/// its list.
pub fn listed(popcount: u64, bits: u64) -> bool {
    popcount > 0 && popcount <= most_listed(bits)
}

/// The most set bits a shard of `bits` bits is stored as its list with (0
/// for shards too big for 32-bit positions).
pub fn most_listed(bits: u64) -> u64 {
    if bits <= 1 << 32 {
        bits / LIST_DENSITY
    } else {
        0
    }
}

/// The stored bytes of the positions `positions` (ascending, distinct).
pub fn encode(positions: &[u32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(LIST_MAGIC.len() + 2 * positions.len());
    bytes.extend_from_slice(LIST_MAGIC);
    let mut next = 0u32;
    for &p in positions {
        debug_assert!(p >= next, "positions ascending and distinct");
        let mut gap = p - next;
        while gap >= 0x80 {
            bytes.push((gap as u8 & 0x7f) | 0x80);
            gap >>= 7;
        }
        bytes.push(gap as u8);
        next = p + 1;
    }
    bytes
}

/// Whether `bytes` are a listed shard (in a file of format 4 or later).
pub fn is_list(bytes: &[u8]) -> bool {
    bytes.starts_with(LIST_MAGIC)
}

/// The positions `bytes` list: exactly `count` of them, each below
/// `bits`, or a description of what is wrong.
pub fn decode(bytes: &[u8], count: u64, bits: u64) -> Result<Vec<u32>, String> {
    let rest = bytes.strip_prefix(LIST_MAGIC).ok_or("not a list of positions")?;
    let mut positions = Vec::with_capacity(count.min(bits) as usize);
    let mut next = 0u64;
    let mut gap = 0u64;
    let mut shift = 0u32;
    for &b in rest {
        if shift > 28 {
            return Err("a gap longer than 32 bits".into());
        }
        gap |= u64::from(b & 0x7f) << shift;
        if b & 0x80 != 0 {
            shift += 7;
            continue;
        }
        let position = next + gap;
        if position >= bits {
            return Err(format!("position {} past the shard's {} bits", position, bits));
        }
        positions.push(position as u32);
        next = position + 1;
        (gap, shift) = (0, 0);
    }
    if shift != 0 {
        return Err("the list ends inside a position".into());
    }
    if positions.len() as u64 != count {
        return Err(format!("{} positions listed, {} counted", positions.len(), count));
    }
    Ok(positions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_come_back_as_they_were_listed() {
        let bits = 331_776;
        for positions in [
            vec![0],
            vec![bits as u32 - 1],
            vec![0, 1, 2, 127, 128, 16_383, 16_384, 300_000],
            (0..5000).map(|i| i * 66 + i % 3).collect(),
        ] {
            let bytes = encode(&positions);
            assert!(is_list(&bytes));
            assert_eq!(decode(&bytes, positions.len() as u64, bits), Ok(positions));
        }
    }

    #[test]
    fn a_damaged_list_is_refused_not_misread() {
        let bits = 1000;
        let bytes = encode(&[3, 500, 999]);
        assert!(decode(&bytes, 2, bits).is_err(), "a count that does not match");
        assert!(decode(&bytes, 3, 999).is_err(), "a position past the shard");
        assert!(
            decode(&bytes[..bytes.len() - 1], 3, bits).is_err(),
            "cut inside a position"
        );
        assert!(decode(&bytes[1..], 3, bits).is_err(), "no magic");
        let mut endless = bytes.clone();
        endless.extend_from_slice(&[0xff; 6]);
        assert!(decode(&endless, 3, bits).is_err(), "a gap of more than 32 bits");
    }

    #[test]
    fn the_list_is_chosen_up_to_one_bit_in_sixty_four() {
        assert!(!listed(0, 6400));
        assert!(listed(1, 6400) && listed(100, 6400));
        assert!(!listed(101, 6400));
    }
}
