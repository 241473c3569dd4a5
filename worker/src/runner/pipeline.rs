//! One task on every thread of the worker's pool, with no barrier between
//! its shards.
//!
//! The task's target shards are cut into **items**: each computed shard
//! with the run of shards before it that the level's sparse map shows
//! gaining nothing (a trailing run may stand alone). Every thread claims
//! the next item, fetches its shard's inputs, runs the kernel, compresses
//! the output and settles the cache on its own, then hands the output to
//! the task's file, which takes outputs in shard order: whichever thread
//! finds the next one ready writes every ready one in order.
//!
//! Why: before, a task ran batches of shards, with the fetching, writing
//! and settling of each batch on one thread while the others waited, and a
//! barrier at each batch's slowest kernel. On the 4×4 Loopover's depth 7
//! two threads were no faster than one (30.5 against 30.7 s).
//!
//! Memory: outputs not yet written hold their slots; a task's items in
//! flight (claimed, not yet written) are at most its window, which the
//! budget counts as it counted batches. Nothing here waits: a thread that
//! finds the window full ends its loop, and whoever writes items starts
//! loops again where the window has room. A wait would deadlock: rayon
//! runs stolen jobs (another loop, another task) on top of a thread's
//! suspended item, so the item holding the window could be below the
//! waiting frame on the same stack.

use super::shard::{expand, prepare};
use super::{level::LevelView, TaskError, TaskRunner};
use crate::cache::{Bits, CacheStats};
use cayley_shared::files::format::{ChunkWriter, PreparedShard};
use cayley_shared::kernel::task::TaskStats;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// A run of a task's shards ending in the one computed shard (if any).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Item {
    /// Shards gaining nothing, before `shard`.
    pub skipped: Range<u64>,
    /// The shard whose kernel runs; `None` for a trailing run.
    pub shard: Option<u64>,
}

/// The items of the shards `shards`, those for which `gains_nothing` holds
/// folded into the next computed shard's item.
pub(super) fn items_of(shards: Range<u64>, gains_nothing: impl Fn(u64) -> bool) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = shards.start;
    for shard in shards.clone() {
        if !gains_nothing(shard) {
            items.push(Item {
                skipped: start..shard,
                shard: Some(shard),
            });
            start = shard + 1;
        }
    }
    if start < shards.end || items.is_empty() {
        items.push(Item {
            skipped: start..shards.end,
            shard: None,
        });
    }
    items
}

/// What threads did for one task, summed over them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Totals {
    pub kernel: TaskStats,
    pub states: u64,
    pub classes: u64,
    pub cache: CacheStats,
    /// Thread-seconds by phase.
    pub sources: f64,
    pub compute: f64,
    pub write: f64,
    pub other: f64,
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        self.kernel = self.kernel.plus(o.kernel);
        self.states += o.states;
        self.classes += o.classes;
        self.cache.lookups += o.cache.lookups;
        self.cache.hits += o.cache.hits;
        self.cache.bytes_read += o.cache.bytes_read;
        self.cache.load_seconds += o.cache.load_seconds;
        self.sources += o.sources;
        self.compute += o.compute;
        self.write += o.write;
        self.other += o.other;
    }
}

/// An item done, waiting for its turn in the file.
struct Ready {
    item: usize,
    /// The computed shard's output: `None` when it gained nothing.
    output: Option<Output>,
}

struct Output {
    shard: u64,
    /// The words, with the positions of their bits when sparse (listed on
    /// the thread that computed them, for the next level's readers).
    bits: Bits,
    prepared: PreparedShard,
}

/// The task's file and the items waiting for it.
struct Ordered {
    pending: Mutex<BTreeMap<usize, Ready>>,
    file: Mutex<File>,
}

struct File {
    writer: ChunkWriter,
    /// The next item to write.
    next: usize,
}

