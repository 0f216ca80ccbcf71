//! A raster over a zone (a polygon, a multipolygon, a rectangle or a circle) telling,
//! cell by cell, which side of its boundary every point of the cell lies on, where
//! one side holds for the whole cell by a given distance: the margin test of
//! `Inside` answered, for most points, by one lookup.
//!
//! For a zone with straight edges a cell is *settled* when its box, padded by `pad`
//! in each coordinate, meets no edge of the zone. Every point of the cell is then
//! more than `pad` away from every boundary point in one coordinate or the other,
//! and all of the padded box lies on one side of the boundary (it is connected and
//! does not cross it), the side of the cell's centre. Cells next to each other in a
//! row or a column that are both settled lie on one side as well, so the zone's own
//! containment test is run only for a run of settled cells in a row with none
//! settled above it. The caller chooses `pad` so that "more than `pad` in one
//! coordinate" means "at least the margin" in its space.
//!
//! For a circle a cell is settled when bounds on the distance from the centre to
//! every point of it lie clear of the radius by the margin: the distances to the
//! box on the plane; on WGS84 the great-circle bounds of the geodesic to the cell's
//! centre, widened by the length of a path from there to anywhere in the cell. That
//! decides as the circle's own test does, on geodesic distances.
//!
//! The rasters of several zones combine into one (`Sides::union`): a cell is inside
//! where some zone's raster is inside all over it, outside where every zone's is
//! outside all over it, unsettled elsewhere.

use geo_types::{LineString, Rect};

use super::margin::{corners as rect_corners, Side};
use super::metric::{floor, geodesic_bounds, WGS84_A, WGS84_E2};
use super::zone::{Shape, Zone};
use crate::event::{Point, Space};

/// The most cells one raster has.
pub(crate) const MAX_CELLS: usize = 1 << 16;

/// What settling one cell against a circle costs, in edge-against-cell tests (a
/// great-circle distance on WGS84 takes about as long as this many).
const CIRCLE_TESTS: usize = 8;

const UNSETTLED: u8 = 0;
const INSIDE: u8 = 1;
const OUTSIDE: u8 = 2;

/// The side of a zone's boundary the points of each cell of a raster lie on, where
/// the whole cell lies on one side by the raster's padding.
#[derive(Clone, Debug)]
pub(crate) struct Sides {
    lo: Point,
    /// Cells per coordinate unit, in x and y.
    scale: (f64, f64),
    nx: usize,
    ny: usize,
    /// Row by row, from `lo`: `UNSETTLED`, `INSIDE` or `OUTSIDE`, a byte a cell
    /// while the raster is laid out (empty after).
    cells: Vec<u8>,
    /// The same, two bits a cell (four a byte, the first in the low bits), once it is
    /// laid out: what a lookup reads, a quarter of the memory to keep in cache.
    packed: Vec<u8>,
}

impl Sides {
    /// The raster of `zone` over `area`, in at most `cells` cells, settled by
    /// `margin`. `area` must hold the zone's points padded by `pad`: a point outside
    /// it is outside the zone by the margin.
    ///
    /// A zone with straight edges is settled where a cell padded by `pad` (x and y,
    /// in coordinate units) meets no edge: the caller chooses `pad` so that a point
    /// more than `pad` away in one coordinate is at least `margin` away. A circle is
    /// settled where the distance from its centre to every point of the cell is
    /// bounded clear of its radius by the margin: exactly on the plane; on WGS84 by
    /// the great-circle bounds of the geodesic to the cell's centre and the length
    /// of a path from it to the cell's corners. `None` for sectors and lines, for an
    /// area or a zone that is not finite, and for a zone whose raster would take more
    /// tests to lay out than `tests` has left (which it spends, raster or not: a
    /// net's rasters cost bounded time to lay out, however many vertices its zones
    /// have).
    pub(crate) fn new(
        zone: &Zone,
        space: Space,
        area: Rect<f64>,
        (pad, margin): ((f64, f64), f64),
        cells: usize,
        tests: &mut usize,
    ) -> Option<Sides> {
        let corners;
        let rings: Vec<&[Point]> = match &zone.shape {
            Shape::Polygon(poly) => ring_slices(std::iter::once(poly)),
            Shape::MultiPolygon(mp) => ring_slices(mp.0.iter()),
            Shape::Rect(r) => {
                corners = rect_corners(r);
                vec![&corners[..]]
            }
            Shape::Circle { center, radius } => {
                let mut sides = Sides::blank(area, cells)?;
                let finite = [center.x, center.y, *radius, margin]
                    .iter()
                    .all(|v| v.is_finite());
                if !finite || margin < 0.0 {
                    return None;
                }
                sides.circle(space, *center, *radius, margin, tests)?;
                return Some(sides);
            }
            _ => return None,
        };
        let finite = [pad.0, pad.1]
            .iter()
            .chain(
                rings
                    .iter()
                    .flat_map(|r| r.iter().flat_map(|p| [&p.x, &p.y])),
            )
            .all(|v| v.is_finite());
        if !finite || pad.0 < 0.0 || pad.1 < 0.0 {
            return None;
        }
        let mut sides = Sides::blank(area, cells)?;
        let pad = (pad.0 + sides.eps(), pad.1 + sides.eps());
        for ring in &rings {
            let Some(&last) = ring.last() else {
                continue;
            };
            let mut a = last;
            for &b in ring.iter() {
                if !sides.mark(a, b, pad, tests) {
                    return None;
                }
                a = b;
            }
        }
        let vertices = rings.iter().map(|r| r.len()).sum::<usize>().max(1);
        sides.fill(zone, space, vertices, tests).then_some(sides)
    }

