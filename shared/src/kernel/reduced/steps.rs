//! Where the predecessors of a shard's states are: for each move, the
//! source shard and the symmetry that maps the predecessors' key to the
//! source's representative.
//!
//! Working this out is one canonicalisation of a key per move, which on the
//! 4×4 Loopover's sparse levels cost as much as the kernel itself (24 keys
//! per shard, twice per shard and level: 17% of a worker's time at depth
//! 8). The steps of a shard do not depend on the level, so they are kept
//! for the whole job in one flat table when it fits
//! [`crate::space::reduced::STEP_TABLE_BYTES`] (48 MB on the 4×4).

use super::step_table::{StepTable, UNKNOWN};
use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::Symmetries;
use crate::puzzle::Puzzle;
use crate::space::reduced::fiber::{FiberMap, MapForm};
use crate::space::reduced::keys::Key;
use crate::space::reduced::ReducedSpace;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

/// Where the predecessors of a shard's states under one move are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The source shard.
    pub source: u64,
    /// The symmetry mapping the predecessors' key to the source's representative.
    pub symmetry: usize,
}

/// The moves of a puzzle in the form the reduced kernel uses.
pub struct ReducedMoves {
    forward: Vec<Perm>,
    inverse: Vec<Perm>,
    /// Legal only while piece `.0` is in slot `.1`.
    guards: Vec<Option<(usize, usize)>>,
    /// The inverse of each symmetry on slots and on pieces (a top-down map
    /// per source of a few states inverted two permutations anew).
    slot_inverses: Vec<Perm>,
    piece_inverses: Vec<Perm>,
    table: Option<StepTable>,
    /// Every move's inverse is a move and no move has a guard: a shard's
    /// targets are then its sources (see [`Self::target_shards`]).
    targets_are_sources: bool,
    /// With the table, and when a shard's targets are its sources: each
    /// step worked out also gives a step of its source ([`ReverseSteps`]).
    reverse: Option<ReverseSteps>,
    /// What the running level's expansions cost, for the choice of direction.
    pub costs: super::direction::DirectionCosts,
}

/// The step a worked-out step implies the other way round.
///
/// Shard `B`'s step under move `m` is `(A, σ)` with `σ(m⁻¹(K_B)) = K_A`.
/// Then `σ m σ⁻¹ (K_A) = σ(K_B)`, and `σ m σ⁻¹ = m'⁻¹` for the move
/// `m' = σ m⁻¹ σ⁻¹` (the moves are closed under inverses, and every
/// symmetry maps the move set onto itself), so `A`'s step under `m'` is
/// `(B, σ⁻¹)`. Writing it when `B`'s step is worked out means each pair of
/// shards a move joins is canonicalised once, not once from each side:
/// on the 4×4 Loopover to depth 8 working out steps was a fifth of the
/// CPU time.
pub(crate) struct ReverseSteps {
    /// `moves` entries per symmetry `σ`: for move `m`, the move `σ m⁻¹ σ⁻¹`.
    moves: Vec<u32>,
    /// The index of each symmetry's inverse.
    inverse_symmetry: Vec<u32>,
}

/// Symmetries × moves past which [`ReverseSteps`] is not built: a table
/// of 4 MB, worked out on one thread before the first level.
const MAX_REVERSE_ENTRIES: usize = 1 << 20;

impl ReverseSteps {
    /// The table for `moves` (forward and inverse) under `symmetries`, or
    /// none when it would be too large or a conjugate is not found.
    fn new(symmetries: &Symmetries, forward: &[Perm], inverse: &[Perm]) -> Option<ReverseSteps> {
        let count = symmetries.order();
        if count.saturating_mul(forward.len()) > MAX_REVERSE_ENTRIES {
            return None;
        }
        let index_of_move: HashMap<&[u8], u32> = forward
            .iter()
            .enumerate()
            .rev()
            .map(|(g, perm)| (perm.images(), g as u32))
            .collect();
        let inverse_slots: Vec<Perm> = symmetries.slots.iter().map(Perm::inverse).collect();
        let mut moves = Vec::with_capacity(count * forward.len());
        for (sigma, sigma_inverse) in symmetries.slots.iter().zip(&inverse_slots) {
            for m_inverse in inverse {
                let conjugate = sigma.after(m_inverse).after(sigma_inverse);
                moves.push(*index_of_move.get(conjugate.images())?);
            }
        }
        let index_of_symmetry: HashMap<(&[u8], &[u8]), u32> = (0..count)
            .map(|k| ((symmetries.slots[k].images(), symmetries.pieces[k].images()), k as u32))
            .collect();
        let inverse_symmetry = (0..count)
            .map(|k| {
                let pieces = symmetries.pieces[k].inverse();
                index_of_symmetry
                    .get(&(inverse_slots[k].images(), pieces.images()))
                    .copied()
            })
            .collect::<Option<Vec<u32>>>()?;
        Some(ReverseSteps {
            moves,
            inverse_symmetry,
        })
    }

