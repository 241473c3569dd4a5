//! Progress display: one bar per level on a terminal, one line per level
//! otherwise.

use cayley_shared::engine::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Shows a bar per level (depth, states found, rate, elapsed).
pub struct LevelBars {
    bar: Mutex<Option<ProgressBar>>,
    found: AtomicU64,
    started: Mutex<Instant>,
    quiet: bool,
}

impl LevelBars {
    pub fn new(quiet: bool) -> LevelBars {
        LevelBars {
            bar: Mutex::new(None),
            found: AtomicU64::new(0),
            started: Mutex::new(Instant::now()),
            quiet,
        }
    }
}

impl Progress for LevelBars {
    fn level_started(&self, depth: u32, blocks: u64) {
        self.found.store(0, Ordering::Relaxed);
        *self.started.lock().unwrap() = Instant::now();
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(blocks), ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(
            ProgressStyle::with_template("depth {prefix:>3} [{bar:30}] {percent:>3}% {msg} {elapsed_precise}")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_prefix(depth.to_string());
        *self.bar.lock().unwrap() = Some(bar);
    }

    fn block_done(&self, found: u64) {
        let total = self.found.fetch_add(found, Ordering::Relaxed) + found;
        if let Some(bar) = self.bar.lock().unwrap().as_ref() {
            bar.inc(1);
            if bar.position() % 512 == 0 {
                let secs = self.started.lock().unwrap().elapsed().as_secs_f64().max(1e-9);
                bar.set_message(format!("{} states, {:.1} M states/s", total, total as f64 / secs / 1e6));
            }
        }
    }

    fn level_finished(&self, depth: u32, count: u64, seconds: f64) {
        if let Some(bar) = self.bar.lock().unwrap().take() {
            bar.finish_and_clear();
        }
        if !self.quiet {
            eprintln!("depth {:>3}: {:>16} states  {:>8.2} s", depth, count, seconds);
        }
    }
}
