//! Straight-edged geometry in the coordinate plane ((x, y), or (lon, lat) for a
//! polygon's edges on WGS84): a point in a polygon, the distance from a point to a
//! polyline, bounding rectangles.
//!
//! These are the computations of the `geo` crate that ccpn used (`Intersects` of a
//! polygon and a point, `Euclidean` distances, `BoundingRect`), written again over
//! `geo-types`' shapes with the same arithmetic in the same order, so that every
//! answer is the same to the bit, on edges and vertices too; a property test
//! (`spatial/tests.rs`) compares them with `geo`. Orientation is decided exactly,
//! with the adaptive-precision predicate of the `robust` crate, as `geo` does.

use geo_types::{Coord, LineString, Polygon, Rect};

use crate::event::Point;

/// Where a point lies with respect to a closed ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RingPos {
    Inside,
    OnBoundary,
    Outside,
}

/// Which side of the line through `a` and `b` `p` lies on: positive to the left,
/// negative to the right, zero on it — exactly.
fn orient(a: Point, b: Point, p: Point) -> f64 {
    let c = |q: Point| Coord { x: q.x, y: q.y };
    orient_coords(c(a), c(b), c(p))
}

/// [`orient`] of `geo-types` coordinates.
pub(super) fn orient_coords(a: Coord<f64>, b: Coord<f64>, p: Coord<f64>) -> f64 {
    let c = |q: Coord<f64>| robust::Coord { x: q.x, y: q.y };
    robust::orient2d(c(a), c(b), c(p))
}

/// Is `v` between `a` and `b` (in either order), ends included?
fn between(v: f64, a: f64, b: f64) -> bool {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    v >= lo && v <= hi
}

/// The position of `p` against the closed ring `ring`: the winding number, with a
/// point on an edge or a vertex on the boundary.
fn ring_position(p: Point, ring: &LineString<f64>) -> RingPos {
    match ring.0.as_slice() {
        [] => return RingPos::Outside,
        [only] => {
            return if *only == p {
                RingPos::OnBoundary
            } else {
                RingPos::Outside
            }
        }
        _ => {}
    }
    let mut winding = 0i32;
    for w in ring.0.windows(2) {
        let (a, b) = (w[0], w[1]);
        // An upward edge holds its start and not its end, a downward edge its end and
        // not its start; horizontal edges cross nothing; the crossing must lie
        // strictly right of `p`.
        if a.y <= p.y {
            if b.y >= p.y {
                let o = orient(a, b, p);
                if o > 0.0 && b.y != p.y {
                    winding += 1;
                } else if o == 0.0 && between(p.x, a.x, b.x) {
                    return RingPos::OnBoundary;
                }
            }
        } else if b.y <= p.y {
            let o = orient(a, b, p);
            if o < 0.0 {
                winding -= 1;
            } else if o == 0.0 && between(p.x, a.x, b.x) {
                return RingPos::OnBoundary;
            }
        }
    }
    if winding == 0 {
        RingPos::Outside
    } else {
        RingPos::Inside
    }
}

/// Is `p` in `poly`, its boundary included? A point inside a hole is outside; one on
/// a hole's boundary is on the polygon's boundary, so inside. (`geo`'s
/// `poly.intersects(&p)`.)
pub(crate) fn polygon_holds(poly: &Polygon<f64>, p: Point) -> bool {
    if poly.exterior().0.is_empty() {
        return false;
    }
    match ring_position(p, poly.exterior()) {
        RingPos::Outside => false,
        RingPos::OnBoundary => true,
        RingPos::Inside => {
            for hole in poly.interiors() {
                match ring_position(p, hole) {
                    RingPos::Outside => {}
                    RingPos::OnBoundary => return true,
                    RingPos::Inside => return false,
                }
            }
            true
        }
    }
}

/// The straight-line distance between two points.
pub(crate) fn euclidean(a: Point, b: Point) -> f64 {
    let (dx, dy) = (a.x - b.x, a.y - b.y);
    dx.hypot(dy)
}

/// The distance from `p` to the segment from `a` to `b`.
fn segment_distance(p: Point, a: Point, b: Point) -> f64 {
    if a == b {
        return euclidean(a, p);
    }
    let dx = b.x - a.x;
    let dy = b.y - a.y;
    let d_squared = dx * dx + dy * dy;
    let r = ((p.x - a.x) * dx + (p.y - a.y) * dy) / d_squared;
    if r <= 0.0 {
        return euclidean(a, p);
    }
    if r >= 1.0 {
        return euclidean(b, p);
    }
    let s = ((a.y - p.y) * dx - (a.x - p.x) * dy) / d_squared;
    s.abs() * dx.hypot(dy)
}

/// Does the polyline pass through `p` (a vertex, or a point of a segment within
/// rounding of its parameter along the segment)?
fn line_passes(line: &LineString<f64>, p: Point) -> bool {
    match line.0.as_slice() {
        [] => return false,
        // As close as `f32` can tell.
        [only] => return (euclidean(p, *only) as f32).abs() <= f32::EPSILON,
        pts if pts.contains(&p) => return true,
        _ => {}
    }
    line.0.windows(2).any(|w| {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        let tx = (dx != 0.0).then(|| (p.x - a.x) / dx);
        let ty = (dy != 0.0).then(|| (p.y - a.y) / dy);
        match (tx, ty) {
            (None, None) => p == a,
            (Some(t), None) => p.y == a.y && (0.0..=1.0).contains(&t),
            (None, Some(t)) => p.x == a.x && (0.0..=1.0).contains(&t),
            (Some(tx), Some(ty)) => (tx - ty).abs() <= f64::EPSILON && (0.0..=1.0).contains(&tx),
        }
    })
}

/// The distance from `p` to the polyline `line`: 0 on it (or when it has no point).
pub(crate) fn line_distance(p: Point, line: &LineString<f64>) -> f64 {
    if line_passes(line, p) || line.0.is_empty() {
        return 0.0;
    }
    line.0
        .windows(2)
        .map(|w| segment_distance(p, w[0], w[1]))
        .fold(f64::MAX, f64::min)
}

/// The smallest rectangle holding `points`, `None` when there are none.
pub(crate) fn bounding_rect<'a>(points: impl IntoIterator<Item = &'a Point>) -> Option<Rect<f64>> {
    let mut iter = points.into_iter();
    let first = iter.next()?;
    let (mut x, mut y) = ((first.x, first.x), (first.y, first.y));
    let widen = |v: f64, (lo, hi): (f64, f64)| {
        if v > hi {
            (lo, v)
        } else if v < lo {
            (v, hi)
        } else {
            (lo, hi)
        }
    };
    for p in iter {
        x = widen(p.x, x);
        y = widen(p.y, y);
    }
    Some(Rect::new(
        Point { x: x.0, y: y.0 },
        Point { x: x.1, y: y.1 },
    ))
}

/// The bounding rectangle of a polygon: that of its exterior ring.
pub(crate) fn polygon_rect(poly: &Polygon<f64>) -> Option<Rect<f64>> {
    bounding_rect(&poly.exterior().0)
}