    /// Writes, where not yet known, the steps that `shard`'s newly worked
    /// out `steps` imply for their sources.
    ///
    /// The entries are read all first and then written: each is a cache
    /// miss in a table of 48 MB (the 4×4), and read one after another
    /// with a write between, each waited for the one before.
    fn note(&self, table: &StepTable, shard: u64, steps: &[(usize, Step)]) {
        let moves = self.moves.len() / self.inverse_symmetry.len();
        let entries: Vec<(usize, &AtomicU32, u32)> = steps
            .iter()
            .map(|&(g, step)| {
                let back = self.moves[step.symmetry * moves + g] as usize;
                let entry = &table.row(step.source)[table.column(back)];
                (back, entry, entry.load(Ordering::Relaxed))
            })
            .collect();
        for ((back, entry, was), &(_, step)) in entries.into_iter().zip(steps) {
            if was == UNKNOWN {
                let symmetry = self.inverse_symmetry[step.symmetry] as usize;
                entry.store(
                    table.encode(
                        back,
                        Some(Step {
                            source: shard,
                            symmetry,
                        }),
                    ),
                    Ordering::Relaxed,
                );
            }
        }
    }
}

impl ReducedMoves {
    /// Prepares the moves of `puzzle` over `space`.
    pub fn new(puzzle: &Puzzle, space: &ReducedSpace) -> ReducedMoves {
        let closed = puzzle
            .moves
            .iter()
            .all(|m| puzzle.moves.iter().any(|n| n.perm == m.perm.inverse()));
        let unguarded = puzzle.moves.iter().all(|m| m.guard.is_none());
        let forward: Vec<Perm> = puzzle.moves.iter().map(|m| m.perm.clone()).collect();
        let inverse: Vec<Perm> = puzzle.moves.iter().map(|m| m.perm.inverse()).collect();
        let table = StepTable::new(space, puzzle.move_columns());
        let reverse = match table {
            Some(_) if closed && unguarded => ReverseSteps::new(&space.symmetries, &forward, &inverse),
            _ => None,
        };
        ReducedMoves {
            forward,
            inverse,
            guards: puzzle
                .moves
                .iter()
                .map(|m| m.guard.map(|g| (g.piece, g.slot)))
                .collect(),
            slot_inverses: space.symmetries.slots.iter().map(Perm::inverse).collect(),
            piece_inverses: space.symmetries.pieces.iter().map(Perm::inverse).collect(),
            table,
            targets_are_sources: closed && unguarded,
            reverse,
            costs: Default::default(),
        }
    }

    /// For each move, where the predecessors of `shard`'s states are (none
    /// when the move is illegal for the whole shard).
    pub fn steps(&self, space: &ReducedSpace, shard: u64) -> Vec<Option<Step>> {
        let mut steps = Vec::with_capacity(self.forward.len());
        self.each_step(space, shard, |_, step| steps.push(step));
        steps
    }

