//! Reading input lines into [`Event`]s: JSON Lines and CSV, with a capped line reader.
//!
//! The CLI reads its input with [`Lines`] (one reused buffer, a cap on the line length),
//! skips blank lines ([`is_blank`]), picks the [`Format`] from the first non-blank line,
//! builds one [`LineParser`] and turns every further line into an [`Event`] or a
//! [`LineError`] that says, in words a user understands, what is wrong with it.
//!
//! Field rules (the same names in JSON and CSV):
//!
//! - `id`: an integer or a string, required. In CSV a cell written as a plain decimal
//!   integer (`17`, `-3`) is an integer; one with leading zeros or a `+` sign (`007`) is
//!   kept as a string so that it is echoed exactly; any other number (`3.5`) is an error.
//! - `time`: seconds since the epoch (fractional allowed, rounded to the microsecond) or
//!   an RFC 3339 string (kept in [`Event::time_text`]); required; years 0001–9999.
//! - `type`: a string, optional, `"event"` when absent (or an empty CSV cell).
//! - `x`,`y` (planar nets) or `lon`,`lat` (WGS84 nets): the location; both or neither.
//!   A JSON `null` counts as absent.
//! - anything else: an attribute (number, string or bool), kept in input order; a JSON
//!   `null` or an empty CSV cell means the attribute is absent.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::event::{Event, Id, Point, Space, Timestamp, Value};

/// The longest input line accepted by default, in bytes (1 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

/// The UTF-8 byte order mark, tolerated at the start of a line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How many characters of an offending value an error message quotes.
const QUOTE_CHARS: usize = 60;

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
}

/// Turns one input line into an [`Event`]. Built once per run.
///
/// It holds no per-line state, so it can be shared by several threads. Short string
/// values (up to 32 bytes) are shared between the events each thread reads, through
/// a table of at most 4,096 values per thread: repeated values such as `"foe"` or a
/// ship's name cost no allocation after the first.
#[derive(Clone, Debug)]
pub struct LineParser {
    /// The names of the location fields, in (x, y) order.
    axes: (&'static str, &'static str),
    /// Whether `lon`,`lat` must be in range.
    wgs84: bool,
    /// `"event"`, shared by every event without a `type`.
    default_kind: Arc<str>,
    /// The CSV columns; `None` for JSON Lines.
    columns: Option<Vec<Role>>,
    /// Names shared by every event that uses them (types, attribute names).
    known: Known,
}

