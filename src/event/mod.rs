//! Atomic events as sensors report them: id, type, time, location, attributes.
//!
//! [`Timestamp`], an instant of event time with its RFC 3339 parsing and formatting,
//! lives in `time.rs`.

mod time;

pub use time::{TimeError, Timestamp};

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// A point in the net's space: `x`/`y` for planar nets, `lon`/`lat` (degrees) for WGS84 nets.
pub type Point = geo_types::Coord<f64>;

/// An event's identifier: an integer or a string, echoed back exactly as given.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// A signed integer id.
    Int(i64),
    /// An unsigned integer id too large for `i64`.
    UInt(u64),
    /// A string id.
    Str(Arc<str>),
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Int(v) => s.serialize_i64(*v),
            Id::UInt(v) => s.serialize_u64(*v),
            Id::Str(v) => s.serialize_str(v),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(v) => write!(f, "{v}"),
            Id::UInt(v) => write!(f, "{v}"),
            Id::Str(v) => write!(f, "{v:?}"),
        }
    }
}

impl From<i64> for Id {
    fn from(v: i64) -> Id {
        Id::Int(v)
    }
}

impl From<&str> for Id {
    fn from(v: &str) -> Id {
        Id::Str(v.into())
    }
}

/// A typed attribute value: a number, a string or a boolean.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number (integers are kept as `f64`).
    Num(f64),
    /// A string.
    Str(Arc<str>),
    /// A boolean.
    Bool(bool),
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Num(v) => s.serialize_f64(*v),
            Value::Str(v) => s.serialize_str(v),
            Value::Bool(v) => s.serialize_bool(*v),
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Num(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.into())
    }
}

/// An atomic input event.
///
/// It serializes with serde in a tagged form for storage and transport between ccpn
/// processes (ids and attribute values keep their types), not in the JSON Lines
/// form ccpn reads events in.
///
/// ```
/// use ccpn::{Event, Timestamp, Value};
/// let e = Event::new(7, "radar", Timestamp::from_secs_f64(10.0).unwrap())
///     .at(3.0, 4.0)
///     .with("speed", 12.5);
/// assert_eq!(e.attr("speed"), Some(&Value::Num(12.5)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The event's id, echoed in detections.
    pub id: Id,
    /// The event's type (`type` in the input; `"event"` when absent).
    pub kind: Arc<str>,
    /// When it happened.
    pub time: Timestamp,
    /// The time as RFC 3339 text when the input gave it that way; detections echo it.
    pub time_text: Option<Arc<str>>,
    /// Where it happened, if the input said.
    pub location: Option<Point>,
    /// Every other field of the input, in input order.
    pub attrs: Vec<(Arc<str>, Value)>,
}

impl Event {
    /// A new event with no location and no attributes.
    pub fn new(id: impl Into<Id>, kind: &str, time: Timestamp) -> Event {
        Event {
            id: id.into(),
            kind: kind.into(),
            time,
            time_text: None,
            location: None,
            attrs: Vec::new(),
        }
    }

    /// This event located at (`x`, `y`) (or `lon`, `lat`).
    pub fn at(mut self, x: f64, y: f64) -> Event {
        self.location = Some(Point { x, y });
        self
    }

    /// This event with one more attribute.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Event {
        self.attrs.push((name.into(), value.into()));
        self
    }

    /// The value of attribute `name`, if the event has it.
    pub fn attr(&self, name: &str) -> Option<&Value> {
        self.attrs
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| v)
    }
}

/// Which location fields a net reads: the net's `space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
pub enum Space {
    /// `x`, `y`; distances in the same unit.
    #[default]
    Planar,
    /// `lon`, `lat` in degrees; distances in metres on the WGS84 ellipsoid.
    Wgs84,
}

impl Space {
    /// The names of the two location fields, in (x, y) order.
    pub fn axis_names(self) -> (&'static str, &'static str) {
        match self {
            Space::Planar => ("x", "y"),
            Space::Wgs84 => ("lon", "lat"),
        }
    }
}

