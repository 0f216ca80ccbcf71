//! Which side of a zone's boundary a point lies on, and whether it is at least a
//! margin away from it: the hysteresis of `Inside`. A point is *inside by m* when the
//! zone contains it and its distance to the zone's boundary is at least m, *outside
//! by m* when the zone does not contain it and that distance is at least m, and
//! *near* otherwise.
//!
//! Distances are in the net's units: planar units, or metres on WGS84. On WGS84 a
//! circle's boundary distance is exact (geodesic); a line's is the geodesic distance
//! to its geodesic segments; for polygon and rectangle edges (straight in lon/lat)
//! the closest point of each edge is found in the affine frame tangent at the point
//! (metres east and north, with the ellipsoid's radii of curvature there), and when
//! that distance is within 2 % of the margin it is replaced by the geodesic distance
//! to the point found, so the comparison with the margin is decided on a geodesic
//! wherever it is close.

use geo_types::{LineString, Polygon};

use super::metric::{
    bearing, distance, geodesic_bounds, geodesic_destination, norm360, WGS84_A, WGS84_E2,
};
use super::zone::{Shape, Zone};
use crate::event::{Point, Space};

/// Where a point lies against a zone's boundary, given a margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Inside, at least the margin from the boundary.
    Inside,
    /// Outside, at least the margin from the boundary.
    Outside,
    /// Within the margin of the boundary (on either side).
    Near,
}

/// Which side of `zone`'s boundary `p` lies on, by `margin` (≥ 0). With a margin of
/// 0 every point is inside or outside (the boundary is inside).
pub(crate) fn side(zone: &Zone, space: Space, p: Point, margin: f64) -> Side {
    let inside = zone.contains(space, p);
    if margin > 0.0 && near_boundary(&zone.shape, space, p, margin) {
        return Side::Near;
    }
    if inside {
        Side::Inside
    } else {
        Side::Outside
    }
}

/// The distance from `p` to the boundary of `shape`, exact where it is compared with
/// `margin` (see the module docs).
pub(crate) fn boundary_distance(shape: &Shape, space: Space, p: Point, margin: f64) -> f64 {
    match shape {
        Shape::Circle { center, radius } => (distance(space, *center, p) - radius).abs(),
        Shape::Line {
            line,
            half_width,
            geodesic,
        } => {
            let d = match space {
                Space::Planar => line
                    .lines()
                    .map(|l| segment_distance(p, l.start, l.end).0)
                    .fold(f64::INFINITY, f64::min),
                Space::Wgs84 => geodesic
                    .segments(line, *half_width)
                    .iter()
                    .map(|s| s.distance(p))
                    .fold(f64::INFINITY, f64::min),
            };
            (d - half_width).abs()
        }
        Shape::Rect(r) => ring_distance(space, p, &corners(r), margin),
        Shape::Polygon(poly) => polygon_distance(poly, space, p, margin),
        Shape::MultiPolygon(mp) => {
            mp.0.iter()
                .map(|poly| polygon_distance(poly, space, p, margin))
                .fold(f64::INFINITY, f64::min)
        }
        Shape::Sector {
            center,
            radius,
            from_deg,
            to_deg,
        } => sector_distance(space, p, *center, *radius, *from_deg, *to_deg, margin),
    }
}

/// The rings of `poly`: its exterior, then its holes.
fn rings(poly: &Polygon<f64>) -> impl Iterator<Item = &LineString<f64>> {
    std::iter::once(poly.exterior()).chain(poly.interiors())
}

/// The distance from `p` to the rings of `poly`, its holes' included.
fn polygon_distance(poly: &Polygon<f64>, space: Space, p: Point, margin: f64) -> f64 {
    rings(poly)
        .map(|ring| ring_distance(space, p, &ring.0, margin))
        .fold(f64::INFINITY, f64::min)
}

