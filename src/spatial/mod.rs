//! Geometry the operators need: distances in a net's space, zones, direction relations.
//!
//! **Architecture Invariant:** this module knows nothing of Petri nets, tokens or
//! events; it answers geometric questions about points and shapes.

mod direction;
mod metric;
mod zone;

pub(crate) use direction::{Dir, RelSet};
pub(crate) use metric::{distance, within_distance};
pub(crate) use zone::{Shape, Zone};
