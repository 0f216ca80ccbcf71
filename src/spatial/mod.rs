//! Geometry the operators need: distances in a net's space, zones, the zone R*-tree,
//! direction relations.
//!
//! **Architecture Invariant:** this module knows nothing of Petri nets, tokens or
//! events; it answers geometric questions about points and shapes (it uses only
//! `crate::event::{Point, Space}`).

mod bounds;
mod direction;
mod geoline;
mod metric;
// Moving zones (`insert`/`remove`/`update`) and `stab_linear` serve issue 3's later
// steps, the tests and `benches/zones.rs`.
#[allow(dead_code)]
mod stab;
mod zone;

#[cfg(test)]
mod tests;

pub(crate) use direction::{Dir, RelSet};
pub(crate) use geoline::MAX_SEGMENT_M;
pub(crate) use metric::{distance, within_distance};
#[allow(unused_imports)]
pub(crate) use stab::ZoneIndex;
pub(crate) use zone::{Shape, Zone};
