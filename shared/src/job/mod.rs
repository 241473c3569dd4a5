//! Stage 3, the job: a puzzle with its ranking, its group order and its
//! chunking, fixed when the job starts and stored with its checkpoint.
//! Every later stage (kernel, files, search) works on a [`Job`].
//!
//! - [`chunking`]: which shards one task computes and one chunk file holds.

pub mod chunking;

use crate::job::chunking::Chunking;
use crate::puzzle::group::{puzzle_group_order, tuple_orbit_size};
use crate::puzzle::Puzzle;
use crate::space::codec::{Codec, CodecInput};
use crate::space::layout::{Layout, LayoutError, DEFAULT_LOW_PIECES, TARGET_SHARD_BYTES};
use crate::space::oriented::OrientedSpace;
use crate::space::reduced::{ReducedSpace, FOUND_FAST_ANYWAY};
use crate::space::Space;
use crate::units::human_bytes;

/// Transition tables are kept across levels while they fit in this budget.
pub const TRANSITION_CACHE_BYTES: u64 = 256 << 20;

/// A puzzle ready to search.
#[derive(Clone, Debug)]
pub struct Job {
    pub puzzle: Puzzle,
    pub space: Space,
    /// Order of the group the moves generate (Schreier–Sims).
    pub group_order: u128,
    /// States a complete search must find: the group order, unless the
    /// family says otherwise (see [`Puzzle::reachable_states`]), or the
    /// coset count of a partial puzzle. `None` when no independent count is
    /// known (identical pieces with orientation, tracked sliding puzzles):
    /// the search then ends at the first empty level.
    pub reachable_states: Option<u128>,
    /// True when some move's inverse is not a move: BFS then needs every
    /// earlier level as "seen", and words are built from solved (a state
    /// need not be solvable back along the arrows).
    pub directed: bool,
    /// How each level's shards are grouped into tasks and files.
    pub chunking: Chunking,
    /// Why a puzzle with symmetries is searched without reduction (none
    /// when it is reduced, or has no symmetries).
    pub symmetry_note: Option<String>,
    /// Shard, word and bit of the solved state, found once: every read of
    /// level 0 asks, and on a reduced space finding it costs a least image
    /// under every symmetry (all of them fix the solved arrangement). On
    /// the 3×3×3's edges asking afresh took 40 % of depth 1's two minutes.
    solved_at: (u64, usize, u32),
}

impl Job {
    /// Plans a job; fails when the puzzle cannot be ranked or sharded.
    /// Puzzles of distinct pieces with symmetries are reduced by them when
    /// that pays (see [`crate::space::reduced`]); `--shard-pieces` then does not apply.
    pub fn new(puzzle: Puzzle, shard_pieces: Option<usize>) -> anyhow::Result<Job> {
        let mut symmetry_note = None;
        let reduced = match &puzzle.coding {
            None => match ReducedSpace::plan(&puzzle, puzzle.all_moves_even()) {
                Ok(r) => r,
                Err(why) => {
                    symmetry_note = Some(why);
                    None
                }
            },
            Some(_) => None,
        };
        let group_order = puzzle_group_order(&puzzle).to_u128().unwrap_or(u128::MAX);
        let (puzzle, reduced) = if ranked_by_group(&puzzle, group_order, reduced.as_ref(), shard_pieces) {
            // Found symmetries that no reduced layout could use are still
            // named, with what is used instead (the 3×3×3's corner and
            // edge permutations: no partition of its 20 pieces works).
            symmetry_note = symmetry_note.map(|why| format!("{}; the puzzle is ranked by its group instead", why));
            (puzzle.as_coded(), None)
        } else {
            (puzzle, reduced)
        };
        let reachable_states = match &puzzle.coding {
            None => Some(puzzle.reachable_states.unwrap_or(group_order)),
            Some(_) => coded_reachable(&puzzle, group_order),
        };
        let space = match (&puzzle.coding, reduced) {
            (None, Some(r)) => Space::Reduced(Box::new(r)),
            (None, None) => Space::Blocks(plan_blocks(&puzzle, shard_pieces)?),
            (Some(_), _) => match plan_oriented(&puzzle, shard_pieces, group_order) {
                Ok(Some(space)) => Space::Oriented(Box::new(space)),
                Ok(None) => Space::Coded(plan_codec(&puzzle, shard_pieces, group_order)?),
                Err(why) => {
                    symmetry_note = Some(why);
                    Space::Coded(plan_codec(&puzzle, shard_pieces, group_order)?)
                }
            },
        };
        // A group ranking numbers exactly the positions (with identical
        // pieces, `|G| / |L|` blocks of the `|L| / |S|` states of the
        // tail's orbit), so the search's total is checked against it.
        let reachable_states = reachable_states.or(match &space {
            Space::Coded(c) if c.is_group_ranked() => Some(c.states()),
            _ => None,
        });
        let solved_at = space.locate(&puzzle.solved);
        Ok(Job {
            solved_at,
            directed: !puzzle.is_undirected(),
            chunking: Chunking::plan(space.shards(), space.shard_bytes(), None),
            puzzle,
            space,
            group_order,
            reachable_states,
            symmetry_note,
        })
    }

