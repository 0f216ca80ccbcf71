//! The errors of reading: [`LineError`] (what is wrong with one line), [`BadLine`] (a
//! bad line with its number), [`ReadError`] (a bad line or a failed read), and how
//! their messages quote the values they are about.

use std::io;

/// How many characters of an offending value an error message quotes.
const QUOTE_CHARS: usize = 60;

/// Why a line could not be read as an event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The line is longer than the cap.
    #[error("line is longer than {max} bytes")]
    TooLong {
        /// The cap, in bytes.
        max: usize,
    },
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// The line is blank (callers skip blank lines rather than parse them).
    #[error("line is blank")]
    Blank,
    /// The line is not JSON at all.
    #[error("not valid JSON: {detail}")]
    NotJson {
        /// What the JSON parser said, with the column.
        detail: String,
    },
    /// The line is JSON but not an object.
    #[error("expected a JSON object, got {got}")]
    NotObject {
        /// What it is instead.
        got: String,
    },
    /// A required field is missing.
    #[error("missing field `{field}`")]
    Missing {
        /// The field's name.
        field: &'static str,
    },
    /// A JSON object names the same field twice.
    #[error("duplicate field `{field}`")]
    Duplicate {
        /// The field's name.
        field: String,
    },
    /// `id` is neither an integer nor a string.
    #[error("`id` must be an integer or a string, got {got}")]
    BadId {
        /// The value given.
        got: String,
    },
    /// `time` is neither a number nor a string.
    #[error("`time` must be a number of seconds or an RFC 3339 string, got {got}")]
    BadTime {
        /// The value given.
        got: String,
    },
    /// `time` is a string that is not an RFC 3339 time.
    #[error("`time` {text} is not an RFC 3339 time ({reason})")]
    BadTimeText {
        /// The text given (quoted).
        text: String,
        /// Why it could not be read.
        reason: String,
    },
    /// `time` lies outside the years 0001–9999.
    #[error("time {got} is outside the years 0001-9999")]
    TimeOutOfRange {
        /// The value given.
        got: String,
    },
    /// `time`, read in seconds, lies outside the years 0001–9999 but in a shorter unit
    /// would be a time since 1970 (and before 2200).
    #[error("time {got} is outside the years 0001-9999 in seconds; in {} it would be {would_be} (time unit `{unit}`, ccpn-run's `--time-unit {unit}`)", unit.name())]
    TimeUnitHint {
        /// The value given.
        got: String,
        /// The unit it would fit in.
        unit: super::TimeUnit,
        /// The time it would then be, in RFC 3339.
        would_be: String,
    },
    /// `type` is not a string.
    #[error("`type` must be a string, got {got}")]
    BadType {
        /// The value given.
        got: String,
    },
    /// A location field is not a finite number.
    #[error("`{field}` must be a finite number, got {got}")]
    BadCoordinate {
        /// The field's name.
        field: &'static str,
        /// The value given.
        got: String,
    },
    /// A WGS84 coordinate is out of range.
    #[error("`{field}` {value} is out of range [-{limit}, {limit}]")]
    CoordinateOutOfRange {
        /// `lon` or `lat`.
        field: &'static str,
        /// The value given.
        value: String,
        /// 180 for `lon`, 90 for `lat`.
        limit: u32,
    },
    /// One location field is given without the other.
    #[error("`{given}` is given without `{missing}`")]
    HalfLocation {
        /// The field present.
        given: &'static str,
        /// The field absent.
        missing: &'static str,
    },
    /// An attribute's value is not a number, a string or a boolean.
    #[error("field `{field}` must be a number, a string or a boolean, got {got}")]
    BadAttribute {
        /// The field's name.
        field: String,
        /// What it is instead.
        got: String,
    },
    /// A CSV header line that cannot be used.
    #[error("bad CSV header: {reason}")]
    BadHeader {
        /// What is wrong with it.
        reason: String,
    },
    /// A CSV row that cannot be split into cells.
    #[error("not valid CSV: {reason}")]
    NotCsv {
        /// What is wrong with it.
        reason: String,
    },
    /// A CSV row with a different number of cells than the header.
    #[error("row has {got} cells but the header has {expected}")]
    CellCount {
        /// Cells in the header.
        expected: usize,
        /// Cells in the row.
        got: usize,
    },
    /// The first non-blank line of an input of unknown format (or of CSV input) is
    /// neither a JSON event nor a usable CSV header. The next line is tried in its place.
    #[error("not a JSON event nor a CSV header: {reason}")]
    NotEventNorHeader {
        /// Why the line is not a usable CSV header.
        reason: Box<LineError>,
    },
}

/// A line that is not an event, with its number: what [`EventReader`](super::EventReader)
/// and [`StreamParser`](super::StreamParser) report for a bad line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {error}")]
pub struct BadLine {
    /// The line's number, from 1.
    pub line: u64,
    /// What is wrong with it.
    pub error: LineError,
}

/// Why [`EventReader`](super::EventReader)'s iterator gave no event.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The input could not be read.
    #[error("cannot read the input after line {line}: {error}")]
    Io {
        /// The number of the last line read before the failure.
        line: u64,
        /// What the reader said.
        error: io::Error,
    },
    /// A line that is not an event; reading goes on with the next one.
    #[error(transparent)]
    Line(#[from] BadLine),
}

/// A number as error messages show it: `3.5`, `91.2`, `1e300`.
pub(super) fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

/// A string value quoted for an error message, cut short if long.
pub(super) fn clip(s: &str) -> String {
    if s.chars().count() <= QUOTE_CHARS {
        format!("{s:?}")
    } else {
        let short: String = s.chars().take(QUOTE_CHARS).collect();
        format!("{short:?}…")
    }
}

/// A field name for an error message, cut short if long.
pub(super) fn clip_name(s: &str) -> String {
    if s.chars().count() <= QUOTE_CHARS {
        s.to_owned()
    } else {
        let short: String = s.chars().take(QUOTE_CHARS).collect();
        format!("{short}…")
    }
}
