//! Grid cells for partitioning by space, and the cells within reach of a point.
//!
//! Planar nets use square cells of side `4 × reach`; WGS84 nets use cells of
//! `4 × reach` metres of latitude, in degrees, on both axes (narrower on the ground
//! towards the poles), wrapping at the antimeridian. A point's *halo* is every cell
//! that holds a point within `reach` of it: a conservative box, so a cell may get
//! a copy it does not need, never miss one it does.

use crate::event::{Point, Space};

/// Cells wider than the reach keep most events away from a cell border, so that
/// few are copied: with side 4·reach, 2.25 cells per event on uniform data (a third of
/// the 9 that cells of side `reach` would need), while leaving many cells to spread.
const SIDE_PER_REACH: f64 = 4.0;
/// A halo of more cells than this is sent everywhere instead (near the poles).
const MAX_HALO_CELLS: usize = 64;
/// The sphere radius (metres) that bounds great-circle distances from below, and the
/// factor by which the WGS84 geodesic can fall short of the great circle on the
/// sphere of mean radius (see `spatial::metric`): taken together, a geodesic of `r`
/// metres is at most `r / GEODESIC_TO_SPHERE` on the mean sphere.
const EARTH_R: f64 = 6_371_008.771_4;
const GEODESIC_TO_SPHERE: f64 = 0.993;
/// Relative slack for rounding in planar distance tests.
const SLACK: f64 = 1e-9;

/// A cell: (column, row).
pub(crate) type Cell = (i64, i64);
/// A halo's cells; most halos have at most four.
pub(crate) type Cells = smallvec::SmallVec<[Cell; 9]>;

/// Where a point's copies go.
#[derive(Debug, PartialEq)]
pub(crate) enum Halo {
    /// These cells (the point's own among them).
    Cells,
    /// Every cell: the reach covers more than [`MAX_HALO_CELLS`].
    Everywhere,
}

/// The grid of a net's space.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    space: Space,
    reach: f64,
    /// Cell side: planar units, or degrees on WGS84.
    side: f64,
    /// WGS84: columns around the globe.
    columns: i64,
}

impl Grid {
    /// A grid for distances up to `reach` (net units, metres on WGS84).
    pub(crate) fn new(space: Space, reach: f64) -> Grid {
        let reach = reach.max(0.0);
        let side = match space {
            Space::Planar if reach > 0.0 => SIDE_PER_REACH * reach,
            Space::Planar => 1.0,
            // Degrees of latitude per metre, on the sphere that bounds the geodesic.
            Space::Wgs84 => {
                let deg = (SIDE_PER_REACH * reach / GEODESIC_TO_SPHERE / EARTH_R).to_degrees();
                deg.clamp(1e-6, 360.0)
            }
        };
        // On WGS84, a whole number of columns goes round the globe, so that the
        // last column meets the first at the antimeridian.
        let (side, columns) = match space {
            Space::Planar => (side, 0),
            Space::Wgs84 => {
                let columns = (360.0 / side).ceil();
                (360.0 / columns, columns as i64)
            }
        };
        Grid {
            space,
            reach,
            side,
            columns,
        }
    }

    /// The cell that holds `p`.
    pub(crate) fn cell(&self, p: Point) -> Cell {
        match self.space {
            Space::Planar => (floor(p.x / self.side), floor(p.y / self.side)),
            Space::Wgs84 => (
                self.column(p.x),
                floor((p.y.clamp(-90.0, 90.0) + 90.0) / self.side),
            ),
        }
    }

    fn column(&self, lon: f64) -> i64 {
        floor((lon + 180.0).rem_euclid(360.0) / self.side).rem_euclid(self.columns.max(1))
    }

    /// Appends to `out` every cell holding a point within the reach of `p` (`p`'s own
    /// cell first); [`Halo::Everywhere`] when they are too many to list.
    pub(crate) fn halo(&self, p: Point, out: &mut Cells) -> Halo {
        out.clear();
        let own = self.cell(p);
        out.push(own);
        match self.space {
            Space::Planar => {
                let r = self.reach * (1.0 + SLACK) + f64::MIN_POSITIVE;
                let (x0, x1) = (floor((p.x - r) / self.side), floor((p.x + r) / self.side));
                let (y0, y1) = (floor((p.y - r) / self.side), floor((p.y + r) / self.side));
                if cells(x0, x1) * cells(y0, y1) > MAX_HALO_CELLS as u128 {
                    return Halo::Everywhere;
                }
                for x in x0..=x1 {
                    for y in y0..=y1 {
                        if (x, y) != own {
                            out.push((x, y));
                        }
                    }
                }
                Halo::Cells
            }
            Space::Wgs84 => {
                // The angle (radians) a geodesic of `reach` can span on the mean sphere,
                // with a metre of slack for rounding.
                let theta = (self.reach / GEODESIC_TO_SPHERE + 1.0) / EARTH_R;
                let dlat = theta.to_degrees();
                let lat = p.y.clamp(-90.0, 90.0);
                let (lat0, lat1) = ((lat - dlat).max(-90.0), (lat + dlat).min(90.0));
                // Two points within angle θ whose latitudes are at most φ in size are at
                // most Δλ apart in longitude, where sin(Δλ/2) = sin(θ/2) / cos φ.
                let phi = lat0.abs().max(lat1.abs()).to_radians();
                let s = (theta / 2.0).sin() / phi.cos();
                if s.is_nan() || s >= 1.0 {
                    return Halo::Everywhere;
                }
                let dlon = (2.0 * s.asin()).to_degrees() + 1e-9;
                let rows = (
                    floor((lat0 + 90.0) / self.side),
                    floor((lat1 + 90.0) / self.side),
                );
                let lon = (p.x + 180.0).rem_euclid(360.0);
                let cols = (
                    floor((lon - dlon) / self.side),
                    floor((lon + dlon) / self.side),
                );
                let n_cols = cells(cols.0, cols.1).min(self.columns as u128);
                if n_cols * cells(rows.0, rows.1) > MAX_HALO_CELLS as u128 {
                    return Halo::Everywhere;
                }
                for c in cols.0..cols.0 + n_cols as i64 {
                    let c = c.rem_euclid(self.columns);
                    for r in rows.0..=rows.1 {
                        if (c, r) != own && !out.contains(&(c, r)) {
                            out.push((c, r));
                        }
                    }
                }
                Halo::Cells
            }
        }
    }
}

/// `v` rounded down, saturating at the ends of `i64`.
fn floor(v: f64) -> i64 {
    v.floor() as i64
}

/// How many cells from `a` to `b`, inclusive.
fn cells(a: i64, b: i64) -> u128 {
    (i128::from(b) - i128::from(a) + 1).max(0) as u128
}
