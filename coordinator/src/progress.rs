//! Progress display: one bar per level on a terminal, one line per level
//! otherwise.

use crate::manifest::IoTotals;
use crate::server::state::Reporter;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

/// Shows a bar per level (depth, states found, rate, elapsed).
pub struct LevelBars {
    bar: Option<ProgressBar>,
    started: Instant,
    quiet: bool,
}

impl LevelBars {
    pub fn new(quiet: bool) -> LevelBars {
        LevelBars {
            bar: None,
            started: Instant::now(),
            quiet,
        }
    }
}

impl Reporter for LevelBars {
    fn level_started(&mut self, depth: u32, _tasks: u64, units: u64) {
        self.started = Instant::now();
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(units), ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(
            ProgressStyle::with_template("depth {prefix:>3} [{bar:30}] {percent:>3}% {msg} {elapsed_precise}")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_prefix(depth.to_string());
        self.bar = Some(bar);
    }

    fn progress(&mut self, units_done: u64, states: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(units_done);
            let secs = self.started.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{} states, {:.1} M states/s",
                states,
                states as f64 / secs / 1e6
            ));
        }
    }

    fn level_finished(&mut self, depth: u32, count: u64, seconds: f64, io: &IoTotals) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if !self.quiet {
            let busy = match io.utilization(seconds) {
                Some(u) => format!("; threads {:.0}% busy", 100.0 * u),
                None => String::new(),
            };
            stderr_line(format_args!(
                "depth {:>3}: {:>16} states  {:>8.2} s  {:>14}  (thread s: {:.1} load, {:.1} sources, {:.1} compute, {:.1} write, {:.1} other, {:.1} of it waiting; {:.1} s closing files; hit rate {:.2}{})",
                depth,
                count,
                seconds,
                rate_text(count as f64 / seconds.max(1e-9)),
                io.load_seconds,
                io.sources_seconds,
                io.compute_seconds,
                io.write_seconds,
                io.other_seconds,
                io.wait_seconds,
                io.close_seconds,
                io.hit_rate(),
                busy
            ));
        }
    }

    fn warn(&mut self, message: &str) {
        // The bar is cleared while the line is written, then drawn again
        // below it.
        match &self.bar {
            Some(bar) => bar.suspend(|| tracing::warn!("{}", message)),
            None => tracing::warn!("{}", message),
        }
    }
}

/// States per second, in millions from a million on.
fn rate_text(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.1} M states/s", per_second / 1e6)
    } else {
        format!("{:.0} states/s", per_second)
    }
}

/// Writes one line to stderr, ignoring failures: progress is not worth the
/// job. `eprintln!` panics when stderr is a closed pipe (`cayley run … 2>&1
/// | head -3`), and that panic, inside the coordinator's level bookkeeping,
/// left the run spinning on a core for good instead of finishing.
fn stderr_line(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", line);
}
