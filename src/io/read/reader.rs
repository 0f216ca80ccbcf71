//! [`EventReader`]: events from a [`BufRead`], the format found from the input itself;
//! and [`StreamParser`], the same for lines read some other way.

use std::io::{self, BufRead};

use super::{
    is_blank, BadLine, FieldMap, Format, LineError, LineParser, Lines, ReadError,
    DEFAULT_MAX_LINE_BYTES,
};
use crate::event::{Event, Space};

/// Reads events from JSON Lines or CSV, numbering lines and reporting bad ones.
///
/// Unless told the format ([`EventReader::with_format`]), it learns it from the first
/// non-blank line ([`Format::detect`]): a JSON object starts JSON Lines, anything else
/// is taken for a CSV header. A CSV header that cannot be used is reported as a bad
/// line ([`LineError::NotEventNorHeader`]) and the next non-blank line is tried in its
/// place. Blank lines are skipped; a line longer than the cap is a bad line.
///
/// Three ways to read, from the simplest: as an [`Iterator`] of events and errors; in
/// batches ([`EventReader::read_batch`]); or a line at a time
/// ([`EventReader::next_record`]), which parses an event only when asked and lends
/// the line's text, as `ccpn-run` reads.
///
/// ```
/// use ccpn::io::read::{EventReader, LineError, ReadError};
/// use ccpn::Space;
///
/// let input = "id,time,x,y\n1,10.5,3,4\n\n2,soon,3,4\n3,12,3,4\n";
/// let mut ids = Vec::new();
/// let mut bad = Vec::new();
/// for read in EventReader::new(input.as_bytes(), Space::Planar) {
///     match read {
///         Ok(event) => ids.push(event.id.to_string()),
///         Err(ReadError::Line(line)) => bad.push(line.line),
///         Err(e) => return Err(e.into()),
///     }
/// }
/// assert_eq!(ids, ["1", "3"]);
/// assert_eq!(bad, [4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EventReader<R> {
    lines: Lines<R>,
    stream: StreamParser,
}

