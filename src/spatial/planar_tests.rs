//! Property tests: the planar geometry of `planar.rs` and the geodesics of
//! `metric.rs` answer exactly what the `geo` crate answers (bit for bit), on random
//! polygons with holes, multipolygons and polylines, and on points placed on their
//! vertices and edges as well as anywhere.

use geo::{
    BoundingRect, Destination, Distance, Euclidean, Geodesic, Intersects, LineString, MultiPolygon,
    Point as GeoPoint, Polygon,
};
use proptest::prelude::*;

use super::metric::{geodesic_azimuth, geodesic_destination, geodesic_distance};
use super::planar::{bounding_rect, euclidean, line_distance, polygon_holds, polygon_rect};
use crate::event::Point;

/// Coordinates on a coarse grid (so that vertices, edges and test points often
/// coincide exactly), or anywhere.
fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-8i32..=8).prop_map(f64::from),
        (-16i32..=16).prop_map(|v| f64::from(v) / 2.0),
        -8.0f64..8.0,
    ]
}

fn point() -> impl Strategy<Value = Point> {
    (coord(), coord()).prop_map(|(x, y)| Point { x, y })
}

/// A ring of 3 to 8 points (self-intersecting, repeated or collinear points
/// included), closed by `Polygon::new`.
fn ring() -> impl Strategy<Value = LineString<f64>> {
    prop::collection::vec(point(), 3..8).prop_map(LineString::from)
}

fn polygon() -> impl Strategy<Value = Polygon<f64>> {
    (ring(), prop::collection::vec(ring(), 0..3)).prop_map(|(ext, holes)| Polygon::new(ext, holes))
}

/// Points to test against shapes with these `coords`: every vertex, points along
/// every edge (its midpoint, and at random fractions), and random points.
fn probes(coords: &[Point], along: &[f64], extra: &[Point]) -> Vec<Point> {
    let mut out: Vec<Point> = coords.to_vec();
    for w in coords.windows(2) {
        let (a, b) = (w[0], w[1]);
        for &t in along.iter().chain(&[0.5]) {
            out.push(Point {
                x: a.x + (b.x - a.x) * t,
                y: a.y + (b.y - a.y) * t,
            });
        }
    }
    out.extend_from_slice(extra);
    out
}

fn all_coords(poly: &Polygon<f64>) -> Vec<Point> {
    let mut v = poly.exterior().0.clone();
    for hole in poly.interiors() {
        v.extend_from_slice(&hole.0);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn point_in_polygon_is_geos(
        poly in polygon(),
        along in prop::collection::vec(0.0f64..=1.0, 0..3),
        extra in prop::collection::vec(point(), 0..16),
    ) {
        for p in probes(&all_coords(&poly), &along, &extra) {
            prop_assert_eq!(polygon_holds(&poly, p), poly.intersects(&p), "{:?} in {:?}", p, poly);
        }
        prop_assert_eq!(polygon_rect(&poly), poly.bounding_rect());
    }

    #[test]
    fn point_in_multipolygon_is_geos(
        polys in prop::collection::vec(polygon(), 1..4),
        extra in prop::collection::vec(point(), 0..16),
    ) {
        let mp = MultiPolygon(polys);
        let coords: Vec<Point> = mp.0.iter().flat_map(all_coords).collect();
        for p in probes(&coords, &[], &extra) {
            let ours = mp.0.iter().any(|poly| polygon_holds(poly, p));
            prop_assert_eq!(ours, mp.intersects(&p), "{:?} in {:?}", p, mp);
        }
        let ours = bounding_rect(mp.0.iter().flat_map(|p| &p.exterior().0));
        prop_assert_eq!(ours, mp.bounding_rect());
    }

    #[test]
    fn distance_to_a_polyline_is_geos(
        pts in prop::collection::vec(point(), 2..8),
        along in prop::collection::vec(0.0f64..=1.0, 0..3),
        extra in prop::collection::vec(point(), 0..16),
    ) {
        let line = LineString::from(pts.clone());
        for p in probes(&pts, &along, &extra) {
            let theirs = Euclidean.distance(&GeoPoint(p), &line);
            prop_assert_eq!(line_distance(p, &line).to_bits(), theirs.to_bits(), "{:?} to {:?}", p, line);
            for &q in &pts {
                let theirs = Euclidean.distance(GeoPoint(p), GeoPoint(q));
                prop_assert_eq!(euclidean(p, q).to_bits(), theirs.to_bits());
            }
        }
        prop_assert_eq!(bounding_rect(&line.0), line.bounding_rect());
    }

    #[test]
    fn geodesics_are_geos(
        lon1 in -180.0f64..180.0, lat1 in -90.0f64..=90.0,
        lon2 in -180.0f64..180.0, lat2 in -90.0f64..=90.0,
        azimuth in -360.0f64..360.0, metres in 0.0f64..2e7,
    ) {
        let (a, b) = (Point { x: lon1, y: lat1 }, Point { x: lon2, y: lat2 });
        let (ga, gb) = (GeoPoint(a), GeoPoint(b));
        prop_assert_eq!(geodesic_distance(a, b).to_bits(), Geodesic.distance(ga, gb).to_bits());
        prop_assert_eq!(geodesic_azimuth(a, b).to_bits(), geo::Bearing::bearing(&Geodesic, ga, gb).to_bits());
        let ours = geodesic_destination(a, azimuth, metres);
        let theirs = Geodesic.destination(ga, azimuth, metres).0;
        prop_assert_eq!((ours.x.to_bits(), ours.y.to_bits()), (theirs.x.to_bits(), theirs.y.to_bits()));
    }
}

/// Hand-picked cases: vertices, edges, a hole's boundary, a point inside a hole, a
/// degenerate ring, and a figure-eight ring.
#[test]
fn edges_vertices_and_holes_are_geos() {
    let square = |lo: f64, hi: f64| LineString::from(vec![(lo, lo), (hi, lo), (hi, hi), (lo, hi)]);
    let polys = [
        Polygon::new(square(0.0, 10.0), vec![square(3.0, 6.0)]),
        Polygon::new(
            LineString::from(vec![(0.0, 0.0), (4.0, 4.0), (4.0, 0.0), (0.0, 4.0)]),
            vec![],
        ),
        Polygon::new(
            LineString::from(vec![(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]),
            vec![],
        ),
        Polygon::new(
            LineString::from(vec![(0.1, 0.2), (0.7, 0.3), (0.3, 0.9)]),
            vec![],
        ),
    ];
    let mut pts = Vec::new();
    for x in -2..=24 {
        for y in -2..=24 {
            pts.push(Point {
                x: f64::from(x) / 2.0,
                y: f64::from(y) / 2.0,
            });
        }
    }
    for poly in &polys {
        for p in probes(&all_coords(poly), &[0.1, 1.0 / 3.0], &pts) {
            assert_eq!(
                polygon_holds(poly, p),
                poly.intersects(&p),
                "{p:?} in {poly:?}"
            );
        }
    }
}
