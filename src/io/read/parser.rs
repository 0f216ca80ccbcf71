//! [`LineParser`]: turns one line of a known format, JSON Lines or CSV, into an event.

use std::sync::Arc;

use super::csv::columns;
use super::fields::Role;
use super::intern::Known;
use super::{is_blank, strip_bom, to_str, Format, LineError};
use crate::event::{Event, Space};

/// Turns one input line into an [`Event`]. Built once per run.
///
/// It holds no per-line state, so it can be shared by several threads. Short string
/// values (up to 32 bytes) are shared between the events each thread reads, through
/// a table of at most 4,096 values per thread: repeated values such as `"foe"` or a
/// ship's name cost no allocation after the first.
#[derive(Clone, Debug)]
pub struct LineParser {
    /// The names of the location fields, in (x, y) order.
    pub(super) axes: (&'static str, &'static str),
    /// Whether `lon`,`lat` must be in range.
    pub(super) wgs84: bool,
    /// `"event"`, shared by every event without a `type`.
    pub(super) default_kind: Arc<str>,
    /// The CSV columns; `None` for JSON Lines.
    pub(super) columns: Option<Vec<Role>>,
    /// Names shared by every event that uses them (types, attribute names).
    pub(super) known: Known,
}

impl LineParser {
    /// A parser for JSON Lines in a net of the given space.
    pub fn json(space: Space) -> LineParser {
        LineParser {
            axes: space.axis_names(),
            wgs84: space == Space::Wgs84,
            default_kind: Arc::from("event"),
            columns: None,
            known: Known::default(),
        }
    }

    /// A parser for CSV rows under `header`, the CSV header line.
    ///
    /// Column names are trimmed of surrounding whitespace. Errors if the header is
    /// unreadable (not UTF-8, an unterminated quote), has an empty or duplicate column
    /// name, lacks `id` or `time`, or has only one of the space's location columns.
    pub fn csv(header: &[u8], space: Space) -> Result<LineParser, LineError> {
        LineParser::json(space).with_header(header)
    }

    /// This parser (its space and its known names) reading CSV rows under `header`.
    pub(super) fn with_header(&self, header: &[u8]) -> Result<LineParser, LineError> {
        Ok(LineParser {
            columns: Some(columns(header, self.axes)?),
            ..self.clone()
        })
    }

    /// This parser, sharing one copy of each of `names` among all the events that use it
    /// as their type or as an attribute name, rather than allocating it for each event.
    ///
    /// A speed-up only: give it the types and attribute names the net mentions.
    pub fn with_known_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        for name in names {
            self.known.add(name);
        }
        self
    }

    /// The format this parser reads.
    pub fn format(&self) -> Format {
        match self.columns {
            None => Format::JsonLines,
            Some(_) => Format::Csv,
        }
    }

    /// Parses one line, given without its trailing newline (a trailing `\r` and a
    /// leading byte order mark are tolerated).
    ///
    /// Callers skip blank lines (see [`is_blank`]); this reports them as errors.
    pub fn parse(&self, line: &[u8]) -> Result<Event, LineError> {
        let line = strip_bom(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = to_str(line)?;
        if is_blank(line) {
            return Err(LineError::Blank);
        }
        match &self.columns {
            None => self.parse_json(text),
            Some(roles) => self.parse_csv(text, roles),
        }
    }
}
