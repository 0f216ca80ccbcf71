//! What travels between workers: routed events and found detections, in forms
//! that serde can carry between processes.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use ccpn::io::write::Unnumbered;
use ccpn::{Event, Id, Point, Timestamp, Value};

/// Timely's time: event time in microseconds, shifted so that the earliest
/// representable time is 0.
pub(crate) type Time = u64;

/// The timely time of event time `t`.
pub(crate) fn time_of(t: Timestamp) -> Time {
    time_of_micros(t.micros())
}

/// The timely time of an event time in microseconds.
pub(crate) fn time_of_micros(micros: i64) -> Time {
    micros.wrapping_sub(Timestamp::MIN.micros()) as u64
}

/// The event time of timely time `t` (saturating at the latest representable).
pub(crate) fn timestamp_of(t: Time) -> Timestamp {
    let micros = (t as i64).wrapping_add(Timestamp::MIN.micros());
    Timestamp::from_micros(micros).unwrap_or(Timestamp::MAX)
}

/// An event on its way to a partition.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Routed {
    pub(crate) partition: u32,
    /// Its place in the input's processing order.
    pub(crate) order: u64,
    pub(crate) event: Wire,
}

/// A detection on its way to be written.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Found {
    /// Event time, microseconds.
    pub(crate) time: i64,
    pub(crate) partition: u32,
    /// Its number among its partition's detections.
    pub(crate) order: u64,
    /// Index of its output in the net's list.
    pub(crate) output: u32,
    pub(crate) line: Unnumbered,
}

/// [`Event`] as serde derives it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Wire {
    id: WireId,
    kind: Arc<str>,
    time: i64,
    time_text: Option<Arc<str>>,
    location: Option<(f64, f64)>,
    attrs: Vec<(Arc<str>, WireValue)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum WireId {
    Int(i64),
    UInt(u64),
    Str(Arc<str>),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum WireValue {
    Num(f64),
    Str(Arc<str>),
    Bool(bool),
}

impl From<Event> for Wire {
    fn from(e: Event) -> Wire {
        Wire {
            id: match e.id {
                Id::Int(v) => WireId::Int(v),
                Id::UInt(v) => WireId::UInt(v),
                Id::Str(v) => WireId::Str(v),
            },
            kind: e.kind,
            time: e.time.micros(),
            time_text: e.time_text,
            location: e.location.map(|p| (p.x, p.y)),
            attrs: e
                .attrs
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Num(n) => WireValue::Num(n),
                        Value::Str(s) => WireValue::Str(s),
                        Value::Bool(b) => WireValue::Bool(b),
                    };
                    (k, v)
                })
                .collect(),
        }
    }
}

impl From<Wire> for Event {
    fn from(w: Wire) -> Event {
        Event {
            id: match w.id {
                WireId::Int(v) => Id::Int(v),
                WireId::UInt(v) => Id::UInt(v),
                WireId::Str(v) => Id::Str(v),
            },
            kind: w.kind,
            // Times come from events that were valid where they were read.
            time: Timestamp::from_micros(w.time).unwrap_or(Timestamp::MAX),
            time_text: w.time_text,
            location: w.location.map(|(x, y)| Point { x, y }),
            attrs: w
                .attrs
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        WireValue::Num(n) => Value::Num(n),
                        WireValue::Str(s) => Value::Str(s),
                        WireValue::Bool(b) => Value::Bool(b),
                    };
                    (k, v)
                })
                .collect(),
        }
    }
}

impl Wire {
    /// The event's timely time.
    pub(crate) fn time(&self) -> Time {
        time_of_micros(self.time)
    }
}
