//! What travels between workers: routed events and found detections (serde carries
//! them between processes; `Event`'s serde form is the library's).

use serde::{Deserialize, Serialize};

use ccpn::io::write::Unnumbered;
use ccpn::{Event, Timestamp};

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
    pub(crate) event: Event,
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
