//! Block transitions: for every block of a target shard and every move, the
//! block its predecessors live in and the low-table rows that map between
//! the two blocks' low indices.
//!
//! A state `y` of target block `B` has predecessor `x = m⁻¹(y)` under move
//! `m`. All of `B`'s states have their predecessors in one source block
//! `m⁻¹(B)`, and the low parts correspond through one permutation `τ`
//! (target-relative slot → source-relative slot). The bottom-up kernel looks
//! up `τ` on target indices; the top-down kernel looks up `τ⁻¹` on source
//! indices.

use crate::kernel::lowtable::LowTable;
use crate::puzzle::perm::Perm;
use crate::puzzle::{Guard, Puzzle};
use crate::space::layout::Layout;
use crate::space::rank::{rank_perm, rank_prefix, unrank_prefix};
use rayon::prelude::*;

/// Marks a move that is illegal for every state of the target block.
pub const NO_SOURCE: u64 = u64::MAX;

/// One (target block, move) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// Block holding the predecessors, or [`NO_SOURCE`].
    pub src_block: u64,
    /// Low-table row mapping a target low index to its predecessor's index.
    pub bottom_up_row: u32,
    /// Low-table row mapping a source low index to its successor's index.
    pub top_down_row: u32,
}

/// The moves in the form the transition builder needs.
pub struct PreparedMoves {
    inverses: Vec<Perm>,
    forward: Vec<Perm>,
    guards: Vec<Option<Guard>>,
}

impl PreparedMoves {
    /// Prepares the moves of `puzzle`.
    pub fn new(puzzle: &Puzzle) -> PreparedMoves {
        PreparedMoves {
            inverses: puzzle.moves.iter().map(|m| m.perm.inverse()).collect(),
            forward: puzzle.moves.iter().map(|m| m.perm.clone()).collect(),
            guards: puzzle.moves.iter().map(|m| m.guard).collect(),
        }
    }

    /// Number of moves.
    pub fn len(&self) -> usize {
        self.inverses.len()
    }

    /// True when there are no moves.
    pub fn is_empty(&self) -> bool {
        self.inverses.is_empty()
    }

    /// The shard holding the predecessors of `shard`'s states under each
    /// move: the shard key's slots mapped back by the move. Cheaper than
    /// building the shard's transitions; a guard can only rule a move out,
    /// so this is a superset of the shards the transitions name.
    pub fn source_shards(&self, layout: &Layout, shard: u64) -> Vec<u64> {
        let k = layout.shard_pieces;
        let mut key = [0u8; 64];
        unrank_prefix(shard, layout.pieces, k, &mut key);
        self.inverses
            .iter()
            .map(|h| {
                let mut mapped = [0u8; 64];
                for (m, &slot) in mapped.iter_mut().zip(&key[..k]) {
                    *m = h[slot as usize];
                }
                rank_prefix(&mapped[..k], layout.pieces).0
            })
            .collect()
    }
}

/// Transitions of every block of one shard, `moves` entries per block.
pub struct ShardTransitions {
    moves: usize,
    entries: Vec<Transition>,
}

/// Blocks one parallel job of [`ShardTransitions::build_into`] fills: 64
/// blocks of 38 moves are about 40 KB of entries, a few µs per block.
const BLOCKS_PER_JOB: usize = 64;

impl ShardTransitions {
    /// Transitions of block number `i` inside the shard.
    #[inline]
    pub fn of_block(&self, i: usize) -> &[Transition] {
        &self.entries[i * self.moves..(i + 1) * self.moves]
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<Transition>()
    }

    /// Computes the transitions of `shard`.
    pub fn build(layout: &Layout, table: &LowTable, moves: &PreparedMoves, shard: u64) -> ShardTransitions {
        Self::build_into(layout, table, moves, shard, Vec::new())
    }

