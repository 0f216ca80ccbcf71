//! Parsing on two threads: the reader thread reads the input in chunks of whole
//! lines and queues each for a parser thread, or parses it itself when the queue is
//! full; a few chunks later it takes the chunks' lines in input order, so that line
//! numbers, the reordering, the bad and late lines' reports and the checkpoints are
//! what they are when one thread parses (`reader.rs` takes them). A chunk the reader
//! needs that is still queued it parses itself: it waits only for a chunk the parser
//! thread is parsing (on a busy machine a thread can wait long to be woken).
//!
//! Only for a file of some size on a machine of more than one core
//! ([`worth_parsing_ahead`]): the detector and the writer run beside the two parsers,
//! and a small or live input gains nothing from the hand-over.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufRead};
use std::path::Path;
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{bounded, Receiver, Sender};

use ccpn::io::read::{BadLine, LineParser, Lines, Record, StreamParser};
use ccpn::Event;

/// Lines per chunk at most.
const CHUNK_LINES: usize = 2048;

/// Text per chunk at most: the line that reaches it ends the chunk. The parser
/// thread's time on a chunk goes with its text, and bursts of 350 KB (2,048 lines of
/// the threat stream) made the threat net 4–9 % slower at the median than chunks of
/// 1,024 lines in three of four series of 20–30 interleaved pairs (the fourth, in a
/// slow hour, 1 %), likely by taking more of the detector's core; halving the chunks
/// of short lines (the uniform stream's 89 bytes) cost its floor 1–8 %, so the bound
/// is on the text (docs/performance.md, *Chunks bounded by their text*).
const CHUNK_BYTES: usize = 192 << 10;

/// The text a new chunk makes room for beyond [`CHUNK_BYTES`]: the line that
/// reaches it (a longer line grows the chunk's text).
const TEXT_SLACK: usize = 4 << 10;

/// The first chunks are smaller: chunk 0 has `CHUNK_LINES >> FIRST_HALVINGS` lines at
/// most, each next one twice as many, so that the detector's first events are parsed
/// soon after the run starts (they waited 2.4–3.9 ms for five full chunks to be read,
/// 5–7 % of a 20,000-event run; docs/performance.md, *How far the targets are*).
const FIRST_HALVINGS: u64 = 3;

/// Chunks queued for the parser thread at most.
const QUEUED: usize = 2;

/// Chunks read ahead of the one the reader takes, at most (chunk `k` is taken once
/// `min(k, AHEAD)` are read beyond it: the first at once, so that the detector's
/// first events wait for one small chunk, not five).
pub(super) const AHEAD: u64 = 4;

/// Inputs smaller than this are parsed on the reader thread alone.
const PARSE_AHEAD_BYTES: u64 = 1 << 20;

/// Whether the input at `path` is to be parsed on two threads: a regular file of at
/// least 1 MiB, on a machine with at least two cores.
pub(super) fn worth_parsing_ahead(path: &Path) -> bool {
    let big_file = fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= PARSE_AHEAD_BYTES);
    big_file && thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// One line of a chunk.
enum Slot {
    /// A line that holds an event (or should): its number and where its text is in
    /// the chunk's text.
    Event {
        number: u64,
        start: usize,
        end: usize,
    },
    /// A line that cannot be read.
    Bad(BadLine),
    /// A blank line or the CSV header (its number).
    Skipped(u64),
}

/// What ended a chunk before it was full.
pub(super) enum End {
    /// The end of the input.
    Input,
    /// An I/O error, after the line of this number.
    Failed(io::Error, u64),
}

/// Whole lines read from the input, and their events once parsed.
#[derive(Default)]
pub(super) struct Chunk {
    /// The event lines' text, one after the other.
    text: Vec<u8>,
    slots: Vec<Slot>,
    /// The events of the event lines, in order, once parsed.
    events: Vec<Result<Event, BadLine>>,
    /// The input's parser, once the format is known.
    parser: Option<Arc<LineParser>>,
    /// What ended the chunk before it was full.
    pub(super) end: Option<End>,
}