/// Is `p` within `margin` (> 0) of the boundary of `shape`? The answer of
/// `boundary_distance(shape, space, p, margin) < margin`, found with less work: a
/// ring's tangent frame is set up once for all its edges, the first edge within the
/// margin ends the search, and on WGS84 a circle whose great-circle bounds settle the
/// question takes no geodesic.
pub(crate) fn near_boundary(shape: &Shape, space: Space, p: Point, margin: f64) -> bool {
    match shape {
        Shape::Circle { center, radius } if space == Space::Wgs84 => {
            if let Some((lo, hi)) = geodesic_bounds(*center, p) {
                // Rounding slack, so that a settled case is settled for the
                // subtraction below too.
                let slack = 1e-9 * (radius.abs() + margin + hi.abs());
                if hi < radius - margin - slack || lo > radius + margin + slack {
                    return false;
                }
            }
            boundary_distance(shape, space, p, margin) < margin
        }
        Shape::Rect(r) => ring_near(space, p, &corners(r), margin),
        Shape::Polygon(poly) => rings(poly).any(|ring| ring_near(space, p, &ring.0, margin)),
        Shape::MultiPolygon(mp) => {
            mp.0.iter()
                .flat_map(rings)
                .any(|ring| ring_near(space, p, &ring.0, margin))
        }
        _ => boundary_distance(shape, space, p, margin) < margin,
    }
}

/// The corners of `r`, in order around it.
pub(super) fn corners(r: &geo_types::Rect<f64>) -> [Point; 4] {
    let (lo, hi) = (r.min(), r.max());
    [
        lo,
        Point { x: hi.x, y: lo.y },
        hi,
        Point { x: lo.x, y: hi.y },
    ]
}

/// Is some edge of the closed ring through `pts` within `margin` of `p`, each edge's
/// distance computed as [`edge_distance`] does (with the tangent frame at `p` made
/// once)?
fn ring_near(space: Space, p: Point, pts: &[Point], margin: f64) -> bool {
    let n = pts.len();
    match space {
        Space::Planar => (0..n).any(|i| segment_near(p, pts[i], pts[(i + 1) % n], margin)),
        Space::Wgs84 => {
            let frame = Tangent::at(p);
            let Some(&last) = pts.last() else {
                return false;
            };
            let mut prev = (last, frame.local(last));
            // An edge whose ends both lie past this on one side of `p` (in the
            // frame) is farther than 1.03 × margin, which its square settles as not
            // near: it is passed over without measuring it.
            let reach = 1.03 * margin * (1.0 + 1e-6);
            // Edge (i - 1, i) for each i, the first being the closing edge: the
            // edges of `ring_distance`, in another order.
            pts.iter().any(|&b| {
                let (a, la) = prev;
                let lb = frame.local(b);
                prev = (b, lb);
                let beyond = (la.x > reach && lb.x > reach)
                    || (la.x < -reach && lb.x < -reach)
                    || (la.y > reach && lb.y > reach)
                    || (la.y < -reach && lb.y < -reach);
                !beyond && framed_edge_near(p, (a, la), (b, lb), margin)
            })
        }
    }
}

/// The distance from `p` to the closed ring through `pts` (the last point joins the
/// first).
fn ring_distance(space: Space, p: Point, pts: &[Point], margin: f64) -> f64 {
    let n = pts.len();
    (0..n)
        .map(|i| edge_distance(space, p, pts[i], pts[(i + 1) % n], margin))
        .fold(f64::INFINITY, f64::min)
}

/// The distance from `p` to the edge from `a` to `b`, straight in the coordinates.
fn edge_distance(space: Space, p: Point, a: Point, b: Point, margin: f64) -> f64 {
    match space {
        Space::Planar => segment_distance(p, a, b).0,
        Space::Wgs84 => {
            let frame = Tangent::at(p);
            framed_edge_distance(p, (a, frame.local(a)), (b, frame.local(b)), margin)
        }
    }
}

/// [`edge_distance`] on WGS84, given each end with its place in the tangent frame at
/// `p`.
fn framed_edge_distance(
    p: Point,
    (a, la): (Point, Point),
    (b, lb): (Point, Point),
    margin: f64,
) -> f64 {
    let (d, t) = segment_distance(Point { x: 0.0, y: 0.0 }, la, lb);
    if (d - margin).abs() <= 0.02 * margin {
        let q = Point {
            x: a.x + t * wrap(b.x - a.x),
            y: a.y + t * (b.y - a.y),
        };
        distance(Space::Wgs84, p, q)
    } else {
        d
    }
}