    /// A raster over `area` of at most `cells` cells, each settled outside (so far);
    /// `None` for an area that is not finite or is empty.
    fn blank(area: Rect<f64>, cells: usize) -> Option<Sides> {
        let (lo, hi) = (area.min(), area.max());
        let (w, h) = (hi.x - lo.x, hi.y - lo.y);
        let finite = [lo.x, lo.y, hi.x, hi.y].iter().all(|v| v.is_finite());
        if !(finite && w > 0.0 && h > 0.0) {
            return None;
        }
        let cells = cells.clamp(1, MAX_CELLS);
        let nx = ((cells as f64 * w / h).sqrt().round() as usize).clamp(1, cells);
        let ny = (cells / nx).max(1);
        Some(Sides {
            lo,
            scale: (nx as f64 / w, ny as f64 / h),
            nx,
            ny,
            cells: vec![OUTSIDE; nx * ny],
            packed: Vec::new(),
        })
    }

    /// The raster laid out, ready for [`Sides::at`]: its cells packed two bits each.
    /// (A raster is laid out, and read by [`Sides::union`], a byte a cell.)
    pub(crate) fn pack(mut self) -> Sides {
        let four = |c: [u8; 4]| {
            let w = u32::from_le_bytes(c);
            (w & 0x03 | (w >> 6) & 0x0c | (w >> 12) & 0x30 | (w >> 18) & 0xc0) as u8
        };
        let chunks = self.cells.chunks_exact(4);
        let mut last = [0; 4];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        let mut packed: Vec<u8> = chunks.map(|c| four([c[0], c[1], c[2], c[3]])).collect();
        if !self.cells.len().is_multiple_of(4) {
            packed.push(four(last));
        }
        self.packed = packed;
        self.cells = Vec::new();
        self
    }

    /// Cell `k` of a packed raster.
    #[inline]
    fn cell(&self, k: usize) -> u8 {
        (self.packed[k >> 2] >> (2 * (k & 3))) & 3
    }

    /// Rounding slack in coordinate units: a point is put in a cell by a product
    /// that may round by a few units in the last place of the coordinates.
    fn eps(&self) -> f64 {
        let (w, h) = (self.nx as f64 / self.scale.0, self.ny as f64 / self.scale.1);
        1e-9 * (2.0 * (self.lo.x.abs() + self.lo.y.abs()) + 2.0 * (w + h))
    }

