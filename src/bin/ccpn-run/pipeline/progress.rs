//! Feedback on a long run: a progress line on stderr when it is a terminal
//! (indicatif), and with `--stats-every N` a JSON line of counters every N events,
//! for a live feed.
//!
//! The reader publishes what it has read in [`Live`] after each batch; the detector's
//! loop calls [`Feedback::after_batch`], which reads both sides.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use ccpn::Detector;

use super::detect::Tally;

/// The reader's counters, as of its last batch.
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub(crate) read: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) late: AtomicU64,
}

impl Live {
    /// Publishes the reader's counts.
    pub(crate) fn set(&self, read: u64, rejected: u64, late: u64) {
        self.read.store(read, Ordering::Relaxed);
        self.rejected.store(rejected, Ordering::Relaxed);
        self.late.store(late, Ordering::Relaxed);
    }
}

/// The detector loop's side of the feedback.
pub(crate) struct Feedback<'a> {
    live: &'a Live,
    started: Instant,
    /// `--stats-every`: the next count of processed events at which to print.
    every: Option<(u64, u64)>,
    bar: Option<ProgressBar>,
}

impl<'a> Feedback<'a> {
    /// Feedback for a run: the progress line if `terminal` (stderr is one and
    /// `--quiet` is off), JSON lines every `every` events.
    pub(crate) fn new(live: &'a Live, every: Option<u64>, terminal: bool) -> Feedback<'a> {
        let bar = (terminal && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Feedback {
            live,
            started: Instant::now(),
            every: every.map(|n| (n, n)),
            bar,
        }
    }

    /// After a batch: updates the progress line, and prints a JSON line for each
    /// multiple of `--stats-every` passed.
    pub(crate) fn after_batch(&mut self, detector: &Detector, tally: &Tally) {
        if self.bar.is_none() && self.every.is_none() {
            return;
        }
        let stats = detector.stats();
        let secs = self.started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            stats.processed as f64 / secs
        } else {
            0.0
        };
        let (read, rejected) = (
            self.live.read.load(Ordering::Relaxed),
            self.live.rejected.load(Ordering::Relaxed),
        );
        let late = self.live.late.load(Ordering::Relaxed) + tally.late;
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{read} lines, {} events ({rate:.0}/s), {} detections, {late} late, {rejected} rejected",
                stats.processed, stats.detections
            ));
        }
        if let Some((n, next)) = &mut self.every {
            if stats.processed >= *next {
                while *next <= stats.processed {
                    *next += *n;
                }
                let line = serde_json::json!({
                    "elapsed_s": secs,
                    "read": read,
                    "processed": stats.processed,
                    "rejected": rejected,
                    "late": late,
                    "detections": stats.detections,
                    "live_tokens": stats.live_tokens,
                    "evicted": stats.evicted,
                    "events_per_s": rate.round(),
                });
                match &self.bar {
                    Some(bar) => bar.suspend(|| eprintln!("{line}")),
                    None => eprintln!("{line}"),
                }
            }
        }
    }

    /// Clears the progress line.
    pub(crate) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