/// `framed_edge_distance(p, a, b, margin) < margin`, decided on the squared distance
/// in the frame wherever it is clearly away from the band of 2 % around the margin in
/// which `framed_edge_distance` takes the geodesic (3 %, for the rounding of the
/// squares), with no square root: the same answer, as a rejection that costs less.
fn framed_edge_near(
    p: Point,
    (a, la): (Point, Point),
    (b, lb): (Point, Point),
    margin: f64,
) -> bool {
    let d2 = segment_distance2(Point { x: 0.0, y: 0.0 }, la, lb);
    settled(d2, 0.97 * margin, 1.03 * margin)
        .unwrap_or_else(|| framed_edge_distance(p, (a, la), (b, lb), margin) < margin)
}

/// `segment_distance(p, a, b).0 < margin`, decided on the squared distance wherever
/// it is more than a millionth of the margin from it (the squares' rounding is a few
/// units in the last place), with no square root; at the margin itself, by the
/// distance, as before.
fn segment_near(p: Point, a: Point, b: Point, margin: f64) -> bool {
    let d2 = segment_distance2(p, a, b);
    settled(d2, margin * (1.0 - 1e-6), margin * (1.0 + 1e-6))
        .unwrap_or_else(|| segment_distance(p, a, b).0 < margin)
}

/// Is a distance whose square is `d2` below a margin, if the square settles it: yes
/// below `lo`, no above `hi`, unsettled between them.
fn settled(d2: f64, lo: f64, hi: f64) -> Option<bool> {
    if d2 < lo * lo {
        Some(true)
    } else if d2 > hi * hi {
        Some(false)
    } else {
        None
    }
}

/// The square of [`segment_distance`]'s distance, by the same cases (an overflow
/// gives infinity, an underflow 0: both are then left to the distance itself).
fn segment_distance2(p: Point, a: Point, b: Point) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let (px, py) = (p.x - a.x, p.y - a.y);
    let len2 = dx * dx + dy * dy;
    let along = px * dx + py * dy;
    if len2 == 0.0 || along <= 0.0 {
        return px * px + py * py;
    }
    if along >= len2 {
        let (qx, qy) = (p.x - b.x, p.y - b.y);
        return qx * qx + qy * qy;
    }
    let c = px * dy - py * dx;
    c * c / len2
}

/// The distance from `p` to a sector's boundary: its arc and its two radii.
fn sector_distance(
    space: Space,
    p: Point,
    center: Point,
    radius: f64,
    from_deg: f64,
    to_deg: f64,
    margin: f64,
) -> f64 {
    let d = distance(space, center, p);
    if to_deg - from_deg >= 360.0 {
        return (d - radius).abs();
    }
    let (from, to) = (norm360(from_deg), norm360(to_deg));
    let span = norm360(to - from);
    let end = |deg: f64| -> Point {
        match space {
            Space::Planar => {
                let r = deg.to_radians();
                Point {
                    x: center.x + radius * r.sin(),
                    y: center.y + radius * r.cos(),
                }
            }
            Space::Wgs84 => geodesic_destination(center, deg, radius),
        }
    };
    let (e1, e2) = (end(from), end(to));
    let b = if d > 0.0 {
        norm360(bearing(space, center, p))
    } else {
        from
    };
    let on_arc = norm360(b - from) <= span;
    let arc = if on_arc {
        (d - radius).abs()
    } else {
        distance(space, p, e1).min(distance(space, p, e2))
    };
    let radii = edge_distance(space, p, center, e1, margin)
        .min(edge_distance(space, p, center, e2, margin));
    arc.min(radii)
}

