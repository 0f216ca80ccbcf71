//! A raster over a zone bounded by straight edges (a polygon, a multipolygon or a
//! rectangle) telling, cell by cell, which side of its boundary every point of the
//! cell lies on, where one side holds for the whole cell by a given distance: the
//! margin test of `Inside` answered, for most points, by one lookup.
//!
//! A cell is *settled* when its box, padded by `pad` in each coordinate, meets no
//! edge of the zone. Every point of the cell is then more than `pad` away from every
//! boundary point in one coordinate or the other, and all of the padded box lies on
//! one side of the boundary (it is connected and does not cross it), the side of the
//! cell's centre. Cells next to each other in a row that are both settled lie on one
//! side as well, so the zone's own containment test is run once for each run of
//! settled cells in a row. The caller chooses `pad` so that "more than `pad` in one
//! coordinate" means "at least the margin" in its space.

use geo_types::{LineString, Rect};

use super::margin::{corners as rect_corners, Side};
use super::zone::{Shape, Zone};
use crate::event::{Point, Space};

/// The most cells one raster has.
pub(crate) const MAX_CELLS: usize = 1 << 16;

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
    /// Row by row, from `lo`: `UNSETTLED`, `INSIDE` or `OUTSIDE`.
    cells: Vec<u8>,
}

impl Sides {
    /// The raster of `zone` over `area`, in at most `cells` cells, settled by `pad`
    /// (x and y, in coordinate units). `area` must hold the zone's points padded by
    /// `pad`: a point outside it is outside the zone by the padding. `None` for a zone not bounded by straight edges (circles, sectors,
    /// lines), for an area or a zone that is not finite, and for a zone whose raster
    /// would take more edge-against-cell tests to lay out than `tests` has left
    /// (which it spends, raster or not: a net's rasters cost bounded time to lay
    /// out, however many vertices its zones have).
    pub(crate) fn new(
        zone: &Zone,
        space: Space,
        area: Rect<f64>,
        pad: (f64, f64),
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
            _ => return None,
        };
        let (lo, hi) = (area.min(), area.max());
        let finite = [lo.x, lo.y, hi.x, hi.y, pad.0, pad.1]
            .iter()
            .chain(
                rings
                    .iter()
                    .flat_map(|r| r.iter().flat_map(|p| [&p.x, &p.y])),
            )
            .all(|v| v.is_finite());
        let (w, h) = (hi.x - lo.x, hi.y - lo.y);
        if !(finite && w > 0.0 && h > 0.0) || pad.0 < 0.0 || pad.1 < 0.0 {
            return None;
        }
        let cells = cells.clamp(1, MAX_CELLS);
        let nx = ((cells as f64 * w / h).sqrt().round() as usize).clamp(1, cells);
        let ny = (cells / nx).max(1);
        let mut sides = Sides {
            lo,
            scale: (nx as f64 / w, ny as f64 / h),
            nx,
            ny,
            cells: vec![OUTSIDE; nx * ny],
        };
        // Rounding slack: a point is put in a cell by a product that may round by a
        // few units in the last place of the coordinates.
        let eps = 1e-9 * (lo.x.abs() + lo.y.abs() + hi.x.abs() + hi.y.abs() + w + h);
        let pad = (pad.0 + eps, pad.1 + eps);
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
        sides.fill(zone, space);
        Some(sides)
    }

    /// The side every point of `p`'s cell lies on, if the cell is settled;
    /// outside for a point outside the raster's area; `None` for an unsettled cell
    /// and for a point that is not finite.
    pub(crate) fn at(&self, p: Point) -> Option<Side> {
        if !(p.x.is_finite() && p.y.is_finite()) {
            return None;
        }
        let fx = (p.x - self.lo.x) * self.scale.0;
        let fy = (p.y - self.lo.y) * self.scale.1;
        // (The casts saturate.)
        let (i, j) = (fx as usize, fy as usize);
        if fx < 0.0 || fy < 0.0 || i >= self.nx || j >= self.ny {
            return Some(Side::Outside);
        }
        match self.cells[j * self.nx + i] {
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
        let range = |lo: f64, hi: f64, origin: f64, scale: f64, n: usize| {
            // One cell more on each side than the padded edge's box reaches, against
            // the rounding of the products.
            let first = ((lo - origin) * scale).floor() - 1.0;
            let last = ((hi - origin) * scale).floor() + 1.0;
            let clamp = |v: f64| v.clamp(0.0, (n - 1) as f64) as usize;
            (last >= 0.0 && first <= (n - 1) as f64).then(|| (clamp(first), clamp(last)))
        };
        let xs = range(
            a.x.min(b.x) - pad.0,
            a.x.max(b.x) + pad.0,
            self.lo.x,
            self.scale.0,
            self.nx,
        );
        let ys = range(
            a.y.min(b.y) - pad.1,
            a.y.max(b.y) + pad.1,
            self.lo.y,
            self.scale.1,
            self.ny,
        );
        let (Some((i0, i1)), Some((j0, j1))) = (xs, ys) else {
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

    /// Gives each run of settled cells in a row the side of its first cell's centre.
    fn fill(&mut self, zone: &Zone, space: Space) {
        for j in 0..self.ny {
            let mut run: Option<u8> = None;
            for i in 0..self.nx {
                let k = j * self.nx + i;
                if self.cells[k] == UNSETTLED {
                    run = None;
                    continue;
                }
                let side = *run.get_or_insert_with(|| {
                    let (lo, hi) = self.padded_cell(i, j, (0.0, 0.0));
                    let centre = Point {
                        x: 0.5 * (lo.x + hi.x),
                        y: 0.5 * (lo.y + hi.y),
                    };
                    if zone.contains(space, centre) {
                        INSIDE
                    } else {
                        OUTSIDE
                    }
                });
                self.cells[k] = side;
            }
        }
    }
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
