//! The zones of one `Inside` state, indexed for its margin: the zones' boxes, each
//! padded by the margin, in a [`BoxIndex`] (the grid of the zone index, or its
//! R*-tree), so that an occurrence is tested only against the zones it may be inside
//! by the margin or near. A zone whose padded box does not hold the occurrence is
//! farther than the margin from it: outside by the margin, which is what a test of
//! that zone would say (the index may return boxes near the point as well: their
//! zones are tested, and say the same).
//!
//! The boxes are the zone R*-tree's own ([`Zone::boxes`]: never too small, on WGS84
//! too), padded by the margin in the net's units: planar units, or on WGS84 the
//! degrees a geodesic path of 1.05 × the margin may cover there (the margin test is
//! decided on distances accurate to far better than 5 %). A zone whose padded box
//! would reach a pole or the antimeridian is tested at every occurrence, and every
//! zone is at a longitude outside (-180, 180).
//!
//! A polygon, multipolygon, rectangle or circle also has a raster over its padded
//! boxes ([`Sides`]) whose cells lie wholly on one side of its boundary by the
//! margin (for straight edges, by that same padding): a report in such a cell takes
//! the cell's side without a test. The rasters of one `Inside` share 2^20 cells and
//! 2^23 tests to lay them out. Over them, one raster of all the zones together
//! ([`Sides::union`]) gives most reports the state's verdict in one lookup, before
//! the index is asked.

use geo_types::Rect;

use crate::event::{Point, Space};
use crate::spatial::{hull, side, slot_u32, BoxIndex, IndexKind, Side, Sides, Zone, MAX_CELLS};

/// A zone's boxes, padded by the margin.
type Padded = Vec<Rect<f64>>;

/// The cells the rasters of one `Inside` have at most, all its zones together.
const STATE_CELLS: usize = 1 << 20;

/// The edge-against-cell tests laying out the rasters of one `Inside` may take, all
/// its zones together (about a tenth of a second): past them, zones get none.
const STATE_TESTS: usize = 1 << 23;

/// The cells of the raster of all of one `Inside`'s zones together.
const UNION_CELLS: usize = 1 << 16;

/// A raster of fewer cells than this is not worth its lookup.
const MIN_CELLS: usize = 16;

/// The cells each zone's raster may have in an `Inside` of `zones` zones.
fn cells_per_zone(zones: usize) -> usize {
    (STATE_CELLS / zones.max(1)).min(MAX_CELLS)
}

/// One zone of an `Inside`.
#[derive(Clone, Debug)]
struct Near {
    /// The zone's id in the model.
    id: usize,
    zone: Zone,
    /// Its boxes padded by the margin, in the index (`None`: tested at every
    /// occurrence).
    padded: Option<Padded>,
    /// Where over its padded boxes its side is settled by the margin (see
    /// [`Sides`]), for a polygon, multipolygon, rectangle or circle.
    sides: Option<Sides>,
}

/// The zones of an `Inside`, where they are now (moving zones move), indexed for
/// its margin.
#[derive(Clone, Debug)]
pub(crate) struct NearZones {
    space: Space,
    margin: f64,
    /// Each zone, its padded boxes in `index` under its place here.
    zones: Vec<Near>,
    index: BoxIndex,
    /// The zones tested at every occurrence.
    always: Vec<usize>,
    /// The tests left for laying rasters out ([`STATE_TESTS`] at first).
    tests: usize,
    /// The zones' rasters together ([`Sides::union`]): the verdict of most reports
    /// in one lookup. None while a zone is tested at every occurrence, and from the
    /// first move of a moving zone on.
    all: Option<Box<Sides>>,
}

impl NearZones {
    /// `zones` (under their ids) of an `Inside` with `margin` in `space`.
    pub(crate) fn new(space: Space, zones: Vec<(usize, Zone)>, margin: f64) -> NearZones {
        let mut near = NearZones {
            space,
            margin,
            zones: Vec::with_capacity(zones.len()),
            index: BoxIndex::new(&[], IndexKind::Auto),
            always: Vec::new(),
            tests: STATE_TESTS,
            all: None,
        };
        let cells = cells_per_zone(zones.len());
        for (i, (id, zone)) in zones.into_iter().enumerate() {
            let padded = near.padded(&zone);
            if padded.is_none() {
                near.always.push(i);
            }
            let sides = near.sides(&zone, padded.as_deref(), cells);
            near.zones.push(Near {
                id,
                zone,
                padded,
                sides,
            });
        }
        near.lay_out();
        near.all = near.union().map(|all| Box::new(all.pack()));
        // Laid out (and the union read from them a byte a cell): packed for lookups.
        for z in &mut near.zones {
            z.sides = z.sides.take().map(Sides::pack);
        }
        near
    }