/// One task in progress.
pub(super) struct Task<'a> {
    runner: &'a TaskRunner,
    view: &'a LevelView,
    items: &'a [Item],
    /// Computed shards among the items.
    computed: usize,
    /// Items claimed, and written (in order) to the file.
    claimed: AtomicUsize,
    written: AtomicUsize,
    /// Items in flight at most.
    window: usize,
    /// Loops running (at most one per thread).
    loops: AtomicUsize,
    ordered: Ordered,
    totals: Mutex<Totals>,
    failure: Mutex<Option<TaskError>>,
    failed: AtomicBool,
    /// Units of progress done and the states they found.
    on_units: &'a (dyn Fn(u64, u64) + Sync),
    stop: &'a AtomicBool,
    /// Whether a next level reads this one's outputs (see
    /// [`TaskRunner::note_lease`]): kept in the cache only then.
    keep_outputs: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere fails the whole task (rayon's scope rethrows it),
    // so a poisoned lock is never read for a result.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'a> Task<'a> {
    pub fn new(
        runner: &'a TaskRunner,
        view: &'a LevelView,
        items: &'a [Item],
        writer: ChunkWriter,
        on_units: &'a (dyn Fn(u64, u64) + Sync),
        stop: &'a AtomicBool,
    ) -> Task<'a> {
        Task {
            runner,
            view,
            items,
            computed: items.iter().filter(|i| i.shard.is_some()).count(),
            claimed: AtomicUsize::new(0),
            written: AtomicUsize::new(0),
            window: runner.window.max(1),
            loops: AtomicUsize::new(0),
            ordered: Ordered {
                pending: Mutex::new(BTreeMap::new()),
                file: Mutex::new(File { writer, next: 0 }),
            },
            totals: Mutex::new(Totals::default()),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            on_units,
            stop,
            keep_outputs: runner.keeps_level(view.from_level + 1),
        }
    }

    /// Runs the task on the current pool (every thread that is free joins)
    /// and returns its file, every shard written, with the totals.
    pub fn run(self) -> Result<(ChunkWriter, Totals), TaskError> {
        rayon::scope(|s| self.start_loops(s, 0));
        if let Some(e) = lock(&self.failure).take() {
            return Err(e);
        }
        if self.stop.load(Ordering::Relaxed) {
            return Err(TaskError::Stopped);
        }
        let file = self.ordered.file.into_inner().unwrap_or_else(|e| e.into_inner());
        assert_eq!(file.next, self.items.len(), "every item written");
        Ok((file.writer, self.totals.into_inner().unwrap_or_else(|e| e.into_inner())))
    }

    /// [`Self::run`] for a chunk the level's sparse map says gains nothing
    /// (its one item a trailing run), on the calling thread: no shard is
    /// computed, so handing the task to the pool only woke threads to skip
    /// its shards. On the 4×4 Loopover's depths 2–5, where most of 309
    /// tasks a level are such chunks, rayon's wake-ups and idle yields
    /// (24,000 `sched_yield` calls) were a tenth of the CPU.
    pub fn run_gaining_nothing(self) -> Result<(ChunkWriter, Totals), TaskError> {
        assert!(
            self.computed == 0 && self.items.len() == 1,
            "a chunk gaining nothing is one trailing run"
        );
        if self.stop.load(Ordering::Relaxed) {
            return Err(TaskError::Stopped);
        }
        let mut totals = Totals::default();
        let skipped = self.items[0].skipped.clone();
        self.skip(skipped.clone(), &mut totals);
        let mut writer = self.ordered.file.into_inner().unwrap_or_else(|e| e.into_inner()).writer;
        skipped.for_each(|_| writer.push_empty());
        Ok((writer, totals))
    }

    /// Shards gaining nothing: their cache entries go, and their units of
    /// progress count as done with no state found.
    fn skip(&self, skipped: Range<u64>, totals: &mut Totals) {
        if skipped.is_empty() {
            return;
        }
        let started = Instant::now();
        let units = self.runner.ctx.job.space.units_per_shard();
        self.runner.skip(self.view.from_level, skipped.clone());
        // One call for the run: a call a unit was 3 % of the pool's time
        // on the 4×4's depths 1–6 at 1 thread.
        (self.on_units)((skipped.end - skipped.start) * units, 0);
        totals.other += started.elapsed().as_secs_f64();
    }

    /// Starts loops, one per thread at most, for the items the window has
    /// room for now beyond those `claiming` loops already running will
    /// claim, while it has room.
    ///
    /// Why not one per thread: each loop spawned wakes a sleeping thread.
    /// A write opens the window by one item, which the writing loop claims
    /// next itself, and a task of a sparse level has a few items (the 4×4
    /// Loopover's depth 5: 2,143 shards computed in 247 tasks). A run of
    /// the 4×4 to depth 8 with 16 threads on 2 cores (a test build) started
    /// 98,410 loops, 81,657 of which found nothing to claim; now 76,798
    /// and 60,431. (There, a loop waits for a core while others claim; how
    /// many find nothing on 16 cores is not measured.)
    fn start_loops<'s>(&'s self, s: &rayon::Scope<'s>, claiming: usize) {
        let threads = rayon::current_num_threads();
        let claimed = self.claimed.load(Ordering::Acquire);
        let in_flight = claimed.saturating_sub(self.written.load(Ordering::Acquire));
        let room = self.window.saturating_sub(in_flight);
        let mut waiting = self
            .items
            .len()
            .saturating_sub(claimed)
            .min(room)
            .saturating_sub(claiming);
        while waiting > 0 && self.claimable() {
            let started = self
                .loops
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < threads).then_some(n + 1));
            if started.is_err() {
                return;
            }
            s.spawn(move |s| self.work(s));
            waiting -= 1;
        }
    }

    /// True when an item is waiting and the window has room for it.
    fn claimable(&self) -> bool {
        self.room(self.claimed.load(Ordering::Acquire))
    }

    /// True when, with `claimed` items claimed, the next is waiting and
    /// the window has room for it.
    fn room(&self, claimed: usize) -> bool {
        !self.failed.load(Ordering::Relaxed)
            && !self.stop.load(Ordering::Relaxed)
            && claimed < self.items.len()
            && claimed - self.written.load(Ordering::Acquire) < self.window
    }

    /// One loop: items until none can be claimed.
    fn work<'s>(&'s self, s: &rayon::Scope<'s>) {
        let mut totals = Totals::default();
        loop {
            while let Some(i) = self.claim() {
                let levels = &self.runner.levels;
                levels.note_working(true);
                let done = self.item(i, s, &mut totals);
                levels.note_working(false);
                if let Err(e) = done {
                    self.fail(e);
                }
            }
            self.loops.fetch_sub(1, Ordering::AcqRel);
            // The window may have opened after this loop found it full but
            // before it left: go on rather than leave items to nobody.
            let back = self.claimable()
                && self
                    .loops
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                        (n < rayon::current_num_threads()).then_some(n + 1)
                    })
                    .is_ok();
            if !back {
                break;
            }
        }
        lock(&self.totals).add(&totals);
    }

    fn fail(&self, e: TaskError) {
        lock(&self.failure).get_or_insert(e);
        self.failed.store(true, Ordering::Relaxed);
    }

    /// The next item when the window has room for it; `None` when every
    /// item is claimed, the window is full, the task failed or it was
    /// asked to stop.
    fn claim(&self) -> Option<usize> {
        self.claimed
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |claimed| {
                self.room(claimed).then_some(claimed + 1)
            })
            .ok()
    }

    /// Computes item `i` and hands it to the file.
    fn item<'s>(&'s self, i: usize, s: &rayon::Scope<'s>, totals: &mut Totals) -> Result<(), TaskError> {
        let item = &self.items[i];
        self.skip(item.skipped.clone(), totals);
        let output = match item.shard {
            None => None,
            Some(shard) => self.compute(i, shard, totals)?,
        };
        self.deliver(Ready { item: i, output }, s, totals)
    }

    /// Gathers, expands, prepares and settles one shard.
    fn compute(&self, i: usize, shard: u64, totals: &mut Totals) -> Result<Option<Output>, TaskError> {
        let runner = self.runner;
        let from_level = self.view.from_level;
        let started = Instant::now();
        let sources = runner.ctx.source_shards(shard);
        let gathering = Instant::now();
        totals.sources += (gathering - started).as_secs_f64();
        let loads = totals.cache.load_seconds;
        let mut gathered = runner.gather(self.view, shard, sources, &mut totals.cache)?;
        let computing = Instant::now();
        totals.other += (computing - gathering).as_secs_f64() - (totals.cache.load_seconds - loads);
        // The last shards of a task, fewer than the threads, may spread
        // over the pool while the worker's tasks keep fewer items in hand
        // than it has threads: threads that find no item left join them.
        // (Only the last item can be a run without a computed shard, so
        // `i` computed shards come before this one.) While every thread
        // has an item, a spread shard only costs: buffers of marks ORed
        // together, threads woken, and (when its marks were atomic ORs,
        // each a full barrier) 60 % more CPU at 2 threads than at 1 on
        // `cyclic-coxeter:12`, 3 shards a task, two tasks side by side,
        // spread one in three.
        let threads = rayon::current_num_threads();
        let split = self.computed - i < threads && runner.levels.working() < threads;
        let found = expand(runner, &mut gathered, split, self.on_units);
        let preparing = Instant::now();
        totals.compute += (preparing - computing).as_secs_f64();
        let prepared = match found {
            Some((found, listed)) => {
                let (prepared, classes) = prepare(runner, shard, &gathered.output, found.found, listed)
                    .map_err(|e| TaskError::Other(format!("compressing a shard of level {}: {}", from_level + 1, e)))?;
                totals.kernel = totals.kernel.plus(found);
                totals.states += found.found * runner.ctx.job.space.weight(shard);
                totals.classes += classes;
                Some((prepared, found.found))
            }
            None => None,
        };
        let settling = Instant::now();
        totals.write += (settling - preparing).as_secs_f64();
        let words = runner.settle(from_level, gathered);
        let listing = Instant::now();
        totals.other += (listing - settling).as_secs_f64();
        let Some((mut prepared, found)) = prepared else {
            // The kernel did not run (every source empty): the output is
            // still as zeroed.
            words.release_zeroed();
            return Ok(None);
        };
        let listed = prepared.take_positions();
        let bits = Bits::with_listed_positions(words, found, runner.ctx.position_limit(), listed);
        let output = Output {
            shard,
            // A sparse output compressed is written and kept as its list:
            // the slot goes back at once (cleared), for the next shard.
            bits: if prepared.needs_words() { bits } else { bits.list_only() },
            prepared,
        };
        totals.write += listing.elapsed().as_secs_f64();
        Ok(Some(output))
    }

    /// Queues `ready` for the file and writes every item whose turn has
    /// come, unless another thread is writing (it takes this one too).
    fn deliver<'s>(&'s self, ready: Ready, s: &rayon::Scope<'s>, totals: &mut Totals) -> Result<(), TaskError> {
        lock(&self.ordered.pending).insert(ready.item, ready);
        loop {
            let Ok(mut file) = self.ordered.file.try_lock() else {
                return Ok(());
            };
            let started = Instant::now();
            let mut kept = Vec::new();
            let mut written = 0;
            let mut result = Ok(());
            while let Some(ready) = {
                let next = file.next;
                lock(&self.ordered.pending).remove(&next)
            } {
                written += 1;
                file.next += 1;
                if result.is_ok() {
                    result = self.write(&mut file.writer, ready, &mut kept);
                }
            }
            let next = file.next;
            self.written.store(next, Ordering::Release);
            drop(file);
            totals.write += started.elapsed().as_secs_f64();
            result?;
            if written > 0 {
                // The window opened: loops that left it full start again,
                // beside this thread's, which claims once this returns.
                self.start_loops(s, 1);
            }
            let started = Instant::now();
            if !kept.is_empty() {
                self.runner.keep_outputs(self.view.from_level + 1, kept);
            }
            // Within the task too, not only after it: a dense level's task
            // adds up to 130 MiB of outputs and sources. The 4×4 to depth
            // 10 under `--memory 3G` passed the budget by 85–113 MiB checked
            // only between tasks, by 52–55 MiB checked here too.
            self.runner.fit_cache_to_resident();
            totals.other += started.elapsed().as_secs_f64();
            // An item queued while this thread held the file, after it
            // looked, waits for a writer: look again.
            if !lock(&self.ordered.pending).contains_key(&next) {
                return Ok(());
            }
        }
    }

    /// Appends one item's shards to the file; outputs the next level reads
    /// go to `kept`.
    fn write(&self, writer: &mut ChunkWriter, ready: Ready, kept: &mut Vec<(u64, Bits)>) -> Result<(), TaskError> {
        let item = &self.items[ready.item];
        for _ in item.skipped.clone() {
            writer.push_empty();
        }
        match ready.output {
            Some(out) => {
                writer
                    .push_prepared(out.bits.words(), out.prepared)
                    .map_err(super::output_error)?;
                if out.bits.count() > 0 && self.keep_outputs {
                    kept.push((out.shard, out.bits));
                }
            }
            None if item.shard.is_some() => writer.push_empty(),
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