    /// Calls `visit` with each move in order and its step (as
    /// [`Self::steps`] gives them). A shard whose steps the table holds,
    /// as it does for every shard after its first time (each computed
    /// shard is asked twice a level: for its sources, then by the kernel),
    /// is read without building a vector: the three the lookup built were
    /// 1.5–2 % of a 2-thread 4×4 profile.
    pub fn each_step(&self, space: &ReducedSpace, shard: u64, mut visit: impl FnMut(usize, Option<Step>)) {
        let Some(table) = &self.table else {
            return self
                .work_out_steps(space, shard)
                .into_iter()
                .enumerate()
                .for_each(|(g, step)| visit(g, step));
        };
        let row = table.row(shard);
        // Entries are written whole, and a known entry is only ever
        // written again with the same source and another symmetry that
        // maps the key there as well (two threads working out the same
        // pair of shards from both ends), so any thread that sees a known
        // entry sees a right one (relaxed order suffices: no other memory
        // depends on it), and reading it again gives a right one too.
        if row.iter().all(|e| e.load(Ordering::Relaxed) != UNKNOWN) {
            for g in 0..self.forward.len() {
                visit(g, table.decode(g, row[table.column(g)].load(Ordering::Relaxed)));
            }
            return;
        }
        self.fill_steps(space, shard, table, row)
            .into_iter()
            .enumerate()
            .for_each(|(g, step)| visit(g, step));
    }

    /// Works out the steps of `shard` the table does not hold yet, writes
    /// them there (and what they imply the other way round), and returns
    /// them all.
    fn fill_steps(&self, space: &ReducedSpace, shard: u64, table: &StepTable, row: &[AtomicU32]) -> Vec<Option<Step>> {
        let moves = self.forward.len();
        let known: Vec<u32> = row.iter().map(|e| e.load(Ordering::Relaxed)).collect();
        let unknown = |g: usize| known[table.column(g)] == UNKNOWN;
        let mut steps = self.work_out_some_steps(space, shard, unknown);
        let mut new_steps = Vec::with_capacity(moves);
        for g in 0..moves {
            if !unknown(g) {
                steps[g] = table.decode(g, known[table.column(g)]);
            } else if let Some(step) = steps[g] {
                row[table.column(g)].store(table.encode(g, Some(step)), Ordering::Relaxed);
                new_steps.push((g, step));
            }
        }
        StepTable::close_row(row, &known);
        if let Some(reverse) = &self.reverse {
            reverse.note(table, shard, &new_steps);
        }
        steps
    }

    /// How many of `shard`'s steps the table holds.
    #[cfg(test)]
    pub(crate) fn known_steps(&self, shard: u64) -> usize {
        let Some(table) = &self.table else { return 0 };
        table
            .row(shard)
            .iter()
            .filter(|e| e.load(Ordering::Relaxed) != UNKNOWN)
            .count()
    }

    /// True when steps are kept for the whole job.
    pub fn has_table(&self) -> bool {
        self.table.is_some()
    }

    pub(crate) fn work_out_steps(&self, space: &ReducedSpace, shard: u64) -> Vec<Option<Step>> {
        self.work_out_some_steps(space, shard, |_| true)
    }

    /// The steps of the moves `wanted` says (the others `None`).
    fn work_out_some_steps(
        &self,
        space: &ReducedSpace,
        shard: u64,
        wanted: impl Fn(usize) -> bool,
    ) -> Vec<Option<Step>> {
        let key = space.key(shard);
        // x = m⁻¹(y) has the piece in `slot` iff y has it in m(slot).
        let legal = |g: usize| self.guard_allows(space, &key, g, |slot| self.forward[g][slot]);
        let moves: Vec<usize> = (0..self.forward.len()).filter(|&g| wanted(g) && legal(g)).collect();
        let keys = space.keys();
        let sources: Vec<Key> = moves.iter().map(|&g| keys.moved(&self.inverse[g], &key)).collect();
        let mut steps = vec![None; self.forward.len()];
        for (g, (class, symmetry)) in moves.into_iter().zip(keys.canonicalize_each(&sources)) {
            steps[g] = Some(Step {
                source: class as u64,
                symmetry,
            });
        }
        steps
    }

    /// Whether move `g`'s guard lets it apply to the states whose key (or
    /// whose image's key) is `key`: the guarded piece is where `slot_in_key`
    /// puts the guard's slot. A guarded piece is a block of its own
    /// (`plan.rs`), so the key says, and every state of a shard has it.
    fn guard_allows(&self, space: &ReducedSpace, key: &Key, g: usize, slot_in_key: impl Fn(usize) -> u8) -> bool {
        match self.guards[g] {
            Some((piece, slot)) => key[space.fiber().block_of(piece)] == 1u64 << slot_in_key(slot),
            None => true,
        }
    }

