//! Reading input lines into [`Event`](crate::Event)s: JSON Lines and CSV, with a
//! capped line reader.
//!
//! [`EventReader`] does it all for a [`BufRead`](std::io::BufRead): it reads lines with
//! [`Lines`] (one reused buffer, a cap on the line length, line numbers), skips blank
//! lines ([`is_blank`]), picks the [`Format`] from the first non-blank line, uses up a
//! CSV header, and turns every further line into an event or a [`BadLine`] that
//! says, in words a user understands, what is wrong with it and on which line.
//! [`StreamParser`] is the same without the reading, for lines that come from
//! elsewhere; [`LineParser`] parses one line of a known format.
//!
//! Field rules (the same names in JSON and CSV):
//!
//! - `id`: an integer or a string, required. In CSV a cell written as a plain decimal
//!   integer (`17`, `-3`) is an integer; one with leading zeros or a `+` sign (`007`) is
//!   kept as a string so that it is echoed exactly; any other number (`3.5`) is an error.
//! - `time`: seconds since the epoch (fractional allowed, rounded to the microsecond;
//!   another unit with [`FieldMap::time_unit`]), also written in a string; or an RFC
//!   3339 string, or a date and time without a zone (`2020-06-30T00:00:00`, read as
//!   UTC), both kept in [`Event::time_text`](crate::Event::time_text); required; years
//!   0001–9999.
//! - `type`: a string, optional, `"event"` when absent (or an empty CSV cell).
//! - `x`,`y` (planar nets) or `lon`,`lat` (WGS84 nets): the location; both or neither.
//!   A JSON `null` counts as absent.
//! - anything else: an attribute (number, string or bool), kept in input order; a JSON
//!   `null` or an empty CSV cell means the attribute is absent. An array or an object
//!   makes the line bad, unless the parser knows the names the net reads
//!   ([`LineParser::with_read_names`]) and this is not one of them: then it is absent.
//!
//! A [`FieldMap`] reads feeds with other names (`time=BaseDateTime`), and in CSV a
//! column whose name differs from a field's only in case is that field when no other
//! column is.
//!
//! The files: `lines.rs` reads lines, `reader.rs` holds [`EventReader`] and
//! [`StreamParser`], `parser.rs` [`LineParser`], `json.rs` and `csv.rs` the two
//! formats (`flat.rs` the fast path of JSON Lines, for lines of plain scalars),
//! `fields.rs` the field rules they share, `mapping.rs` the
//! [`FieldMap`], `intern.rs` the sharing of
//! repeated strings, `error.rs` the errors.

mod csv;
mod error;
mod fields;
mod flat;
#[cfg(test)]
mod flat_tests;
mod intern;
mod json;
mod lines;
mod mapping;
#[cfg(test)]
mod mapping_tests;
mod parser;
mod reader;
#[cfg(test)]
mod tests;

pub use error::{BadLine, LineError, ReadError};
pub use lines::Lines;
pub use mapping::{FieldMap, FieldMapError, TimeUnit};
pub use parser::LineParser;
pub use reader::{EventLine, EventReader, Record, StreamParser};

/// The longest input line accepted by default, in bytes (1 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

/// The UTF-8 byte order mark, tolerated at the start of a line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// One JSON object per line.
    JsonLines,
    /// A header line naming the columns, then one event per row.
    Csv,
}

impl Format {
    /// Guesses the format from the first non-blank line: a line whose first character
    /// (after any byte order mark and whitespace) is `{` is JSON Lines, any other is a
    /// CSV header. An empty line gives [`Format::JsonLines`], the default.
    pub fn detect(first_non_blank_line: &[u8]) -> Format {
        let line = strip_bom(first_non_blank_line);
        match line.iter().find(|b| !b.is_ascii_whitespace()) {
            None | Some(b'{') => Format::JsonLines,
            Some(_) => Format::Csv,
        }
    }
}

/// Whether a line holds nothing but whitespace (and perhaps a byte order mark).
///
/// Callers skip such lines: [`LineParser::parse`] reports them as errors.
pub fn is_blank(line: &[u8]) -> bool {
    strip_bom(line).iter().all(u8::is_ascii_whitespace)
}

/// The line without a leading byte order mark.
fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// The line as text, if it is UTF-8.
fn to_str(line: &[u8]) -> Result<&str, LineError> {
    std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)
}