/// The distance from `p` to segment `a`–`b` in the plane, and the parameter of the
/// closest point (0 at `a`, 1 at `b`).
///
/// Beside the segment the distance is |cross product| / length, not the length of
/// the way to the closest point: on a grid of coordinates it is exact wherever the
/// true distance is a float (a 3-4-5 edge and a point half a unit off it are half a
/// unit apart, not a rounding less), so that a point exactly a margin from an edge is
/// at the margin, as the boundary rule says.
fn segment_distance(p: Point, a: Point, b: Point) -> (f64, f64) {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let (px, py) = (p.x - a.x, p.y - a.y);
    let len2 = dx * dx + dy * dy;
    let along = px * dx + py * dy;
    if len2 == 0.0 || along <= 0.0 {
        return (px.hypot(py), 0.0);
    }
    if along >= len2 {
        return ((p.x - b.x).hypot(p.y - b.y), 1.0);
    }
    ((px * dy - py * dx).abs() / len2.sqrt(), along / len2)
}

/// A longitude difference in (-180, 180]: unchanged when it is one already (the
/// vertices of a zone near the point, nearly always), without the division.
fn wrap(dlon: f64) -> f64 {
    if dlon > -180.0 && dlon <= 180.0 {
        return dlon;
    }
    let w = dlon.rem_euclid(360.0);
    if w > 180.0 {
        w - 360.0
    } else {
        w
    }
}

/// The affine frame tangent to the WGS84 ellipsoid at a point: metres east and north
/// per degree of longitude and latitude there.
struct Tangent {
    at: Point,
    east: f64,
    north: f64,
}

impl Tangent {
    fn at(at: Point) -> Tangent {
        let phi = at.y.to_radians();
        let w = 1.0 - WGS84_E2 * phi.sin().powi(2);
        let n = WGS84_A / w.sqrt();
        let m = WGS84_A * (1.0 - WGS84_E2) / (w * w.sqrt());
        let deg = std::f64::consts::PI / 180.0;
        Tangent {
            at,
            east: n * phi.cos() * deg,
            north: m * deg,
        }
    }

