//! [`FieldMap`]: reading feeds that do not use ccpn's field names. Which input field
//! (JSON key or CSV column) gives which event field, the unit of numeric times, and
//! the type of events that have no `type` field.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::fields::{role_of, Role};

/// The unit of a numeric `time`: seconds since the epoch unless told otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeUnit {
    /// Seconds (the default; fractions allowed).
    #[default]
    Seconds,
    /// Milliseconds, as Java, JavaScript and many feeds write them.
    Millis,
    /// Microseconds.
    Micros,
    /// Nanoseconds.
    Nanos,
}

impl TimeUnit {
    /// Every unit, from the longest.
    pub const ALL: [TimeUnit; 4] = [
        TimeUnit::Seconds,
        TimeUnit::Millis,
        TimeUnit::Micros,
        TimeUnit::Nanos,
    ];

    /// The unit's symbol: `s`, `ms`, `us` or `ns`.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::Nanos => "ns",
        }
    }

    /// The unit's name in words, for messages.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "seconds",
            TimeUnit::Millis => "milliseconds",
            TimeUnit::Micros => "microseconds",
            TimeUnit::Nanos => "nanoseconds",
        }
    }

    /// How many of this unit make a second.
    pub(super) fn per_second(self) -> i64 {
        match self {
            TimeUnit::Seconds => 1,
            TimeUnit::Millis => 1_000,
            TimeUnit::Micros => 1_000_000,
            TimeUnit::Nanos => 1_000_000_000,
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Reads `s`, `ms`, `us` (or `µs`) and `ns`.
impl FromStr for TimeUnit {
    type Err = FieldMapError;

    fn from_str(s: &str) -> Result<TimeUnit, FieldMapError> {
        match s {
            "s" => Ok(TimeUnit::Seconds),
            "ms" => Ok(TimeUnit::Millis),
            "us" | "µs" => Ok(TimeUnit::Micros),
            "ns" => Ok(TimeUnit::Nanos),
            _ => Err(FieldMapError::BadUnit { got: s.to_owned() }),
        }
    }
}

/// A mistake in a [`FieldMap`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldMapError {
    /// A mapping that is not `NAME=SOURCE`.
    #[error("expected NAME=SOURCE (such as time=BaseDateTime), got {got:?}")]
    NotAPair {
        /// The text given.
        got: String,
    },
    /// The same event field mapped twice.
    #[error("`{field}` is mapped twice: from `{first}` and from `{second}`")]
    Twice {
        /// The event field.
        field: String,
        /// The first source.
        first: String,
        /// The second source.
        second: String,
    },
    /// A time unit that is not one of `s`, `ms`, `us`, `ns`.
    #[error("unknown time unit {got:?}: expected s, ms, us or ns")]
    BadUnit {
        /// The text given.
        got: String,
    },
    /// An empty default type.
    #[error("the default type must not be empty")]
    EmptyType,
}

/// How to read a feed whose field names are not ccpn's: which input field gives
/// which event field, the unit of numeric times, the type of events without one.
///
/// Each mapping `NAME=SOURCE` reads the event field `NAME` (`id`, `time`, `type`,
/// the location fields `lon`/`lat` or `x`/`y`, or any attribute) from the input
/// field `SOURCE`:
///
/// - a source gives only the fields mapped from it: `id=MMSI` makes `MMSI` the id
///   and not also an attribute (map it twice, `id=MMSI` and `mmsi=MMSI`, for both);
/// - an input field named like a mapped field (a `time` column beside
///   `time=BaseDateTime`) is ignored: the mapping wins;
/// - in CSV, a source or a ccpn field name matches a column whose name differs only
///   in ASCII case (`lat` reads `LAT`) when exactly one column does and none matches
///   exactly; JSON keys match exactly.
///
/// ```
/// use ccpn::io::read::{EventReader, FieldMap, TimeUnit};
/// use ccpn::Space;
///
/// let ais = "MMSI,BaseDateTime,LAT,LON,SOG,IMO\n\
///            367000001,2020-06-30T00:00:00,29.5,-94.8,12.1,\n";
/// let fields = FieldMap::new()
///     .field("id", "MMSI")?
///     .field("mmsi", "MMSI")?
///     .field("time", "BaseDateTime")?
///     .default_type("ais")?;
/// let mut events = EventReader::new(ais.as_bytes(), Space::Wgs84).with_fields(fields);
/// let event = events.next().unwrap()?;
/// assert_eq!(event.id.to_string(), "367000001");
/// assert_eq!(&*event.kind, "ais");
/// // No zone: read as UTC.
/// assert_eq!(event.time.to_rfc3339(), "2020-06-30T00:00:00Z");
/// assert_eq!(event.location.map(|p| (p.x, p.y)), Some((-94.8, 29.5)));
/// assert!(event.attr("mmsi").is_some());
/// // The empty IMO cell is an absent attribute.
/// assert!(event.attr("IMO").is_none());
///
/// let ms = FieldMap::new().time_unit(TimeUnit::Millis);
/// let line = br#"{"id":1,"time":1593475200500}"#;
/// let mut events = EventReader::new(&line[..], Space::Planar).with_fields(ms);
/// assert_eq!(events.next().unwrap()?.time.micros(), 1_593_475_200_500_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldMap {
    /// (event field, input field), in the order given.
    pairs: Vec<(String, String)>,
    unit: TimeUnit,
    default_type: Option<String>,
}

