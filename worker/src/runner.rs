//! Runs one task `(from_level d, shard B)` from files: loads and verifies
//! the inputs from the checkpoint directory (caching decompressed shards in
//! scratch), runs the kernel, and writes `F_{d+1}(B)` atomically.

use cayley_shared::bits::{Plane, PlaneMut};
use cayley_shared::engine::{SearchContext, TaskBits};
use cayley_shared::format::{read_frontier, write_frontier, FormatError, FrontierId};
use cayley_shared::job::Job;
use cayley_shared::manifest::CheckpointDir;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Why a task failed.
#[derive(Debug)]
pub enum TaskError {
    /// The output could not be written for lack of space.
    DiskFull(String),
    /// An input file is missing or fails validation.
    CorruptInput { level: u32, shard: u64, message: String },
    /// The checkpoint directory cannot be read from here.
    Unreadable(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::DiskFull(m) | TaskError::Unreadable(m) | TaskError::Other(m) => f.write_str(m),
            TaskError::CorruptInput { message, .. } => f.write_str(message),
        }
    }
}

/// What a finished task reports.
#[derive(Clone, Copy, Debug)]
pub struct TaskResult {
    pub count: u64,
    pub evaluations: u64,
    pub file_bytes: u64,
    pub seconds: f64,
}

/// A computed task whose output file is not written yet.
pub struct ComputedTask {
    level_dir: PathBuf,
    target: PathBuf,
    id: FrontierId,
    plane: Arc<Plane>,
    count: u64,
    evaluations: u64,
    started: Instant,
}

impl ComputedTask {
    /// Compresses and writes the output file atomically.
    pub fn write(self) -> Result<TaskResult, TaskError> {
        std::fs::create_dir_all(&self.level_dir)
            .map_err(|e| TaskError::Unreadable(format!("cannot create {}: {}", self.level_dir.display(), e)))?;
        let (_, file_bytes) = write_frontier(&self.target, self.id, self.plane.words()).map_err(|e| {
            if e.is_disk_full() {
                TaskError::DiskFull(e.to_string())
            } else {
                TaskError::Other(e.to_string())
            }
        })?;
        Ok(TaskResult {
            count: self.count,
            evaluations: self.evaluations,
            file_bytes,
            seconds: self.started.elapsed().as_secs_f64(),
        })
    }
}

/// Computes tasks of one job on this machine.
pub struct TaskRunner {
    ctx: SearchContext,
    checkpoint: CheckpointDir,
    scratch: PathBuf,
    fingerprint: u64,
    cache: HashMap<(u32, u64), Arc<Plane>>,
    pool: rayon::ThreadPool,
}

impl TaskRunner {
    /// Prepares tables for `job`; level files are read from `checkpoint` and
    /// decompressed into `scratch` (a directory this runner owns).
    pub fn new(job: Job, checkpoint: &Path, scratch: &Path, threads: usize) -> anyhow::Result<TaskRunner> {
        std::fs::create_dir_all(scratch)?;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
        let fingerprint = job.fingerprint();
        let ctx = pool.install(|| SearchContext::new(job));
        Ok(TaskRunner {
            ctx,
            checkpoint: CheckpointDir::existing(checkpoint),
            scratch: scratch.to_path_buf(),
            fingerprint,
            cache: HashMap::new(),
            pool,
        })
    }

    fn id(&self, level: u32, shard: u64) -> FrontierId {
        FrontierId {
            fingerprint: self.fingerprint,
            level,
            shard,
            bits: self.ctx.job.space.shard_words() as u64 * 64,
        }
    }

    fn scratch_path(&self, level: u32, shard: u64) -> PathBuf {
        self.scratch.join(format!("L{:04}-S{:08}.bits", level, shard))
    }

    /// Makes sure `(level, shard)` is decompressed and verified in the cache.
    fn load(&mut self, level: u32, shard: u64) -> Result<(), TaskError> {
        if self.cache.contains_key(&(level, shard)) {
            return Ok(());
        }
        let path = self.checkpoint.frontier_path(level, shard);
        if !self.checkpoint.root().is_dir() {
            return Err(TaskError::Unreadable(format!(
                "checkpoint directory {} is not readable from this worker (on a cluster it must be a shared filesystem mounted at the same path, or pass --checkpoint-dir)",
                self.checkpoint.root().display()
            )));
        }
        let scratch = self.scratch_path(level, shard);
        let mut plane =
            PlaneMut::create(&scratch, self.ctx.job.space.shard_words()).map_err(|e| scratch_error(&scratch, e))?;
        read_frontier(&path, &self.id(level, shard), plane.words_mut())
            .map_err(|e| input_error(level, shard, &path, e))?;
        let plane = freeze_unlinked(plane, &scratch)?;
        self.cache.insert((level, shard), Arc::new(plane));
        Ok(())
    }

