//! The reader thread: reads the input with [`EventReader`], reorders events by time
//! within `--max-delay`, reports bad and late lines, sends events to the detector in
//! batches, and marks checkpoints; on resume, reads the lines before the checkpoint
//! again only where the run needs them. With `--heartbeat`, lines are read on a
//! thread of their own, so that a quiet input moves event time on. A large file is
//! parsed on two threads (`chunks.rs`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{bounded, RecvTimeoutError, Sender};

use ccpn::io::read::{BadLine, EventReader, FieldMap, Format, LineError, Lines, Record};
use ccpn::io::reorder::Reorder;
use ccpn::{Event, Net, Space, Timestamp};

use super::chunks::{self, Chunk, End, Line};
use super::progress::Live;
use super::report::{LateFile, Reports};
use super::spare::Fresh;
use super::{BATCH, DEPTH};
use crate::args::{Args, FormatArg};
use crate::checkpoint::Position;
use crate::interrupt::{self, Interruptible};

/// What the reader counted.
#[derive(Default)]
pub(crate) struct ReadCounts {
    pub(crate) read: u64,
    pub(crate) rejected: u64,
    pub(crate) late: u64,
    /// Events read without a location.
    pub(crate) unlocated: u64,
    /// Set when `--strict` stopped the run.
    pub(crate) stopped: bool,
    /// Set when a signal stopped the run: the signal, and the last line taken.
    pub(crate) interrupted: Option<(i32, u64)>,
    /// Events held for reordering that a stopped run did not process.
    pub(crate) held_unprocessed: u64,
    /// Events processed before their `--max-delay` because `--max-held` were held.
    pub(crate) released_early: u64,
}

/// The input: a file, or standard input.
pub(crate) type Input = BufReader<Box<dyn Read + Send>>;

/// Opens the events file, or standard input when there is none or it is `-`.
pub(crate) fn open_input(args: &Args) -> io::Result<Input> {
    let raw: Box<dyn Read + Send> = match &args.events {
        Some(p) if p.as_os_str() != "-" => {
            Box::new(Interruptible::new(File::open(p).map_err(|e| {
                crate::say::in_file(e, "cannot open the events file", p)
            })?))
        }
        _ => Box::new(Interruptible::new(io::stdin())),
    };
    Ok(BufReader::with_capacity(1 << 16, raw))
}

/// The reader's settings, from the command line and the net.
pub(crate) struct ReaderConfig {
    /// Attribute names and types the net reads: events share one copy of each.
    pub(crate) names: Vec<String>,
    pub(crate) format: FormatArg,
    pub(crate) space: Space,
    pub(crate) max_delay: i64,
    /// `--max-held`.
    pub(crate) max_held: usize,
    pub(crate) strict: bool,
    pub(crate) max_line_bytes: usize,
    /// Send a checkpoint mark after every this many lines (0: never).
    pub(crate) checkpoint_every: u64,
    /// Move event time on when the input is quiet this long (`--heartbeat`).
    pub(crate) heartbeat: Option<Duration>,
    /// Whether to parse on two threads (a large file: `chunks.rs`).
    pub(crate) parse_ahead: bool,
    /// `--field`, `--time-unit`, `--default-type`.
    pub(crate) fields: FieldMap,
    /// The input, for messages: its path, or "standard input".
    pub(crate) input_name: String,
    /// Where the counts are published for the progress line and `--stats-every`.
    pub(crate) live: Arc<Live>,
    /// Where batches' vectors come from: emptied ones handed back by the detector.
    pub(crate) batches: Fresh<Event>,
}

impl ReaderConfig {
    /// The reader's part of the command line (its field map checked already), for a
    /// run of `net`.
    pub(crate) fn new(args: &Args, net: &Net) -> ReaderConfig {
        ReaderConfig {
            fields: args.field_map().unwrap_or_default(),
            input_name: match &args.events {
                Some(p) if p.as_os_str() != "-" => p.display().to_string(),
                _ => "standard input".to_owned(),
            },
            names: net.names_read().into_iter().map(str::to_owned).collect(),
            format: args.format,
            space: net.space(),
            max_delay: args.max_delay,
            max_held: usize::try_from(args.max_held).unwrap_or(usize::MAX),
            strict: args.strict,
            max_line_bytes: args.max_line_bytes,
            checkpoint_every: if args.checkpoint.is_some() {
                args.checkpoint_every
            } else {
                0
            },
            heartbeat: args.heartbeat(),
            parse_ahead: match &args.events {
                Some(p) if p.as_os_str() != "-" => chunks::worth_parsing_ahead(p),
                _ => false,
            },
            live: Arc::new(Live::default()),
            batches: Fresh::unpooled(BATCH),
        }
    }