/// One line of a parsed chunk, as the reader takes it.
pub(super) enum Line<'a> {
    /// An event line: its number, its text and its event.
    Event(u64, &'a [u8], Result<Event, BadLine>),
    /// Any other line.
    Other(Record<'a>),
}

impl Chunk {
    /// Reads up to [`CHUNK_LINES`] lines (fewer for the first chunks: `place` is the
    /// chunk's place in the input, see [`FIRST_HALVINGS`]) or [`CHUNK_BYTES`] of text
    /// into the chunk (emptied first), learning the format with `stream`; `parser`
    /// keeps the input's parser once it is known.
    pub(super) fn fill<R: BufRead>(
        &mut self,
        lines: &mut Lines<R>,
        stream: &mut StreamParser,
        parser: &mut Option<Arc<LineParser>>,
        place: u64,
    ) {
        let max_lines = CHUNK_LINES >> FIRST_HALVINGS.saturating_sub(place);
        self.text.clear();
        self.slots.clear();
        self.events.clear();
        self.end = None;
        // A new chunk takes its room at once: grown by doubling, each of its large
        // buffers would be allocated afresh several times (fresh pages, which the
        // kernel zeroes, for every one).
        self.slots.reserve(CHUNK_LINES);
        self.events.reserve(CHUNK_LINES);
        self.text.reserve(CHUNK_BYTES + TEXT_SLACK);
        while self.slots.len() < max_lines && self.text.len() < CHUNK_BYTES {
            let before = lines.line_number();
            let (number, line) = match lines.next_line() {
                None => {
                    self.end = Some(End::Input);
                    break;
                }
                Some(Err(e)) => {
                    self.end = Some(End::Failed(e, before));
                    break;
                }
                Some(Ok(next)) => next,
            };
            let slot = match line {
                Err(error) => Slot::Bad(BadLine {
                    line: number,
                    error,
                }),
                Ok(line) => match stream.record(number, line) {
                    Record::Event(line) => {
                        let start = self.text.len();
                        self.text.extend_from_slice(line.text());
                        Slot::Event {
                            number,
                            start,
                            end: self.text.len(),
                        }
                    }
                    Record::Bad(bad) => Slot::Bad(bad),
                    Record::Blank(n) | Record::Header(n) => Slot::Skipped(n),
                },
            };
            self.slots.push(slot);
        }
        if parser.is_none() {
            *parser = stream.parser().cloned().map(Arc::new);
        }
        self.parser.clone_from(parser);
    }

    /// Parses the chunk's event lines.
    pub(super) fn parse(&mut self) {
        let Some(parser) = &self.parser else {
            return;
        };
        for slot in &self.slots {
            if let Slot::Event { number, start, end } = *slot {
                let event = parser.parse(&self.text[start..end]);
                self.events.push(event.map_err(|error| BadLine {
                    line: number,
                    error,
                }));
            }
        }
    }

    /// The chunk's lines, in order, each with its event if it is an event line (the
    /// chunk is parsed). The chunk keeps its text, for the next fill.
    pub(super) fn lines(&mut self) -> impl Iterator<Item = Line<'_>> {
        let text = &self.text;
        let mut events = self.events.drain(..);
        self.slots.drain(..).map(move |slot| match slot {
            Slot::Event { number, start, end } => {
                let event = events.next().unwrap_or_else(|| {
                    unreachable!("a parsed chunk has an event for every event line")
                });
                Line::Event(number, &text[start..end], event)
            }
            Slot::Bad(bad) => Line::Other(Record::Bad(bad)),
            Slot::Skipped(n) => Line::Other(Record::Blank(n)),
        })
    }
}

/// A chunk and its place in the input (0 for the first).
type Numbered = (u64, Chunk);

/// The parser thread: it parses the chunks it is sent and sends them back.
pub(super) struct Parser {
    to: Sender<Numbered>,
    /// The queue the thread takes from, for the reader to take back a chunk.
    queued: Receiver<Numbered>,
    from: Receiver<Numbered>,
    /// Chunks parsed and not taken yet, by place.
    parsed: BTreeMap<u64, Chunk>,
}

impl Parser {
    /// Starts the thread; it ends when the parser is dropped.
    pub(super) fn spawn() -> io::Result<Parser> {
        let (to, todo) = bounded::<Numbered>(QUEUED);
        let (done, from) = bounded::<Numbered>(usize::try_from(AHEAD).unwrap_or(4) + 1);
        let queued = todo.clone();
        thread::Builder::new().name("parse".into()).spawn(move || {
            for (place, mut chunk) in todo {
                chunk.parse();
                if done.send((place, chunk)).is_err() {
                    return;
                }
            }
        })?;
        Ok(Parser {
            to,
            queued,
            from,
            parsed: BTreeMap::new(),
        })
    }

    /// Queues chunk number `place` for the thread, or parses it here if the queue
    /// is full.
    pub(super) fn parse(&mut self, place: u64, chunk: Chunk) {
        if let Err(e) = self.to.try_send((place, chunk)) {
            let (place, mut chunk) = e.into_inner();
            chunk.parse();
            self.parsed.insert(place, chunk);
        }
    }

    /// Chunk number `place`, parsed: parsed here if it is still queued, waited for if
    /// the thread is parsing it.
    pub(super) fn take(&mut self, place: u64) -> io::Result<Chunk> {
        loop {
            if let Some(chunk) = self.parsed.remove(&place) {
                return Ok(chunk);
            }
            let (at, chunk) = match self.from.try_recv() {
                Ok(done) => done,
                Err(_) => match self.queued.try_recv() {
                    Ok((at, mut chunk)) => {
                        chunk.parse();
                        (at, chunk)
                    }
                    Err(_) => self.from.recv().map_err(|_| gone())?,
                },
            };
            self.parsed.insert(at, chunk);
        }
    }
}

/// The parser thread has ended (it panicked).
fn gone() -> io::Error {
    io::Error::other("the parser thread has stopped")
}
