//! A detector's limits ([`DetectorOptions`]), its counters ([`Stats`]) and the
//! error of an event it cannot take ([`PushError`]).

use serde::{Deserialize, Serialize};

use crate::event::Timestamp;

/// Limits that keep a detector's memory bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectorOptions {
    /// The most tokens the net's places may hold at once. When reached, each new
    /// token evicts the oldest token of its place with the same key (or, having none,
    /// is turned away), and [`Stats::evicted`] counts them.
    pub max_tokens: usize,
    /// The most partial sets each counting index may hold at once (levels 2 to n−1).
    /// When reached, new sets are not kept, [`Stats::refused_sets`] counts them, and
    /// matches that would have grown from them are missed.
    pub max_sets: usize,
    /// Find the zones containing an occurrence through the zone R*-tree (`true`, the
    /// default) or by testing every zone of the `Within` operators that read it
    /// (`false`: for comparison, as a rule engine without a spatial index would).
    pub zone_index: bool,
}

impl Default for DetectorOptions {
    fn default() -> Self {
        DetectorOptions {
            max_tokens: 1_000_000,
            max_sets: 1_000_000,
            zone_index: true,
        }
    }
}

/// An event could not be processed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The event is older than the detector's current time.
    #[error("event time {time} is before the detector's time {now}")]
    Late {
        /// The event's time.
        time: Timestamp,
        /// The detector's time.
        now: Timestamp,
    },
    /// A coordinate of the event's location is not a finite number (NaN, infinite).
    #[error("location ({x}, {y}) is not a pair of finite numbers")]
    NotFinite {
        /// The location's first coordinate (`x`, or longitude).
        x: f64,
        /// Its second (`y`, or latitude).
        y: f64,
    },
    /// On a `Wgs84` net, a longitude beyond ±180 or a latitude beyond ±90 degrees.
    #[error("location (lon {lon}, lat {lat}) is beyond ±180° of longitude or ±90° of latitude")]
    OutOfRange {
        /// The longitude.
        lon: f64,
        /// The latitude.
        lat: f64,
    },
}

/// Counters of a detector's work so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Events pushed and processed.
    pub processed: u64,
    /// Detections returned.
    pub detections: u64,
    /// Tokens waiting in places now, with open intervals and the live events of
    /// counting indexes (what [`DetectorOptions::max_tokens`] caps).
    pub live_tokens: usize,
    /// The most tokens ever waiting at once.
    pub peak_live_tokens: usize,
    /// Tokens evicted because [`DetectorOptions::max_tokens`] was reached.
    pub evicted: u64,
    /// Timers (periodic ticks) pending.
    pub timers: usize,
    /// Live partial sets per level (level 2 first) of the counting indexes, summed.
    pub live_sets: Vec<usize>,
    /// Partial sets not kept because [`DetectorOptions::max_sets`] was reached.
    pub refused_sets: u64,
    /// Occurrences whose firing in one operator stopped at a per-occurrence cap: at
    /// 100,000 firings (`Continuous` and `Unrestricted` pairing, `Any`'s sets,
    /// `Count`'s matches), after 1,000,000 steps of `Any`'s search for its sets, or
    /// after passing over 10,000 ineligible waiting tokens in the search for
    /// initiators (docs/operators.md, *Contexts*). What was found is fired; what lay
    /// beyond is not.
    pub truncated_firings: u64,
}
