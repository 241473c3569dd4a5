//! Every shard's steps, kept for the whole job: a row of entries per
//! shard, one per column of the moves ([`MoveColumns`]).
//!
//! Where moves have guards, moves that never lead to the same state share
//! a column, and an entry then also names its move: the 15-puzzle's 48
//! slides take 4 entries a shard, 97 MB for its 6 million shards, where a
//! column per move (1.16 GB) was past [`STEP_TABLE_BYTES`] and every
//! shard's steps were worked out twice a level, a fifth of the pool's time
//! to depth 22.
//!
//! [`STEP_TABLE_BYTES`]: crate::space::reduced::STEP_TABLE_BYTES

use super::Step;
use crate::puzzle::MoveColumns;
use crate::space::reduced::ReducedSpace;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// The table.
///
/// "Not worked out yet" is all ones, not zero, so that building the table
/// writes every page of it. A zeroed table came from the allocator as
/// untouched pages: a shard's first look read the kernel's shared zero
/// page, and the entry's first store then replaced that page, which
/// flushed the page's translation on every core the process ran on, one
/// interrupt per 4 KiB. On 2 threads those flushes were 0.7% of a 4×4 run
/// to depth 8 (one in 2,000 samples at 1 thread); they grow with the
/// cores.
pub(super) struct StepTable {
    columns: MoveColumns,
    /// Bits of the symmetry in an entry.
    symmetry_bits: u32,
    /// Bits of the move in an entry: 0 where no column is shared.
    move_bits: u32,
    /// `columns.width` entries per shard: `UNKNOWN` not worked out yet,
    /// `NONE` no move of the column leads into the shard, otherwise
    /// `(source << symmetry_bits | symmetry) << move_bits | move`.
    entries: Vec<AtomicU32>,
}

/// An entry not worked out yet.
pub(super) const UNKNOWN: u32 = u32::MAX;
/// An entry none of whose moves leads into the shard.
const NONE: u32 = u32::MAX - 1;

/// Bits that hold values below `count`.
fn bits_below(count: usize) -> u32 {
    usize::BITS - (count.max(2) - 1).leading_zeros()
}

impl StepTable {
    /// A table for `space` and the moves' `columns`, when its entries fit
    /// 32 bits and its size the space's allowance.
    pub(super) fn new(space: &ReducedSpace, columns: MoveColumns) -> Option<StepTable> {
        if space.step_table_bytes() == 0 {
            return None;
        }
        let symmetry_bits = bits_below(space.symmetries.order());
        let move_bits = if columns.shared() {
            bits_below(columns.of_move.len())
        } else {
            0
        };
        let largest = u128::from(space.shards()) << (symmetry_bits + move_bits);
        if largest >= u128::from(NONE) {
            return None;
        }
        // Written on the pool's threads (the worker builds its context
        // there): 48 MB of first writes on the 4×4.
        let entries = (0..space.shards() as usize * columns.width)
            .into_par_iter()
            .map(|_| AtomicU32::new(UNKNOWN))
            .collect();
        Some(StepTable {
            columns,
            symmetry_bits,
            move_bits,
            entries,
        })
    }

    /// The entries of `shard`.
    pub(super) fn row(&self, shard: u64) -> &[AtomicU32] {
        let width = self.columns.width;
        &self.entries[shard as usize * width..(shard as usize + 1) * width]
    }

    /// The column of move `g`.
    pub(super) fn column(&self, g: usize) -> usize {
        self.columns.of_move[g]
    }

    /// The entry of move `g`: its step, or none when it leads nowhere in
    /// the shard.
    pub(super) fn encode(&self, g: usize, step: Option<Step>) -> u32 {
        match step {
            None => NONE,
            Some(s) => {
                let code = (s.source as u32) << self.symmetry_bits | s.symmetry as u32;
                code << self.move_bits | if self.move_bits > 0 { g as u32 } else { 0 }
            }
        }
    }

    /// Move `g`'s step from its column's known `entry`.
    pub(super) fn decode(&self, g: usize, entry: u32) -> Option<Step> {
        if entry >= NONE {
            return None;
        }
        if self.move_bits > 0 && (entry & ((1 << self.move_bits) - 1)) as usize != g {
            return None;
        }
        let code = entry >> self.move_bits;
        Some(Step {
            source: u64::from(code >> self.symmetry_bits),
            symmetry: (code & ((1 << self.symmetry_bits) - 1)) as usize,
        })
    }

    /// Marks the entries of `row` that `known` had unknown and that are
    /// still unknown as having no move that leads into the shard: once
    /// its steps are written, the rest of its row is.
    pub(super) fn close_row(row: &[AtomicU32], known: &[u32]) {
        for (entry, &was) in row.iter().zip(known) {
            if was == UNKNOWN && entry.load(Ordering::Relaxed) == UNKNOWN {
                entry.store(NONE, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table's entry coding without its entries: `moves` moves in
    /// `width` columns.
    fn coding(symmetry_bits: u32, moves: usize, width: usize) -> StepTable {
        let columns = MoveColumns {
            of_move: (0..moves).map(|g| g % width).collect(),
            width,
        };
        let move_bits = if columns.shared() { bits_below(moves) } else { 0 };
        StepTable {
            columns,
            symmetry_bits,
            move_bits,
            entries: Vec::new(),
        }
    }

    #[test]
    fn entries_tell_unknown_none_and_every_step_apart() {
        // A column per move (the 4×4 Loopover's 24, 128 symmetries), and
        // 48 guarded moves in 4 columns (the 15-puzzle's, 2 symmetries).
        for (table, g, other) in [(coding(7, 24, 24), 23, None), (coding(1, 48, 4), 45, Some(41))] {
            let bits = table.symmetry_bits + table.move_bits;
            // The largest source the table admits: `shards << bits` below NONE.
            let largest = Step {
                source: (u64::from(NONE) >> bits) - 1,
                symmetry: (1 << table.symmetry_bits) - 1,
            };
            for step in [
                Some(Step { source: 0, symmetry: 0 }),
                Some(Step { source: 5, symmetry: 1 }),
                Some(largest),
                None,
            ] {
                let entry = table.encode(g, step);
                assert_ne!(entry, UNKNOWN, "{:?} is not 'not worked out'", step);
                assert_eq!(table.decode(g, entry), step);
                // Another move of the column does not lead where g does.
                if let Some(other) = other {
                    assert_eq!(table.column(other), table.column(g));
                    assert_eq!(table.decode(other, entry), None);
                }
            }
            assert_eq!(table.decode(g, UNKNOWN), None);
        }
    }
}
