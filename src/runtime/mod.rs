//! The runtime: tokens, places, binding rules, component units, timers and the
//! [`Detector`] that pushes events through a compiled net.
//!
//! **Architecture Invariant:** the runtime does no I/O and never reads the wall
//! clock; detections depend only on the events pushed and the times advanced to.

mod bind;
mod detection;
mod detector;
mod dirty;
mod grid;
mod place;
mod snapshot;
mod timer;
mod token;
mod unit;

pub use detection::{Detail, Detection};
pub use detector::{Detector, DetectorOptions, PushError, Stats};
pub use snapshot::RestoreError;
pub(crate) use unit::{Any, Count, Guard, Interval, Not, Pair, Stab, Times, Unit};