    fn local(&self, q: Point) -> Point {
        Point {
            x: wrap(q.x - self.at.x) * self.east,
            y: (q.y - self.at.y) * self.north,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo_types::{LineString, Polygon, Rect};

    fn zone(shape: Shape) -> Zone {
        Zone {
            name: "z".into(),
            shape,
        }
    }

    fn pt(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    #[test]
    fn planar_rect_sides() {
        let z = zone(Shape::Rect(Rect::new((0.0, 0.0), (10.0, 10.0))));
        assert_eq!(side(&z, Space::Planar, pt(5.0, 5.0), 2.0), Side::Inside);
        assert_eq!(side(&z, Space::Planar, pt(1.0, 5.0), 2.0), Side::Near);
        assert_eq!(side(&z, Space::Planar, pt(11.0, 5.0), 2.0), Side::Near);
        assert_eq!(side(&z, Space::Planar, pt(12.0, 5.0), 2.0), Side::Outside);
        assert_eq!(side(&z, Space::Planar, pt(12.0, 12.0), 2.0), Side::Outside);
        assert_eq!(side(&z, Space::Planar, pt(11.0, 11.0), 2.0), Side::Near);
        // Margin 0: the boundary is inside.
        assert_eq!(side(&z, Space::Planar, pt(10.0, 5.0), 0.0), Side::Inside);
        assert_eq!(side(&z, Space::Planar, pt(10.1, 5.0), 0.0), Side::Outside);
    }

    #[test]
    fn planar_polygon_with_hole() {
        let poly = Polygon::new(
            LineString::from(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]),
            vec![LineString::from(vec![
                (4.0, 4.0),
                (6.0, 4.0),
                (6.0, 6.0),
                (4.0, 6.0),
            ])],
        );
        let z = zone(Shape::Polygon(poly));
        assert_eq!(side(&z, Space::Planar, pt(5.0, 5.0), 0.5), Side::Outside);
        assert_eq!(side(&z, Space::Planar, pt(5.0, 5.0), 1.5), Side::Near);
        assert_eq!(side(&z, Space::Planar, pt(2.0, 2.0), 1.5), Side::Inside);
    }

    /// A point exactly the margin from a slanted edge is at the margin: inside by it
    /// (found by the states property test, where the closest-point formula made
    /// the distance a rounding less than 0.5).
    #[test]
    fn a_point_exactly_the_margin_from_a_slanted_edge_is_inside_by_it() {
        let poly = Polygon::new(
            LineString::from(vec![(1.0, 3.0), (4.0, 3.0), (1.0, 7.0)]),
            vec![],
        );
        let z = zone(Shape::Polygon(poly));
        // 0.5 from the 3-4-5 edge (4, 3)–(1, 7), farther from the others.
        let p = pt(2.25, 4.5);
        assert_eq!(boundary_distance(&z.shape, Space::Planar, p, 0.5), 0.5);
        assert_eq!(side(&z, Space::Planar, p, 0.5), Side::Inside);
        assert_eq!(side(&z, Space::Planar, p, 0.500_001), Side::Near);
        // And outside, half a unit beyond that edge.
        assert_eq!(side(&z, Space::Planar, pt(3.25, 5.5), 0.5), Side::Outside);
    }

    #[test]
    fn planar_circle_and_sector() {
        let c = zone(Shape::Circle {
            center: pt(0.0, 0.0),
            radius: 5.0,
        });
        assert_eq!(side(&c, Space::Planar, pt(0.0, 2.9), 2.0), Side::Inside);
        assert_eq!(side(&c, Space::Planar, pt(0.0, 3.1), 2.0), Side::Near);
        assert_eq!(side(&c, Space::Planar, pt(0.0, 7.0), 2.0), Side::Outside);
        // A quarter from north to east.
        let s = zone(Shape::Sector {
            center: pt(0.0, 0.0),
            radius: 10.0,
            from_deg: 0.0,
            to_deg: 90.0,
        });
        assert_eq!(side(&s, Space::Planar, pt(5.0, 5.0), 2.0), Side::Inside);
        assert_eq!(side(&s, Space::Planar, pt(1.0, 5.0), 2.0), Side::Near);
        assert_eq!(side(&s, Space::Planar, pt(-3.0, 5.0), 2.0), Side::Outside);
        assert_eq!(side(&s, Space::Planar, pt(-1.0, 5.0), 2.0), Side::Near);
    }

    #[test]
    fn wgs84_rect_margin_is_metres_within_a_thousandth() {
        // A rectangle from the equator north: a point 100 m north of its south edge.
        let z = zone(Shape::Rect(Rect::new((0.0, 0.0), (1.0, 1.0))));
        let at = |north_m: f64| geodesic_destination(pt(0.5, 0.0), 0.0, north_m);
        assert_eq!(side(&z, Space::Wgs84, at(100.2), 100.0), Side::Inside);
        assert_eq!(side(&z, Space::Wgs84, at(99.8), 100.0), Side::Near);
        let d = boundary_distance(&z.shape, Space::Wgs84, at(100.0), 100.0);
        assert!((d - 100.0).abs() < 0.1, "{d}");
        let far = boundary_distance(&z.shape, Space::Wgs84, at(5000.0), 5000.0);
        assert!((far - 5000.0).abs() < 5.0, "{far}");
    }

    #[test]
    fn wgs84_circle_margin_is_geodesic() {
        let z = zone(Shape::Circle {
            center: pt(0.0, 0.0),
            radius: 1000.0,
        });
        let at = |m: f64| geodesic_destination(pt(0.0, 0.0), 0.0, m);
        assert_eq!(side(&z, Space::Wgs84, at(899.0), 100.0), Side::Inside);
        assert_eq!(side(&z, Space::Wgs84, at(901.0), 100.0), Side::Near);
        assert_eq!(side(&z, Space::Wgs84, at(1101.0), 100.0), Side::Outside);
    }

    proptest::proptest! {
        /// The squared-distance tests answer as the distances they stand for, with
        /// margins placed about each distance: a millionth about a segment's (the
        /// planar band), a few hundredths about a framed edge's (the band in which
        /// the geodesic decides).
        #[test]
        fn squared_tests_answer_as_the_distances(
            (ax, ay, bx, by) in (-1e3..1e3f64, -1e3..1e3f64, -1e3..1e3f64, -1e3..1e3f64),
            (px, py) in (-2e3..2e3f64, -2e3..2e3f64),
            k in -30i32..30,
            f in -0.05..0.05f64,
            (lon, lat) in (-179.0..179.0f64, -80.0..80.0f64),
        ) {
            let (a, b, p) = (pt(ax, ay), pt(bx, by), pt(px, py));
            let d = segment_distance(p, a, b).0;
            for m in [d * (1.0 + f64::from(k) * 1e-7), d, d.next_up(), d.next_down(), d * (1.0 + f)] {
                proptest::prop_assert_eq!(segment_near(p, a, b, m), d < m, "{} {}", d, m);
            }
            // An edge of lon/lat a few hundred metres from the point, in its frame.
            let q = pt(lon, lat);
            let (ga, gb) = (pt(lon + ax * 1e-5, lat + ay * 1e-5), pt(lon + bx * 1e-5, lat + by * 1e-5));
            let frame = Tangent::at(q);
            let (la, lb) = ((ga, frame.local(ga)), (gb, frame.local(gb)));
            let d = segment_distance(pt(0.0, 0.0), la.1, lb.1).0;
            for m in [d * (1.0 + f), d * 0.97, d * 1.03, d / 0.97, d / 1.03, d * 1.02, d / 1.02] {
                proptest::prop_assume!(m > 0.0);
                proptest::prop_assert_eq!(
                    framed_edge_near(q, la, lb, m),
                    framed_edge_distance(q, la, lb, m) < m,
                    "{} {}", d, m
                );
            }
        }

        /// The search for an edge within the margin answers as the boundary's
        /// distance does, on either space, for polygons with a hole, rectangles and
        /// circles, at points about their edges.
        #[test]
        fn near_boundary_is_boundary_distance_below_the_margin(
            (cx, cy) in (-179.0..179.0f64, -80.0..80.0f64),
            size in 1e-4..0.5f64,
            corners in proptest::collection::vec((0.0..1.0f64, 0.0..1.0f64), 3..9),
            (px, py) in (-1.5..1.5f64, -1.5..1.5f64),
            margin in 1e-6..2.0f64,
            radius in 0.0..5000.0f64,
        ) {
            let at = |(u, v): (f64, f64)| pt(cx + (u - 0.5) * size, cy + (v - 0.5) * size);
            let ring: Vec<Point> = corners.iter().map(|&c| at(c)).collect();
            let hole: Vec<Point> = corners.iter().map(|&(u, v)| at((0.4 + u * 0.2, 0.4 + v * 0.2))).collect();
            let p = at((0.5 + px * 0.5, 0.5 + py * 0.5));
            let shapes = [
                Shape::Polygon(Polygon::new(LineString::from(ring), vec![LineString::from(hole)])),
                Shape::Rect(Rect::new(at((0.2, 0.3)), at((0.9, 0.7)))),
                Shape::Circle { center: at((0.5, 0.5)), radius },
            ];
            for shape in &shapes {
                for (space, m) in [(Space::Planar, margin * size), (Space::Wgs84, margin * 2000.0 * size.sqrt())] {
                    let exact = boundary_distance(shape, space, p, m) < m;
                    proptest::prop_assert_eq!(near_boundary(shape, space, p, m), exact, "{:?} {:?} {:?} {}", shape, space, p, m);
                }
            }
        }
    }

    #[test]
    fn wrap_takes_half_a_turn_west_as_half_a_turn_east() {
        assert_eq!(wrap(-180.0), 180.0);
        assert_eq!(wrap(180.0), 180.0);
        assert_eq!(wrap(540.0), 180.0);
        assert_eq!(wrap(-190.0), 170.0);
        assert_eq!(wrap(359.5), -0.5);
    }

    proptest::proptest! {
        /// A longitude difference comes back in (-180, 180], a whole number of turns
        /// from where it was, and unchanged when it was in that range already.
        #[test]
        fn wrap_gives_the_difference_within_half_a_turn(d in -1000.0..1000.0f64) {
            let w = wrap(d);
            proptest::prop_assert!(w > -180.0 && w <= 180.0, "{d} -> {w}");
            let turns = (d - w) / 360.0;
            proptest::prop_assert!((turns - turns.round()).abs() < 1e-9, "{d} -> {w}");
            if d > -180.0 && d <= 180.0 {
                proptest::prop_assert_eq!(w, d);
            }
        }
    }
}