    /// The raster of all the zones together, when every zone has padded boxes.
    fn union(&mut self) -> Option<Sides> {
        if !self.always.is_empty() {
            return None;
        }
        let areas: Vec<(Rect<f64>, Option<&Sides>)> = self
            .zones
            .iter()
            .filter_map(|near| Some((hull(near.padded.as_deref()?)?, near.sides.as_ref())))
            .collect();
        let boxes: Vec<Rect<f64>> = areas.iter().map(|(r, _)| *r).collect();
        let area = hull(&boxes)?;
        Sides::union(area, UNION_CELLS, areas, &mut self.tests)
    }

    /// Lays every padded box out again in the index.
    fn lay_out(&mut self) {
        let boxes: Vec<(Rect<f64>, u32)> = self
            .zones
            .iter()
            .enumerate()
            .flat_map(|(i, near)| {
                let i = slot_u32(i);
                near.padded.iter().flatten().map(move |r| (*r, i))
            })
            .collect();
        self.index.lay_out(&boxes);
    }

    /// The zone `z`, if the state reads it.
    pub(crate) fn zone(&self, z: usize) -> Option<&Zone> {
        self.zones
            .iter()
            .find(|near| near.id == z)
            .map(|near| &near.zone)
    }

    /// Zone `z` is now `zone` (a moving zone moved).
    pub(crate) fn update(&mut self, z: usize, zone: &Zone) {
        let Some(i) = self.zones.iter().position(|near| near.id == z) else {
            return;
        };
        // The zones' raster together no longer holds.
        self.all = None;
        let place = slot_u32(i);
        if let Some(old) = self.zones[i].padded.take() {
            for r in &old {
                self.index.remove(r, place);
            }
        } else {
            self.always.retain(|&j| j != i);
        }
        let boxes = self.padded(zone);
        match &boxes {
            Some(b) => {
                for r in b {
                    self.index.insert(r, place);
                }
            }
            None => self.always.push(i),
        }
        let cells = cells_per_zone(self.zones.len());
        let sides = self.sides(zone, boxes.as_deref(), cells).map(Sides::pack);
        self.zones[i] = Near {
            id: z,
            zone: zone.clone(),
            padded: boxes,
            sides,
        };
        if self.index.worn() {
            self.lay_out();
        }
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
            if self.zones.iter().any(|near| test(&near.zone)) {
                return Some(true);
            }
        } else {
            match self.all.as_ref().and_then(|all| all.at(p)) {
                Some(Side::Inside) => return Some(true),
                Some(Side::Outside) => return Some(false),
                _ => {}
            }
            if self.always.iter().any(|&i| test(&self.zones[i].zone)) {
                return Some(true);
            }
            // A zone with several boxes holding `p` is tested once for each: the
            // answer is the same. (No box holds a point that is not a number.)
            let mut hits: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
            if !(p.x.is_nan() || p.y.is_nan()) {
                self.index.stab(p, |i| hits.push(i));
            }
            for i in hits {
                let Some(near) = self.zones.get(i as usize) else {
                    continue;
                };
                match near.sides.as_ref().and_then(|s| s.at(p)) {
                    Some(Side::Inside) => return Some(true),
                    Some(Side::Outside) => {}
                    _ => {
                        if test(&near.zone) {
                            return Some(true);
                        }
                    }
                }
            }
        }
        all_out.then_some(false)
    }

    /// The boxes of zone `zone` padded by the margin, or `None` when it is to be
    /// tested at every occurrence.
    fn padded(&self, zone: &Zone) -> Option<Padded> {
        let mut boxes = Vec::new();
        zone.boxes(self.space, &mut boxes);
        let mut out = Vec::with_capacity(boxes.len());
        for r in boxes {
            let (lo, hi) = (r.min(), r.max());
            let (dx, dy) = self.reach(lo, hi)?;
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
            out.push(Rect::new(lo, hi));
        }
        Some(out)
    }

    /// How far, in x and y, beyond the box from `lo` to `hi` a point may be and still
    /// be within 1.05 × the margin of a point of the box: on the plane the margin and
    /// a rounding slack relative to the coordinates' size, on WGS84 the degrees
    /// [`degrees`] gives (`None` near a pole).
    fn reach(&self, lo: Point, hi: Point) -> Option<(f64, f64)> {
        match self.space {
            Space::Planar => {
                let slack =
                    1e-9 * (self.margin + lo.x.abs().max(hi.x.abs()) + lo.y.abs().max(hi.y.abs()));
                Some((self.margin + slack, self.margin + slack))
            }
            Space::Wgs84 => degrees(lo.y, hi.y, self.margin * 1.05),
        }
    }

    /// The raster of `zone`, whose padded boxes are `padded`, in `cells` cells:
    /// settled where every point is beyond the [`reach`](NearZones::reach) of the
    /// boundary over the padded boxes' hull. That is the padding of the index, so a
    /// settled cell's side is the one the zone's test would give, as a zone whose
    /// padded boxes miss a point is outside it.
    fn sides(&mut self, zone: &Zone, padded: Option<&[Rect<f64>]>, cells: usize) -> Option<Sides> {
        if cells < MIN_CELLS {
            return None;
        }
        let area = hull(padded?)?;
        let (lo, hi) = (area.min(), area.max());
        let pad = self.reach(lo, hi)?;
        // Cells much finer than the padding settle little more.
        let fine = |len: f64, pad: f64| (2.0 * len / pad).ceil().min(MAX_CELLS as f64);
        let needed = fine(hi.x - lo.x, pad.0) * fine(hi.y - lo.y, pad.1);
        let cells = if needed.is_nan() {
            cells
        } else {
            cells.min(needed.max(MIN_CELLS as f64) as usize)
        };
        Sides::new(
            zone,
            self.space,
            area,
            (pad, self.margin),
            cells,
            &mut self.tests,
        )
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::spatial::Shape;

    /// What the index must answer: every zone tested.
    fn scan(zones: &[Zone], space: Space, p: Point, margin: f64) -> Option<bool> {
        let mut all_out = true;
        for z in zones {
            match side(z, space, p, margin) {
                Side::Inside => return Some(true),
                Side::Outside => {}
                Side::Near => all_out = false,
            }
        }
        all_out.then_some(false)
    }

    fn zone(i: usize, kind: u8, x: f64, y: f64, r: f64) -> Zone {
        let center = Point { x, y };
        let shape = match kind % 4 {
            0 => Shape::Circle { center, radius: r },
            1 => Shape::Rect(Rect::new(center, Point { x: x + r, y: y + r })),
            3 => {
                // A pentagon of uneven radii around the centre, with a hole.
                let ring = |scale: f64| {
                    let mut pts: Vec<Point> = (0..5)
                        .map(|k| {
                            let a = std::f64::consts::TAU * f64::from(k) / 5.0;
                            let rk = scale * r * (1.0 + 0.5 * f64::from(k % 2));
                            Point {
                                x: x + rk * a.cos(),
                                y: y + rk * a.sin(),
                            }
                        })
                        .collect();
                    pts.push(pts[0]);
                    geo_types::LineString(pts)
                };
                Shape::Polygon(geo_types::Polygon::new(ring(1.0), vec![ring(0.3)]))
            }
            _ => Shape::Sector {
                center,
                radius: r,
                from_deg: 30.0,
                to_deg: 200.0,
            },
        };
        Zone {
            name: format!("z{i}").into(),
            shape,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The verdict through the index (grid or tree, as the boxes choose) equals a
        /// scan of every zone, on the plane and on WGS84, before and after zones move
        /// (enough moves far away to lay the boxes out again).
        #[test]
        fn verdict_equals_a_scan(
            wgs84 in any::<bool>(),
            specs in prop::collection::vec((any::<u8>(), 0.0..1.0f64, 0.0..1.0f64, 0.01..0.2f64), 1..60),
            margin in 0.0..0.05f64,
            moves in prop::collection::vec((any::<prop::sample::Index>(), 0.0..1.0f64, 0.0..1.0f64), 0..80),
            points in prop::collection::vec((-0.1..1.1f64, -0.1..1.1f64), 1..40),
        ) {
            let space = if wgs84 { Space::Wgs84 } else { Space::Planar };
            // On WGS84 the unit square is 0.05° (about 5 km) near (10°, 50°), and radii
            // (10–200 m) and margins (up to 50 m) are in metres.
            let scale = if wgs84 { 0.05 } else { 1.0 };
            let at = |x: f64, y: f64| if wgs84 { (10.0 + x * scale, 50.0 + y * scale) } else { (x, y) };
            let margin = if wgs84 { margin * 1000.0 } else { margin };
            let mut zones: Vec<Zone> = specs
                .iter()
                .enumerate()
                .map(|(i, &(k, x, y, r))| {
                    let (x, y) = at(x, y);
                    let r = if wgs84 && k % 4 != 1 && k % 4 != 3 { r * 1000.0 } else { r * scale };
                    zone(i, k, x, y, r)
                })
                .collect();
            let ids: Vec<(usize, Zone)> = zones.iter().cloned().enumerate().map(|(i, z)| (i * 7, z)).collect();
            let mut near = NearZones::new(space, ids, margin);
            let check = |near: &NearZones, zones: &[Zone]| {
                for &(x, y) in &points {
                    let (x, y) = at(x, y);
                    let p = Point { x, y };
                    prop_assert_eq!(near.verdict(p), scan(zones, space, p, margin), "{:?}", p);
                }
                Ok(())
            };
            check(&near, &zones)?;
            for (which, x, y) in moves {
                let i = which.index(zones.len());
                let (x, y) = at(x, y);
                let moved = match &zones[i].shape {
                    Shape::Circle { radius, .. } => Shape::Circle { center: Point { x, y }, radius: *radius },
                    Shape::Rect(r) => Shape::Rect(Rect::new(Point { x, y }, Point { x: x + r.width(), y: y + r.height() })),
                    Shape::Sector { radius, from_deg, to_deg, .. } => Shape::Sector {
                        center: Point { x, y }, radius: *radius, from_deg: *from_deg, to_deg: *to_deg,
                    },
                    other => other.clone(),
                };
                zones[i].shape = moved;
                near.update(i * 7, &zones[i]);
            }
            check(&near, &zones)?;
        }
    }
}