    /// The event reader this configuration asks for.
    fn event_reader<R: io::BufRead>(&self, input: R) -> EventReader<R> {
        let reader = EventReader::new(input, self.space)
            .with_max_line_bytes(self.max_line_bytes)
            .with_fields(self.fields.clone())
            .with_read_names(self.names.iter().map(String::as_str));
        match self.format {
            FormatArg::Auto => reader,
            FormatArg::Jsonl => reader.with_format(Format::JsonLines),
            FormatArg::Csv => reader.with_format(Format::Csv),
        }
    }
}

/// What the reader sends the detector.
pub(crate) enum ToDetector {
    Events(Vec<Event>),
    /// The input is quiet and the clock has moved on: event time is now this.
    Advance(Timestamp),
    /// Every line up to here is read: the detector is to checkpoint, once it has
    /// processed the events sent before.
    Mark(Position),
    /// The input has ended and every event is sent: the detector is to finish, then
    /// checkpoint (so that a run resumed from it has nothing left to do).
    Final(Position),
    /// A signal stopped the reader before the end of the input: the detector is not
    /// to finish (what is due at the last time waits for a resumed run).
    Stopped,
    /// The net was edited: the detector is to go on with this one (see `reload.rs`).
    Reload(Box<Net>),
}

/// The reader's state: its reports and counts, and the events held for reordering
/// and read but not sent yet.
struct Reader {
    cfg: ReaderConfig,
    reports: Reports,
    reorder: Reorder<Event>,
    batch: Vec<Event>,
    tx: Sender<ToDetector>,
}

/// Where a resumed run resumes: the lines up to `line` were consumed by the
/// checkpointed run, which held the events of lines `held` for reordering.
struct Replay {
    line: u64,
    held: HashSet<u64>,
}

