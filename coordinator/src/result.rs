//! The result files of a job: `result.json`, `depths.csv`, and the
//! human-readable table printed at the end of a run.

use crate::manifest::{IoTotals, Manifest};
use anyhow::Context;
use cayley_shared::job::Job;
use cayley_shared::puzzle::Puzzle;
use cayley_shared::search::antipodes::Antipode;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One antipode as written to `result.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AntipodeRecord {
    /// Piece labels slot by slot (row-major for grids).
    pub state: Vec<String>,
    /// Moves, space-separated, that take this state back to solved; for a
    /// directed graph (`directed`), the moves that build it from solved.
    pub word: String,
    /// States of this state's class under the symmetries reduced by (all
    /// at the same depth; 1 without reduction).
    #[serde(default = "one")]
    pub class_size: u64,
}

fn one() -> u64 {
    1
}

/// The contents of `result.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub puzzle: String,
    pub metric: String,
    /// Group order as a decimal string (it can exceed 64 bits).
    pub group_order: String,
    /// States reachable from solved (the group order unless the family says
    /// otherwise), as a decimal string.
    pub reachable_states: String,
    /// States counted.
    pub states: u64,
    /// The diameter (largest distance from solved) of a complete table;
    /// `null` for a partial one, which has no diameter, only a depth reached.
    pub diameter: Option<u32>,
    /// Largest depth searched (the diameter when the table is complete).
    #[serde(default)]
    pub depth_reached: u32,
    /// True when every reachable state was counted.
    pub complete: bool,
    /// States at each depth, index = depth.
    pub depths: Vec<u64>,
    /// Order of the symmetry group the search was reduced by (1: none).
    #[serde(default = "one")]
    pub symmetries: u64,
    /// Names of the symmetries that generate that group.
    #[serde(default)]
    pub symmetry_generators: Vec<String>,
    /// Classes of states under those symmetries at each depth (the reduced
    /// table; equal to `depths` without reduction).
    #[serde(default)]
    pub depths_reduced: Vec<u64>,
    /// Bits stored per depth (one per state, or per stored representative).
    #[serde(default)]
    pub depths_stored: Vec<u64>,
    pub antipodes: Vec<AntipodeRecord>,
    /// Wall seconds per level, index = depth.
    pub level_seconds: Vec<f64>,
    pub total_seconds: f64,
    pub shard_pieces: usize,
    pub shards: u64,
    pub generators: usize,
    /// True for a directed generator set: distances are lengths of words
    /// from solved, and antipode words build the state.
    #[serde(default)]
    pub directed: bool,
    /// Neighbour evaluations (table lookups) the kernel performed.
    pub evaluations: u64,
    /// Shards per chunk file (task), and chunks per level.
    pub chunk_shards: u64,
    pub chunks: u64,
    /// How each level's tasks got their inputs, index = depth (level 0 is
    /// made, not read).
    pub level_io: Vec<LevelIo>,
}

/// Input statistics of one level in `result.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LevelIo {
    /// The level's task figures as the manifest sums them (bytes read,
    /// cache lookups, worker seconds by phase, kernel directions).
    #[serde(flatten)]
    pub io: IoTotals,
    /// Fraction of input shards found in workers' memory.
    pub cache_hit_rate: f64,
    /// Neighbour evaluations of the level; compare with `cheaper_bound`.
    #[serde(default)]
    pub evaluations: u64,
    /// Bytes of the level's chunk files.
    pub file_bytes: u64,
}