    /// Settles each cell against the circle of `radius` about `center` by `margin`:
    /// inside where every point of the cell is nearer the centre than the radius
    /// less the margin, outside where every point is farther than the radius and the
    /// margin, unsettled elsewhere. Each cell costs [`CIRCLE_TESTS`] of `tests`.
    fn circle(
        &mut self,
        space: Space,
        center: Point,
        radius: f64,
        margin: f64,
        tests: &mut usize,
    ) -> Option<()> {
        let need = self.cells.len().saturating_mul(CIRCLE_TESTS);
        if need > *tests {
            *tests = 0;
            return None;
        }
        *tests -= need;
        let eps = self.eps();
        // Relative slack for the distances' rounding (and the geodesic's accuracy).
        let slack = 1e-9 * (radius.abs() + margin) + 1e-6;
        let (inner, outer) = (radius - margin - slack, radius + margin + slack);
        for j in 0..self.ny {
            for i in 0..self.nx {
                let (lo, hi) = self.padded_cell(i, j, (eps, eps));
                let (near, far) = match space {
                    Space::Planar => planar_span(center, lo, hi),
                    Space::Wgs84 => {
                        geodesic_span(center, lo, hi).unwrap_or((f64::NEG_INFINITY, f64::INFINITY))
                    }
                };
                self.cells[j * self.nx + i] = if far < inner {
                    INSIDE
                } else if near > outer {
                    OUTSIDE
                } else {
                    UNSETTLED
                };
            }
        }
        Some(())
    }

    /// The side every point of `p`'s cell lies on (a raster [`Sides::pack`]ed), if the
    /// cell is settled;
    /// outside for a point outside the raster's area; `None` for an unsettled cell
    /// and for a point that is not finite.
    pub(crate) fn at(&self, p: Point) -> Option<Side> {
        if !(p.x.is_finite() && p.y.is_finite()) {
            return None;
        }
        let fx = (p.x - self.lo.x) * self.scale.0;
        let fy = (p.y - self.lo.y) * self.scale.1;
        if !(fx >= 0.0 && fy >= 0.0 && fx < self.nx as f64 && fy < self.ny as f64) {
            return Some(Side::Outside);
        }
        // In range (fewer than 2^16 cells a side): the casts truncate.
        let (i, j) = (fx as u32 as usize, fy as u32 as usize);
        match self.cell(j * self.nx + i) {
            INSIDE => Some(Side::Inside),
            OUTSIDE => Some(Side::Outside),
            _ => None,
        }
    }

    /// The box of cell (i, j), padded by `pad`.
    fn padded_cell(&self, i: usize, j: usize, pad: (f64, f64)) -> (Point, Point) {
        let x0 = self.lo.x + i as f64 / self.scale.0;
        let x1 = self.lo.x + (i + 1) as f64 / self.scale.0;
        let y0 = self.lo.y + j as f64 / self.scale.1;
        let y1 = self.lo.y + (j + 1) as f64 / self.scale.1;
        (
            Point {
                x: x0 - pad.0,
                y: y0 - pad.1,
            },
            Point {
                x: x1 + pad.0,
                y: y1 + pad.1,
            },
        )
    }

    /// Marks unsettled every cell whose box padded by `pad` meets the edge from `a`
    /// to `b`, spending the tests from `tests`; `false` when too few are left.
    fn mark(&mut self, a: Point, b: Point, pad: (f64, f64), tests: &mut usize) -> bool {
        let lo = Point {
            x: a.x.min(b.x) - pad.0,
            y: a.y.min(b.y) - pad.1,
        };
        let hi = Point {
            x: a.x.max(b.x) + pad.0,
            y: a.y.max(b.y) + pad.1,
        };
        let Some((i0, i1, j0, j1, _)) = self.cells_over(lo, hi) else {
            return true;
        };
        let need = (i1 - i0 + 1) * (j1 - j0 + 1);
        if need > *tests {
            *tests = 0;
            return false;
        }
        *tests -= need;
        for j in j0..=j1 {
            for i in i0..=i1 {
                let k = j * self.nx + i;
                if self.cells[k] != UNSETTLED {
                    let (lo, hi) = self.padded_cell(i, j, pad);
                    if meets(a, b, lo, hi) {
                        self.cells[k] = UNSETTLED;
                    }
                }
            }
        }
        true
    }

    /// The cells (columns `i0..=i1`, rows `j0..=j1`) a box from `lo` to `hi` overlaps,
    /// and one more on each side against the rounding of the products, and whether
    /// that reaches past the raster's area; `None` when it overlaps none.
    fn cells_over(&self, lo: Point, hi: Point) -> Option<(usize, usize, usize, usize, bool)> {
        let range = |lo: f64, hi: f64, origin: f64, scale: f64, n: usize| {
            let first = floor((lo - origin) * scale) - 1.0;
            let last = floor((hi - origin) * scale) + 1.0;
            let top = (n - 1) as f64;
            let clamp = |v: f64| v.clamp(0.0, top) as usize;
            (last >= 0.0 && first <= top)
                .then(|| (clamp(first), clamp(last), first < 0.0 || last > top))
        };
        let (i0, i1, past_x) = range(lo.x, hi.x, self.lo.x, self.scale.0, self.nx)?;
        let (j0, j1, past_y) = range(lo.y, hi.y, self.lo.y, self.scale.1, self.ny)?;
        Some((i0, i1, j0, j1, past_x || past_y))
    }