/// Reads, parses and reorders lines; reports bad and late ones on stderr. With a
/// checkpoint's `resume` position, the lines up to it are only read again where the
/// run needs them: to learn the format, and for the events it held for reordering.
pub(crate) fn read_events(
    input: Input,
    cfg: ReaderConfig,
    late_file: Option<LateFile>,
    tx: Sender<ToDetector>,
    stop: &AtomicBool,
    resume: Option<Position>,
) -> io::Result<ReadCounts> {
    let events = cfg.event_reader(input);
    let mut r = Reader {
        reports: Reports::new(cfg.strict, late_file),
        reorder: Reorder::new(cfg.max_delay).with_cap(cfg.max_held),
        batch: cfg.batches.take(),
        tx,
        cfg,
    };
    let parse_ahead = r.cfg.parse_ahead && resume.is_none();
    let mut replay = match resume {
        Some(p) => {
            let counts = &mut r.reports.counts;
            counts.read = p.read;
            counts.rejected = p.rejected;
            counts.late = p.late;
            r.reorder =
                Reorder::resumed(r.cfg.max_delay, p.newest, p.released).with_cap(r.cfg.max_held);
            Replay {
                line: p.line,
                held: p.held.into_iter().collect(),
            }
        }
        None => Replay {
            line: 0,
            held: HashSet::new(),
        },
    };
    let last = match r.cfg.heartbeat {
        None if parse_ahead => r.read_chunks(events, stop, &mut replay)?,
        None => r.read_all(events, stop, &mut replay)?,
        Some(beat) => r.read_with_heartbeat(events, beat, stop, &mut replay)?,
    };
    if let Some(sig) = interrupt::received() {
        return r.interrupted(sig, last, replay.line);
    }
    if last < replay.line || !replay.held.is_empty() {
        return Err(io::Error::other(format!(
            "the input is not the one checkpointed: it has {last} lines, the checkpoint had read {}",
            replay.line
        )));
    }
    r.finish(last)
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
    /// Reads every line on this thread (until the run is to stop); returns the number
    /// of the last line read.
    fn read_all(
        &mut self,
        mut events: EventReader<Input>,
        stop: &AtomicBool,
        replay: &mut Replay,
    ) -> io::Result<u64> {
        while !stop.load(Ordering::Relaxed) && interrupt::received().is_none() {
            let before = events.line_number();
            let Some(next) = events.next_record() else {
                break;
            };
            let next = next.map_err(|e| self.read_failed(e, before))?;
            if !self.take(Line::Other(next), replay)? {
                break;
            }
            // What is read is sent before a read that may wait for more input: a
            // live stream's events are detected when they come, not when a batch fills.
            if events.get_ref().buffer().is_empty() && !self.flush() {
                break;
            }
        }
        Ok(events.line_number())
    }

    /// Reads every line on this thread and parses them here and on a parser thread,
    /// chunk by chunk (until the run is to stop); returns the number of the last line
    /// taken. Chunks are numbered in input order: `read` have been read, `taken`
    /// taken.
    fn read_chunks(
        &mut self,
        events: EventReader<Input>,
        stop: &AtomicBool,
        replay: &mut Replay,
    ) -> io::Result<u64> {
        let (mut lines, mut stream) = events.into_parts();
        let mut helper = chunks::Parser::spawn()?;
        let mut parser = None;
        let mut last = 0;
        let (mut read, mut taken) = (0, 0);
        let mut spare: Vec<Chunk> = Vec::new();
        let mut ended = false;
        loop {
            if !ended {
                let mut chunk = spare.pop().unwrap_or_default();
                chunk.fill(&mut lines, &mut stream, &mut parser, read);
                ended = chunk.end.is_some();
                helper.parse(read, chunk);
                read += 1;
            }
            while read - taken > chunks::AHEAD.min(taken) || (ended && taken < read) {
                let mut chunk = helper.take(taken)?;
                taken += 1;
                let go_on = self.take_chunk(&mut chunk, &mut last, stop, replay)?;
                spare.push(chunk);
                if !go_on {
                    return Ok(last);
                }
            }
            if ended {
                return Ok(last);
            }
        }
    }

    /// Takes the lines of a parsed chunk, noting the number of each in `last`;
    /// `false` when the run is to stop (at the end of the input among them).
    fn take_chunk(
        &mut self,
        chunk: &mut Chunk,
        last: &mut u64,
        stop: &AtomicBool,
        replay: &mut Replay,
    ) -> io::Result<bool> {
        for line in chunk.lines() {
            if stop.load(Ordering::Relaxed) || interrupt::received().is_some() {
                return Ok(false);
            }
            *last = match &line {
                Line::Event(no, _, _) => *no,
                Line::Other(record) => record.number(),
            };
            if !self.take(line, replay)? {
                return Ok(false);
            }
        }
        match chunk.end.take() {
            Some(End::Failed(e, before)) => Err(self.read_failed(e, before)),
            Some(End::Input) => Ok(false),
            None => Ok(self.flush()),
        }
    }

    /// Reads lines on a thread of their own, moving event time on when none come for
    /// `beat`; returns the number of the last line read.
    fn read_with_heartbeat(
        &mut self,
        events: EventReader<Input>,
        beat: Duration,
        stop: &AtomicBool,
        replay: &mut Replay,
    ) -> io::Result<u64> {
        let (lines, mut stream) = events.into_parts();
        let (tx, rx) = bounded::<Pumped>(DEPTH);
        thread::Builder::new()
            .name("input".into())
            .spawn(move || pump(lines, &tx))?;
        let mut last = 0;
        'input: loop {
            if stop.load(Ordering::Relaxed) || interrupt::received().is_some() {
                break;
            }
            match rx.recv_timeout(beat) {
                Ok(batch) => {
                    for next in batch {
                        let (no, line) = next.map_err(|e| self.read_failed(e, last))?;
                        last = no;
                        let record = match &line {
                            Ok(line) => stream.record(no, line),
                            Err(e) => Record::Bad(BadLine {
                                line: no,
                                error: e.clone(),
                            }),
                        };
                        if !self.take(Line::Other(record), replay)? {
                            break 'input;
                        }
                    }
                    if !self.flush() {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) if last >= replay.line => {
                    if !self.heartbeat() {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(last)
    }

    /// The input could not be read after line `line`: `e`, saying so.
    fn read_failed(&self, e: io::Error, line: u64) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("cannot read {} after line {line}: {e}", self.cfg.input_name),
        )
    }

    /// Takes one line (before `replay.line`, a line a resumed run only reads again);
    /// `false` when the run is to stop.
    fn take(&mut self, line: Line<'_>, replay: &mut Replay) -> io::Result<bool> {
        let no = match &line {
            Line::Event(no, _, _) => *no,
            Line::Other(record) => record.number(),
        };
        if no <= replay.line {
            match line {
                Line::Event(_, _, event) => self.replay(no, &mut replay.held, || event)?,
                Line::Other(Record::Event(line)) => {
                    self.replay(no, &mut replay.held, || line.parse())?;
                }
                Line::Other(_) => {}
            }
            return Ok(true);
        }
        if !self.line(line)? {
            return Ok(false);
        }
        if self.cfg.checkpoint_every == 0 || !no.is_multiple_of(self.cfg.checkpoint_every) {
            return Ok(true);
        }
        // The checkpoint will cover the lines up to here: their reports and their
        // copies in the --late file must be out first, so that a run killed after it
        // and resumed from it loses none.
        self.reports.flush()?;
        Ok(self.mark(no))
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

    /// Takes one line; `false` when the run is to stop.
    fn line(&mut self, line: Line<'_>) -> io::Result<bool> {
        let (no, text, parsed) = match line {
            Line::Event(no, text, parsed) => (no, text, parsed),
            Line::Other(Record::Event(line)) => (line.number(), line.text(), line.parse()),
            Line::Other(Record::Blank(_) | Record::Header(_)) => return Ok(true),
            Line::Other(Record::Bad(bad)) => {
                self.reports.counts.read += 1;
                return self.reports.rejected(&bad);
            }
        };
        self.reports.counts.read += 1;
        let ev = match parsed {
            Ok(ev) => ev,
            Err(bad) => return self.reports.rejected(&bad),
        };
        if ev.location.is_none() {
            self.reports.unlocated(no, &ev, self.cfg.space)?;
        }
        match self.reorder.offer(ev.time, no, ev) {
            Ok(now) => {
                match now {
                    Some((_, _, ev)) => self.batch.push(ev),
                    None => {
                        let early = self.reorder.released_early();
                        while let Some((_, _, ev)) = self.reorder.pop_ready() {
                            self.batch.push(ev);
                        }
                        if early == 0 && self.reorder.released_early() > 0 {
                            crate::say::warning(format_args!(
                                "line {}: --max-held {} events are held for reordering: the oldest are processed before their --max-delay from now on (`released_early` in --stats counts them)",
                                no,
                                self.cfg.max_held
                            ));
                        }
                    }
                }
                Ok(self.batch.len() < BATCH || self.flush())
            }
            Err(late) => self.reports.late(no, text, &late),
        }
    }

    /// Takes event line `no` again, before the checkpoint resumed from: to hold again
    /// the event (`parse` gives it) that the checkpointed run held.
    fn replay(
        &mut self,
        no: u64,
        held: &mut HashSet<u64>,
        parse: impl FnOnce() -> Result<Event, BadLine>,
    ) -> io::Result<()> {
        if !held.remove(&no) {
            return Ok(());
        }
        let again = parse().ok().map(|ev| self.reorder.push(ev.time, no, ev));
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
        let position = self.position(no);
        self.flush() && self.tx.send(ToDetector::Mark(position)).is_ok()
    }

    /// Where the run is after line `no`.
    fn position(&self, no: u64) -> Position {
        let counts = &self.reports.counts;
        Position {
            line: no,
            read: counts.read,
            rejected: counts.rejected,
            late: counts.late,
            newest: self.reorder.newest_seen(),
            released: self.reorder.released_up_to(),
            held: self.reorder.held_lines().collect(),
        }
    }

    /// Sends the batch; `false` if the detector has gone.
    fn flush(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::replace(&mut self.batch, self.cfg.batches.take());
        let c = &self.reports.counts;
        self.cfg.live.set(c.read, c.rejected, c.late);
        self.tx.send(ToDetector::Events(batch)).is_ok()
    }

    /// At the end of input (or the line at which `--strict` stopped, `last`):
    /// releases what is held, and with `--checkpoint`, marks the final checkpoint of
    /// the input's end.
    fn finish(mut self, last: u64) -> io::Result<ReadCounts> {
        self.reports.counts.released_early = self.reorder.released_early();
        let held = self.reorder.len() as u64;
        while let Some((_, _, ev)) = self.reorder.pop_any() {
            self.batch.push(ev);
        }
        if self.reports.counts.stopped {
            self.reports.stopped(last, held)?;
        }
        if self.flush() && self.cfg.checkpoint_every != 0 && !self.reports.counts.stopped {
            self.reports.flush()?;
            let position = self.position(last);
            let _ = self.tx.send(ToDetector::Final(position));
        }
        self.reports.finish()
    }

    /// A signal, `sig`, stopped the reader after line `last` (`replayed`: the line of
    /// the checkpoint resumed from): with `--checkpoint`, marks a checkpoint there,
    /// unless the run has not got past the one it resumed from; the events held for
    /// reordering are not processed (a run resumed from the checkpoint processes
    /// them).
    fn interrupted(mut self, sig: i32, last: u64, replayed: u64) -> io::Result<ReadCounts> {
        let mut ok = true;
        if self.cfg.checkpoint_every != 0 && last > replayed {
            self.reports.flush()?;
            ok = self.mark(last);
        } else {
            ok &= self.flush();
        }
        let counts = &mut self.reports.counts;
        counts.interrupted = Some((sig, last.max(replayed)));
        counts.held_unprocessed = self.reorder.len() as u64;
        counts.released_early = self.reorder.released_early();
        if ok {
            let _ = self.tx.send(ToDetector::Stopped);
        }
        self.reports.finish()
    }
}