/// An event's serde form: for storage and transport between ccpn processes (a
/// snapshot, a cluster), tagged so that ids and attribute values keep their types.
/// It is not the JSON Lines form ccpn reads events in ([`crate::io::read`] parses
/// that).
///
/// ```
/// use ccpn::{Event, Timestamp};
///
/// let e = Event::new(7, "radar", Timestamp::from_secs_f64(10.0).unwrap())
///     .at(3.0, 4.0)
///     .with("iff", "foe");
/// let bytes = postcard::to_stdvec(&e)?;
/// assert_eq!(postcard::from_bytes::<Event>(&bytes)?, e);
/// # Ok::<(), postcard::Error>(())
/// ```
mod form {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Event, Id, Point, Timestamp, Value};

    #[derive(Serialize)]
    #[serde(rename = "Event")]
    struct Out<'a> {
        id: IdOut<'a>,
        kind: &'a str,
        time: i64,
        time_text: Option<&'a str>,
        location: Option<(f64, f64)>,
        attrs: Attrs<'a>,
    }

    #[derive(Serialize)]
    #[serde(rename = "Id")]
    enum IdOut<'a> {
        Int(i64),
        UInt(u64),
        Str(&'a str),
    }

    #[derive(Serialize)]
    #[serde(rename = "Value")]
    enum ValueOut<'a> {
        Num(f64),
        Str(&'a str),
        Bool(bool),
    }

    struct Attrs<'a>(&'a [(Arc<str>, Value)]);

    impl Serialize for Attrs<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(|(k, v)| {
                let v = match v {
                    Value::Num(n) => ValueOut::Num(*n),
                    Value::Str(s) => ValueOut::Str(s),
                    Value::Bool(b) => ValueOut::Bool(*b),
                };
                (&**k, v)
            }))
        }
    }

    #[derive(Deserialize)]
    #[serde(rename = "Event")]
    struct In {
        id: IdIn,
        kind: Arc<str>,
        time: i64,
        time_text: Option<Arc<str>>,
        location: Option<(f64, f64)>,
        attrs: Vec<(Arc<str>, ValueIn)>,
    }

    #[derive(Deserialize)]
    #[serde(rename = "Id")]
    enum IdIn {
        Int(i64),
        UInt(u64),
        Str(Arc<str>),
    }

    #[derive(Deserialize)]
    #[serde(rename = "Value")]
    enum ValueIn {
        Num(f64),
        Str(Arc<str>),
        Bool(bool),
    }

    impl Serialize for Event {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            Out {
                id: match &self.id {
                    Id::Int(v) => IdOut::Int(*v),
                    Id::UInt(v) => IdOut::UInt(*v),
                    Id::Str(v) => IdOut::Str(v),
                },
                kind: &self.kind,
                time: self.time.micros(),
                time_text: self.time_text.as_deref(),
                location: self.location.map(|p| (p.x, p.y)),
                attrs: Attrs(&self.attrs),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for Event {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
            let e = In::deserialize(d)?;
            let time = Timestamp::from_micros(e.time).ok_or_else(|| {
                serde::de::Error::custom(format!("event time {} µs is out of range", e.time))
            })?;
            Ok(Event {
                id: match e.id {
                    IdIn::Int(v) => Id::Int(v),
                    IdIn::UInt(v) => Id::UInt(v),
                    IdIn::Str(v) => Id::Str(v),
                },
                kind: e.kind,
                time,
                time_text: e.time_text,
                location: e.location.map(|(x, y)| Point { x, y }),
                attrs: e
                    .attrs
                    .into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            ValueIn::Num(n) => Value::Num(n),
                            ValueIn::Str(s) => Value::Str(s),
                            ValueIn::Bool(b) => Value::Bool(b),
                        };
                        (k, v)
                    })
                    .collect(),
            })
        }
    }
}
