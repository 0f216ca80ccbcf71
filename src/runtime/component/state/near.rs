//! The zones of one `Inside` state, indexed for its margin: an R*-tree of the
//! zones' boxes, each padded by the margin, so that an occurrence is tested only
//! against the zones it may be inside by the margin or near. A zone whose padded box
//! does not hold the occurrence is farther than the margin from it: outside by the
//! margin, which is what a test of that zone would say.
//!
//! The boxes are the zone R*-tree's own ([`Zone::boxes`]: never too small, on WGS84
//! too), padded by the margin in the net's units: planar units, or on WGS84 the
//! degrees a geodesic path of 1.05 × the margin may cover there (the margin test is
//! decided on distances accurate to far better than 5 %). A zone whose padded box
//! would reach a pole or the antimeridian is tested at every occurrence, and every
//! zone is at a longitude outside (-180, 180).

use rstar::primitives::{GeomWithData, Rectangle};
use rstar::RTree;

use crate::event::{Point, Space};
use crate::spatial::{side, Side, Zone};

/// A padded box of one zone, under the zone's place in [`NearZones::zones`].
type Leaf = GeomWithData<Rectangle<[f64; 2]>, usize>;

/// The zones of an `Inside`, where they are now (moving zones move), indexed for
/// its margin.
#[derive(Clone, Debug)]
pub(crate) struct NearZones {
    space: Space,
    margin: f64,
    /// Each zone under its id, and its padded boxes in `tree` (`None`: tested at
    /// every occurrence).
    zones: Vec<(usize, Zone, Option<Vec<Leaf>>)>,
    tree: RTree<Leaf>,
    /// The zones tested at every occurrence.
    always: Vec<usize>,
}

impl NearZones {
    /// `zones` (under their ids) of an `Inside` with `margin` in `space`.
    pub(crate) fn new(space: Space, zones: Vec<(usize, Zone)>, margin: f64) -> NearZones {
        let mut near = NearZones {
            space,
            margin,
            zones: Vec::with_capacity(zones.len()),
            tree: RTree::new(),
            always: Vec::new(),
        };
        let mut leaves = Vec::new();
        for (i, (id, zone)) in zones.into_iter().enumerate() {
            let boxes = near.padded(i, &zone);
            match &boxes {
                Some(b) => leaves.extend(b.iter().copied()),
                None => near.always.push(i),
            }
            near.zones.push((id, zone, boxes));
        }
        near.tree = RTree::bulk_load(leaves);
        near
    }

    /// The zone `z`, if the state reads it.
    pub(crate) fn zone(&self, z: usize) -> Option<&Zone> {
        self.zones
            .iter()
            .find(|(id, ..)| *id == z)
            .map(|(_, zone, _)| zone)
    }

    /// Zone `z` is now `zone` (a moving zone moved).
    pub(crate) fn update(&mut self, z: usize, zone: &Zone) {
        let Some(i) = self.zones.iter().position(|(id, ..)| *id == z) else {
            return;
        };
        if let Some(old) = self.zones[i].2.take() {
            for leaf in &old {
                self.tree.remove(leaf);
            }
        } else {
            self.always.retain(|&j| j != i);
        }
        let boxes = self.padded(i, zone);
        match &boxes {
            Some(b) => {
                for leaf in b {
                    self.tree.insert(*leaf);
                }
            }
            None => self.always.push(i),
        }
        self.zones[i] = (z, zone.clone(), boxes);
    }

    /// Is `p` inside some zone by the margin (`Some(true)`), outside every zone by
    /// it (`Some(false)`), or neither (`None`)?
    pub(crate) fn verdict(&self, p: Point) -> Option<bool> {
        let mut all_out = true;
        let mut test = |zone: &Zone| match side(zone, self.space, p, self.margin) {
            Side::Inside => true,
            Side::Outside => false,
            Side::Near => {
                all_out = false;
                false
            }
        };
        let everywhere = self.space == Space::Wgs84 && !(p.x > -180.0 && p.x < 180.0);
        if everywhere {
            if self.zones.iter().any(|(_, zone, _)| test(zone)) {
                return Some(true);
            }
        } else {
            if self.always.iter().any(|&i| test(&self.zones[i].1)) {
                return Some(true);
            }
            // A zone with several boxes holding `p` is tested once for each: the
            // answer is the same.
            for leaf in self.tree.locate_all_at_point(&[p.x, p.y]) {
                if test(&self.zones[leaf.data].1) {
                    return Some(true);
                }
            }
        }
        all_out.then_some(false)
    }

    /// The boxes of zone `zone` (at place `i`) padded by the margin, or `None` when
    /// it is to be tested at every occurrence.
    fn padded(&self, i: usize, zone: &Zone) -> Option<Vec<Leaf>> {
        let mut boxes = Vec::new();
        zone.boxes(self.space, &mut boxes);
        let mut out = Vec::with_capacity(boxes.len());
        for r in boxes {
            let (lo, hi) = (r.min(), r.max());
            let (dx, dy) = match self.space {
                Space::Planar => {
                    // Rounding slack, relative to the coordinates' size.
                    let slack = 1e-9
                        * (self.margin + lo.x.abs().max(hi.x.abs()) + lo.y.abs().max(hi.y.abs()));
                    (self.margin + slack, self.margin + slack)
                }
                Space::Wgs84 => degrees(lo.y, hi.y, self.margin * 1.05)?,
            };
            let (lo, hi) = (
                Point {
                    x: lo.x - dx,
                    y: lo.y - dy,
                },
                Point {
                    x: hi.x + dx,
                    y: hi.y + dy,
                },
            );
            if self.space == Space::Wgs84 && (lo.x <= -180.0 || hi.x >= 180.0) {
                return None;
            }
            if ![lo.x, lo.y, hi.x, hi.y].iter().all(|v| v.is_finite()) {
                return None;
            }
            out.push(GeomWithData::new(
                Rectangle::from_corners([lo.x, lo.y], [hi.x, hi.y]),
                i,
            ));
        }
        Some(out)
    }
}

/// The degrees of longitude and latitude a geodesic path of `len` metres may cover
/// from latitudes `[lat_lo, lat_hi]`; `None` when it may reach a pole. A degree of
/// latitude is at least 110,574 m anywhere on WGS84 (the meridional radius of
/// curvature is at least a(1 − e²) = 6,335,439 m), and a degree of longitude at
/// latitude φ at least a cos φ · π/180 (the prime vertical radius is at least a).
fn degrees(lat_lo: f64, lat_hi: f64, len: f64) -> Option<(f64, f64)> {
    const A: f64 = 6_378_137.0;
    const MIN_M_PER_DEG_LAT: f64 = 110_574.0;
    let dlat = len / MIN_M_PER_DEG_LAT + 1e-9;
    let top = lat_lo.abs().max(lat_hi.abs()) + dlat;
    // (A NaN latitude reaches a pole too.)
    if top.is_nan() || top >= 89.0 {
        return None;
    }
    let dlon = (len / (A * top.to_radians().cos())).to_degrees() + 1e-9;
    Some((dlon, dlat))
}