/// What a field (a JSON key or a CSV column) means.
#[derive(Clone, Debug, PartialEq)]
enum Role {
    Id,
    Time,
    Type,
    X,
    Y,
    Attr(Arc<str>),
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
        let header = strip_bom(header);
        let header = header.strip_suffix(b"\r").unwrap_or(header);
        let text = to_str(header)?;
        let axes = space.axis_names();
        let mut roles = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for (i, cell) in CsvCells::new(text).enumerate() {
            let cell = cell.map_err(|e| LineError::BadHeader {
                reason: e.to_string(),
            })?;
            let name = cell.trim();
            if name.is_empty() {
                return Err(LineError::BadHeader {
                    reason: format!("column {} has no name", i + 1),
                });
            }
            if !names.insert(name.to_owned()) {
                return Err(LineError::BadHeader {
                    reason: format!("duplicate column `{}`", clip_name(name)),
                });
            }
            roles.push(role_of(name, axes).unwrap_or_else(|| Role::Attr(Arc::from(name))));
        }
        for (role, field) in [(Role::Id, "id"), (Role::Time, "time")] {
            if !roles.contains(&role) {
                return Err(LineError::BadHeader {
                    reason: format!("no `{field}` column"),
                });
            }
        }
        match (roles.contains(&Role::X), roles.contains(&Role::Y)) {
            (true, false) => {
                return Err(LineError::BadHeader {
                    reason: format!("a `{}` column but no `{}` column", axes.0, axes.1),
                })
            }
            (false, true) => {
                return Err(LineError::BadHeader {
                    reason: format!("a `{}` column but no `{}` column", axes.1, axes.0),
                })
            }
            _ => {}
        }
        Ok(LineParser {
            columns: Some(roles),
            ..LineParser::json(space)
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

    fn parse_json(&self, text: &str) -> Result<Event, LineError> {
        let mut ctx = Ctx::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = EventSeed {
            parser: self,
            ctx: &mut ctx,
        };
        let result = seed
            .deserialize(&mut de)
            .and_then(|ev| de.end().map(|()| ev));
        match result {
            Ok(ev) => ev,
            Err(e) => Err(match ctx.err.take() {
                Some(err) => err,
                None => json_error(&e, ctx.field.as_deref()),
            }),
        }
    }

    fn parse_csv(&self, text: &str, roles: &[Role]) -> Result<Event, LineError> {
        let mut partial = Partial::new();
        let mut cells = CsvCells::new(text);
        let mut n = 0;
        let mut failure = None;
        for cell in cells.by_ref() {
            let cell = cell?;
            let Some(role) = roles.get(n) else {
                n += 1;
                failure = Some(None);
                break;
            };
            n += 1;
            if let Err(e) = self.apply_cell(&mut partial, role, cell) {
                failure = Some(Some(e));
                break;
            }
        }
        if failure.is_some() {
            for cell in cells {
                cell?;
                n += 1;
            }
        }
        if n != roles.len() {
            return Err(LineError::CellCount {
                expected: roles.len(),
                got: n,
            });
        }
        if let Some(Some(e)) = failure {
            return Err(e);
        }
        self.finish(partial)
    }

    /// Interprets one CSV cell for its column.
    fn apply_cell(
        &self,
        partial: &mut Partial,
        role: &Role,
        cell: Cow<'_, str>,
    ) -> Result<(), LineError> {
        let trimmed = cell.trim();
        if trimmed.is_empty() {
            // An empty cell: the field is absent.
            return Ok(());
        }
        let scalar = match role {
            Role::Type => Scalar::Str(cell),
            Role::Id => {
                if let Some(id) = csv_int(trimmed) {
                    id
                } else if is_digits(trimmed) {
                    Scalar::Str(cell)
                } else if finite_f64(trimmed).is_some() {
                    return Err(LineError::BadId {
                        got: trimmed.to_owned(),
                    });
                } else {
                    Scalar::Str(cell)
                }
            }
            Role::Time => match finite_f64(trimmed) {
                Some(v) => match Timestamp::from_secs_f64(v) {
                    Some(t) => {
                        partial.time = Some((t, None));
                        return Ok(());
                    }
                    None => {
                        return Err(LineError::TimeOutOfRange {
                            got: trimmed.to_owned(),
                        })
                    }
                },
                None => Scalar::Str(Cow::Borrowed(trimmed)),
            },
            Role::X | Role::Y => match finite_f64(trimmed) {
                Some(v) => Scalar::F64(v),
                None => Scalar::Str(cell),
            },
            Role::Attr(_) => match trimmed {
                "true" => Scalar::Bool(true),
                "false" => Scalar::Bool(false),
                _ => match finite_f64(trimmed) {
                    Some(v) => Scalar::F64(v),
                    None => Scalar::Str(cell),
                },
            },
        };
        let name = match role {
            Role::Attr(name) => Name::Shared(name),
            _ => Name::Fixed,
        };
        self.apply(partial, role_kind(role), name, scalar)
    }

    /// Applies one field's value to the event being built.
    fn apply(
        &self,
        partial: &mut Partial,
        kind: RoleKind,
        name: Name<'_>,
        value: Scalar<'_>,
    ) -> Result<(), LineError> {
        match kind {
            RoleKind::Id => {
                partial.id = Some(match value {
                    Scalar::I64(v) => Id::Int(v),
                    Scalar::U64(v) => match i64::try_from(v) {
                        Ok(v) => Id::Int(v),
                        Err(_) => Id::UInt(v),
                    },
                    Scalar::Str(s) => Id::Str(Arc::from(&*s)),
                    other => {
                        return Err(LineError::BadId {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::Time => {
                partial.time = Some(match value {
                    Scalar::I64(v) => (int_secs(v)?, None),
                    Scalar::U64(v) => match i64::try_from(v) {
                        Ok(v) => (int_secs(v)?, None),
                        Err(_) => return Err(LineError::TimeOutOfRange { got: v.to_string() }),
                    },
                    Scalar::F64(v) => match Timestamp::from_secs_f64(v) {
                        Some(t) => (t, None),
                        None => return Err(LineError::TimeOutOfRange { got: fmt_f64(v) }),
                    },
                    Scalar::Str(s) => (parse_rfc3339(&s)?, Some(Arc::from(&*s))),
                    other => {
                        return Err(LineError::BadTime {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::Type => {
                partial.kind = Some(match value {
                    Scalar::Str(s) => self.known.get(&s),
                    other => {
                        return Err(LineError::BadType {
                            got: other.describe(),
                        })
                    }
                });
            }
            RoleKind::X | RoleKind::Y => {
                let field = if kind == RoleKind::X {
                    self.axes.0
                } else {
                    self.axes.1
                };
                let v = match value {
                    Scalar::Null => return Ok(()),
                    Scalar::I64(v) => v as f64,
                    Scalar::U64(v) => v as f64,
                    Scalar::F64(v) => v,
                    other => {
                        return Err(LineError::BadCoordinate {
                            field,
                            got: other.describe(),
                        })
                    }
                };
                if !v.is_finite() {
                    return Err(LineError::BadCoordinate {
                        field,
                        got: fmt_f64(v),
                    });
                }
                if self.wgs84 {
                    let limit = if kind == RoleKind::X { 180 } else { 90 };
                    if v.abs() > f64::from(limit) {
                        return Err(LineError::CoordinateOutOfRange {
                            field,
                            value: fmt_f64(v),
                            limit,
                        });
                    }
                }
                if kind == RoleKind::X {
                    partial.x = Some(v);
                } else {
                    partial.y = Some(v);
                }
            }
            RoleKind::Attr => {
                let value = match value {
                    Scalar::Null => return Ok(()),
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::I64(v) => Value::Num(v as f64),
                    Scalar::U64(v) => Value::Num(v as f64),
                    Scalar::F64(v) => Value::Num(v),
                    Scalar::Str(s) => Value::Str(shared_value(&s)),
                    Scalar::Compound(got) => {
                        return Err(LineError::BadAttribute {
                            field: clip_name(name.as_str()),
                            got: got.to_owned(),
                        })
                    }
                };
                let name = match name {
                    Name::Shared(n) => Arc::clone(n),
                    Name::Borrowed(n) => self.known.get(n),
                    Name::Fixed => return Ok(()),
                };
                partial.attrs.push((name, value));
            }
        }
        Ok(())
    }

    /// Checks the required fields and the location, and builds the event.
    fn finish(&self, p: Partial) -> Result<Event, LineError> {
        let id = p.id.ok_or(LineError::Missing { field: "id" })?;
        let (time, time_text) = p.time.ok_or(LineError::Missing { field: "time" })?;
        let location = match (p.x, p.y) {
            (Some(x), Some(y)) => Some(Point { x, y }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(LineError::HalfLocation {
                    given: self.axes.0,
                    missing: self.axes.1,
                })
            }
            (None, Some(_)) => {
                return Err(LineError::HalfLocation {
                    given: self.axes.1,
                    missing: self.axes.0,
                })
            }
        };
        Ok(Event {
            id,
            kind: p.kind.unwrap_or_else(|| Arc::clone(&self.default_kind)),
            time,
            time_text,
            location,
            attrs: p.attrs,
        })
    }
}

/// String values at most this long are shared between the events that carry them.
const SHARED_VALUE_LEN: usize = 32;
/// At most this many distinct values are shared per reading thread; values first
/// seen after that get their own copy, as long ones always do.
const SHARED_VALUES: usize = 4096;

thread_local! {
    /// The short string values this thread has read (`"foe"`, `"vessel"`, ship
    /// names…), each kept once: events that carry the same value share it, which
    /// saves an allocation per value read and per event freed, and lets keys that
    /// hold it compare by address.
    static VALUES: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Arc<str>>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

/// `s` as a string value: the shared copy of a short value, or a new one.
fn shared_value(s: &str) -> Arc<str> {
    if s.len() > SHARED_VALUE_LEN {
        return Arc::from(s);
    }
    VALUES.with_borrow_mut(|values| {
        if let Some(v) = values.get(s) {
            return Arc::clone(v);
        }
        let v: Arc<str> = Arc::from(s);
        if values.len() < SHARED_VALUES {
            values.insert(s.into(), Arc::clone(&v));
        }
        v
    })
}

/// A table of shared names: scanned while small, hashed when large.
#[derive(Clone, Debug, Default)]
struct Known {
    names: Vec<Arc<str>>,
    set: Option<HashSet<Arc<str>>>,
}

/// How many shared names are looked up by a linear scan.
const SCAN_KNOWN: usize = 12;

impl Known {
    fn add(&mut self, name: &str) {
        if self.find(name).is_some() {
            return;
        }
        let name: Arc<str> = Arc::from(name);
        match &mut self.set {
            Some(set) => {
                set.insert(name);
            }
            None if self.names.len() >= SCAN_KNOWN => {
                let mut set: HashSet<Arc<str>> = self.names.drain(..).collect();
                set.insert(name);
                self.set = Some(set);
            }
            None => self.names.push(name),
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<str>> {
        match &self.set {
            Some(set) => set.get(name),
            None => self.names.iter().find(|n| &***n == name),
        }
    }

    /// The shared copy of `name`, or a new one.
    fn get(&self, name: &str) -> Arc<str> {
        match self.find(name) {
            Some(n) => Arc::clone(n),
            None => Arc::from(name),
        }
    }
}

/// The special meaning of a field name, if it has one.
fn role_of(name: &str, axes: (&str, &str)) -> Option<Role> {
    match name {
        "id" => Some(Role::Id),
        "time" => Some(Role::Time),
        "type" => Some(Role::Type),
        _ if name == axes.0 => Some(Role::X),
        _ if name == axes.1 => Some(Role::Y),
        _ => None,
    }
}

/// A role without the attribute name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoleKind {
    Id,
    Time,
    Type,
    X,
    Y,
    Attr,
}

impl RoleKind {
    /// A bit for the duplicate check of the special fields.
    fn bit(self) -> u8 {
        match self {
            RoleKind::Id => 1,
            RoleKind::Time => 2,
            RoleKind::Type => 4,
            RoleKind::X => 8,
            RoleKind::Y => 16,
            RoleKind::Attr => 0,
        }
    }
}

fn role_kind(role: &Role) -> RoleKind {
    match role {
        Role::Id => RoleKind::Id,
        Role::Time => RoleKind::Time,
        Role::Type => RoleKind::Type,
        Role::X => RoleKind::X,
        Role::Y => RoleKind::Y,
        Role::Attr(_) => RoleKind::Attr,
    }
}

/// An attribute's name as the parser has it.
enum Name<'a> {
    /// A CSV column name, shared by every row.
    Shared(&'a Arc<str>),
    /// A JSON key.
    Borrowed(&'a str),
    /// Not an attribute.
    Fixed,
}

impl Name<'_> {
    fn as_str(&self) -> &str {
        match self {
            Name::Shared(n) => n,
            Name::Borrowed(n) => n,
            Name::Fixed => "",
        }
    }
}

/// One field's value as read, before it is checked.
#[derive(Debug)]
enum Scalar<'a> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
    /// An array or an object: "an array" or "an object".
    Compound(&'static str),
}

impl Scalar<'_> {
    /// The value as an error message shows it.
    fn describe(&self) -> String {
        match self {
            Scalar::Null => "null".to_owned(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::I64(v) => v.to_string(),
            Scalar::U64(v) => v.to_string(),
            Scalar::F64(v) => fmt_f64(*v),
            Scalar::Str(s) => clip(s),
            Scalar::Compound(s) => (*s).to_owned(),
        }
    }
}

/// The event being built.
struct Partial {
    id: Option<Id>,
    time: Option<(Timestamp, Option<Arc<str>>)>,
    kind: Option<Arc<str>>,
    x: Option<f64>,
    y: Option<f64>,
    attrs: Vec<(Arc<str>, Value)>,
}

impl Partial {
    fn new() -> Partial {
        Partial {
            id: None,
            time: None,
            kind: None,
            x: None,
            y: None,
            attrs: Vec::new(),
        }
    }
}

/// A number as error messages show it: `3.5`, `91.2`, `1e300`.
fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

/// A string value quoted for an error message, cut short if long.
fn clip(s: &str) -> String {
    if s.chars().count() <= QUOTE_CHARS {
        format!("{s:?}")
    } else {
        let short: String = s.chars().take(QUOTE_CHARS).collect();
        format!("{short:?}…")
    }
}

/// A field name for an error message, cut short if long.
fn clip_name(s: &str) -> String {
    if s.chars().count() <= QUOTE_CHARS {
        s.to_owned()
    } else {
        let short: String = s.chars().take(QUOTE_CHARS).collect();
        format!("{short}…")
    }
}

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

fn to_str(line: &[u8]) -> Result<&str, LineError> {
    std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)
}

/// Whole seconds since the epoch as a timestamp.
fn int_secs(v: i64) -> Result<Timestamp, LineError> {
    v.checked_mul(1_000_000)
        .and_then(Timestamp::from_micros)
        .ok_or_else(|| LineError::TimeOutOfRange { got: v.to_string() })
}

/// Parses an RFC 3339 time, rounded to the microsecond.
fn parse_rfc3339(s: &str) -> Result<Timestamp, LineError> {
    let ts: jiff::Timestamp = s.parse().map_err(|e: jiff::Error| LineError::BadTimeText {
        text: clip(s),
        reason: e.to_string(),
    })?;
    let micros = (ts.as_nanosecond() + 500).div_euclid(1000);
    i64::try_from(micros)
        .ok()
        .and_then(Timestamp::from_micros)
        .ok_or_else(|| LineError::TimeOutOfRange { got: clip(s) })
}

/// A finite number, if the text is one.
fn finite_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether the text is an optionally signed run of decimal digits.
fn is_digits(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A CSV id cell written as a plain decimal integer (no `+`, no leading zeros).
fn csv_int(s: &str) -> Option<Scalar<'static>> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
        || s == "-0"
    {
        return None;
    }
    if let Ok(v) = s.parse::<i64>() {
        return Some(Scalar::I64(v));
    }
    s.parse::<u64>().ok().map(Scalar::U64)
}

/// The cells of one CSV line, per RFC 4180 (quoted cells, `""` inside quotes).
///
/// Strict where the `csv` crate is lenient: an unterminated quote, or anything but a
/// comma after a closing quote, is an error. A quote inside an unquoted cell is kept.
struct CsvCells<'a> {
    text: &'a str,
    pos: usize,
    done: bool,
}

impl<'a> CsvCells<'a> {
    fn new(text: &'a str) -> CsvCells<'a> {
        CsvCells {
            text,
            pos: 0,
            done: false,
        }
    }

    fn quoted(&mut self, start: usize) -> Result<Cow<'a, str>, LineError> {
        let bytes = self.text.as_bytes();
        let mut owned: Option<String> = None;
        let mut seg = start + 1;
        let mut i = seg;
        loop {
            let Some(q) = bytes[i..].iter().position(|&b| b == b'"').map(|q| q + i) else {
                return Err(LineError::NotCsv {
                    reason: format!("unterminated quote starting at column {}", start + 1),
                });
            };
            if bytes.get(q + 1) == Some(&b'"') {
                owned
                    .get_or_insert_with(String::new)
                    .push_str(&self.text[seg..=q]);
                i = q + 2;
                seg = i;
                continue;
            }
            let cell = match owned {
                None => Cow::Borrowed(&self.text[seg..q]),
                Some(mut s) => {
                    s.push_str(&self.text[seg..q]);
                    Cow::Owned(s)
                }
            };
            match bytes.get(q + 1) {
                None => self.done = true,
                Some(b',') => self.pos = q + 2,
                Some(_) => {
                    return Err(LineError::NotCsv {
                        reason: format!(
                            "unexpected character after the closing quote at column {}",
                            q + 2
                        ),
                    })
                }
            }
            return Ok(cell);
        }
    }
}

impl<'a> Iterator for CsvCells<'a> {
    type Item = Result<Cow<'a, str>, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        if bytes.get(start) == Some(&b'"') {
            let cell = self.quoted(start);
            if cell.is_err() {
                self.done = true;
            }
            return Some(cell);
        }
        let cell = match bytes[start..].iter().position(|&b| b == b',') {
            Some(c) => {
                self.pos = start + c + 1;
                &self.text[start..start + c]
            }
            None => {
                self.done = true;
                &self.text[start..]
            }
        };
        Some(Ok(Cow::Borrowed(cell)))
    }
}

/// Describes a serde_json error: its message with the column, and the field if known.
fn json_error(e: &serde_json::Error, field: Option<&str>) -> LineError {
    let msg = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let base = match msg.strip_suffix(&suffix).unwrap_or(&msg) {
        // serde_json's word for `true`, `false` or `null` misspelt.
        "expected ident" | "expected value" => "expected a value",
        base => base,
    };
    let mut detail = if e.column() > 0 {
        format!("{base} at column {}", e.column())
    } else {
        base.to_owned()
    };
    if let Some(field) = field {
        detail.push_str(&format!(" (in field `{}`)", clip_name(field)));
    }
    LineError::NotJson { detail }
}

/// What the JSON visitor reports besides serde_json's own errors.
#[derive(Default)]
struct Ctx {
    /// The error to report, when the visitor failed on a value it understood.
    err: Option<LineError>,
    /// The field being read when serde_json failed.
    field: Option<String>,
}

/// Deserializes one JSON object straight into an event.
struct EventSeed<'p> {
    parser: &'p LineParser,
    ctx: &'p mut Ctx,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = Result<Event, LineError>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl EventSeed<'_> {
    fn not_object<E: de::Error>(self, got: String) -> Result<Result<Event, LineError>, E> {
        self.ctx.err = Some(LineError::NotObject { got });
        Err(E::custom("not an object"))
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = Result<Event, LineError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let parser = self.parser;
        let mut partial = Partial::new();
        let mut seen = 0u8;
        let mut names = AttrNames::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let kind = match role_of(&key, parser.axes) {
                Some(role) => role_kind(&role),
                None => RoleKind::Attr,
            };
            let dup = if kind == RoleKind::Attr {
                names.is_dup(&partial.attrs, &key)
            } else {
                let dup = seen & kind.bit() != 0;
                seen |= kind.bit();
                dup
            };
            if dup {
                self.ctx.err = Some(LineError::Duplicate {
                    field: clip_name(&key),
                });
                return Err(de::Error::custom("duplicate field"));
            }
            let value = match map.next_value_seed(ScalarSeed) {
                Ok(v) => v,
                Err(e) => {
                    self.ctx.field = Some(key.into_owned());
                    return Err(e);
                }
            };
            if kind == RoleKind::Attr && matches!(value, Scalar::Null) {
                names.add_null(&key);
                continue;
            }
            let had = partial.attrs.len();
            if let Err(err) = parser.apply(&mut partial, kind, Name::Borrowed(&key), value) {
                self.ctx.err = Some(err);
                return Err(de::Error::custom("bad field"));
            }
            if let Some((name, _)) = partial.attrs.get(had) {
                names.added(name);
            }
        }
        Ok(parser.finish(partial))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<Self::Value, A::Error> {
        self.not_object("an array".to_owned())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.not_object(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.not_object(fmt_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.not_object(format!("the string {}", clip(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.not_object("null".to_owned())
    }
}

/// How many attributes are checked for duplicates by a linear scan.
const SCAN_ATTRS: usize = 16;

/// The attribute names of one JSON object beyond those kept in the event, for the
/// duplicate check: those given as `null`, and past a few attributes, a set of all.
#[derive(Default)]
struct AttrNames {
    nulls: Vec<Arc<str>>,
    set: Option<HashSet<Arc<str>>>,
}

impl AttrNames {
    /// Whether attribute `key` was already given in this object.
    fn is_dup(&mut self, attrs: &[(Arc<str>, Value)], key: &str) -> bool {
        if let Some(set) = &self.set {
            return set.contains(key);
        }
        if attrs.len() + self.nulls.len() >= SCAN_ATTRS {
            let set: HashSet<Arc<str>> = attrs
                .iter()
                .map(|(n, _)| Arc::clone(n))
                .chain(self.nulls.iter().cloned())
                .collect();
            let dup = set.contains(key);
            self.set = Some(set);
            return dup;
        }
        attrs.iter().any(|(n, _)| &**n == key) || self.nulls.iter().any(|n| &**n == key)
    }

    /// Notes an attribute given as `null`.
    fn add_null(&mut self, key: &str) {
        let name: Arc<str> = Arc::from(key);
        self.added(&name);
        self.nulls.push(name);
    }

    /// Notes an attribute kept in the event.
    fn added(&mut self, name: &Arc<str>) {
        if let Some(set) = &mut self.set {
            set.insert(Arc::clone(name));
        }
    }
}

/// Reads an object key, borrowed from the line when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads a field's value: a scalar, or notes that it is an array or an object.
struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, a string, a boolean or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::I64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::U64(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Scalar::F64(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Skip the contents (serde_json does so without recursion) to report the field.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Compound("an array"))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Compound("an object"))
    }
}

/// Reads lines from a [`BufRead`] into one reused buffer, with a cap on their length.
///
/// A line longer than the cap is returned as [`LineError::TooLong`] and the rest of it
/// is skipped without being buffered. Lines are numbered from 1; a line that is too
/// long still counts as a line.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    max: usize,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    /// Reads from `reader`, accepting lines of up to `max` bytes (not counting the newline).
    pub fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            max,
            line: 0,
        }
    }

    /// The next line, without its `\n` (a `\r` before it is kept), and its number;
    /// `None` at the end of input.
    ///
    /// An I/O error is returned as `Some(Err(..))`; reading may go on after it.
    #[allow(clippy::type_complexity)]
    pub fn next_line(&mut self) -> Option<io::Result<(u64, Result<&[u8], LineError>)>> {
        self.buf.clear();
        let limit = u64::try_from(self.max)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let n = match Read::take(&mut self.reader, limit).read_until(b'\n', &mut self.buf) {
            Ok(n) => n,
            Err(e) => return Some(Err(e)),
        };
        if n == 0 {
            return None;
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > self.max {
            self.buf.clear();
            if let Err(e) = self.reader.skip_until(b'\n') {
                return Some(Err(e));
            }
            return Some(Ok((self.line, Err(LineError::TooLong { max: self.max }))));
        }
        Some(Ok((self.line, Ok(self.buf.as_slice()))))
    }

    /// How many lines have been read so far (the number of the last line returned).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// The underlying reader, to look at (its buffer, say) between lines.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(line: &str) -> Result<Event, LineError> {
        LineParser::json(Space::Planar).parse(line.as_bytes())
    }

    fn wgs(line: &str) -> Result<Event, LineError> {
        LineParser::json(Space::Wgs84).parse(line.as_bytes())
    }

    #[test]
    fn short_string_values_are_shared_long_ones_are_not() {
        let long = "x".repeat(SHARED_VALUE_LEN + 1);
        let line = format!(r#"{{"id":1,"time":0,"iff":"foe","note":"{long}"}}"#);
        let (a, b) = (json(&line).unwrap(), json(&line).unwrap());
        let value = |e: &Event, name: &str| match e.attr(name) {
            Some(Value::Str(s)) => s.clone(),
            other => panic!("{other:?}"),
        };
        assert!(Arc::ptr_eq(&value(&a, "iff"), &value(&b, "iff")));
        assert_eq!(&*value(&a, "note"), long);
        assert!(!Arc::ptr_eq(&value(&a, "note"), &value(&b, "note")));
    }

    fn err(r: Result<Event, LineError>) -> String {
        r.expect_err("expected an error").to_string()
    }

    fn ts(secs: f64) -> Timestamp {
        Timestamp::from_secs_f64(secs).expect("in range")
    }

    #[test]
    fn detect_format() {
        assert_eq!(Format::detect(b"{\"id\":1}"), Format::JsonLines);
        assert_eq!(Format::detect(b"  \t{"), Format::JsonLines);
        assert_eq!(Format::detect(b"\xEF\xBB\xBF{"), Format::JsonLines);
        assert_eq!(Format::detect(b"id,time"), Format::Csv);
        assert_eq!(Format::detect(b"\xEF\xBB\xBFid,time"), Format::Csv);
        assert_eq!(Format::detect(b""), Format::JsonLines);
    }

    #[test]
    fn blank() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\r"));
        assert!(is_blank(b"\xEF\xBB\xBF "));
        assert!(!is_blank(b" x"));
        assert_eq!(json("  "), Err(LineError::Blank));
    }

    #[test]
    fn json_full_event() {
        let e = json(
            r#"{"id":123,"type":"radar","time":1700000000.5,"x":12.5,"y":-3.25,"speed":12.0,"iff":false,"ship":"s17"}"#,
        )
        .unwrap();
        let want = Event::new(123, "radar", ts(1_700_000_000.5))
            .at(12.5, -3.25)
            .with("speed", 12.0)
            .with("iff", false)
            .with("ship", "s17");
        assert_eq!(e, want);
        assert_eq!(e.time.micros(), 1_700_000_000_500_000);
    }

    #[test]
    fn json_defaults_and_ids() {
        let e = json(r#"{"id":"a7","time":5}"#).unwrap();
        assert_eq!(e.id, Id::Str("a7".into()));
        assert_eq!(&*e.kind, "event");
        assert_eq!(e.location, None);
        assert_eq!(e.time_text, None);
        assert_eq!(e.time.micros(), 5_000_000);
        assert_eq!(json(r#"{"id":-4,"time":0}"#).unwrap().id, Id::Int(-4));
        assert_eq!(
            json(r#"{"id":18446744073709551615,"time":0}"#).unwrap().id,
            Id::UInt(u64::MAX)
        );
        assert_eq!(
            json(r#"{"id":9223372036854775807,"time":0}"#).unwrap().id,
            Id::Int(i64::MAX)
        );
        assert_eq!(
            json(r#"{"id":"a\"b\u00e9","time":0}"#).unwrap().id,
            Id::Str("a\"bé".into())
        );
    }

    #[test]
    fn json_bad_ids() {
        assert_eq!(
            err(json(r#"{"id":3.5,"time":0}"#)),
            "`id` must be an integer or a string, got 3.5"
        );
        assert_eq!(
            err(json(r#"{"id":true,"time":0}"#)),
            "`id` must be an integer or a string, got true"
        );
        assert_eq!(
            err(json(r#"{"id":null,"time":0}"#)),
            "`id` must be an integer or a string, got null"
        );
        assert_eq!(
            err(json(r#"{"id":[1],"time":0}"#)),
            "`id` must be an integer or a string, got an array"
        );
        assert_eq!(
            err(json(r#"{"id":{"a":1},"time":0}"#)),
            "`id` must be an integer or a string, got an object"
        );
        assert_eq!(err(json(r#"{"time":0}"#)), "missing field `id`");
    }

    #[test]
    fn json_times() {
        assert_eq!(err(json(r#"{"id":1}"#)), "missing field `time`");
        let e = json(r#"{"id":1,"time":"2024-01-01T00:00:00Z"}"#).unwrap();
        assert_eq!(e.time.micros(), 1_704_067_200_000_000);
        assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00Z"));
        let e = json(r#"{"id":1,"time":"2024-01-01T00:00:00.25+02:00"}"#).unwrap();
        assert_eq!(e.time.micros(), 1_704_067_200_250_000 - 7_200_000_000);
        assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00.25+02:00"));
        assert_eq!(
            err(json(r#"{"id":1,"time":1e300}"#)),
            "time 1e300 is outside the years 0001-9999"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":-62135596801}"#)),
            "time -62135596801 is outside the years 0001-9999"
        );
        assert!(json(r#"{"id":1,"time":-62135596800}"#).is_ok());
        assert_eq!(
            err(json(r#"{"id":1,"time":18446744073709551615}"#)),
            "time 18446744073709551615 is outside the years 0001-9999"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":true}"#)),
            "`time` must be a number of seconds or an RFC 3339 string, got true"
        );
        let m = err(json(r#"{"id":1,"time":"yesterday"}"#));
        assert!(
            m.starts_with("`time` \"yesterday\" is not an RFC 3339 time ("),
            "{m}"
        );
        let m = err(json(r#"{"id":1,"time":"2024-01-01T00:00:00"}"#));
        assert!(m.contains("is not an RFC 3339 time"), "{m}");
        assert_eq!(
            json(r#"{"id":1,"time":0.0000004}"#).unwrap().time.micros(),
            0
        );
        assert_eq!(
            json(r#"{"id":1,"time":-1.5}"#).unwrap().time.micros(),
            -1_500_000
        );
    }

    #[test]
    fn json_type() {
        assert_eq!(&*json(r#"{"id":1,"time":0,"type":"A"}"#).unwrap().kind, "A");
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"type":3}"#)),
            "`type` must be a string, got 3"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"type":null}"#)),
            "`type` must be a string, got null"
        );
    }

    #[test]
    fn json_locations() {
        assert_eq!(
            json(r#"{"id":1,"time":0,"x":1,"y":2}"#).unwrap().location,
            Some(Point { x: 1.0, y: 2.0 })
        );
        assert_eq!(
            json(r#"{"id":1,"time":0,"x":null,"y":null}"#)
                .unwrap()
                .location,
            None
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"x":1}"#)),
            "`x` is given without `y`"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"y":1}"#)),
            "`y` is given without `x`"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"x":"1","y":2}"#)),
            "`x` must be a finite number, got \"1\""
        );
        // In a planar net, lon/lat are attributes.
        let e = json(r#"{"id":1,"time":0,"lon":500,"lat":2}"#).unwrap();
        assert_eq!(e.location, None);
        assert_eq!(e.attr("lon"), Some(&Value::Num(500.0)));
        // In a WGS84 net, x/y are attributes and lon/lat are checked.
        let e = wgs(r#"{"id":1,"time":0,"lon":121.5,"lat":25.1,"x":3}"#).unwrap();
        assert_eq!(e.location, Some(Point { x: 121.5, y: 25.1 }));
        assert_eq!(e.attr("x"), Some(&Value::Num(3.0)));
        assert_eq!(
            err(wgs(r#"{"id":1,"time":0,"lon":1,"lat":91.2}"#)),
            "`lat` 91.2 is out of range [-90, 90]"
        );
        assert_eq!(
            err(wgs(r#"{"id":1,"time":0,"lon":-180.5,"lat":1}"#)),
            "`lon` -180.5 is out of range [-180, 180]"
        );
        assert!(wgs(r#"{"id":1,"time":0,"lon":-180,"lat":90}"#).is_ok());
    }

    #[test]
    fn json_attributes() {
        let e = json(r#"{"b":"s","id":1,"a":null,"time":0,"c":true,"d":-2}"#).unwrap();
        let names: Vec<&str> = e.attrs.iter().map(|(n, _)| &**n).collect();
        assert_eq!(names, ["b", "c", "d"]);
        assert_eq!(e.attr("d"), Some(&Value::Num(-2.0)));
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"tags":["a"]}"#)),
            "field `tags` must be a number, a string or a boolean, got an array"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"o":{"a":[1,{"b":2}]}}"#)),
            "field `o` must be a number, a string or a boolean, got an object"
        );
        let m = err(json(r#"{"id":1,"time":0,"big":1e999}"#));
        assert!(
            m.starts_with("not valid JSON: number out of range at column"),
            "{m}"
        );
        assert!(m.ends_with("(in field `big`)"), "{m}");
    }

    #[test]
    fn json_duplicates() {
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"x":1,"x":2,"y":0}"#)),
            "duplicate field `x`"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"a":1,"a":2}"#)),
            "duplicate field `a`"
        );
        assert_eq!(
            err(json(r#"{"id":1,"time":0,"a":null,"a":2}"#)),
            "duplicate field `a`"
        );
        assert_eq!(
            err(json(r#"{"id":1,"id":2,"time":0}"#)),
            "duplicate field `id`"
        );
        // Many attributes: the set-based check.
        let mut line = String::from(r#"{"id":1,"time":0"#);
        for i in 0..100 {
            line.push_str(&format!(r#","a{i}":{i}"#));
        }
        let ok = format!("{line}}}");
        assert_eq!(json(&ok).unwrap().attrs.len(), 100);
        assert_eq!(
            err(json(&format!("{line},\"a7\":1}}"))),
            "duplicate field `a7`"
        );
        assert_eq!(
            err(json(&format!("{line},\"a99\":1}}"))),
            "duplicate field `a99`"
        );
    }

    #[test]
    fn json_malformed() {
        assert_eq!(
            err(json(r#"{"id" 1}"#)),
            "not valid JSON: expected `:` at column 7 (in field `id`)"
        );
        assert_eq!(err(json("[1,2]")), "expected a JSON object, got an array");
        assert_eq!(err(json("5")), "expected a JSON object, got 5");
        assert_eq!(err(json("null")), "expected a JSON object, got null");
        assert_eq!(
            err(json(r#""s""#)),
            "expected a JSON object, got the string \"s\""
        );
        let m = err(json(r#"{"id":1,"time":0} x"#));
        assert!(m.starts_with("not valid JSON: trailing characters"), "{m}");
        let m = err(json(r#"{"id":1,"time":0"#));
        assert!(m.starts_with("not valid JSON: EOF"), "{m}");
        assert_eq!(
            LineParser::json(Space::Planar).parse(b"{\"id\":\"\xff\",\"time\":0}"),
            Err(LineError::NotUtf8)
        );
        assert_eq!(
            err(json("nonsense")),
            "not valid JSON: expected a value at column 2"
        );
        assert_eq!(
            err(json("{\"id\":}")),
            "not valid JSON: expected a value at column 7 (in field `id`)"
        );
    }

    #[test]
    fn json_tolerates_cr_and_bom() {
        let p = LineParser::json(Space::Planar);
        assert!(p.parse(b"{\"id\":1,\"time\":0}\r").is_ok());
        assert!(p.parse(b"\xEF\xBB\xBF{\"id\":1,\"time\":0}").is_ok());
        assert!(p.parse(b"  {\"id\":1,\"time\":0}  ").is_ok());
    }

    #[test]
    fn json_deep_nesting_does_not_overflow() {
        let deep = "[".repeat(100_000);
        assert!(json(&deep).is_err());
        let deep = format!(r#"{{"id":1,"time":0,"a":{}"#, "[".repeat(100_000));
        assert!(json(&deep).is_err());
        let deep = format!(r#"{{"id":1,"time":0,"a":{}"#, r#"{"a":"#.repeat(100_000));
        assert!(json(&deep).is_err());
        let deep = format!(
            r#"{{"id":1,"time":0,"a":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(json(&deep).is_err());
    }

    fn csv(header: &str) -> LineParser {
        LineParser::csv(header.as_bytes(), Space::Planar).unwrap()
    }

    fn csv_err(header: &str) -> String {
        LineParser::csv(header.as_bytes(), Space::Planar)
            .expect_err("expected an error")
            .to_string()
    }

    #[test]
    fn csv_header_checks() {
        assert_eq!(csv("id,time").format(), Format::Csv);
        assert_eq!(LineParser::json(Space::Planar).format(), Format::JsonLines);
        assert!(LineParser::csv(b"\xEF\xBB\xBFid, time ,x,y\r", Space::Planar).is_ok());
        assert_eq!(
            csv_err("id,time,id"),
            "bad CSV header: duplicate column `id`"
        );
        assert_eq!(
            csv_err("id,time,a,a"),
            "bad CSV header: duplicate column `a`"
        );
        assert_eq!(csv_err("id,,time"), "bad CSV header: column 2 has no name");
        assert_eq!(csv_err("id,x,y"), "bad CSV header: no `time` column");
        assert_eq!(csv_err("time"), "bad CSV header: no `id` column");
        assert_eq!(
            csv_err("id,time,x"),
            "bad CSV header: a `x` column but no `y` column"
        );
        assert!(csv_err("id,\"time").starts_with("bad CSV header: not valid CSV: unterminated"));
        assert_eq!(
            LineParser::csv(b"id,time\xff", Space::Planar).unwrap_err(),
            LineError::NotUtf8
        );
        assert!(LineParser::csv(b"id,time,x", Space::Wgs84).is_ok());
        assert!(LineParser::csv(b"id,time,lon", Space::Wgs84).is_err());
    }

    #[test]
    fn csv_rows() {
        let p = csv("id,type,time,x,y,speed,iff,ship,note");
        let e = p
            .parse(b"17,radar,1700000000.5,12.5,-3.25,12.0,false,s17,\"a,b\"")
            .unwrap();
        let want = Event::new(17, "radar", ts(1_700_000_000.5))
            .at(12.5, -3.25)
            .with("speed", 12.0)
            .with("iff", false)
            .with("ship", "s17")
            .with("note", "a,b");
        assert_eq!(e, want);
        let e = p
            .parse(b"a7,,2024-01-01T00:00:00Z,,,,,,\"say \"\"hi\"\"\"\r")
            .unwrap();
        assert_eq!(e.id, Id::Str("a7".into()));
        assert_eq!(&*e.kind, "event");
        assert_eq!(e.location, None);
        assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00Z"));
        assert_eq!(
            e.attrs,
            vec![(Arc::from("note"), Value::from("say \"hi\""))]
        );
    }

    #[test]
    fn csv_ids() {
        let p = csv("id,time");
        let id = |cell: &str| p.parse(format!("{cell},0").as_bytes()).map(|e| e.id);
        assert_eq!(id("17"), Ok(Id::Int(17)));
        assert_eq!(id("-17"), Ok(Id::Int(-17)));
        assert_eq!(id("0"), Ok(Id::Int(0)));
        assert_eq!(id("18446744073709551615"), Ok(Id::UInt(u64::MAX)));
        assert_eq!(id("007"), Ok(Id::Str("007".into())));
        assert_eq!(id("+7"), Ok(Id::Str("+7".into())));
        assert_eq!(id("-0"), Ok(Id::Str("-0".into())));
        assert_eq!(
            id("99999999999999999999999"),
            Ok(Id::Str("99999999999999999999999".into()))
        );
        assert_eq!(id("nan"), Ok(Id::Str("nan".into())));
        assert_eq!(id("\"17\""), Ok(Id::Int(17)));
        assert_eq!(
            id("3.5").unwrap_err().to_string(),
            "`id` must be an integer or a string, got 3.5"
        );
        assert_eq!(
            id("1e3").unwrap_err().to_string(),
            "`id` must be an integer or a string, got 1e3"
        );
        assert_eq!(id(""), Err(LineError::Missing { field: "id" }));
        assert_eq!(p.parse(b"1,"), Err(LineError::Missing { field: "time" }));
    }

    #[test]
    fn csv_cells_and_counts() {
        let p = csv("id,time,a,b,c");
        let e = p.parse(b"1,0, 12 ,TRUE, x ").unwrap();
        assert_eq!(e.attr("a"), Some(&Value::Num(12.0)));
        assert_eq!(e.attr("b"), Some(&Value::from("TRUE")));
        assert_eq!(e.attr("c"), Some(&Value::from(" x ")));
        let e = p.parse(b"1,0,inf,true,").unwrap();
        assert_eq!(e.attr("a"), Some(&Value::from("inf")));
        assert_eq!(e.attr("b"), Some(&Value::Bool(true)));
        assert_eq!(e.attr("c"), None);
        assert_eq!(
            p.parse(b"1,0,1,2").unwrap_err().to_string(),
            "row has 4 cells but the header has 5"
        );
        assert_eq!(
            p.parse(b"1,0,1,2,3,4").unwrap_err().to_string(),
            "row has 6 cells but the header has 5"
        );
        // The count is reported before a bad value.
        assert_eq!(
            p.parse(b"3.5,0,1,2,3,4").unwrap_err().to_string(),
            "row has 6 cells but the header has 5"
        );
        let m = p.parse(b"1,0,\"abc,2,3").unwrap_err().to_string();
        assert_eq!(m, "not valid CSV: unterminated quote starting at column 5");
        let m = p.parse(b"1,0,\"a\"b,2,3").unwrap_err().to_string();
        assert_eq!(
            m,
            "not valid CSV: unexpected character after the closing quote at column 8"
        );
        assert_eq!(
            p.parse(b"1,0,a\"b,2,3").unwrap().attr("a"),
            Some(&Value::from("a\"b"))
        );
        assert_eq!(p.parse(b"1,0,1,\xff,3"), Err(LineError::NotUtf8));
    }

    #[test]
    fn csv_times_and_locations() {
        let p = LineParser::csv(b"id,time,lon,lat,x", Space::Wgs84).unwrap();
        let e = p.parse(b"1,1.25,10,20,abc").unwrap();
        assert_eq!(e.time.micros(), 1_250_000);
        assert_eq!(e.location, Some(Point { x: 10.0, y: 20.0 }));
        assert_eq!(e.attr("x"), Some(&Value::from("abc")));
        assert_eq!(
            p.parse(b"1,1e300,,,").unwrap_err().to_string(),
            "time 1e300 is outside the years 0001-9999"
        );
        assert_eq!(
            p.parse(b"1,0,10,,").unwrap_err().to_string(),
            "`lon` is given without `lat`"
        );
        assert_eq!(
            p.parse(b"1,0,10,91.2,").unwrap_err().to_string(),
            "`lat` 91.2 is out of range [-90, 90]"
        );
        assert_eq!(
            p.parse(b"1,0,east,1,").unwrap_err().to_string(),
            "`lon` must be a finite number, got \"east\""
        );
        assert_eq!(
            p.parse(b"1,0,inf,1,").unwrap_err().to_string(),
            "`lon` must be a finite number, got \"inf\""
        );
        let m = p.parse(b"1,soon,,,").unwrap_err().to_string();
        assert!(
            m.starts_with("`time` \"soon\" is not an RFC 3339 time"),
            "{m}"
        );
        let e = p.parse(b"1,\"2024-01-01T00:00:00.25+02:00\",,,").unwrap();
        assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00.25+02:00"));
    }

    #[test]
    fn known_names_are_shared() {
        let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        for count in [3, 40] {
            let p = LineParser::json(Space::Planar)
                .with_known_names(["radar", "speed"])
                .with_known_names(names.iter().take(count).map(String::as_str));
            let line = r#"{"id":1,"time":0,"type":"radar","speed":1,"n2":"radar","other":2}"#;
            let a = p.parse(line.as_bytes()).unwrap();
            let b = p.parse(line.as_bytes()).unwrap();
            assert!(Arc::ptr_eq(&a.kind, &b.kind));
            assert!(Arc::ptr_eq(&a.attrs[0].0, &b.attrs[0].0));
            assert!(Arc::ptr_eq(&a.attrs[1].0, &b.attrs[1].0));
            assert!(!Arc::ptr_eq(&a.attrs[2].0, &b.attrs[2].0));
            assert_eq!(a, b);
            let pc = LineParser::csv(b"id,time,type", Space::Planar)
                .unwrap()
                .with_known_names(["radar"]);
            let a = pc.parse(b"1,0,radar").unwrap();
            let b = pc.parse(b"1,0,radar").unwrap();
            assert!(Arc::ptr_eq(&a.kind, &b.kind));
        }
    }

    fn lines(input: &[u8], max: usize) -> Vec<(u64, Result<Vec<u8>, LineError>)> {
        let mut r = Lines::new(input, max);
        let mut out = Vec::new();
        while let Some(item) = r.next_line() {
            let (n, line) = item.unwrap();
            out.push((n, line.map(<[u8]>::to_vec)));
        }
        out
    }

    #[test]
    fn lines_cap_and_numbers() {
        let got = lines(b"ab\n\ncdef\r\n12345678\nxy", 4);
        assert_eq!(
            got,
            vec![
                (1, Ok(b"ab".to_vec())),
                (2, Ok(b"".to_vec())),
                (3, Err(LineError::TooLong { max: 4 })),
                (4, Err(LineError::TooLong { max: 4 })),
                (5, Ok(b"xy".to_vec())),
            ]
        );
        assert_eq!(
            lines(b"abcd\nabcde", 4),
            vec![
                (1, Ok(b"abcd".to_vec())),
                (2, Err(LineError::TooLong { max: 4 }))
            ]
        );
        assert_eq!(lines(b"", 4), vec![]);
        assert_eq!(lines(b"\n", 4), vec![(1, Ok(vec![]))]);
        assert_eq!(
            lines(b"x\n", 0),
            vec![(1, Err(LineError::TooLong { max: 0 }))]
        );
    }

    #[test]
    fn lines_skip_long_line_without_buffering_it() {
        let mut input = vec![b'a'; 5_000_000];
        input.extend_from_slice(b"\nok\n");
        let small = std::io::BufReader::with_capacity(64, &input[..]);
        let mut r = Lines::new(small, 100);
        let (n, l) = r.next_line().unwrap().unwrap();
        assert_eq!((n, l), (1, Err(LineError::TooLong { max: 100 })));
        assert!(r.buf.capacity() < 1000);
        let (n, l) = r.next_line().unwrap().unwrap();
        assert_eq!((n, l), (2, Ok(&b"ok"[..])));
        assert!(r.next_line().is_none());
        assert_eq!(r.line_number(), 2);
    }

    #[test]
    fn never_panics_on_garbage() {
        let pj = LineParser::json(Space::Wgs84);
        let pc = LineParser::csv(b"id,time,lon,lat,a", Space::Wgs84).unwrap();
        let samples: &[&[u8]] = &[
            b"{",
            b"}",
            b"\"",
            b",",
            b"{\"",
            b"{\"id\"",
            b"{\"id\":",
            b"\"\"\"",
            b"\",\"",
            b"{\"id\":1,\"time\":\"\\ud800\"}",
            b"\xEF\xBB",
            b"\r",
            b"a,\"",
            b"\",",
            b"1,2,3,4,\"\"",
            b"{\"id\":1,\"time\":0,\"\":1}",
        ];
        for s in samples {
            let _ = pj.parse(s);
            let _ = pc.parse(s);
            let _ = LineParser::csv(s, Space::Planar);
        }
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        fn encode(cells: &[String], quote_all: bool) -> String {
            cells
                .iter()
                .map(|c| {
                    if quote_all || c.contains([',', '"']) || c.is_empty() {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        }

        proptest! {
            #[test]
            fn csv_cells_match_the_csv_crate(
                cells in prop::collection::vec("[a-c,\" é]{0,6}", 1..6),
                quote_all in any::<bool>(),
            ) {
                let line = encode(&cells, quote_all);
                let mine: Vec<String> = CsvCells::new(&line)
                    .map(|c| c.map(Cow::into_owned))
                    .collect::<Result<_, _>>()
                    .unwrap();
                prop_assert_eq!(&mine, &cells);
                let mut rdr = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(line.as_bytes());
                let rec = rdr.records().next().unwrap().unwrap();
                let theirs: Vec<String> = rec.iter().map(str::to_owned).collect();
                prop_assert_eq!(&mine, &theirs);
            }

            #[test]
            fn parsers_never_panic(line in prop::collection::vec(any::<u8>(), 0..64)) {
                let _ = LineParser::json(Space::Wgs84).parse(&line);
                let p = LineParser::csv(b"id,time,lon,lat,a", Space::Wgs84).unwrap();
                let _ = p.parse(&line);
                let _ = LineParser::csv(&line, Space::Planar);
            }

            #[test]
            fn json_ish_never_panics(line in "[{}\\[\\]\":,0-9a-z.e\\\\-]{0,40}") {
                let _ = LineParser::json(Space::Planar).parse(line.as_bytes());
            }
        }
    }
}
