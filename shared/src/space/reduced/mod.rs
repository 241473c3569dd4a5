//! The state space reduced by symmetry: one shard per class of block keys,
//! holding the raw fiber of the class's representative key.
//!
//! Every state `y` is stored as a conjugate `c_σ(y)` whose key is a
//! representative (see [`keys`]); all members of the orbit of `y` that have
//! that key are stored (the bit array of a fiber is closed under the key's
//! stabiliser, since conjugates have equal depths). So a stored bit of class
//! `K` stands for exactly `|Σ| / |Stab(K)|` states, the size of the key's
//! class: the full count of a level is the weighted popcount, with no
//! per-state work, and the number of classes of states follows from
//! Burnside's lemma over `Stab(K)` for the few keys whose stabiliser is not
//! trivial.
//!
//! Why not also `g ↦ g⁻¹`: a shard key must be a function of the left coset
//! `gK` of some subgroup `K` (so that a move maps a whole shard to one
//! shard), and inversion maps cosets to cosets only for normal subgroups,
//! which are useless here (`1`, `A_n`, `S_n`). Inversion therefore saves no
//! storage in a move-compatible layout; it is not used.

pub mod fiber;
pub mod groups;
pub mod keys;
pub mod plan;
pub mod tables;

use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::Symmetries;
use crate::puzzle::Puzzle;
use fiber::{FiberLayout, FiberMap, MapForm};
use keys::{Key, KeySpace};
use std::sync::Arc;
use tables::TableCache;

/// Most bytes of the kernel's table of every shard's steps (4 bytes per
/// shard and move; see the reduced kernel's `steps.rs`). Above it, steps
/// are worked out again for each shard and level.
pub const STEP_TABLE_BYTES: u64 = 256 << 20;

/// Least reduction (unreduced states over stored bits) for which found
/// symmetries are used. Per stored bit the reduced kernel took 3 to 3.6
/// times as long as the block layout per state (lrx:11 and
/// cyclic-coxeter:11 reduced by 2: 4.05 s and 2.71 s against 2.26 s and
/// 1.81 s; docs/history.md, "Symmetries found, not declared"). Declared and
/// built-in symmetries are used from a 10% saving on, as they always were.
pub const FOUND_MIN_REDUCTION: u128 = 4;

/// Below this many states a run takes milliseconds whichever way it goes,
/// so found symmetries are used from a 10% saving on, like declared ones:
/// the reduced path is then the one the small families' tests check
/// (N ≤ 8). Not above: the reduced path's set-up costs more than it saves
/// on small spaces (lo33's 181,440 states, reduced 3-fold: 0.16 s and
/// 33 MiB against 0.04 s and 10 MiB unreduced; docs/history.md).
pub const FOUND_FAST_ANYWAY: u128 = 1 << 16;

/// Most slots a reduced layout holds: its keys and domains are sets of
/// slots in one `u64`. A bigger puzzle (Loopover 2×33, 9×9) is planned
/// without reduction, which says how big it is; before this bound its
/// planning panicked indexing the binomial table past 64.
pub const MAX_REDUCED_SLOTS: usize = 64;

/// The reduced state space of a job.
#[derive(Clone, Debug)]
pub struct ReducedSpace {
    /// The symmetries reduced by.
    pub symmetries: Symmetries,
    /// Shared by every clone of the job (the plan, the coordinator, each
    /// embedded worker and its runner): a copy of the 4×4 Loopover's is
    /// about 10 MB of fresh pages, copied on one thread before depth 1.
    keys: Arc<KeySpace>,
    fiber: FiberLayout,
    /// Fiber-map tables shared by all tasks (and clones) of this space.
    tables: Arc<TableCache>,
    /// Entries a shard's steps take in the kernel's step table: one per
    /// move that can apply to a state ([`crate::puzzle::MoveColumns`]).
    step_columns: usize,
}

