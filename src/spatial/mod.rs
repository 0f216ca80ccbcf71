//! Geometry the operators need: distances in a net's space, zones, the zone index (a
//! grid or an R*-tree), direction relations.
//!
//! **Architecture Invariant:** this module knows nothing of Petri nets, tokens or
//! events; it answers geometric questions about points and shapes (it uses only
//! `crate::event::{Point, Space}`).

mod bounds;
mod boxes;
mod boxtree;
mod crossing;
mod direction;
mod geoline;
mod grid;
mod margin;
mod metric;
mod planar;
mod sides;
mod stab;
mod zone;

#[cfg(test)]
mod planar_tests;
#[cfg(test)]
mod stab_tests;
#[cfg(test)]
mod tests;

pub(crate) use bounds::hull;
pub(crate) use boxes::{BoxIndex, IndexKind};
pub(crate) use boxtree::slot_u32;
pub(crate) use crossing::self_crossing;
pub(crate) use direction::{Dir, RelSet};
pub(crate) use geoline::MAX_SEGMENT_M;
pub(crate) use margin::{side, Side};
pub(crate) use metric::geodesic_destination;
pub(crate) use metric::{
    distance, floor_to_i64, geodesic_distance, on_sphere, within_distance, EARTH_R, WGS84_A,
    WGS84_E2,
};
pub(crate) use sides::{Sides, MAX_CELLS};
pub(crate) use stab::ZoneIndex;
pub(crate) use zone::{Shape, Zone};
