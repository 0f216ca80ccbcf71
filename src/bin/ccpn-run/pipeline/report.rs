//! What the run says on stderr: bad and late lines as they come (and late lines in
//! the `--late` file), the limits' warnings, a refused checkpoint, the `--stats`
//! summary.

use std::fmt::Display;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::collections::HashMap;
use std::mem::{discriminant, Discriminant};

use ccpn::io::read::{BadLine, LineError};
use ccpn::{DetectorOptions, Event, Space, Stats};

use super::detect::Tally;
use super::reader::ReadCounts;
use crate::say::{self, WARNING};

/// The reader's reports of bad and late lines, and its counts.
pub(super) struct Reports {
    pub(super) counts: ReadCounts,
    /// `--strict`: the first bad or late line stops the run.
    strict: bool,
    // Not a held lock: the detector thread writes warnings to stderr too, and must
    // never wait on this thread while this thread waits on it.
    err: BufWriter<io::Stderr>,
    late_file: Option<LateFile>,
    /// How many lines were reported for each reason, and the first of them.
    reasons: HashMap<Reason, Shown>,
    /// Whether an event without a location that looks as if it had one was reported.
    told_unlocated: bool,
}

/// Reports for one reason shown before the others of that reason are only counted.
pub(crate) const SHOWN_PER_REASON: u64 = 20;

/// Why a line was not processed, for the cap on repeated reports.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Reason {
    Bad(Discriminant<LineError>),
    Late,
}

/// The reports of one reason.
struct Shown {
    first: u64,
    count: u64,
}

/// The `--late` file: late lines, unchanged.
pub(crate) struct LateFile {
    path: PathBuf,
    out: BufWriter<File>,
}

impl LateFile {
    /// Creates the file at `path`, or with `append`, adds to it.
    pub(crate) fn open(path: &Path, append: bool) -> io::Result<LateFile> {
        let file = if append {
            File::options().append(true).create(true).open(path)
        } else {
            File::create(path)
        };
        let file = file.map_err(|e| say::in_file(e, "cannot create the --late file", path))?;
        Ok(LateFile {
            path: path.to_owned(),
            out: BufWriter::new(file),
        })
    }

    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.out
            .write_all(line)
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| say::in_file(e, "cannot write the --late file", &self.path))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out
            .flush()
            .map_err(|e| say::in_file(e, "cannot write the --late file", &self.path))
    }
}

impl Reports {
    pub(super) fn new(strict: bool, late_file: Option<LateFile>) -> Reports {
        Reports {
            counts: ReadCounts::default(),
            strict,
            err: BufWriter::new(io::stderr()),
            late_file,
            reasons: HashMap::new(),
            told_unlocated: false,
        }
    }

    /// Whether line `no`, not processed for `reason`, is to be reported (the first
    /// [`SHOWN_PER_REASON`] of each reason are).
    fn show(&mut self, reason: Reason, no: u64) -> bool {
        let shown = self.reasons.entry(reason).or_insert(Shown {
            first: no,
            count: 0,
        });
        shown.count += 1;
        shown.count <= SHOWN_PER_REASON && !say::quiet()
    }

    /// Counts an event without a location, `ev` of line `no`; warns, once, when it
    /// has fields that look like the location under other names.
    pub(super) fn unlocated(&mut self, no: u64, ev: &Event, space: Space) -> io::Result<()> {
        self.counts.unlocated += 1;
        if self.told_unlocated || say::quiet() {
            return Ok(());
        }
        let Some((x, y)) = lookalike_location(ev, space) else {
            return Ok(());
        };
        self.told_unlocated = true;
        let (want_x, want_y) = space.axis_names();
        writeln!(
            self.err,
            "{WARNING}line {no} has `{x}`/`{y}` but the net is {space:?}, whose location is \
             `{want_x}`/`{want_y}`: its events have no location (did you mean \
             --field {want_x}={x} --field {want_y}={y}?); `unlocated` in --stats counts them"
        )
    }

    /// Counts and reports a bad line; `false` when `--strict` stops the run.
    pub(super) fn rejected(&mut self, bad: &BadLine) -> io::Result<bool> {
        self.counts.rejected += 1;
        if self.show(Reason::Bad(discriminant(&bad.error)), bad.line) {
            writeln!(
                self.err,
                "{WARNING}line {}: rejected: {}",
                bad.line, bad.error
            )?;
        }
        Ok(self.go_on())
    }