    /// Computes the transitions of `shard` into `entries`, whose allocation
    /// is reused (a fresh one of a big shard costs a page fault per 4 KiB:
    /// 1,175 per shard of the 2×7 sliding puzzle). Blocks are filled in
    /// parallel on the current rayon pool; built on one thread, they left
    /// the other cores idle for a few ms per shard. Both together took a
    /// 2×7 sliding level's compute from 30–32 s to 16–19 s (docs/history.md).
    pub fn build_into(
        layout: &Layout,
        table: &LowTable,
        moves: &PreparedMoves,
        shard: u64,
        mut entries: Vec<Transition>,
    ) -> ShardTransitions {
        let per_shard = layout.blocks_per_shard();
        let first = shard * per_shard;
        let n = moves.len();
        // Every entry is overwritten below; only a longer buffer's new tail
        // is written here.
        entries.resize(per_shard as usize * n, UNFILLED);
        if n > 0 {
            entries
                .par_chunks_mut(n * BLOCKS_PER_JOB)
                .enumerate()
                .for_each(|(job, rows)| {
                    let job_first = first + (job * BLOCKS_PER_JOB) as u64;
                    for (i, row) in rows.chunks_mut(n).enumerate() {
                        block_transitions(layout, table, moves, job_first + i as u64, row);
                    }
                });
        }
        ShardTransitions { moves: n, entries }
    }

    /// The entries' allocation, for the next [`Self::build_into`].
    pub fn into_entries(self) -> Vec<Transition> {
        self.entries
    }
}

/// Filler of entries about to be overwritten.
const UNFILLED: Transition = Transition {
    src_block: NO_SOURCE,
    bottom_up_row: 0,
    top_down_row: 0,
};

