//! # ccpn — composite spatio-temporal events on compositional coloured Petri nets
//!
//! Sensors (radar, sonar, AIS, GPS trackers) emit point events: id, type, time,
//! location, attributes. ccpn tells you, the moment it happens, when a *composite*
//! situation occurs — an enemy vessel enters the harbour and then the sonar sector
//! within ten minutes; an aircraft passes within 2 km of an allied ship.
//!
//! A net (a RON file) names atomic event types, zones, and composite events built
//! with operators. [`Net`] checks it and compiles it into a compositional coloured
//! Petri net — one component net per operator, joined by connection transitions, so
//! a shared sub-expression is detected once. A [`Detector`] runs it over a stream.
//!
//! ```
//! use ccpn::{Detector, Event, Net, Timestamp};
//!
//! let net = Net::from_ron("harbour.ron", r#"Net(
//!     space: Planar,
//!     zones: { "harbour": Rect(min: (0.0, 0.0), max: (10.0, 10.0)) },
//!     events: {
//!         "enemy": Atomic(type: "track", when: "iff == \"foe\""),
//!         "inside": Within(of: "enemy", zones: ["harbour"]),
//!     },
//!     outputs: ["inside"],
//! )"#)?;
//! let mut detector = Detector::new(&net);
//! let t = Timestamp::from_secs_f64(100.0).unwrap();
//! let found = detector.push(Event::new(7, "track", t).at(5.0, 5.0).with("iff", "foe"))?;
//! assert_eq!(&*found[0].event, "inside");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Operators
//!
//! - **filtering**: `Atomic` (type and `when` expression)
//! - **logical**: `Or`, `And`, `Not`, `Any` (m of n)
//! - **temporal**: `Seq`, `A`/`AStar` (aperiodic), `P`/`PStar` (periodic), `Times` (arc weight)
//! - **spatial**: `Within` (polygons, rectangles, circles, sectors, widened lines),
//!   `Dist`, `Direction` (projection-based N, S, E, W, NE, NW, SE, SW)
//! - **contexts** on pairing operators: `Recent`, `Chronicle`, `Continuous`,
//!   `Cumulative`, `Unrestricted`
//!
//! See `docs/operators.md` for each operator's meaning and `docs/architecture.md`
//! for how the crate is organised.

// `deny`, not `forbid`: `hint` allows it for one prefetch instruction, and nothing else.
#![deny(unsafe_code)]

#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench;
mod compile;
mod count;
mod event;
mod filter;
mod hint;
pub mod io;
mod model;
mod net;
pub mod partition;
mod petri;
mod runtime;
mod spatial;
mod spec;

pub use event::{Event, Id, Point, Space, TimeError, Timestamp, Value};

/// The README's library example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
pub use model::{parse_duration, NetError, NetSource, Problem};
pub use net::Net;
pub use runtime::{
    Detail, Detection, Detector, DetectorOptions, Phase, PushError, ReloadError, ReloadReport,
    RestoreError, Stats,
};
