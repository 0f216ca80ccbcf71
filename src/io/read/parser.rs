//! [`LineParser`]: turns one line of a known format, JSON Lines or CSV, into an event.

use std::sync::Arc;

use super::csv::columns;
use super::fields::Role;
use super::intern::Known;
use super::mapping::{Resolved, TimeUnit};
use super::{is_blank, strip_bom, to_str, FieldMap, Format, LineError};
use crate::event::{Event, Space};

/// Turns one input line into an [`Event`]. Built once per run.
///
/// It holds no per-line state, so it can be shared by several threads. Short string
/// values (up to 32 bytes), and types and attribute names it was not given
/// ([`LineParser::with_known_names`]), are shared between the events each thread
/// reads, through a table of at most 4,096 strings per thread: repeated values such
/// as `"foe"` or a ship's name cost no allocation after the first.
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
    /// Which input fields give which event fields.
    pub(super) map: Arc<Resolved>,
    /// The unit of numeric times.
    pub(super) unit: TimeUnit,
    /// Whether the known names are all the attributes the net reads: an array or an
    /// object under any other name is then ignored.
    pub(super) read_only: bool,
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
            map: Arc::default(),
            unit: TimeUnit::Seconds,
            read_only: false,
        }
    }

    /// This parser, reading fields as `fields` maps them (see [`FieldMap`]).
    ///
    /// ```
    /// use ccpn::io::read::{FieldMap, LineParser};
    /// use ccpn::Space;
    ///
    /// let fields = FieldMap::new().parse_field("time=ts")?.parse_field("id=icao24")?;
    /// let parser = LineParser::json(Space::Wgs84).with_fields(&fields);
    /// let event = parser.parse(br#"{"icao24":"4ca7b3","ts":"1700000000"}"#)?;
    /// assert_eq!(event.id, ccpn::Id::Str("4ca7b3".into()));
    /// assert_eq!(event.time.micros(), 1_700_000_000_000_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_fields(mut self, fields: &FieldMap) -> LineParser {
        self.map = Arc::new(Resolved::new(fields, self.axes));
        self.unit = fields.unit();
        self.default_kind = Arc::from(fields.type_default().unwrap_or("event"));
        self
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
            columns: Some(columns(header, self.axes, &self.map)?),
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

    /// This parser, for a net that reads only `names` (its types and the attributes
    /// its filters and keys read, [`Net::names_read`](crate::Net::names_read)): they
    /// are shared as [`LineParser::with_known_names`] shares them, and an attribute
    /// whose value is an array or an object is ignored (absent) unless it is one of
    /// them, rather than making the line bad.
    ///
    /// ```
    /// use ccpn::io::read::LineParser;
    /// use ccpn::Space;
    ///
    /// let parser = LineParser::json(Space::Planar).with_read_names(["speed"]);
    /// let event = parser.parse(br#"{"id":1,"time":0,"tags":["a"],"speed":3}"#)?;
    /// assert!(event.attr("tags").is_none());
    /// assert!(parser.parse(br#"{"id":1,"time":0,"speed":[3]}"#).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_read_names<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        self.read_only = true;
        self.with_known_names(names)
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