/// The transitions of one target `block`, one per move, into `row`.
fn block_transitions(layout: &Layout, table: &LowTable, moves: &PreparedMoves, block: u64, row: &mut [Transition]) {
    let key_len = layout.key_pieces();
    let low = layout.low_pieces;
    let mut key = [0u8; 64];
    let mut src_key = [0u8; 64];
    let mut tau = [0u8; 16];
    let mut tau_inv = [0u8; 16];
    layout.block_key(block, &mut key);
    let (_, target_odd) = layout.block_of_key(&key[..key_len]);
    let target_free = layout.free_mask(&key[..key_len]);
    for (g, entry) in row.iter_mut().enumerate() {
        if let Some(guard) = moves.guards[g] {
            // x = m⁻¹(y) is legal iff x[piece] = slot iff y[piece] = m[slot].
            if key[guard.piece] != moves.forward[g][guard.slot] {
                *entry = UNFILLED;
                continue;
            }
        }
        let h = &moves.inverses[g];
        for i in 0..key_len {
            src_key[i] = h[key[i] as usize];
        }
        let (src_block, src_odd) = layout.block_of_key(&src_key[..key_len]);
        let src_free = layout.free_mask(&src_key[..key_len]);
        let mut rest = target_free;
        for slot_of in tau.iter_mut().take(low) {
            let s = rest.trailing_zeros();
            rest &= rest - 1;
            let image = h[s as usize];
            *slot_of = (src_free & ((1u64 << image) - 1)).count_ones() as u8;
        }
        for a in 0..low {
            tau_inv[tau[a] as usize] = a as u8;
        }
        *entry = Transition {
            src_block,
            bottom_up_row: table.row_offset(rank_perm(&tau[..low]), target_odd),
            top_down_row: table.row_offset(rank_perm(&tau_inv[..low]), src_odd),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::from_generators;
    use crate::space::layout::StateIndex;
    use proptest::prelude::*;

    /// Low tables are costly to build (50 MB for 7 pieces); share them.
    fn cached_table(low: usize, even: bool) -> std::sync::Arc<LowTable> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex, OnceLock};
        type Tables = Mutex<HashMap<(usize, bool), Arc<LowTable>>>;
        static TABLES: OnceLock<Tables> = OnceLock::new();
        let mut map = TABLES.get_or_init(Default::default).lock().unwrap();
        map.entry((low, even))
            .or_insert_with(|| Arc::new(LowTable::new(low, even)))
            .clone()
    }

    fn perm_from_seed(n: usize, mut seed: u64) -> Perm {
        let mut images: Vec<u8> = (0..n as u8).collect();
        for i in (1..n).rev() {
            let j = (seed % (i as u64 + 1)) as usize;
            seed /= i as u64 + 1;
            images.swap(i, j);
        }
        Perm::from_images(images).unwrap()
    }

    #[test]
    fn source_shards_cover_the_transitions() {
        for (spec, k) in [("loopover:2x5", 2), ("loopover:3x3", 1), ("sliding:3x3", 2)] {
            let puzzle = crate::puzzle::parse_puzzle(spec, crate::puzzle::Metric::Mtm).unwrap();
            let layout = Layout::plan(
                puzzle.slots,
                puzzle.all_moves_even(),
                crate::space::layout::ParityRule::find(&puzzle),
                puzzle.guarded_pieces().len(),
                Some(k),
            )
            .unwrap();
            let table = cached_table(layout.low_pieces, layout.even);
            let moves = PreparedMoves::new(&puzzle);
            for shard in 0..layout.shards() {
                let sources = moves.source_shards(&layout, shard);
                let trans = ShardTransitions::build(&layout, &table, &moves, shard);
                for i in 0..layout.blocks_per_shard() as usize {
                    for (g, t) in trans.of_block(i).iter().enumerate() {
                        if t.src_block != NO_SOURCE {
                            assert_eq!(
                                layout.shard_of_block(t.src_block),
                                sources[g],
                                "{} shard {}",
                                spec,
                                shard
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_reused_buffer_builds_what_a_fresh_one_does() {
        let puzzle = crate::puzzle::parse_puzzle("sliding:3x3", crate::puzzle::Metric::Mtm).unwrap();
        let rule = crate::space::layout::ParityRule::find(&puzzle);
        let layout = Layout::plan(puzzle.slots, false, rule, 1, Some(2)).unwrap();
        let table = cached_table(layout.low_pieces, layout.even);
        let moves = PreparedMoves::new(&puzzle);
        let garbage = Transition {
            src_block: 7,
            bottom_up_row: 3,
            top_down_row: 5,
        };
        let fresh: Vec<_> = (0..layout.shards())
            .map(|shard| ShardTransitions::build(&layout, &table, &moves, shard).into_entries())
            .collect();
        // Longer, shorter and same-length buffers holding other contents.
        let per_shard = fresh[0].len();
        for len in [per_shard + 100, per_shard / 2, per_shard] {
            let mut buffer = vec![garbage; len];
            for shard in (0..layout.shards()).rev() {
                let built = ShardTransitions::build_into(&layout, &table, &moves, shard, buffer);
                buffer = built.into_entries();
                assert_eq!(buffer, fresh[shard as usize], "shard {shard}, buffer of {len}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
        /// For random layouts, blocks, moves and states: the transition's
        /// source block and table rows agree with unrank → apply → rank.
        #[test]
        fn transitions_agree_with_unrank_apply_rank(
            n in 4usize..=10, k_seed in any::<u64>(), move_seed in any::<u64>(),
            block_seed in any::<u64>(), low_seed in any::<u64>(), square in any::<bool>(),
        ) {
            let mut m = perm_from_seed(n, move_seed);
            if square {
                m = m.after(&m); // an even move, so the even layout applies
            }
            let even = m.is_even();
            let puzzle = from_generators("t", n, vec![m.clone()]);
            let probe = Layout::plan(n, even, None, 0, None).unwrap();
            let k = (k_seed % (probe.key_pieces() as u64 + 1)) as usize;
            let layout = Layout::plan(n, even, None, 0, Some(k)).unwrap();
            let table = cached_table(layout.low_pieces, even);
            let moves = PreparedMoves::new(&puzzle);
            let block = block_seed % layout.blocks();
            let shard = layout.shard_of_block(block);
            let trans = ShardTransitions::build(&layout, &table, &moves, shard);
            let t = trans.of_block((block % layout.blocks_per_shard()) as usize)[0];
            let y_low = (low_seed % layout.block_states() as u64) as usize;
            let y = layout.state_at(StateIndex { block, low: y_low });
            // Predecessor x = m⁻¹(y).
            let x: Vec<u8> = y.iter().map(|&s| m.inverse()[s as usize]).collect();
            let xi = layout.index_of(&x);
            prop_assert_eq!(t.src_block, xi.block);
            prop_assert_eq!(table.row(t.bottom_up_row)[y_low] as usize, xi.low);
            prop_assert_eq!(table.row(t.top_down_row)[xi.low] as usize, y_low);
        }
    }
}