impl PartialEq for ReducedSpace {
    fn eq(&self, other: &ReducedSpace) -> bool {
        self.symmetries == other.symmetries && self.fiber == other.fiber
    }
}

impl Eq for ReducedSpace {}

impl ReducedSpace {
    /// Plans the reduction of `puzzle` by the group its symmetries generate
    /// (declared, built in, or found: see [`groups`]): `Ok(None)` when it has
    /// none, an error saying why when it has some but none worth having.
    pub fn plan(puzzle: &Puzzle, even: bool) -> Result<Option<ReducedSpace>, String> {
        let Some(groups) = groups::candidate_groups(puzzle)? else {
            return Ok(None);
        };
        if puzzle.slots > MAX_REDUCED_SLOTS {
            return Err(format!(
                "a reduced layout holds at most {} slots, and this puzzle has {}",
                MAX_REDUCED_SLOTS, puzzle.slots
            ));
        }
        let best = plan::choose(puzzle, &groups, even)?;
        let unreduced = crate::space::rank::factorial(puzzle.slots) / if even { 2 } else { 1 };
        // Found symmetries only where they pay in time, not only in bits.
        let pays = unreduced < FOUND_FAST_ANYWAY || best.stored() * FOUND_MIN_REDUCTION < unreduced;
        if puzzle.symmetries.is_empty() && !pays {
            return Err(format!(
                "the found symmetries would store {} of {} states, and below a {}-fold reduction the unreduced layout is faster",
                best.stored(),
                unreduced,
                FOUND_MIN_REDUCTION
            ));
        }
        Ok(Some(ReducedSpace::new(puzzle, best.symmetries, best.blocks, even)))
    }

    /// The space for a given group and partition of the pieces.
    pub fn new(puzzle: &Puzzle, symmetries: Symmetries, blocks: Vec<Vec<u8>>, even: bool) -> ReducedSpace {
        let fiber = FiberLayout::new(puzzle.slots, blocks, even, &puzzle.solved);
        let mut block_of_piece = vec![0u8; puzzle.slots];
        for b in 0..fiber.blocks() {
            for &p in fiber.block_pieces(b) {
                block_of_piece[p as usize] = b as u8;
            }
        }
        let block_maps = symmetries
            .pieces
            .iter()
            .map(|pi| {
                (0..fiber.blocks())
                    .map(|b| block_of_piece[pi[fiber.block_pieces(b)[0] as usize] as usize])
                    .collect()
            })
            .collect();
        let sizes: Vec<u32> = (0..fiber.blocks())
            .map(|b| fiber.block_pieces(b).len() as u32)
            .collect();
        let moves: Vec<&Perm> = puzzle.moves.iter().map(|m| &m.perm).collect();
        let domains = keys::block_domains(puzzle.slots, &moves, &puzzle.solved, &fiber_blocks(&fiber));
        let keys = Arc::new(KeySpace::new(puzzle.slots, &sizes, domains, &symmetries, block_maps));
        let tables = Arc::new(TableCache::with_bound(maps_tables_bytes(
            &fiber,
            puzzle.moves.len(),
            symmetries.order(),
        )));
        ReducedSpace {
            symmetries,
            keys,
            fiber,
            tables,
            step_columns: puzzle.move_columns().width,
        }
    }

    /// The keys and their classes.
    pub fn keys(&self) -> &KeySpace {
        &self.keys
    }

    /// The fiber layout.
    pub fn fiber(&self) -> &FiberLayout {
        &self.fiber
    }

    /// Number of shards (classes of keys).
    pub fn shards(&self) -> u64 {
        self.keys.classes() as u64
    }

    /// Words of a shard.
    pub fn shard_words(&self) -> usize {
        self.fiber.words()
    }

    /// States one shard can hold.
    pub fn shard_capacity(&self) -> u64 {
        self.fiber.states()
    }

    /// Bits stored per level.
    pub fn states(&self) -> u128 {
        self.shards() as u128 * self.fiber.states() as u128
    }