    /// `F_0(shard) ∪ … ∪ F_{below-1}(shard)`, read level by level into
    /// memory (no scratch file: most of these levels are read only here).
    fn union_of_levels(&mut self, below: u32, shard: u64) -> Result<Vec<u64>, TaskError> {
        let words = self.ctx.job.space.shard_words();
        let mut union = vec![0u64; words];
        let mut buffer = vec![0u64; words];
        for level in 0..below {
            let bits = match self.cache.get(&(level, shard)) {
                Some(plane) => plane.words(),
                None => {
                    let path = self.checkpoint.frontier_path(level, shard);
                    read_frontier(&path, &self.id(level, shard), &mut buffer)
                        .map_err(|e| input_error(level, shard, &path, e))?;
                    &buffer[..]
                }
            };
            union.iter_mut().zip(bits).for_each(|(u, w)| *u |= w);
        }
        Ok(union)
    }

    /// Computes `F_{from_level+1}(shard)` into scratch. `on_block` gets the
    /// states each block found. The result still has to be written with
    /// [`ComputedTask::write`], which can overlap the next computation.
    pub fn compute(
        &mut self,
        from_level: u32,
        shard: u64,
        on_block: &(dyn Fn(u64) + Sync),
    ) -> Result<ComputedTask, TaskError> {
        let started = Instant::now();
        // Levels before from_level - 1 are never read again.
        self.cache.retain(|&(level, _), _| level + 1 >= from_level);
        for s in self.ctx.source_shards(shard) {
            self.load(from_level, s)?;
        }
        if from_level > 0 {
            self.load(from_level - 1, shard)?;
        }
        // A directed graph can reach a state again at any later depth, so
        // "seen" is every earlier level, not just the one before.
        let earlier = if self.ctx.job.directed && from_level > 1 {
            Some(self.union_of_levels(from_level, shard)?)
        } else {
            None
        };
        let space = &self.ctx.job.space;
        let out_scratch = self.scratch_path(from_level + 1, shard);
        let mut out =
            PlaneMut::create(&out_scratch, space.shard_words()).map_err(|e| scratch_error(&out_scratch, e))?;
        let zeros;
        let previous = if let Some(union) = &earlier {
            &union[..]
        } else if from_level > 0 {
            self.cache[&(from_level - 1, shard)].words()
        } else {
            zeros = vec![0u64; space.shard_words()];
            &zeros[..]
        };
        let bits = TaskBits {
            frontier: (0..space.shards())
                .map(|s| self.cache.get(&(from_level, s)).map_or(&[][..], |p| p.words()))
                .collect(),
            previous,
            current: self.cache[&(from_level, shard)].words(),
        };
        let loaded = started.elapsed().as_secs_f64();
        let stats = self
            .pool
            .install(|| self.ctx.expand(shard, &bits, out.words_mut(), on_block));
        tracing::debug!(
            "task ({}, {}): inputs {:.3} s, kernel {:.3} s",
            from_level,
            shard,
            loaded,
            started.elapsed().as_secs_f64() - loaded
        );
        let plane = Arc::new(freeze_unlinked(out, &out_scratch)?);
        self.cache.insert((from_level + 1, shard), plane.clone());
        Ok(ComputedTask {
            level_dir: self.checkpoint.level_dir(from_level + 1),
            target: self.checkpoint.frontier_path(from_level + 1, shard),
            id: self.id(from_level + 1, shard),
            plane,
            count: stats.found,
            evaluations: stats.evaluations,
            started,
        })
    }

    /// Units of progress (blocks) in one task.
    pub fn blocks_per_task(&self) -> u64 {
        self.ctx.job.space.units_per_shard()
    }
}

/// A level file that cannot be read as an input: missing or damaged files
/// are reported as corrupt inputs (the coordinator recomputes them).
fn input_error(level: u32, shard: u64, path: &Path, e: FormatError) -> TaskError {
    match e {
        FormatError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            TaskError::CorruptInput {
                level,
                shard,
                message: format!("{}: missing", path.display()),
            }
        }
        e if e.is_corruption() || matches!(e, FormatError::Io { .. }) => TaskError::CorruptInput {
            level,
            shard,
            message: e.to_string(),
        },
        e => TaskError::Other(e.to_string()),
    }
}

/// Freezes a scratch plane and unlinks its file: the mapping keeps the data
/// alive exactly as long as the cache (or a pending write) holds it, and the
/// disk space is returned when it is dropped.
fn freeze_unlinked(plane: PlaneMut, path: &Path) -> Result<Plane, TaskError> {
    let plane = plane.freeze().map_err(|e| scratch_error(path, e))?;
    let _ = std::fs::remove_file(path);
    Ok(plane)
}

fn scratch_error(path: &Path, e: std::io::Error) -> TaskError {
    if e.raw_os_error() == Some(28) {
        TaskError::DiskFull(format!("{}: scratch disk full", path.display()))
    } else {
        TaskError::Other(format!("{}: {}", path.display(), e))
    }
}