    /// The job a checkpoint or a coordinator recorded as `shard_pieces`,
    /// `per_chunk` and `fingerprint`, rebuilt: the plan with those shard
    /// pieces, or else the automatic one, whichever has the fingerprint
    /// (the first when neither has: the caller names the mismatch).
    ///
    /// Why both: a puzzle ranked by its group records its codec's shard
    /// classes where a block plan records pieces, and the number given
    /// back as `--shard-pieces` asks for blocks when blocks can be planned.
    /// A `perm:` file of a group smaller than its symmetric group (order
    /// 168 on 7 points) was ranked by its group when run, and planned as
    /// blocks, another job, when resumed or joined by a remote worker.
    pub fn recorded(puzzle: Puzzle, shard_pieces: usize, per_chunk: u64, fingerprint: u64) -> anyhow::Result<Job> {
        let given = Job::new(puzzle.clone(), Some(shard_pieces))?.with_chunk_shards(Some(per_chunk));
        if given.fingerprint() == fingerprint {
            return Ok(given);
        }
        match Job::new(puzzle, None) {
            Ok(automatic) if automatic.fingerprint() == fingerprint => Ok(automatic.with_chunk_shards(Some(per_chunk))),
            _ => Ok(given),
        }
    }

    /// The same job with `per_chunk` shards per task (instead of the
    /// automatic choice); used to rebuild a recorded plan exactly.
    pub fn with_chunk_shards(mut self, per_chunk: Option<u64>) -> Job {
        self.chunking = Chunking::plan(self.space.shards(), self.space.shard_bytes(), per_chunk);
        self
    }