impl<R: BufRead> EventReader<R> {
    /// Reads events of a net in `space` from `reader`, in the format its first
    /// non-blank line shows, accepting lines of up to [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new(reader: R, space: Space) -> Self {
        EventReader {
            lines: Lines::new(reader, DEFAULT_MAX_LINE_BYTES),
            stream: StreamParser::new(space),
        }
    }

    /// This reader, reading `format` rather than learning the format from the input.
    /// For CSV, the first non-blank line is still the header.
    pub fn with_format(mut self, format: Format) -> Self {
        self.stream = self.stream.with_format(format);
        self
    }

    /// This reader, reading fields as `fields` maps them: other names, a time unit, a
    /// default type (see [`FieldMap`]).
    pub fn with_fields(mut self, fields: FieldMap) -> Self {
        self.stream = self.stream.with_fields(&fields);
        self
    }

    /// This reader, accepting lines of up to `max` bytes (not counting the newline).
    pub fn with_max_line_bytes(mut self, max: usize) -> Self {
        self.lines.max = max;
        self
    }

    /// This reader, sharing one copy of each of `names` among the events that use it
    /// as their type or as an attribute name (see [`LineParser::with_known_names`]).
    pub fn with_known_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        self.stream = self.stream.with_known_names(names);
        self
    }

    /// The next line and what it holds; `None` at the end of the input.
    ///
    /// An I/O error is returned as `Some(Err(..))`; reading may go on after it.
    pub fn next_record(&mut self) -> Option<io::Result<Record<'_>>> {
        let (number, line) = match self.lines.next_line()? {
            Ok(next) => next,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(match line {
            Ok(line) => self.stream.record(number, line),
            Err(error) => Record::Bad(BadLine {
                line: number,
                error,
            }),
        }))
    }

    /// Reads lines until `limit` events and bad lines have been added to `events`
    /// and `bad`, or the input ends; returns how many were added (0 at the end of the
    /// input). A speed-up over the iterator for a caller that hands events on in
    /// batches: one call, one loop, no error to match per event.
    ///
    /// It waits for `limit` of them or the end of the input: a caller reading a live
    /// stream that must see each event when it comes reads with
    /// [`EventReader::next_record`] instead.
    ///
    /// # Errors
    ///
    /// An error of the underlying reader; what was read before it is in `events` and
    /// `bad`, and reading may go on after it.
    ///
    /// ```
    /// use ccpn::io::read::EventReader;
    /// use ccpn::Space;
    ///
    /// let input = "{\"id\":1,\"time\":0}\n{\"id\":2}\n{\"id\":3,\"time\":1}\n";
    /// let mut reader = EventReader::new(input.as_bytes(), Space::Planar);
    /// let (mut events, mut bad) = (Vec::new(), Vec::new());
    /// assert_eq!(reader.read_batch(&mut events, &mut bad, 1024)?, 3);
    /// assert_eq!(events.len(), 2);
    /// assert_eq!(bad[0].to_string(), "line 2: missing field `time`");
    /// assert_eq!(reader.read_batch(&mut events, &mut bad, 1024)?, 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn read_batch(
        &mut self,
        events: &mut Vec<Event>,
        bad: &mut Vec<BadLine>,
        limit: usize,
    ) -> io::Result<usize> {
        let mut added = 0;
        while added < limit {
            let Some(record) = self.next_record() else {
                break;
            };
            match record? {
                Record::Event(line) => match line.parse() {
                    Ok(event) => events.push(event),
                    Err(b) => bad.push(b),
                },
                Record::Bad(b) => bad.push(b),
                Record::Blank(_) | Record::Header(_) => continue,
            }
            added += 1;
        }
        Ok(added)
    }

    /// This reader, for a net that reads only `names`: an array or an object under
    /// any other attribute name is ignored (see [`LineParser::with_read_names`]).
    pub fn with_read_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        self.stream = self.stream.with_read_names(names);
        self
    }

    /// The format of the input, once known.
    pub fn format(&self) -> Option<Format> {
        self.stream.format()
    }

    /// How many lines have been read so far (the number of the last line read).
    pub fn line_number(&self) -> u64 {
        self.lines.line_number()
    }

    /// The underlying reader, to look at (its buffer, say) between lines.
    pub fn get_ref(&self) -> &R {
        self.lines.get_ref()
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.lines.into_inner()
    }

    /// The line reader and the parser, apart: to read lines on one thread and parse
    /// them on another.
    pub fn into_parts(self) -> (Lines<R>, StreamParser) {
        (self.lines, self.stream)
    }
}

/// Events and bad lines, until the end of the input.
impl<R: BufRead> Iterator for EventReader<R> {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = self.lines.line_number();
            let record = match self.next_record()? {
                Ok(record) => record,
                Err(error) => return Some(Err(ReadError::Io { line, error })),
            };
            return Some(match record {
                Record::Event(line) => line.parse().map_err(ReadError::Line),
                Record::Bad(b) => Err(ReadError::Line(b)),
                Record::Blank(_) | Record::Header(_) => continue,
            });
        }
    }
}

/// What one line of the input is.
#[derive(Clone, Debug)]
pub enum Record<'a> {
    /// A line that holds an event (or should): [`EventLine::parse`] reads it.
    Event(EventLine<'a>),
    /// A line that cannot be read: too long, or, where the input's first line was
    /// expected, neither a JSON event nor a usable CSV header.
    Bad(BadLine),
    /// A blank line (its number), skipped.
    Blank(u64),
    /// The CSV header (its number), used up.
    Header(u64),
}

impl Record<'_> {
    /// The line's number, from 1.
    pub fn number(&self) -> u64 {
        match self {
            Record::Event(line) => line.number,
            Record::Bad(b) => b.line,
            Record::Blank(n) | Record::Header(n) => *n,
        }
    }
}

/// A line that holds an event, not parsed yet.
#[derive(Clone, Copy, Debug)]
pub struct EventLine<'a> {
    number: u64,
    text: &'a [u8],
    parser: &'a LineParser,
}