    /// Blocks of the partition as piece lists.
    pub fn blocks(&self) -> Vec<Vec<u8>> {
        fiber_blocks(&self.fiber)
    }

    /// What the job's fingerprint must add to the blocks so that files
    /// written by a build before block domains and ordered digits are not
    /// read as this layout: the domains when some block cannot reach every
    /// slot, and the digits' block order when it is not the blocks'. Empty
    /// for every single-orbit layout with blocks of one size (Loopover), so
    /// their fingerprints, and checkpoints, stay as they were.
    pub fn layout_marks(&self) -> String {
        let all = if self.fiber.slots() == 64 {
            u64::MAX
        } else {
            (1u64 << self.fiber.slots()) - 1
        };
        let mut marks = String::new();
        if self.keys.domains().iter().any(|&d| d != all) {
            marks.push_str(&format!("domains={:?}|", self.keys.domains()));
        }
        let order = self.fiber.digit_blocks();
        if order.windows(2).any(|w| w[0] > w[1]) {
            marks.push_str(&format!("digits={:?}|", order));
        }
        marks
    }

    /// States each stored bit of `shard` stands for.
    pub fn weight(&self, shard: u64) -> u64 {
        (self.symmetries.order() as u32 / self.keys.stabilizer(shard as usize)) as u64
    }

    /// The representative key of `shard`.
    pub fn key(&self, shard: u64) -> Key {
        self.keys.rep(shard as usize)
    }

    /// Shard, word and bit of a state (position notation).
    pub fn locate(&self, state: &[u8]) -> (u64, usize, u32) {
        let (class, k) = self.keys.canonicalize(&self.fiber.key_of(state));
        let image = self.symmetries.conjugate(k, state);
        let index = self.fiber.encode(&image, &self.keys.rep(class));
        (class as u64, (index / 64) as usize, (index % 64) as u32)
    }

    /// The stored state at bit `bit` of `shard`.
    pub fn state_at(&self, shard: u64, bit: usize) -> Vec<u8> {
        self.fiber.decode(bit as u64, &self.key(shard))
    }

    /// The state map `z[g(i)] = f(y[i])` on the fiber of `source`, and the
    /// key it maps to.
    pub(crate) fn fiber_map(&self, source: &Key, f: &Perm, g: &Perm, form: MapForm) -> (FiberMap, Key) {
        FiberMap::new(&self.fiber, &self.tables, source, f, g, form)
    }

    /// Most memory the shared fiber-map tables can take with `moves` moves:
    /// the cache's bound, or all the tables the maps of every shard could
    /// need when that is less (small spaces).
    pub fn table_bytes(&self, moves: usize) -> u64 {
        let parities = 2;
        let per_map = (self.fiber.row_states() * parities + self.fiber.rows()) * 8;
        let all_maps = self.shards().saturating_mul(moves as u64 + 1).saturating_mul(per_map);
        all_maps.min(self.tables.bound() as u64) + self.step_table_bytes()
    }

    /// Raises the fiber-map tables' bound to an eighth of a worker's
    /// `budget` (at most [`tables::MAX_TABLE_CACHE_BYTES`]) when the
    /// budget less that and the step table still holds a whole level of
    /// `level_bytes`: the shard cache then still reads each shard once a
    /// level, and only its spare room goes to tables. Why: the bound the
    /// layout gives is a guess at the distinct maps (a map per move and
    /// symmetry), and the 3×5 Loopover's dense levels need about 11,000
    /// row tables of 115 KB where it allows 1,400; the cache started over
    /// every few thousand tables and built most maps' tables again.
    /// `cayley run loopover:3x5 --max-depth 10 --threads 2 --memory 10G`,
    /// two interleaved pairs: 37.3–37.6 → 32.3–32.4 s, peak RSS 1.85 →
    /// 2.77 GB (within the budget, as the tables are charged to it).
    pub fn fit_tables_to(&self, budget: u64, level_bytes: u128) {
        let raised = (budget / 8).min(tables::MAX_TABLE_CACHE_BYTES as u64);
        let others = self.step_table_bytes();
        let rest = budget.saturating_sub(raised.saturating_add(others));
        if raised > self.tables.bound() as u64 && u128::from(rest) >= level_bytes {
            self.tables.raise_bound(raised as usize);
        }
    }