    /// Hash of everything that determines the contents of the level files:
    /// puzzle, metric, generators and shard plan.
    pub fn fingerprint(&self) -> u64 {
        let mut text = match &self.space {
            Space::Blocks(l) => format!(
                "cayley-job|{}|{}|{}|{}|{}|{}|{}",
                self.puzzle.spec,
                self.puzzle.metric,
                l.pieces,
                l.even,
                l.shard_pieces,
                l.low_pieces,
                l.parity
                    .map_or(String::new(), |r| format!("parity={}:{:x}|", r.piece, r.odd_slots))
            ),
            // The ranking's description and block size: two rankings of
            // one space number its states differently.
            Space::Coded(c) => format!(
                "cayley-job|{}|{}|coded{}|{:?}|{}|{}|{}|{}|",
                self.puzzle.spec,
                self.puzzle.metric,
                if c.is_group_ranked() { "-group" } else { "" },
                self.puzzle.solved,
                c.shard_classes,
                c.states(),
                c.describe(),
                c.low().states()
            ),
            Space::Reduced(r) => format!(
                "cayley-job|{}|{}|reduced|{:?}|{}|{}|{}",
                self.puzzle.spec,
                self.puzzle.metric,
                r.blocks(),
                r.symmetries.order(),
                r.shards(),
                r.layout_marks()
            ),
            Space::Oriented(o) => format!(
                "cayley-job|{}|{}|oriented|{:?}|{}|{}|{}|{}|",
                self.puzzle.spec,
                self.puzzle.metric,
                self.puzzle.solved,
                o.order(),
                o.classes(),
                o.block_states(),
                o.shards()
            ),
        };
        text.push_str(&format!("chunk={}|", self.chunking.per_chunk));
        for m in &self.puzzle.moves {
            text.push_str(&format!(
                "{}={:?}@{:?}~{:?};",
                m.name,
                m.perm.images(),
                m.guard.map(|g| (g.piece, g.slot)),
                m.twist
            ));
        }
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// The shard holding the solved state (every other shard of level 0 is
    /// empty).
    pub fn solved_shard(&self) -> u64 {
        self.solved_at.0
    }

    /// `F_0` of `shard` into `out`: the solved state alone. Level 0 is never
    /// stored; every reader makes it from the job.
    pub fn level_zero(&self, shard: u64, out: &mut [u64]) {
        out.fill(0);
        let (solved_shard, word, bit) = self.solved_at;
        if shard == solved_shard {
            out[word] |= 1u64 << bit;
        }
    }

    /// The reachable state count for people: a number, or `unknown`.
    pub fn reachable_text(&self) -> String {
        self.reachable_states.map_or("unknown".into(), |r| r.to_string())
    }
}

/// True when a plain puzzle is better ranked by its group (as a coded
/// puzzle of distinct pieces, `space/codec/grouped.rs`) than by the block
/// layout, which ranks all `n!` (or `n!/2`) permutations: when the group
/// is less than half of those (M24 on 24 points: 2.4·10⁸ of 6.2·10²³; the
/// pyramorphix: 96 of 20,160), unless
/// - the puzzle's own symmetries (declared, or the family's) reduce it, or
///   found ones store fewer bits than the group has elements;
/// - `--shard-pieces` asks for a block layout's shard key that exists
///   (the chain's levels are not pieces);
/// - it is guarded (the reachable set is not a group), or the codec cannot
///   rank it (64 slots, 2⁶³ states).
fn ranked_by_group(
    puzzle: &Puzzle,
    group_order: u128,
    reduced: Option<&ReducedSpace>,
    shard_pieces: Option<usize>,
) -> bool {
    if puzzle.coding.is_some()
        || !puzzle.guarded_pieces().is_empty()
        || puzzle.reachable_states.is_some()
        || puzzle.slots > crate::space::codec::MAX_CODED_SLOTS
        || group_order >= 1 << 63
    {
        return false;
    }
    let halves = if puzzle.all_moves_even() { 2 } else { 1 };
    let permutations = (1..=puzzle.slots as u128).try_fold(1u128, |f, k| f.checked_mul(k));
    let loose = permutations.is_none_or(|p| group_order * 2 * halves < p);
    let reduction_wins = reduced.is_some_and(|r| !puzzle.symmetries.is_empty() || r.states() <= group_order);
    let asked_blocks = shard_pieces.is_some() && plan_blocks(puzzle, shard_pieces).is_ok();
    loose && !reduction_wins && !asked_blocks
}

/// Least reduction (states over stored bits) for which the oriented space
/// is used on spaces of 2¹⁶ states or more. Its kernel is faster per stored
/// bit than the coded one: the pyraminx, reduced 3.6-fold, ran in 1.36 s
/// and 100 MiB against 3.77 s and 128 MiB (docs/history.md, "The 2×2×2
/// reduced"); at 2-fold the two would be about even.
const ORIENTED_MIN_REDUCTION: u128 = 2;

/// The space of a coded puzzle of distinct oriented pieces reduced by its
/// symmetries (found by search): `Ok(None)` when it has none, or when
/// `--shard-pieces` asks for the piece layout (a recorded 0 does not: a
/// reduced job records no shard pieces); why not, when it has some that
/// cannot be used or do not pay: an [`ORIENTED_MIN_REDUCTION`]-fold
/// saving, or any on a space too small for the time to matter.
fn plan_oriented(
    puzzle: &Puzzle,
    shard_pieces: Option<usize>,
    group_order: u128,
) -> Result<Option<OrientedSpace>, String> {
    let oriented = puzzle.coding.as_ref().is_some_and(|c| c.has_orientation());
    if !oriented || shard_pieces.is_some_and(|k| k > 0) || puzzle.reduction_off() {
        return Ok(None);
    }
    // Checked before searching: the search can take a second where it
    // gives up, and most twisty puzzles have too many slots or coupled twists.
    let lattice = OrientedSpace::lattice(puzzle, group_order)
        .map_err(|why| format!("symmetries of slots and twists are not looked for: {}", why))?;
    let Ok(symmetries) = crate::puzzle::symmetry::oriented::find_oriented_symmetries(puzzle) else {
        return Ok(None);
    };
    if symmetries.order() == 1 {
        return Ok(None);
    }
    let order = symmetries.order();
    let space = OrientedSpace::plan(puzzle, symmetries, lattice)
        .map_err(|why| format!("{} symmetries of slots and twists, but {}", order, why))?;
    let stored = space.states();
    let pays = if group_order < FOUND_FAST_ANYWAY {
        stored < group_order
    } else {
        stored * ORIENTED_MIN_REDUCTION <= group_order
    };
    if !pays {
        return Err(format!(
            "{} symmetries of slots and twists would store {} bits for {} states, and below a {}-fold reduction the unreduced ranking is faster",
            order, stored, group_order, ORIENTED_MIN_REDUCTION
        ));
    }
    Ok(Some(space))
}

/// The block layout of a puzzle of distinct pieces.
fn plan_blocks(puzzle: &Puzzle, shard_pieces: Option<usize>) -> anyhow::Result<Layout> {
    let guarded = puzzle.guarded_pieces();
    if guarded.iter().enumerate().any(|(i, &p)| i != p) {
        anyhow::bail!("guarded pieces must be the first pieces of the puzzle");
    }
    let even = puzzle.all_moves_even();
    let oversize = || {
        anyhow::anyhow!(
            "'{}' cannot be searched: {}",
            puzzle.spec,
            describe_oversize(puzzle.slots, even)
        )
    };
    if puzzle.slots > crate::puzzle::perm::MAX_RANKED_POINTS {
        // Refused before planning: n! overflows u128 beyond 34 pieces.
        return Err(oversize());
    }
    let parity = crate::space::layout::ParityRule::find(puzzle);
    Layout::plan(puzzle.slots, even, parity, guarded.len(), shard_pieces).map_err(|e| match e {
        LayoutError::TooManyPieces { .. } => oversize(),
        other => anyhow::anyhow!(other),
    })
}

/// The codec of a puzzle with identical or oriented pieces.
fn plan_codec(puzzle: &Puzzle, shard_pieces: Option<usize>, group_order: u128) -> anyhow::Result<Codec> {
    let coding = puzzle.coding.as_ref().expect("a coded puzzle");
    let n = puzzle.slots;
    // Positions are the group's elements, or with identical pieces their
    // cosets, when no orientation is ignored and no move is guarded.
    let group = !coding.wild.iter().any(|&w| w) && puzzle.guarded_pieces().is_empty();
    let input = CodecInput {
        solved_cells: &puzzle.solved[..n],
        solved_twists: &puzzle.solved[n..],
        modulus: &coding.modulus,
        wild: &coding.wild,
        moves: puzzle.moves.iter().map(|m| (m.perm.images(), &m.twist[..])).collect(),
        guarded_slots: puzzle
            .moves
            .iter()
            .filter_map(|m| m.guard)
            .fold(0, |g, guard| g | 1 << guard.slot),
        group_order: group.then_some(group_order),
    };
    Codec::plan(&input, shard_pieces).map_err(|e| anyhow::anyhow!("'{}' cannot be searched: {}", puzzle.spec, e))
}

/// States reachable in a coded puzzle, when they can be counted without
/// searching: with distinct pieces, the group order (the action on
/// `(slot, twist)` points is faithful); with tracked pieces and no
/// orientation, the number of places the tracked pieces can reach together,
/// provided each orbit has at most one class of identical pieces (then the
/// tracked pieces' places determine the state).
pub fn coded_reachable(puzzle: &Puzzle, group_order: u128) -> Option<u128> {
    let coding = puzzle.coding.as_ref()?;
    let n = puzzle.slots;
    let cells = &puzzle.solved[..n];
    let size = |class: u8| cells.iter().filter(|&&c| c == class).count();
    // Pieces ignoring their orientation (`?`) make positions fewer than
    // group elements: counted by searching.
    if cells.iter().all(|&c| size(c) == 1) && coding.wild.is_empty() {
        return Some(group_order);
    }
    if coding.has_orientation() || !puzzle.guarded_pieces().is_empty() {
        return None;
    }
    let generators = puzzle.generator_perms();
    let mut shared_in_orbit = std::collections::HashMap::new();
    for slot in (0..n).filter(|&s| size(cells[s]) > 1) {
        let orbit = crate::puzzle::group::orbit_of(n, &generators, slot);
        if *shared_in_orbit.entry(orbit).or_insert(cells[slot]) != cells[slot] {
            return None;
        }
    }
    let singles: Vec<usize> = (0..n).filter(|&s| size(cells[s]) == 1).collect();
    Some(tuple_orbit_size(n, &generators, &singles))
}

/// Explains why a puzzle with too many pieces cannot be ranked, with the
/// size of the space it would have.
fn describe_oversize(pieces: usize, even: bool) -> String {
    // In floating point: 64 pieces (8×8 Loopover) have 64! > u128::MAX states.
    let states = (1..=pieces).map(|k| k as f64).product::<f64>() / if even { 2.0 } else { 1.0 };
    let level = states / 8.0;
    let shards = (level / TARGET_SHARD_BYTES as f64).ceil();
    format!(
        "{:.3e} states would need {} per level ({:.3e} shards of {}), and ranking supports at most {} pieces (limit of {} low pieces per block)",
        states,
        if level < 1e27 {
            human_bytes(level as u128)
        } else {
            format!("{:.3e} B", level)
        },
        shards,
        human_bytes(TARGET_SHARD_BYTES),
        crate::puzzle::perm::MAX_RANKED_POINTS,
        DEFAULT_LOW_PIECES
    )
}
