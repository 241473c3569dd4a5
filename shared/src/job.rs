//! A job: a puzzle with its group order and shard plan, and what running it
//! will cost.

use crate::codec::{Codec, CodecInput};
use crate::group::{puzzle_group_order, tuple_orbit_size};
use crate::layout::{Layout, LayoutError, DEFAULT_LOW_PIECES, TARGET_SHARD_BYTES};
use crate::lowtable::table_bytes;
use crate::puzzle::Puzzle;
use crate::space::Space;
use serde::Serialize;
use std::path::Path;

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
}

/// Memory and disk a search needs.
#[derive(Clone, Debug, Serialize)]
pub struct Requirements {
    /// Bytes of one level's bit array.
    pub level_bytes: u128,
    /// Bytes of the low table.
    pub table_bytes: u64,
    /// Bytes of the cached transitions (0 when they are rebuilt per task).
    pub transition_bytes: u64,
    /// Resident memory of a single-machine run: three mapped levels plus tables.
    pub memory_bytes: u128,
    /// Scratch disk for the three live levels; every earlier level kept adds
    /// at most one level's bytes.
    pub disk_bytes: u128,
    /// Number of shards.
    pub shards: u128,
}

impl Job {
    /// Plans a job; fails when the puzzle cannot be ranked or sharded.
    pub fn new(puzzle: Puzzle, shard_pieces: Option<usize>) -> anyhow::Result<Job> {
        let space = match &puzzle.coding {
            None => Space::Blocks(plan_blocks(&puzzle, shard_pieces)?),
            Some(_) => Space::Coded(plan_codec(&puzzle, shard_pieces)?),
        };
        let group_order = puzzle_group_order(&puzzle).to_u128().unwrap_or(u128::MAX);
        let reachable_states = match &puzzle.coding {
            None => Some(puzzle.reachable_states.unwrap_or(group_order)),
            Some(_) => coded_reachable(&puzzle, group_order),
        };
        Ok(Job {
            directed: !puzzle.is_undirected(),
            puzzle,
            space,
            group_order,
            reachable_states,
        })
    }

    /// Hash of everything that determines the contents of the level files:
    /// puzzle, metric, generators and shard plan.
    pub fn fingerprint(&self) -> u64 {
        let mut text = match &self.space {
            Space::Blocks(l) => format!(
                "cayley-job|{}|{}|{}|{}|{}|{}|",
                self.puzzle.spec, self.puzzle.metric, l.pieces, l.even, l.shard_pieces, l.low_pieces
            ),
            Space::Coded(c) => format!(
                "cayley-job|{}|{}|coded|{:?}|{}|{}|",
                self.puzzle.spec,
                self.puzzle.metric,
                self.puzzle.solved,
                c.shard_classes,
                c.states()
            ),
        };
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

    /// The reachable state count for people: a number, or `unknown`.
    pub fn reachable_text(&self) -> String {
        self.reachable_states.map_or("unknown".into(), |r| r.to_string())
    }

    /// Memory and disk estimates.
    pub fn requirements(&self) -> Requirements {
        let level = self.space.level_bytes();
        let (table, cached) = match &self.space {
            Space::Blocks(l) => {
                let transitions = l.blocks() * self.puzzle.moves.len() as u64 * 16;
                let cached = if transitions <= TRANSITION_CACHE_BYTES {
                    transitions
                } else {
                    0
                };
                (table_bytes(l.low_pieces), cached)
            }
            Space::Coded(_) => (0, 0),
        };
        Requirements {
            level_bytes: level,
            table_bytes: table,
            transition_bytes: cached,
            memory_bytes: 3 * level + table as u128 + cached as u128,
            disk_bytes: 3 * level,
            shards: self.space.shards() as u128,
        }
    }

    /// Refuses, before anything is allocated, a single-machine run this
    /// machine cannot hold.
    pub fn check_fits_here(&self, scratch: &Path) -> anyhow::Result<()> {
        let req = self.requirements();
        let memory = total_memory_bytes();
        let disk = fs4::available_space(scratch).ok();
        let too_much_memory = memory.is_some_and(|m| req.memory_bytes > m as u128);
        let too_much_disk = disk.is_some_and(|d| req.disk_bytes > d as u128);
        if too_much_memory || too_much_disk {
            anyhow::bail!(
                "'{}' is too large for this machine: {} states in {} shards need about {} of memory and {} of scratch disk ({} and {} available); run it on a cluster with `cayley serve`",
                self.puzzle.spec,
                self.space.states(),
                req.shards,
                human_bytes(req.memory_bytes),
                human_bytes(req.disk_bytes),
                memory.map_or("unknown".into(), |m| human_bytes(m as u128)),
                disk.map_or("unknown".into(), |d| human_bytes(d as u128)),
            );
        }
        Ok(())
    }
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
    if puzzle.slots > crate::rank::MAX_RANKED_POINTS {
        // Refused before planning: n! overflows u128 beyond 34 pieces.
        return Err(oversize());
    }
    Layout::plan(puzzle.slots, even, guarded.len(), shard_pieces).map_err(|e| match e {
        LayoutError::TooManyPieces { .. } => oversize(),
        other => anyhow::anyhow!(other),
    })
}

/// The codec of a puzzle with identical or oriented pieces.
fn plan_codec(puzzle: &Puzzle, shard_pieces: Option<usize>) -> anyhow::Result<Codec> {
    let coding = puzzle.coding.as_ref().expect("a coded puzzle");
    let n = puzzle.slots;
    let input = CodecInput {
        solved_cells: &puzzle.solved[..n],
        solved_twists: &puzzle.solved[n..],
        modulus: &coding.modulus,
        wild: &coding.wild,
        moves: puzzle.moves.iter().map(|m| (m.perm.images(), &m.twist[..])).collect(),
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
        let orbit = crate::group::orbit_of(n, &generators, slot);
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
        crate::rank::MAX_RANKED_POINTS,
        DEFAULT_LOW_PIECES
    )
}

/// Total physical memory from `/proc/meminfo`, when readable.
pub fn total_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `1.5 GiB`-style sizes.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 9] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{} B", bytes)
    } else {
        format!("{:.1} {}", value, UNITS[unit])
    }
}