    /// Counts and reports line `no`, `line`, whose event is too late to process
    /// (`why`), and keeps it in the `--late` file; `false` when `--strict` stops the
    /// run.
    pub(super) fn late(&mut self, no: u64, line: &[u8], why: &dyn Display) -> io::Result<bool> {
        self.counts.late += 1;
        if self.show(Reason::Late, no) {
            writeln!(self.err, "{WARNING}line {no}: {why}")?;
        }
        if let Some(f) = self.late_file.as_mut() {
            f.write_line(line)?;
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

    /// Says that `--strict` stopped the run at line `no`, after the `held` events
    /// held for reordering were released (their detections are written).
    pub(super) fn stopped(&mut self, no: u64, held: u64) -> io::Result<()> {
        let held = match held {
            0 => String::new(),
            1 => "; the event held for reordering (--max-delay) before it was processed".into(),
            n => format!(
                "; the {n} events held for reordering (--max-delay) before it were processed"
            ),
        };
        writeln!(
            self.err,
            "{}--strict stopped the run at line {no}: the lines after it were not read{held}",
            say::ERROR
        )
    }

    /// Writes out the reports and the `--late` copies made so far (before a checkpoint
    /// covers their lines).
    pub(super) fn flush(&mut self) -> io::Result<()> {
        self.err.flush()?;
        if let Some(f) = self.late_file.as_mut() {
            f.flush()?;
        }
        Ok(())
    }

    /// Flushes the reports; the counts.
    pub(super) fn finish(mut self) -> io::Result<ReadCounts> {
        let (rejected, late) = (self.counts.rejected, self.counts.late);
        if say::quiet() && rejected + late > 0 {
            writeln!(
                self.err,
                "{WARNING}{rejected} lines rejected and {late} late, not reported one by one \
                 (--quiet); --stats counts them, --late FILE keeps the late ones"
            )?;
            self.reasons.clear();
        }
        let mut hidden: Vec<(&Reason, &Shown)> = self
            .reasons
            .iter()
            .filter(|(_, s)| s.count > SHOWN_PER_REASON)
            .collect();
        hidden.sort_by_key(|(_, s)| s.first);
        for (reason, s) in hidden {
            let what = match reason {
                Reason::Bad(_) => "rejected",
                Reason::Late => "late",
            };
            writeln!(
                self.err,
                "{WARNING}{} more lines {what} for the same reason as line {} (not shown)",
                s.count - SHOWN_PER_REASON,
                s.first
            )?;
        }
        self.err.flush()?;
        if let Some(mut f) = self.late_file.take() {
            f.flush()?;
        }
        Ok(self.counts)
    }
}

/// The names of two attributes of `ev` that look like a location under other names
/// than `space`'s: `x`/`y` on a WGS84 net, `lon`/`lat` on a planar one,
/// `longitude`/`latitude`, `LON`/`LAT` in JSON.
fn lookalike_location(ev: &Event, space: Space) -> Option<(&str, &str)> {
    const PAIRS: [(&str, &str); 6] = [
        ("lon", "lat"),
        ("x", "y"),
        ("longitude", "latitude"),
        ("lng", "lat"),
        ("long", "lat"),
        ("easting", "northing"),
    ];
    let find = |name: &str| {
        ev.attrs
            .iter()
            .map(|(n, _)| &**n)
            .find(|n| n.eq_ignore_ascii_case(name))
    };
    let own = space.axis_names();
    PAIRS
        .iter()
        .filter(|pair| **pair != own)
        .find_map(|(a, b)| Some((find(a)?, find(b)?)))
}

/// Whether no line at all could be used: every line read was rejected.
fn unusable(counts: &ReadCounts) -> bool {
    counts.read > 0 && counts.rejected == counts.read
}

/// Says, before `--stats`, that no line could be used, if so.
pub(crate) fn say_unusable(counts: &ReadCounts) {
    if unusable(counts) && !counts.stopped {
        say::error(format_args!(
            "none of the {} lines read could be used: is the input in the form the run expects \
             (--format, --field; docs/input.md)?",
            counts.read
        ));
    }
}

/// Says that signal `sig` stopped the run after line `line`, and what of it was kept.
pub(super) fn interrupted(sig: i32, line: u64, counts: &ReadCounts, checkpoint: Option<&Path>) {
    let held = match counts.held_unprocessed {
        0 => String::new(),
        1 => "; the event held for reordering (--max-delay) was not processed".into(),
        n => format!("; the {n} events held for reordering (--max-delay) were not processed"),
    };
    let resume = match checkpoint {
        Some(p) => format!(
            "; checkpoint {} holds the run: --resume {} goes on from there",
            p.display(),
            p.display()
        ),
        None => String::new(),
    };
    say::note(format_args!(
        "stopped by {} after line {line}: the detections made are written{held}{resume}",
        crate::interrupt::name(sig)
    ));
}

/// The exit status of a run that read its input: 128 plus the signal's number when
/// a signal stopped it, 3 when `--strict` did, 4 when no line at all could be used
/// (every line rejected), else 0.
pub(crate) fn exit_status(counts: &ReadCounts) -> ExitCode {
    if let Some((sig, _)) = counts.interrupted {
        ExitCode::from(u8::try_from(128 + sig).unwrap_or(130))
    } else if counts.stopped {
        ExitCode::from(3)
    } else if unusable(counts) {
        ExitCode::from(4)
    } else if crate::checkpoint::FAILED.load(std::sync::atomic::Ordering::Relaxed) > 0 {
        ExitCode::from(5)
    } else {
        ExitCode::SUCCESS
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
        say::warning(format_args!(
            "{truncated} occurrences stopped short of their firings: at 100,000 firings of one operator, 1,000,000 steps of Any's search, 10,000 ineligible tokens passed over, or the occurrences one event may make (docs/operators.md)"
        ));
    }
    if refused_sets > 0 {
        say::warning(format_args!(
            "{refused_sets} partial counting sets refused by {sets}: matches growing from them were missed"
        ));
    }
    if evicted > 0 {
        say::warning(format_args!("{evicted} tokens evicted by {tokens}"));
    }
}

/// Says that a resumed run keeps the limits of the run it continues, `limits`.
pub(super) fn resumed_limits(limits: DetectorOptions) {
    say::warning(format_args!(
        "resuming with the checkpointed run's limits (--max-tokens {}, --max-sets {}{}), not this command line's",
        limits.max_tokens,
        limits.max_sets,
        if limits.zone_index { "" } else { ", --no-zone-index" },
    ));
}

/// Reports a checkpoint that cannot be resumed from: exit status 2.
pub(super) fn refuse(why: &str) -> ExitCode {
    say::error(why);
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
        "unlocated": counts.unlocated,
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
        "reloads": s.tally.reloads,
        "released_early": counts.released_early,
    });
    let mut summary = summary;
    if counts.interrupted.is_some() {
        summary["interrupted"] = true.into();
        summary["held_unprocessed"] = counts.held_unprocessed.into();
    }
    eprintln!("{summary}");
}
