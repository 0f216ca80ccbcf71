//! The run: a reader thread (parse, reorder, report bad and late lines), the detector
//! on the main thread, and a writer thread, joined by bounded crossbeam channels that
//! carry batches.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};

use ccpn::io::read::{is_blank, Format, LineError, LineParser, Lines};
use ccpn::io::reorder::Reorder;
use ccpn::io::write::{GeoJson, JsonLines};
use ccpn::{Detection, Detector, DetectorOptions, Event, Net, Timestamp};

use crate::args::{Args, FormatArg, OutputArg};
use crate::checkpoint::{write_atomically, Checkpoint, Position};

/// Events (or detections) per channel message.
const BATCH: usize = 1024;
/// Messages in flight per channel. Few: the reader parses faster than the detector
/// detects, so the queue stays full, and an event waits `DEPTH` batches before it is
/// pushed. With 4 (about 1 MB of events) it is still in cache when it is; with 64 it
/// was not, and end to end ran 10-20 % slower (docs/performance.md).
const DEPTH: usize = 4;

/// What the reader counted.
#[derive(Default)]
pub(crate) struct ReadCounts {
    pub(crate) read: u64,
    pub(crate) rejected: u64,
    pub(crate) late: u64,
    /// Set when `--strict` stopped the run.
    pub(crate) stopped: bool,
}