    /// The side every point of the box from `lo` to `hi` lies on, if the raster
    /// settles all of it alike: the cells it overlaps (and one more on each side) all
    /// inside, within the raster's area; or all outside, a part beyond the area
    /// counting as outside.
    fn span(&self, lo: Point, hi: Point) -> Option<Side> {
        if !(lo.x <= hi.x && lo.y <= hi.y) {
            return None;
        }
        let Some((i0, i1, j0, j1, beyond)) = self.cells_over(lo, hi) else {
            return Some(Side::Outside);
        };
        let first = if beyond {
            OUTSIDE
        } else {
            self.cells[j0 * self.nx + i0]
        };
        if first == UNSETTLED {
            return None;
        }
        for j in j0..=j1 {
            if self.cells[j * self.nx + i0..=j * self.nx + i1]
                .iter()
                .any(|&c| c != first)
            {
                return None;
            }
        }
        Some(if first == INSIDE {
            Side::Inside
        } else {
            Side::Outside
        })
    }

    /// The raster over `area`, in at most `cells` cells, of several zones at once,
    /// each given by the box its points lie in padded by the margin (outside it, a
    /// point is outside the zone by the margin) and its own raster if it has one. A
    /// cell is inside where some zone's raster is inside all over it, outside where
    /// every zone is outside all over it, and unsettled elsewhere. `None` for an
    /// area that is not finite, or when the work would pass what `tests` has left
    /// (which it spends).
    pub(crate) fn union<'a>(
        area: Rect<f64>,
        cells: usize,
        zones: impl IntoIterator<Item = (Rect<f64>, Option<&'a Sides>)>,
        tests: &mut usize,
    ) -> Option<Sides> {
        let mut all = Sides::blank(area, cells)?;
        let eps = all.eps();
        let (w, h) = (1.0 / all.scale.0, 1.0 / all.scale.1);
        for (zone_area, sides) in zones {
            let Some((i0, i1, j0, j1, _)) = all.cells_over(zone_area.min(), zone_area.max()) else {
                continue;
            };
            // The cells of the zone's raster one of these spans.
            let per = sides.map_or(1.0, |s| (w * s.scale.0 + 3.0) * (h * s.scale.1 + 3.0));
            let need = ((i1 - i0 + 1) * (j1 - j0 + 1)) as f64 * per;
            if need.is_nan() || need > *tests as f64 {
                *tests = 0;
                return None;
            }
            *tests -= need as usize;
            for j in j0..=j1 {
                for i in i0..=i1 {
                    let k = j * all.nx + i;
                    if all.cells[k] == INSIDE {
                        continue;
                    }
                    let side = sides.and_then(|s| {
                        let (lo, hi) = all.padded_cell(i, j, (eps, eps));
                        s.span(lo, hi)
                    });
                    match side {
                        Some(Side::Inside) => all.cells[k] = INSIDE,
                        Some(Side::Outside) => {}
                        _ => all.cells[k] = UNSETTLED,
                    }
                }
            }
        }
        Some(all)
    }