impl FieldMap {
    /// No mapping: ccpn's own field names, times in seconds, type `"event"`.
    pub fn new() -> FieldMap {
        FieldMap::default()
    }

    /// This map, reading event field `name` from input field `source`.
    ///
    /// # Errors
    ///
    /// An empty name or source, or `name` already mapped.
    pub fn field(mut self, name: &str, source: &str) -> Result<FieldMap, FieldMapError> {
        let (name, source) = (name.trim(), source.trim());
        if name.is_empty() || source.is_empty() {
            return Err(FieldMapError::NotAPair {
                got: format!("{name}={source}"),
            });
        }
        if let Some((_, first)) = self.pairs.iter().find(|(n, _)| n == name) {
            return Err(FieldMapError::Twice {
                field: name.to_owned(),
                first: first.clone(),
                second: source.to_owned(),
            });
        }
        self.pairs.push((name.to_owned(), source.to_owned()));
        Ok(self)
    }

    /// This map with one more mapping written `NAME=SOURCE` (`time=BaseDateTime`), as
    /// `ccpn-run --field` takes it.
    ///
    /// # Errors
    ///
    /// Not `NAME=SOURCE`, or `NAME` already mapped.
    pub fn parse_field(self, pair: &str) -> Result<FieldMap, FieldMapError> {
        let (name, source) = split_pair(pair)?;
        self.field(name, source)
    }

    /// This map, reading numeric times (and times written as numbers in strings) in
    /// `unit` rather than seconds.
    pub fn time_unit(mut self, unit: TimeUnit) -> FieldMap {
        self.unit = unit;
        self
    }

    /// This map, giving events without a `type` field the type `kind` rather than
    /// `"event"`.
    ///
    /// # Errors
    ///
    /// An empty `kind`.
    pub fn default_type(mut self, kind: &str) -> Result<FieldMap, FieldMapError> {
        if kind.is_empty() {
            return Err(FieldMapError::EmptyType);
        }
        self.default_type = Some(kind.to_owned());
        Ok(self)
    }

    /// The mappings, as (event field, input field), in the order given.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(n, s)| (n.as_str(), s.as_str()))
    }

    /// The unit of numeric times.
    pub fn unit(&self) -> TimeUnit {
        self.unit
    }

    /// The type of events without a `type` field, if not `"event"`.
    pub fn type_default(&self) -> Option<&str> {
        self.default_type.as_deref()
    }

    /// Whether the map changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == FieldMap::default()
    }
}

/// `NAME=SOURCE`, split.
fn split_pair(pair: &str) -> Result<(&str, &str), FieldMapError> {
    match pair.split_once('=') {
        Some((n, s)) if !n.trim().is_empty() && !s.trim().is_empty() => Ok((n, s)),
        _ => Err(FieldMapError::NotAPair {
            got: pair.to_owned(),
        }),
    }
}

/// A [`FieldMap`] resolved against a net's location fields: what the parser uses.
#[derive(Clone, Debug, Default)]
pub(super) struct Resolved {
    /// Input field → the roles it gives.
    pub(super) sources: Vec<(Box<str>, Arc<[Role]>)>,
    /// The event fields mapped: an input field of that name is ignored.
    pub(super) targets: Vec<Box<str>>,
}

impl Resolved {
    pub(super) fn new(map: &FieldMap, axes: (&'static str, &'static str)) -> Resolved {
        let mut sources: Vec<(Box<str>, Vec<Role>)> = Vec::new();
        for (name, source) in &map.pairs {
            let role = role_of(name, axes).unwrap_or_else(|| Role::Attr(Arc::from(&**name)));
            match sources.iter_mut().find(|(s, _)| **s == **source) {
                Some((_, roles)) => roles.push(role),
                None => sources.push((source.as_str().into(), vec![role])),
            }
        }
        Resolved {
            sources: sources
                .into_iter()
                .map(|(s, roles)| (s, Arc::from(roles)))
                .collect(),
            targets: map.pairs.iter().map(|(n, _)| n.as_str().into()).collect(),
        }
    }

    /// Whether nothing is mapped.
    pub(super) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The roles input field `name` gives, if the map says: `Some(&[])` for a field
    /// the map hides.
    pub(super) fn roles(&self, name: &str) -> Option<&[Role]> {
        if let Some((_, roles)) = self.sources.iter().find(|(s, _)| **s == *name) {
            return Some(roles);
        }
        self.targets.iter().any(|t| **t == *name).then_some(&[])
    }
}
