//! The runtime: tokens, places, binding rules, component components, timers and the
//! [`Detector`] that pushes events through a compiled net.
//!
//! **Architecture Invariant:** the runtime does no I/O and never reads the wall
//! clock; detections depend only on the events pushed and the times advanced to.

mod bind;
mod component;
mod detection;
mod detector;
mod dirty;
mod dispatch;
mod grid;
mod place;
mod program;
mod snapshot;
mod timer;
mod token;

pub(crate) use component::{
    Any, Close, Combine, Component, Count, Decide, During, Guard, Interval, Lasting, NearZones,
    Not, Pair, PhaseOf, Silent, Stab, Stationary, Times, Toggle,
};
pub use detection::{Detail, Detection, Phase};
pub use detector::{Detector, DetectorOptions, PushError, ReloadError, ReloadReport, Stats};
pub(crate) use dispatch::Dispatch;
pub(crate) use program::{CountGroup, Program, ZoneStabs};
pub use snapshot::RestoreError;