    /// Gives each run of settled cells in a row a side: that of a settled cell just
    /// above it, or else that of its first cell's centre, which costs the zone's
    /// `vertices` from `tests`; `false` when too few are left.
    fn fill(&mut self, zone: &Zone, space: Space, vertices: usize, tests: &mut usize) -> bool {
        for j in 0..self.ny {
            let mut i = 0;
            while i < self.nx {
                if self.cells[j * self.nx + i] == UNSETTLED {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < self.nx && self.cells[j * self.nx + i] != UNSETTLED {
                    i += 1;
                }
                // Cells next to each other, in a row or a column, both settled, lie on
                // one side: their padded boxes overlap and neither meets the boundary.
                let above = (j > 0)
                    .then(|| {
                        self.cells[(j - 1) * self.nx + start..(j - 1) * self.nx + i]
                            .iter()
                            .copied()
                            .find(|&c| c != UNSETTLED)
                    })
                    .flatten();
                let side = match above {
                    Some(side) => side,
                    None => {
                        if vertices > *tests {
                            *tests = 0;
                            return false;
                        }
                        *tests -= vertices;
                        let (lo, hi) = self.padded_cell(start, j, (0.0, 0.0));
                        let centre = Point {
                            x: 0.5 * (lo.x + hi.x),
                            y: 0.5 * (lo.y + hi.y),
                        };
                        if zone.contains(space, centre) {
                            INSIDE
                        } else {
                            OUTSIDE
                        }
                    }
                };
                self.cells[j * self.nx + start..j * self.nx + i].fill(side);
            }
        }
        true
    }
}

/// The least and the greatest distance from `c` to the box from `lo` to `hi`.
fn planar_span(c: Point, lo: Point, hi: Point) -> (f64, f64) {
    let nx = (lo.x - c.x).max(0.0).max(c.x - hi.x);
    let ny = (lo.y - c.y).max(0.0).max(c.y - hi.y);
    let fx = (c.x - lo.x).abs().max((hi.x - c.x).abs());
    let fy = (c.y - lo.y).abs().max((hi.y - c.y).abs());
    (nx.hypot(ny), fx.hypot(fy))
}

/// Bounds on the WGS84 geodesic distance from `c` to every point of the lon/lat box
/// from `lo` to `hi`: the great-circle bounds to the box's centre ([`geodesic_bounds`])
/// widened by the length of a path from the centre to any point of the box, along
/// its meridian and then along a parallel, each radius of curvature at most
/// a / √(1 − e²). `None` for a box that reaches a pole or spans half a turn.
fn geodesic_span(c: Point, lo: Point, hi: Point) -> Option<(f64, f64)> {
    if lo.y.abs() >= 90.0 || hi.y.abs() >= 90.0 || hi.x - lo.x >= 180.0 {
        return None;
    }
    let mid = Point {
        x: 0.5 * (lo.x + hi.x),
        y: 0.5 * (lo.y + hi.y),
    };
    let (near, far) = geodesic_bounds(c, mid)?;
    let least_lat = if lo.y <= 0.0 && hi.y >= 0.0 {
        0.0
    } else {
        lo.y.abs().min(hi.y.abs())
    };
    let most_radius = WGS84_A / (1.0 - WGS84_E2).sqrt();
    let deg = std::f64::consts::PI / 180.0;
    let reach = most_radius
        * deg
        * (0.5 * (hi.y - lo.y) + 0.5 * (hi.x - lo.x) * least_lat.to_radians().cos())
        * (1.0 + 1e-9);
    Some((near - reach, far + reach))
}

/// The rings (exteriors and holes) of `polys`, as slices of points.
fn ring_slices<'a>(polys: impl Iterator<Item = &'a geo_types::Polygon<f64>>) -> Vec<&'a [Point]> {
    polys
        .flat_map(|p| std::iter::once(p.exterior()).chain(p.interiors()))
        .map(|r: &LineString<f64>| &r.0[..])
        .collect()
}

/// May the segment from `a` to `b` meet the box from `lo` to `hi`? `false` only when
/// it surely does not: the boxes of the two are apart, or the box's four corners lie
/// strictly on one side of the segment's line by more than the products' rounding.
fn meets(a: Point, b: Point, lo: Point, hi: Point) -> bool {
    if a.x.max(b.x) < lo.x || a.x.min(b.x) > hi.x || a.y.max(b.y) < lo.y || a.y.min(b.y) > hi.y {
        return false;
    }
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let sign = |c: Point| {
        let (cx, cy) = (c.x - a.x, c.y - a.y);
        let cross = dx * cy - dy * cx;
        let err = 1e-12 * (dx.abs() * cy.abs() + dy.abs() * cx.abs());
        if cross > err {
            1
        } else if cross < -err {
            -1
        } else {
            0
        }
    };
    let s = [
        sign(lo),
        sign(Point { x: hi.x, y: lo.y }),
        sign(hi),
        sign(Point { x: lo.x, y: hi.y }),
    ];
    !(s.iter().all(|&v| v == 1) || s.iter().all(|&v| v == -1))
}

#[cfg(test)]
#[path = "sides_tests.rs"]
mod tests;