    /// The shards `shard`'s task reads (one per legal move).
    /// Room is left for one more (the caller adds the shard itself).
    pub fn source_shards(&self, space: &ReducedSpace, shard: u64) -> Vec<u64> {
        let mut sources = Vec::with_capacity(self.forward.len() + 1);
        self.each_step(space, shard, |_, step| {
            if let Some(step) = step {
                sources.push(step.source);
            }
        });
        sources
    }

    /// A superset of the shards whose tasks read `source` (the inverse of
    /// [`Self::source_shards`]): the classes of `m(K_A)` for each move `m`.
    /// Shard `B` reads `A` under `m` when `m⁻¹(K_B) = σ(K_A)` for a symmetry
    /// `σ`, so `K_B = m σ (K_A) = σ m' (K_A)` with `m' = σ⁻¹ m σ`, again a
    /// move (every symmetry maps the move set onto itself, checked by
    /// [`crate::puzzle::symmetry::Symmetries::generate`]): `B` is the class
    /// of `m'(K_A)`. A guarded move applies to all of `A`'s states or to
    /// none (the key holds the guarded piece), so only the moves whose
    /// guard `K_A` meets are moved: the 15-puzzle has 48 guarded moves and
    /// 2–4 apply to a shard, and its sparse map of depth 21 took 403 ms of
    /// the level's 2.1 s on 2 threads canonicalising all 48.
    ///
    /// When every move's inverse is a move and none has a guard, these are
    /// exactly `source`'s own sources (the classes of `m⁻¹(K_A)` over all
    /// moves `m` are those of `m(K_A)`), which the step table holds for
    /// every shard a level computed: a sparse level's map then reads the
    /// table instead of canonicalising 24 keys per non-empty shard, which
    /// on the 4×4 Loopover took 63–76 ms at the start of depth 7 on 2
    /// threads while every task of the level waited.
    pub fn target_shards(&self, space: &ReducedSpace, source: u64) -> Vec<u64> {
        if self.targets_are_sources {
            let mut targets = self.source_shards(space, source);
            targets.sort_unstable();
            targets.dedup();
            return targets;
        }
        let keys = space.keys();
        let key = space.key(source);
        let images: Vec<Key> = (self.forward.iter().enumerate())
            .filter(|&(g, _)| self.guard_allows(space, &key, g, |slot| slot as u8))
            .map(|(_, m)| keys.moved(m, &key))
            .collect();
        let mut targets: Vec<u64> = keys
            .canonicalize_each(&images)
            .into_iter()
            .map(|c| c.0 as u64)
            .collect();
        targets.sort_unstable();
        targets.dedup();
        targets
    }

    /// Bottom-up map of move `g`: a state of the target shard, whose key
    /// is `key`, to its predecessor's stored form in the source shard.
    pub(crate) fn backward(&self, space: &ReducedSpace, key: &Key, g: usize, step: Step) -> FiberMap {
        let sym = &space.symmetries;
        let f = sym.slots[step.symmetry].after(&self.inverse[g]);
        let (map, target) = space.fiber_map(key, &f, &sym.pieces[step.symmetry], MapForm::Rows);
        debug_assert_eq!(
            target[..space.fiber().blocks()],
            space.key(step.source)[..space.fiber().blocks()]
        );
        map
    }

    /// Top-down map of move `g`, in the form `form`: a stored state of the
    /// source shard to its successor in the target shard, whose key is
    /// `key`.
    ///
    /// The source's key is the step's image of the target's, `σ(m⁻¹(K_B))`,
    /// not its representative's rank unranked: unranking was 76 ns a key
    /// on the 4×4 Loopover (`examples/canonical_keys`) and 5% of a run's
    /// CPU, once per map.
    pub(crate) fn forward_map(&self, space: &ReducedSpace, key: &Key, g: usize, step: Step, form: MapForm) -> FiberMap {
        let keys = space.keys();
        let source_key = keys.apply(step.symmetry, &keys.moved(&self.inverse[g], key));
        debug_assert_eq!(
            source_key[..space.fiber().blocks()],
            space.key(step.source)[..space.fiber().blocks()]
        );
        let f = self.forward[g].after(&self.slot_inverses[step.symmetry]);
        let g_pieces = &self.piece_inverses[step.symmetry];
        let (map, target) = space.fiber_map(&source_key, &f, g_pieces, form);
        debug_assert_eq!(target[..space.fiber().blocks()], key[..space.fiber().blocks()]);
        map
    }
}