    /// Bytes of the kernel's table of every shard's steps, or 0 when it
    /// would pass [`STEP_TABLE_BYTES`] (no table).
    pub fn step_table_bytes(&self) -> u64 {
        let bytes = self.shards().saturating_mul(self.step_columns as u64).saturating_mul(4);
        if bytes <= STEP_TABLE_BYTES {
            bytes
        } else {
            0
        }
    }

    /// Classes of states among the `popcount` set bits `words` of `shard`:
    /// each class is stored once per member of `Stab(K)`'s orbits, so
    /// Burnside's lemma over the stabiliser counts them.
    pub fn classes_in(&self, shard: u64, words: &[u64], popcount: u64) -> u64 {
        // Most keys have no symmetry: their stored bits are their classes
        // (the stabiliser's order is recorded; listing its elements tries
        // every symmetry). The popcount comes from the caller, who counted
        // the bits already: counting the 4×4 Loopover's 40.5 KiB shards
        // again was 4% of its time to depth 8.
        if self.keys.stabilizer(shard as usize) == 1 {
            return popcount;
        }
        let stabilizer = self.keys.stabilizer_elements(shard as usize);
        if popcount == 0 {
            return 0;
        }
        let key = self.key(shard);
        let fixed: u64 = stabilizer
            .iter()
            .map(|&k| {
                if k == 0 {
                    // The identity (the symmetries' first element) fixes
                    // every state without a map: `fixed_points` 3.7 → 3.0 %
                    // of a 1-thread run of the 4×4 Loopover to depth 8.
                    debug_assert!(self.symmetries.slots[0].is_identity() && self.symmetries.pieces[0].is_identity());
                    return popcount;
                }
                // Digit tables: a row table per symmetry and key would be
                // built for the few states of most shards.
                let form = MapForm::Digits;
                let (map, _) = self.fiber_map(&key, &self.symmetries.slots[k], &self.symmetries.pieces[k], form);
                let row_words = self.fiber.row_words();
                // The states the symmetry fixes, when fewer than the
                // stored ones, each looked up; else each stored one tried.
                let targets = self.fiber.digit_targets(&self.symmetries.pieces[k]);
                match map.fixed_states(&targets, row_words as u64 * 64, popcount as usize) {
                    Some(fixed) => {
                        let mut stored = 0;
                        fixed.for_each(|i| stored += words[(i / 64) as usize] >> (i % 64) & 1);
                        stored
                    }
                    None => map.fixed_points(words, row_words),
                }
            })
            .sum();
        fixed / stabilizer.len() as u64
    }
}

/// Bytes of the tables of one map per move (and the identity) and symmetry:
/// a row's inner tables and every digit's contributions. Where a block's
/// slot set is the same in every key (the 3×3×3's corners), the maps of all
/// shards share those tables, so a cache this big builds each once.
fn maps_tables_bytes(fiber: &FiberLayout, moves: usize, symmetries: usize) -> usize {
    let parities = 2;
    let digits: u64 = (0..fiber.blocks())
        .map(|b| crate::space::rank::factorial(fiber.block_pieces(b).len()) as u64)
        .sum();
    let per_map = (fiber.row_states() * parities + digits) * 8;
    (per_map as usize).saturating_mul((moves + 1) * symmetries)
}

/// The blocks of a fiber layout as piece lists.
fn fiber_blocks(fiber: &FiberLayout) -> Vec<Vec<u8>> {
    (0..fiber.blocks()).map(|b| fiber.block_pieces(b).to_vec()).collect()
}

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
