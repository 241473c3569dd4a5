//! A job: a puzzle with its group order and shard plan, and what running it
//! will cost.

use crate::group::group_order;
use crate::layout::{Layout, LayoutError, DEFAULT_LOW_PIECES, TARGET_SHARD_BYTES};
use crate::lowtable::table_bytes;
use crate::puzzle::Puzzle;
use serde::Serialize;
use std::path::Path;

/// Transition tables are kept across levels while they fit in this budget.
pub const TRANSITION_CACHE_BYTES: u64 = 256 << 20;

/// A puzzle ready to search.
#[derive(Clone, Debug)]
pub struct Job {
    pub puzzle: Puzzle,
    pub layout: Layout,
    /// Order of the group the moves generate (Schreier–Sims).
    pub group_order: u128,
    /// States a complete search must find: the group order, unless the
    /// family says otherwise (see [`Puzzle::reachable_states`]).
    pub reachable_states: u128,
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
        if let Some(u) = &puzzle.unsupported {
            anyhow::bail!("'{}' cannot be searched yet: {}", puzzle.spec, u.reason);
        }
        let guarded = puzzle.guarded_pieces();
        if guarded.iter().enumerate().any(|(i, &p)| i != p) {
            anyhow::bail!("guarded pieces must be the first pieces of the puzzle");
        }
        if !puzzle.is_undirected() {
            anyhow::bail!(
                "'{}': directed generator sets are not supported yet (every move needs its inverse among the moves)",
                puzzle.spec
            );
        }
        let even = puzzle.all_moves_even();
        if puzzle.slots > crate::rank::MAX_RANKED_POINTS {
            // Refused before planning: n! overflows u128 beyond 34 pieces.
            anyhow::bail!(
                "'{}' cannot be searched: {}",
                puzzle.spec,
                describe_oversize(puzzle.slots, even)
            );
        }
        let layout = Layout::plan(puzzle.slots, even, guarded.len(), shard_pieces).map_err(|e| match e {
            LayoutError::TooManyPieces { .. } => anyhow::anyhow!(
                "'{}' cannot be searched: {}",
                puzzle.spec,
                describe_oversize(puzzle.slots, even)
            ),
            other => anyhow::anyhow!(other),
        })?;
        let group_order = group_order(puzzle.slots, &puzzle.generator_perms());
        let reachable_states = puzzle.reachable_states.unwrap_or(group_order);
        Ok(Job {
            puzzle,
            layout,
            group_order,
            reachable_states,
        })
    }

    /// Hash of everything that determines the contents of the level files:
    /// puzzle, metric, generators and shard plan.
    pub fn fingerprint(&self) -> u64 {
        let l = &self.layout;
        let mut text = format!(
            "cayley-job|{}|{}|{}|{}|{}|{}|",
            self.puzzle.spec, self.puzzle.metric, l.pieces, l.even, l.shard_pieces, l.low_pieces
        );
        for m in &self.puzzle.moves {
            text.push_str(&format!(
                "{}={:?}@{:?};",
                m.name,
                m.perm.images(),
                m.guard.map(|g| (g.piece, g.slot))
            ));
        }
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// Memory and disk estimates.
    pub fn requirements(&self) -> Requirements {
        let l = &self.layout;
        let level = l.level_bytes() as u128;
        let transitions = l.blocks() * self.puzzle.moves.len() as u64 * 16;
        let cached = if transitions <= TRANSITION_CACHE_BYTES {
            transitions
        } else {
            0
        };
        let table = table_bytes(l.low_pieces);
        Requirements {
            level_bytes: level,
            table_bytes: table,
            transition_bytes: cached,
            memory_bytes: 3 * level + table as u128 + cached as u128,
            disk_bytes: 3 * level,
            shards: l.shards() as u128,
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
                self.layout.states(),
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