/// Runs the net over the input; returns the exit status.
pub(crate) fn run(args: &Args, net: Net) -> io::Result<ExitCode> {
    let started = Instant::now();
    let outputs: Vec<String> = net.outputs().map(str::to_owned).collect();
    let options = DetectorOptions {
        max_tokens: args.max_tokens,
        max_sets: args.max_sets,
        zone_index: !args.no_zone_index,
    };
    // Resume from a checkpoint, or start afresh.
    let resumed = match &args.resume {
        Some(path) => match Checkpoint::read(path) {
            Ok(Some(c)) => Some(c),
            Ok(None) => {
                eprintln!(
                    "ccpn-run: no checkpoint at {}: starting from the first line",
                    path.display()
                );
                None
            }
            Err(e) => return Ok(refuse(&e)),
        },
        None => None,
    };
    let (mut detector, mut per_output, mut late_in_detector, resume) = match resumed {
        Some(c) => match Detector::restore(&net, &c.detector) {
            Ok(d) if c.per_output.len() == outputs.len() => {
                (d, c.per_output, c.late_in_detector, Some(c.position))
            }
            Ok(_) => return Ok(refuse("checkpoint: its outputs are not the net's")),
            Err(e) => return Ok(refuse(&format!("checkpoint: {e}"))),
        },
        None => (
            Detector::with_options(&net, options),
            vec![0u64; outputs.len()],
            0,
            None,
        ),
    };
    let processed_before = detector.stats().processed;
    if detector.options() != options {
        eprintln!(
            "ccpn-run: resuming with the checkpointed run's limits (--max-tokens {}, --max-sets {}{}), not this command line's",
            detector.options().max_tokens,
            detector.options().max_sets,
            if detector.options().zone_index { "" } else { ", --no-zone-index" },
        );
    }
    let DetectorOptions {
        max_tokens,
        max_sets,
        ..
    } = detector.options();

    let input = open_input(args)?;
    let late_file = match &args.late {
        // A resumed run adds to the late lines of the run it continues.
        Some(p) if resume.is_some() => Some(BufWriter::new(
            File::options().append(true).create(true).open(p)?,
        )),
        Some(p) => Some(BufWriter::new(File::create(p)?)),
        None => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (ev_tx, ev_rx) = bounded::<ToDetector>(DEPTH);
    let (det_tx, det_rx) = bounded::<ToWriter>(DEPTH);

    let space = net.space();
    let reader = {
        let stop = stop.clone();
        let names: Vec<String> = net.names_read().into_iter().map(str::to_owned).collect();
        let cfg = ReaderConfig {
            names,
            format: args.format,
            space,
            max_delay: args.max_delay,
            strict: args.strict,
            max_line_bytes: args.max_line_bytes,
            checkpoint_every: if args.checkpoint.is_some() {
                args.checkpoint_every
            } else {
                0
            },
            heartbeat: args.heartbeat(),
        };
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_events(input, cfg, late_file, ev_tx, &stop, resume))?
    };
    let writer = {
        let stop = stop.clone();
        let output = args.output;
        let checkpoint = args.checkpoint.clone();
        thread::Builder::new()
            .name("writer".into())
            .spawn(move || write_detections(det_rx, space, output, checkpoint, &stop))?
    };

    let mut warned_evictions = false;
    let count = |per_output: &mut [u64], batch: &[Detection]| {
        for d in batch {
            if let Some(i) = outputs.iter().position(|o| **o == *d.event) {
                per_output[i] += 1;
            }
        }
    };
    for msg in ev_rx.iter() {
        let sent = match msg {
            ToDetector::Events(batch) => {
                let mut found = Vec::new();
                for ev in batch {
                    if detector.push_into(ev, &mut found).is_err() {
                        late_in_detector += 1;
                    }
                }
                if !warned_evictions && detector.stats().evicted > 0 {
                    warned_evictions = true;
                    eprintln!("ccpn-run: warning: --max-tokens {max_tokens} reached: the oldest waiting tokens are being evicted");
                }
                count(&mut per_output, &found);
                found.is_empty() || det_tx.send(ToWriter::Detections(found)).is_ok()
            }
            ToDetector::Advance(to) => {
                let found = detector.advance_to(to);
                count(&mut per_output, &found);
                found.is_empty() || det_tx.send(ToWriter::Detections(found)).is_ok()
            }
            ToDetector::Mark(position) => {
                let checkpoint = Checkpoint {
                    position,
                    per_output: per_output.clone(),
                    late_in_detector,
                    detector: detector.snapshot(),
                };
                det_tx
                    .send(ToWriter::Checkpoint(checkpoint.encode()))
                    .is_ok()
            }
        };
        if !sent {
            stop.store(true, Ordering::Relaxed);
            break;
        }
    }
    drop(ev_rx);
    let last = detector.finish();
    count(&mut per_output, &last);
    if !last.is_empty() {
        let _ = det_tx.send(ToWriter::Detections(last));
    }
    drop(det_tx);
    let counts = reader
        .join()
        .map_err(|_| io::Error::other("reader thread panicked"))??;
    let written = writer
        .join()
        .map_err(|_| io::Error::other("writer thread panicked"))?;
    if let Err(e) = written {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e);
        }
    }
    let stats = detector.stats();
    warn_limits(
        stats.truncated_firings,
        stats.refused_sets,
        stats.evicted,
        &format!("--max-sets {max_sets}"),
        &format!("--max-tokens {max_tokens}"),
    );
    if args.stats {
        let elapsed = started.elapsed().as_secs_f64();
        let by_output: serde_json::Map<String, serde_json::Value> = outputs
            .iter()
            .zip(&per_output)
            .map(|(o, n)| (o.clone(), (*n).into()))
            .collect();
        let summary = serde_json::json!({
            "read": counts.read,
            "processed": stats.processed,
            "rejected": counts.rejected,
            "late": counts.late + late_in_detector,
            "detections": stats.detections,
            "by_output": by_output,
            "events_per_s": if elapsed > 0.0 { ((stats.processed - processed_before) as f64 / elapsed).round() } else { 0.0 },
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
    Ok(if counts.stopped {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
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

/// The input: a file, or standard input.
pub(crate) type Input = BufReader<Box<dyn Read + Send>>;

/// Opens the events file, or standard input when there is none or it is `-`.
pub(crate) fn open_input(args: &Args) -> io::Result<Input> {
    let raw: Box<dyn Read + Send> = match &args.events {
        Some(p) if p.as_os_str() != "-" => Box::new(File::open(p)?),
        _ => Box::new(io::stdin()),
    };
    Ok(BufReader::with_capacity(1 << 16, raw))
}

pub(crate) struct ReaderConfig {
    /// Attribute names and types the net reads: events share one copy of each.
    pub(crate) names: Vec<String>,
    pub(crate) format: FormatArg,
    pub(crate) space: ccpn::Space,
    pub(crate) max_delay: i64,
    pub(crate) strict: bool,
    pub(crate) max_line_bytes: usize,
    /// Send a checkpoint mark after every this many lines (0: never).
    pub(crate) checkpoint_every: u64,
    /// Move event time on when the input is quiet this long (`--heartbeat`).
    pub(crate) heartbeat: Option<std::time::Duration>,
}

/// What the reader sends the detector.
pub(crate) enum ToDetector {
    Events(Vec<Event>),
    /// The input is quiet and the clock has moved on: event time is now this.
    Advance(Timestamp),
    /// Every line up to here is read: the detector is to checkpoint, once it has
    /// processed the events sent before.
    Mark(Position),
}

/// The reader's state: counts, the input's parser once its format is known, and
/// the events held for reordering.
struct Reader {
    cfg: ReaderConfig,
    counts: ReadCounts,
    parser: Option<LineParser>,
    reorder: Reorder<Event>,
    batch: Vec<Event>,
    // Not a held lock: the detector thread writes warnings to stderr too, and must
    // never wait on this thread while this thread waits on it.
    err: BufWriter<io::Stderr>,
    late_file: Option<BufWriter<File>>,
    tx: Sender<ToDetector>,
}

/// Reads, parses and reorders lines; reports bad and late ones on stderr. With a
/// checkpoint's `resume` position, the lines up to it are only read again where the
/// run needs them: to learn the format, and for the events it held for reordering.
pub(crate) fn read_events(
    input: Input,
    cfg: ReaderConfig,
    late_file: Option<BufWriter<File>>,
    tx: Sender<ToDetector>,
    stop: &AtomicBool,
    resume: Option<Position>,
) -> io::Result<ReadCounts> {
    let mut lines = Lines::new(input, cfg.max_line_bytes);
    let mut r = Reader {
        counts: ReadCounts::default(),
        parser: match cfg.format {
            FormatArg::Jsonl => Some(
                LineParser::json(cfg.space).with_known_names(cfg.names.iter().map(String::as_str)),
            ),
            _ => None,
        },
        reorder: Reorder::new(cfg.max_delay),
        batch: Vec::with_capacity(BATCH),
        err: BufWriter::new(io::stderr()),
        late_file,
        tx,
        cfg,
    };
    let (skip_to, mut held) = match resume {
        Some(p) => {
            r.counts.read = p.read;
            r.counts.rejected = p.rejected;
            r.counts.late = p.late;
            r.reorder = Reorder::resumed(r.cfg.max_delay, p.newest, p.released);
            (p.line, p.held.into_iter().collect::<HashSet<u64>>())
        }
        None => (0, HashSet::new()),
    };
    let mut last = 0;
    match r.cfg.heartbeat {
        None => {
            while let Some(next) = lines.next_line() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let (no, line) = next?;
                last = no;
                if !r.take(no, line, skip_to, &mut held)? {
                    break;
                }
                // What is read is sent before a read that may wait for more input: a
                // live stream's events are detected when they come, not when a batch fills.
                if lines.get_ref().buffer().is_empty() && !r.flush() {
                    break;
                }
            }
        }
        Some(beat) => {
            // Lines come from their own thread, so that a quiet input is noticed.
            let (tx, rx) = bounded::<Pumped>(DEPTH);
            thread::Builder::new()
                .name("input".into())
                .spawn(move || pump(lines, &tx))?;
            'input: loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                match rx.recv_timeout(beat) {
                    Ok(batch) => {
                        for next in batch {
                            let (no, line) = next?;
                            last = no;
                            if !r.take(
                                no,
                                line.as_deref().map_err(Clone::clone),
                                skip_to,
                                &mut held,
                            )? {
                                break 'input;
                            }
                        }
                        if !r.flush() {
                            break;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) if last >= skip_to => {
                        if !r.heartbeat() {
                            break;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
    }
    if last < skip_to || !held.is_empty() {
        return Err(io::Error::other(format!(
            "the input is not the one checkpointed: it has {last} lines, the checkpoint had read {skip_to}"
        )));
    }
    r.finish()
}

/// Lines read on the input thread: (number, line) or the I/O error that ended it.
type Pumped = Vec<io::Result<(u64, Result<Vec<u8>, LineError>)>>;

/// Reads lines and sends them in batches: a batch ends when nothing more is
/// buffered (the next read may wait) or at 1,024 lines.
fn pump(mut lines: Lines<Input>, tx: &Sender<Pumped>) {
    let mut batch: Pumped = Vec::new();
    while let Some(next) = lines.next_line() {
        let next = next.map(|(no, line)| (no, line.map(<[u8]>::to_vec)));
        let failed = next.is_err();
        batch.push(next);
        if (failed || batch.len() >= BATCH || lines.get_ref().buffer().is_empty())
            && tx.send(std::mem::take(&mut batch)).is_err()
        {
            return;
        }
        if failed {
            return;
        }
    }
    let _ = tx.send(batch);
}

/// The wall clock as an event time.
fn wall_clock() -> Option<Timestamp> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Timestamp::from_micros(i64::try_from(since.as_micros()).ok()?)
}

impl Reader {
    /// Takes line `no` (before `skip_to`, a line a resumed run only reads again);
    /// `false` when the run is to stop.
    fn take(
        &mut self,
        no: u64,
        line: Result<&[u8], LineError>,
        skip_to: u64,
        held: &mut HashSet<u64>,
    ) -> io::Result<bool> {
        if no <= skip_to {
            if let Ok(line) = line {
                self.replay(no, line, held)?;
            }
            return Ok(true);
        }
        if !self.line(no, line)? {
            return Ok(false);
        }
        Ok(self.cfg.checkpoint_every == 0
            || !no.is_multiple_of(self.cfg.checkpoint_every)
            || self.mark(no))
    }

    /// The input has been quiet for `--heartbeat`: event time moves to the wall
    /// clock less `--max-delay`, releasing what is held up to then; `false` if the
    /// detector has gone.
    fn heartbeat(&mut self) -> bool {
        let Some(now) = wall_clock() else {
            return true;
        };
        let to = now.saturating_add(-self.cfg.max_delay);
        if self.reorder.released_up_to().is_some_and(|r| to <= r) {
            return true;
        }
        self.reorder.advance(to);
        while let Some((_, _, ev)) = self.reorder.pop_ready() {
            self.batch.push(ev);
        }
        self.flush() && self.tx.send(ToDetector::Advance(to)).is_ok()
    }

    /// Takes line `no`; `false` when the run is to stop.
    fn line(&mut self, no: u64, line: Result<&[u8], LineError>) -> io::Result<bool> {
        let line = match line {
            Ok(l) if is_blank(l) => return Ok(true),
            Ok(l) => l,
            Err(e) => {
                self.counts.read += 1;
                return self.reject(no, &e);
            }
        };
        match self.start(no, line, false)? {
            Start::Event => {}
            Start::Header => return Ok(true),
            Start::Rejected => return Ok(!self.cfg.strict),
        }
        let p = self.parser.as_ref().expect("the format is known");
        self.counts.read += 1;
        let ev = match p.parse(line) {
            Ok(ev) => ev,
            Err(e) => return self.reject(no, &e),
        };
        match self.reorder.offer(ev.time, no, ev) {
            Ok(now) => {
                match now {
                    Some((_, _, ev)) => self.batch.push(ev),
                    None => {
                        while let Some((_, _, ev)) = self.reorder.pop_ready() {
                            self.batch.push(ev);
                        }
                    }
                }
                Ok(self.batch.len() < BATCH || self.flush())
            }
            Err(late) => {
                self.counts.late += 1;
                writeln!(self.err, "ccpn-run: line {no}: {late}")?;
                if let Some(f) = self.late_file.as_mut() {
                    f.write_all(line)?;
                    f.write_all(b"\n")?;
                }
                if self.cfg.strict {
                    self.counts.stopped = true;
                }
                Ok(!self.cfg.strict)
            }
        }
    }

    /// Counts and reports a bad line; `false` when `--strict` stops the run.
    fn reject(&mut self, no: u64, why: &dyn std::fmt::Display) -> io::Result<bool> {
        self.counts.rejected += 1;
        writeln!(self.err, "ccpn-run: line {no}: rejected: {why}")?;
        if self.cfg.strict {
            self.counts.stopped = true;
        }
        Ok(!self.cfg.strict)
    }

    /// Until the input's format is known, learns it from the first non-blank line:
    /// a CSV header is used up, a JSON line is an event.
    fn start(&mut self, no: u64, line: &[u8], quiet: bool) -> io::Result<Start> {
        if self.parser.is_some() {
            return Ok(Start::Event);
        }
        let names = self.cfg.names.iter().map(String::as_str);
        let format = match self.cfg.format {
            FormatArg::Csv => Format::Csv,
            FormatArg::Jsonl => Format::JsonLines,
            FormatArg::Auto => Format::detect(line),
        };
        if format != Format::Csv {
            self.parser = Some(LineParser::json(self.cfg.space).with_known_names(names));
            return Ok(Start::Event);
        }
        match LineParser::csv(line, self.cfg.space) {
            Ok(p) => {
                self.parser = Some(p.with_known_names(names));
                Ok(Start::Header)
            }
            // Neither an event nor a usable header: the line is rejected and the
            // next one is tried as the start of the input.
            Err(_) if quiet => Ok(Start::Rejected),
            Err(e) => {
                self.counts.read += 1;
                let why = format!("not a JSON event nor a CSV header: {e}");
                self.reject(no, &why)?;
                Ok(Start::Rejected)
            }
        }
    }

    /// Takes line `no` again, before the checkpoint resumed from: only to learn the
    /// format, and to hold again an event the checkpointed run held.
    fn replay(&mut self, no: u64, line: &[u8], held: &mut HashSet<u64>) -> io::Result<()> {
        if is_blank(line) || self.start(no, line, true)? != Start::Event || !held.remove(&no) {
            return Ok(());
        }
        let p = self.parser.as_ref().expect("the format is known");
        let again = p
            .parse(line)
            .ok()
            .map(|ev| self.reorder.push(ev.time, no, ev));
        match again {
            Some(Ok(())) => Ok(()),
            _ => Err(io::Error::other(format!(
                "the input is not the one checkpointed: line {no} no longer holds the event it held"
            ))),
        }
    }

    /// Sends the events read so far, then a checkpoint mark; `false` if the detector
    /// has gone.
    fn mark(&mut self, no: u64) -> bool {
        let position = Position {
            line: no,
            read: self.counts.read,
            rejected: self.counts.rejected,
            late: self.counts.late,
            newest: self.reorder.newest_seen(),
            released: self.reorder.released_up_to(),
            held: self.reorder.held_lines().collect(),
        };
        self.flush() && self.tx.send(ToDetector::Mark(position)).is_ok()
    }

    /// Sends the batch; `false` if the detector has gone.
    fn flush(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.tx.send(ToDetector::Events(batch)).is_ok()
    }

    /// At the end of input: releases what is held (or, stopped by `--strict`,
    /// counts it as rejected).
    fn finish(mut self) -> io::Result<ReadCounts> {
        if !self.counts.stopped {
            while let Some((_, _, ev)) = self.reorder.pop_any() {
                self.batch.push(ev);
            }
        } else {
            // Lines held for reordering were read but not processed.
            self.counts.rejected += self.reorder.len() as u64;
        }
        self.flush();
        self.err.flush()?;
        if let Some(mut f) = self.late_file.take() {
            f.flush()?;
        }
        Ok(self.counts)
    }
}

/// What the first lines of an input are.
#[derive(PartialEq)]
enum Start {
    /// An event (the format is known).
    Event,
    /// A CSV header, used up.
    Header,
    /// Neither: rejected.
    Rejected,
}

/// What the detector sends the writer.
enum ToWriter {
    Detections(Vec<Detection>),
    /// A checkpoint to write once every detection before it is written.
    Checkpoint(Vec<u8>),
}

/// Writes detections on stdout, as JSON Lines or as a GeoJSON FeatureCollection, and
/// each checkpoint once the detections before it are out.
fn write_detections(
    rx: Receiver<ToWriter>,
    space: ccpn::Space,
    output: OutputArg,
    checkpoint: Option<PathBuf>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let lines = JsonLines::new(space);
    let mut geo = GeoJson::new();
    let result = (|| {
        for msg in rx.iter() {
            match msg {
                ToWriter::Detections(batch) => {
                    for d in &batch {
                        match output {
                            OutputArg::Jsonl => lines.write(&mut out, d)?,
                            OutputArg::Geojson => geo.write(&mut out, d)?,
                        }
                    }
                    // Nothing more to write for now: a live consumer sees the
                    // detections when they are made.
                    if rx.is_empty() {
                        out.flush()?;
                    }
                }
                ToWriter::Checkpoint(bytes) => {
                    out.flush()?;
                    let path = checkpoint.as_deref().expect("checkpoints only with a path");
                    if let Err(e) = write_atomically(path, &bytes) {
                        eprintln!(
                            "ccpn-run: warning: cannot write checkpoint {}: {e}",
                            path.display()
                        );
                    }
                }
            }
        }
        if output == OutputArg::Geojson {
            geo.finish(&mut out)?;
        }
        out.flush()
    })();
    if result.is_err() {
        stop.store(true, Ordering::Relaxed);
        // Keep draining so the detector never blocks on a dead writer.
        for _ in rx.iter() {}
    }
    result
}

/// Reports a checkpoint that cannot be resumed from: exit status 2.
fn refuse(why: &str) -> ExitCode {
    eprintln!("ccpn-run: {why}");
    ExitCode::from(2)
}
