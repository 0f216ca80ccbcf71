//! What the run says on stderr: bad and late lines as they come (and late lines in
//! the `--late` file), the limits' warnings, a refused checkpoint, the `--stats`
//! summary.

use std::fmt::Display;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use ccpn::io::read::BadLine;
use ccpn::{DetectorOptions, Stats};

use super::detect::Tally;
use super::reader::ReadCounts;

/// The reader's reports of bad and late lines, and its counts.
pub(super) struct Reports {
    pub(super) counts: ReadCounts,
    /// `--strict`: the first bad or late line stops the run.
    strict: bool,
    // Not a held lock: the detector thread writes warnings to stderr too, and must
    // never wait on this thread while this thread waits on it.
    err: BufWriter<io::Stderr>,
    late_file: Option<BufWriter<File>>,
}

impl Reports {
    pub(super) fn new(strict: bool, late_file: Option<BufWriter<File>>) -> Reports {
        Reports {
            counts: ReadCounts::default(),
            strict,
            err: BufWriter::new(io::stderr()),
            late_file,
        }
    }

    /// Counts and reports a bad line; `false` when `--strict` stops the run.
    pub(super) fn rejected(&mut self, bad: &BadLine) -> io::Result<bool> {
        self.counts.rejected += 1;
        writeln!(
            self.err,
            "ccpn-run: line {}: rejected: {}",
            bad.line, bad.error
        )?;
        Ok(self.go_on())
    }

    /// Counts and reports line `no`, `line`, whose event is too late to process
    /// (`why`), and keeps it in the `--late` file; `false` when `--strict` stops the
    /// run.
    pub(super) fn late(&mut self, no: u64, line: &[u8], why: &dyn Display) -> io::Result<bool> {
        self.counts.late += 1;
        writeln!(self.err, "ccpn-run: line {no}: {why}")?;
        if let Some(f) = self.late_file.as_mut() {
            f.write_all(line)?;
            f.write_all(b"\n")?;
        }
        Ok(self.go_on())
    }

    /// Whether the run goes on after a bad or late line (noting that it stops).
    fn go_on(&mut self) -> bool {
        if self.strict {
            self.counts.stopped = true;
        }
        !self.strict
    }

    /// Flushes the reports; the counts.
    pub(super) fn finish(mut self) -> io::Result<ReadCounts> {
        self.err.flush()?;
        if let Some(mut f) = self.late_file.take() {
            f.flush()?;
        }
        Ok(self.counts)
    }
}

/// The end-of-run warnings about what the limits turned away; `sets` and `tokens`
/// name the limits.
pub(crate) fn warn_limits(
    truncated: u64,
    refused_sets: u64,
    evicted: u64,
    sets: &str,
    tokens: &str,
) {
    if truncated > 0 {
        eprintln!(
            "ccpn-run: warning: {truncated} firings of Any (Unrestricted or Continuous) not made: more than 100,000 sets for one occurrence"
        );
    }
    if refused_sets > 0 {
        eprintln!(
            "ccpn-run: warning: {refused_sets} partial counting sets refused by {sets}: matches growing from them were missed"
        );
    }
    if evicted > 0 {
        eprintln!("ccpn-run: warning: {evicted} tokens evicted by {tokens}");
    }
}

/// Says that a resumed run keeps the limits of the run it continues, `limits`.
pub(super) fn resumed_limits(limits: DetectorOptions) {
    eprintln!(
        "ccpn-run: resuming with the checkpointed run's limits (--max-tokens {}, --max-sets {}{}), not this command line's",
        limits.max_tokens,
        limits.max_sets,
        if limits.zone_index { "" } else { ", --no-zone-index" },
    );
}

/// Reports a checkpoint that cannot be resumed from: exit status 2.
pub(super) fn refuse(why: &str) -> ExitCode {
    eprintln!("ccpn-run: {why}");
    ExitCode::from(2)
}

/// What `--stats` reports.
pub(super) struct Summary<'a> {
    pub(super) counts: &'a ReadCounts,
    pub(super) stats: &'a Stats,
    pub(super) outputs: &'a [String],
    pub(super) tally: &'a Tally,
    /// Events processed before the checkpoint resumed from.
    pub(super) processed_before: u64,
    /// Seconds since the run started.
    pub(super) elapsed: f64,
}

/// Prints the `--stats` summary: one JSON object on stderr.
pub(super) fn print_stats(s: &Summary<'_>) {
    let (counts, stats, elapsed) = (s.counts, s.stats, s.elapsed);
    let by_output: serde_json::Map<String, serde_json::Value> = s
        .outputs
        .iter()
        .zip(&s.tally.per_output)
        .map(|(o, n)| (o.clone(), (*n).into()))
        .collect();
    let summary = serde_json::json!({
        "read": counts.read,
        "processed": stats.processed,
        "rejected": counts.rejected,
        "late": counts.late + s.tally.late,
        "detections": stats.detections,
        "by_output": by_output,
        "events_per_s": if elapsed > 0.0 { ((stats.processed - s.processed_before) as f64 / elapsed).round() } else { 0.0 },
        "elapsed_s": elapsed,
        "live_tokens": stats.live_tokens,
        "peak_live_tokens": stats.peak_live_tokens,
        "evicted": stats.evicted,
        "live_sets": stats.live_sets,
        "refused_sets": stats.refused_sets,
        "truncated_firings": stats.truncated_firings,
    });
    eprintln!("{summary}");
}