impl<'a> EventLine<'a> {
    /// The line's number, from 1.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The line as read, without its newline.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// The event on the line.
    ///
    /// # Errors
    ///
    /// The line is not a valid event ([`LineParser::parse`]).
    pub fn parse(&self) -> Result<Event, BadLine> {
        self.parser.parse(self.text).map_err(|error| BadLine {
            line: self.number,
            error,
        })
    }
}

/// Parses the lines of one input in order, learning its format from the first
/// non-blank line as [`EventReader`] does, for lines that come from elsewhere than a
/// [`BufRead`] (a message queue, another thread).
///
/// ```
/// use ccpn::io::read::{Format, Record, StreamParser};
/// use ccpn::Space;
///
/// let mut stream = StreamParser::new(Space::Planar);
/// assert!(matches!(stream.record(1, b"id,time"), Record::Header(1)));
/// assert_eq!(stream.format(), Some(Format::Csv));
/// let Record::Event(line) = stream.record(2, b"7,1.5") else { unreachable!() };
/// assert_eq!(line.parse()?.time.micros(), 1_500_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct StreamParser {
    /// A JSON Lines parser with the known names: what the input's parser is made from.
    base: LineParser,
    /// The format the input is said to be in; `None` to learn it.
    format: Option<Format>,
    /// The input's parser, once its format is known.
    parser: Option<LineParser>,
}

impl StreamParser {
    /// A parser for the lines of an input of events of a net in `space`.
    pub fn new(space: Space) -> StreamParser {
        StreamParser {
            base: LineParser::json(space),
            format: None,
            parser: None,
        }
    }

    /// This parser, reading `format` rather than learning the format from the input.
    /// For CSV, the first non-blank line is still the header.
    pub fn with_format(mut self, format: Format) -> StreamParser {
        self.format = Some(format);
        self.parser = match format {
            Format::Csv => None,
            _ => Some(self.base.clone()),
        };
        self
    }

    /// This parser, reading fields as `fields` maps them (see [`FieldMap`]). Give it
    /// before the first line.
    pub fn with_fields(mut self, fields: &FieldMap) -> StreamParser {
        self.base = self.base.with_fields(fields);
        self.parser = self.parser.map(|p| p.with_fields(fields));
        self
    }

    /// This parser, sharing one copy of each of `names` among the events that use it
    /// as their type or as an attribute name (see [`LineParser::with_known_names`]).
    pub fn with_known_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        self.base = self.base.with_known_names(names.iter().copied());
        self.parser = self.parser.map(|p| p.with_known_names(names));
        self
    }

    /// This parser, for a net that reads only `names` (see
    /// [`LineParser::with_read_names`]).
    pub fn with_read_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        self.base = self.base.with_read_names(names.iter().copied());
        self.parser = self.parser.map(|p| p.with_read_names(names));
        self
    }

    /// The format of the input, once known.
    pub fn format(&self) -> Option<Format> {
        self.parser.as_ref().map(LineParser::format)
    }

    /// The parser of the input's lines, once its format is known.
    pub fn parser(&self) -> Option<&LineParser> {
        self.parser.as_ref()
    }

    /// What line `number`, `line` (without its newline), is. Until the format is
    /// known, the first non-blank line settles it: a CSV header is used up, a JSON
    /// line is an event; one that is neither is bad, and the next is tried.
    pub fn record<'a>(&'a mut self, number: u64, line: &'a [u8]) -> Record<'a> {
        if is_blank(line) {
            return Record::Blank(number);
        }
        let parser = match &mut self.parser {
            Some(parser) => parser,
            unknown => match self.format.unwrap_or_else(|| Format::detect(line)) {
                Format::Csv => {
                    return match self.base.with_header(line) {
                        Ok(parser) => {
                            *unknown = Some(parser);
                            Record::Header(number)
                        }
                        Err(e) => Record::Bad(BadLine {
                            line: number,
                            error: LineError::NotEventNorHeader {
                                reason: Box::new(e),
                            },
                        }),
                    }
                }
                _ => unknown.insert(self.base.clone()),
            },
        };
        Record::Event(EventLine {
            number,
            text: line,
            parser,
        })
    }
}