impl RunResult {
    /// Assembles the result of a finished job from its manifest and the
    /// antipodes found in its level files.
    pub fn new(job: &Job, manifest: &Manifest, antipodes: &[Antipode]) -> RunResult {
        let puzzle = &job.puzzle;
        let depths: Vec<u64> = manifest.levels.iter().map(|l| l.count).collect();
        let total: u128 = depths.iter().map(|&c| c as u128).sum();
        let last = depths.len() as u32 - 1;
        // Without a known count, a level limit leaves the table open.
        let complete = match job.reachable_states {
            Some(r) => total == r,
            None => manifest.max_depth.is_none_or(|m| last < m),
        };
        RunResult {
            puzzle: puzzle.spec.clone(),
            metric: puzzle.metric.name().to_string(),
            group_order: job.group_order.to_string(),
            reachable_states: job.reachable_text(),
            states: depths.iter().sum(),
            diameter: complete.then_some(last),
            depth_reached: last,
            complete,
            depths,
            symmetries: job.space.symmetry_order() as u64,
            symmetry_generators: match &job.space {
                cayley_shared::space::Space::Reduced(r) => r.symmetries.generators.clone(),
                _ => Vec::new(),
            },
            depths_reduced: manifest.levels.iter().map(|l| l.classes).collect(),
            depths_stored: manifest.levels.iter().map(|l| l.stored).collect(),
            antipodes: antipodes
                .iter()
                .map(|a| AntipodeRecord {
                    class_size: job.space.class_of(&a.state).len() as u64,
                    state: puzzle.slot_contents(&a.state),
                    word: a
                        .solution
                        .iter()
                        .map(|&i| puzzle.moves[i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                })
                .collect(),
            level_seconds: manifest.levels.iter().map(|l| l.seconds).collect(),
            total_seconds: manifest.levels.iter().map(|l| l.seconds).sum(),
            shard_pieces: job.space.shard_pieces(),
            shards: job.space.shards(),
            generators: puzzle.moves.len(),
            directed: job.directed,
            evaluations: manifest.levels.iter().map(|l| l.evaluations).sum(),
            chunk_shards: job.chunking.per_chunk,
            chunks: job.chunking.chunks(),
            level_io: manifest
                .levels
                .iter()
                .map(|l| LevelIo {
                    io: l.io,
                    cache_hit_rate: l.io.hit_rate(),
                    evaluations: l.evaluations,
                    file_bytes: l.bytes,
                })
                .collect(),
        }
    }

    /// Writes `result.json`, `depths.csv`, `depths.svg` and `antipodes.txt`
    /// into `dir` (created if needed).
    pub fn write(&self, dir: &Path, puzzle: &Puzzle) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create output directory {}", dir.display()))?;
        let json = serde_json::to_string_pretty(self)?;
        write_atomic(&dir.join("result.json"), json.as_bytes())?;
        let mut csv = String::from("depth,count\n");
        for (d, c) in self.depths.iter().enumerate() {
            let _ = writeln!(csv, "{},{}", d, c);
        }
        write_atomic(&dir.join("depths.csv"), csv.as_bytes())?;
        let reach = match self.diameter {
            Some(d) => format!("diameter {}", d),
            None => format!("partial: depth {} reached", self.depth_reached),
        };
        let title = format!("{} ({}): {} states, {}", self.puzzle, self.metric, self.states, reach);
        let svg = crate::svg::depth_histogram(&title, &self.depths);
        write_atomic(&dir.join("depths.svg"), svg.as_bytes())?;
        write_atomic(&dir.join("antipodes.txt"), self.antipodes_text(puzzle).as_bytes())
    }

    /// The antipodes as grids with their solving words.
    pub fn antipodes_text(&self, puzzle: &Puzzle) -> String {
        let mut out = String::new();
        let last = self.depths.last().copied().unwrap_or(0);
        let classes = match self.depths_reduced.last() {
            Some(&c) if self.symmetries > 1 => format!(" in {} classes of symmetric states", c),
            _ => String::new(),
        };
        let listed = if self.symmetries > 1 {
            "classes, one state each"
        } else {
            "states"
        };
        if self.antipodes.is_empty() {
            // `--antipodes 0`, or a deepest level that could not be read
            // (the run's log says which): not "too far apart".
            let _ = writeln!(
                out,
                "{} ({}): {} state(s){} at depth {}; none listed.",
                self.puzzle, self.metric, last, classes, self.depth_reached
            );
            return out;
        }
        let _ = writeln!(
            out,
            "{} ({}): {} state(s){} at depth {}; the first {} {} in rank order, {}.\n",
            self.puzzle,
            self.metric,
            last,
            classes,
            self.depth_reached,
            self.antipodes.len(),
            listed,
            match (self.depth_reached > 0 && self.antipodes.iter().all(|a| a.word.is_empty()), self.directed) {
                (true, _) => "without words (the levels kept are too far apart for the walk back: --keep-levels all or every:K give words)",
                (false, true) => "each with a shortest word from solved (directed generators)",
                (false, false) => "each with a shortest solving word",
            }
        );
        let label = if self.directed { "from solved" } else { "solve" };
        for (i, a) in self.antipodes.iter().enumerate() {
            if a.class_size > 1 {
                let _ = writeln!(
                    out,
                    "#{} (stands for its class of {} symmetric states, all at this depth)",
                    i + 1,
                    a.class_size
                );
            } else {
                let _ = writeln!(out, "#{}", i + 1);
            }
            let _ = writeln!(out, "{}", puzzle.render_slots(&a.state));
            let word = if a.word.is_empty() && self.depth_reached > 0 {
                "(not available: the levels kept are too far apart)"
            } else if a.word.is_empty() {
                "(solved)"
            } else {
                &a.word
            };
            let _ = writeln!(out, "{}: {}\n", label, word);
        }
        out
    }

    /// The depth table as aligned text, with cumulative counts.
    /// With symmetry reduction, a column of classes follows.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let reduced = self.symmetries > 1;
        let _ = write!(out, "{:>5}  {:>20}  {:>20}", "depth", "states", "cumulative");
        if reduced {
            let _ = write!(out, "  {:>20}", format!("classes (/{})", self.symmetries));
        }
        out.push('\n');
        let mut sum = 0u64;
        for (d, &c) in self.depths.iter().enumerate() {
            sum += c;
            let _ = write!(out, "{:>5}  {:>20}  {:>20}", d, c, sum);
            if let Some(classes) = self.depths_reduced.get(d).filter(|_| reduced) {
                let _ = write!(out, "  {:>20}", classes);
            }
            out.push('\n');
        }
        out
    }
}

/// Writes a file through a temporary name so readers never see half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", path.display()))
}
