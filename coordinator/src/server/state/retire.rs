//! Old levels retired chunk by chunk, which keeps a `last2` or `every:K`
//! checkpoint within two raw levels at its peak.
//!
//! While level `d + 1` is computed, every task reads all of `F_d` (its
//! sources), but of `F_{d-1}` (and of `F_{d-2}`, when that level was kept
//! one level longer) only the chunk it writes: those levels are the seen set
//! of the chunk's own states. So chunk `c` of them is read by nobody once
//! chunk `c` of `F_{d+1}` is recorded, and it is deleted then, not when the
//! level closes. On disk at any moment there is `F_d`, and for each chunk
//! either its old levels or its new one: two raw levels at most, where
//! closing whole levels held three (four with an older level kept).
//!
//! Three things keep this safe:
//! - A chunk's old files go only once its record is durable (the journal
//!   synced, at the latest when 1/[`RETIRE_LAG_SHARE`] of the level's
//!   chunks wait, or when the job stops, or at once for a result recorded
//!   after the stop): a resume recomputes only
//!   unrecorded chunks, and theirs are still there.
//! - Only once the level is known to hold states: an empty level ends the
//!   search without retiring anything, since the antipode walk starts from
//!   the two levels below it.
//! - Only levels the closing level would retire anyway, decided when the
//!   level starts and recorded in the manifest (`RunningLevel::retiring`),
//!   so a resumed level decides the same. A backup copy of a recorded task
//!   may then miss its seen set; its lease is already superseded, so its
//!   failure is ignored.

use super::completion::older_level_pays;
use super::JobState;

/// At most 1/`RETIRE_LAG_SHARE` of a level's chunks wait for the journal
/// sync before their old chunks go: the checkpoint's peak is two raw levels
/// and this share of one, plus the tasks in flight.
pub const RETIRE_LAG_SHARE: u64 = 16;

impl JobState {
    /// The levels that level `from_level + 1` retires chunk by chunk: level
    /// `from_level - 2` when it was kept one level longer (`older_kept`), and
    /// level `from_level - 1` unless it may be kept one level longer
    /// ([`JobState::may_keep_older`]); neither when the retention keeps it.
    pub(super) fn retiring_levels(&self, from_level: u32, older_kept: bool) -> Vec<u32> {
        let raw = self.job.space.level_bytes();
        let older = from_level.checked_sub(2).filter(|_| older_kept);
        let seen = from_level
            .checked_sub(1)
            .filter(|_| !self.may_keep_older(from_level, older));
        [older, seen]
            .into_iter()
            .flatten()
            .filter(|&level| level > 0 && !self.manifest.keeps_level(level, raw))
            .collect()
    }

    /// Whether level `from_level - 1` may stay one level longer once level
    /// `from_level + 1` closes (see `older_level_pays`): only if it could
    /// pay, whatever that level's count turns out to be, and only if it fits
    /// the two raw levels a live checkpoint is planned at: its file, level
    /// `from_level`'s and the older one still on disk take at most one raw
    /// level, leaving one for the level written. On the 4×4 Loopover MTM
    /// the older level never fits (levels 10 and 11 take 24.2 GiB against
    /// 19.3 GiB raw), so depth 13's bottom-up probes level 10's states too.
    fn may_keep_older(&self, from_level: u32, older: Option<u32>) -> bool {
        let levels = &self.manifest.levels;
        let mut counts: Vec<u128> = levels.iter().map(|l| l.count as u128).collect();
        let reachable = self.job.reachable_states;
        // The most states the level being computed can hold: every
        // condition of `older_level_pays` gets easier as it holds more.
        let most = reachable.map_or(0, |r| r.saturating_sub(counts.iter().sum()));
        counts.push(most);
        if !older_level_pays(&counts, reachable) {
            return false;
        }
        let bytes = |level: Option<u32>| {
            level
                .and_then(|l| levels.get(l as usize))
                .map_or(0, |l| l.bytes as u128)
        };
        let live = bytes(older) + bytes(from_level.checked_sub(1)) + bytes(Some(from_level));
        live <= self.job.space.level_bytes()
    }

    /// Refuses to go on when a recorded chunk of the running level, found
    /// damaged (`problem`) on resume, can no longer be recomputed because
    /// its seen set was retired once it was recorded: the user learns which
    /// file and why, and the checkpoint stays as it is.
    pub(super) fn check_recomputable(&self, chunk: u64, problem: &str) -> anyhow::Result<()> {
        let Some(running) = &self.manifest.running else {
            return Ok(());
        };
        let gone: Vec<String> = running
            .retiring
            .iter()
            .map(|&level| self.checkpoint.chunk_path(level, chunk))
            .filter(|path| !path.exists())
            .map(|path| path.display().to_string())
            .collect();
        if gone.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "{}, and it cannot be recomputed: its inputs {} were deleted once it was recorded (--keep-levels {} keeps two levels of checkpoint); restore the damaged file from a copy before resuming, or start the job again in a new checkpoint",
            problem,
            gone.join(" and "),
            self.manifest.keep_levels.name()
        )
    }

    /// Queues the old chunks of a recorded chunk of the running level, and
    /// deletes those whose record is durable.
    pub(super) fn retire_chunk(&mut self, chunk: u64) {
        if self.manifest.running.as_ref().is_none_or(|r| r.retiring.is_empty()) {
            return;
        }
        self.retire_waiting.push(chunk);
        // The journal syncs once a second; on short levels that lags a
        // whole level behind, so a sixteenth of the level's chunks waiting
        // syncs it now: at most 16 more fsyncs a level. A result recorded
        // after a stop (a task that was finishing as the job stopped)
        // syncs at once: the server's clock may not sync again before the
        // process ends, and its old chunks would stay until a resume.
        let stopped = self.phase != super::Phase::Running;
        if stopped || self.retire_waiting.len() as u64 * RETIRE_LAG_SHARE >= self.job.chunking.chunks() {
            if let Some(Err(e)) = self.journal.as_mut().map(|j| j.sync()) {
                self.stop(format!("cannot record progress: {:#}", e));
                return;
            }
        }
        self.retire_durable();
    }

    /// Deletes the old chunks of every recorded chunk of the running level
    /// once the journal holding their records is synced and the level is
    /// known to hold states. The server calls it after each journal sync,
    /// and a stop after its own.
    pub(super) fn retire_durable(&mut self) {
        let Some(running) = &self.manifest.running else {
            return;
        };
        let durable = self.journal.as_ref().is_some_and(|j| j.is_synced());
        if running.retiring.is_empty() || !durable || self.done_stored == 0 {
            return;
        }
        for chunk in self.retire_waiting.drain(..) {
            for &level in &running.retiring {
                // A file already gone (a retry after a crash) is fine.
                let _ = std::fs::remove_file(self.checkpoint.chunk_path(level, chunk));
            }
        }
    }
}
