//! Distances and bearings in a net's space: Euclidean for planar, geodesic (Karney) on WGS84.

use geo::{Bearing, Distance, Euclidean, Geodesic, Point as GeoPoint};

use crate::event::{Point, Space};

/// The distance between two points: same unit as the coordinates for planar nets,
/// metres along the WGS84 ellipsoid's geodesic for WGS84 nets.
pub(crate) fn distance(space: Space, a: Point, b: Point) -> f64 {
    match space {
        Space::Planar => Euclidean.distance(GeoPoint(a), GeoPoint(b)),
        Space::Wgs84 => Geodesic.distance(GeoPoint(a), GeoPoint(b)),
    }
}

/// Is `b` within `max` of `a`? Planar nets compare squared distances (no square root).
pub(crate) fn within_distance(space: Space, a: Point, b: Point, max: f64) -> bool {
    match space {
        Space::Planar => {
            let (dx, dy) = (a.x - b.x, a.y - b.y);
            dx * dx + dy * dy <= max * max
        }
        Space::Wgs84 => distance(space, a, b) <= max,
    }
}

/// The bearing from `from` to `to` in degrees clockwise from north, in `[0, 360)`.
pub(crate) fn bearing(space: Space, from: Point, to: Point) -> f64 {
    let deg = match space {
        Space::Planar => (to.x - from.x).atan2(to.y - from.y).to_degrees(),
        Space::Wgs84 => Geodesic.bearing(GeoPoint(from), GeoPoint(to)),
    };
    norm360(deg)
}

/// `deg` in [0, 360): `rem_euclid` alone gives 360 for tiny negative angles.
pub(crate) fn norm360(deg: f64) -> f64 {
    let d = deg.rem_euclid(360.0);
    if d >= 360.0 {
        0.0
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planar_distance_and_bearing() {
        let o = Point { x: 0.0, y: 0.0 };
        assert_eq!(distance(Space::Planar, o, Point { x: 3.0, y: 4.0 }), 5.0);
        assert_eq!(bearing(Space::Planar, o, Point { x: 0.0, y: 1.0 }), 0.0);
        assert_eq!(bearing(Space::Planar, o, Point { x: 1.0, y: 0.0 }), 90.0);
        assert_eq!(bearing(Space::Planar, o, Point { x: -1.0, y: 0.0 }), 270.0);
        assert_eq!(bearing(Space::Planar, o, Point { x: -1e-300, y: 1.0 }), 0.0);
        assert_eq!(norm360(-1e-17), 0.0);
    }

    #[test]
    fn wgs84_one_degree_of_latitude_at_equator() {
        // 110,574.389 m per degree of latitude at the equator on WGS84.
        let d = distance(
            Space::Wgs84,
            Point { x: 0.0, y: 0.0 },
            Point { x: 0.0, y: 1.0 },
        );
        assert!((d - 110_574.389).abs() < 0.01, "{d}");
        let b = bearing(
            Space::Wgs84,
            Point { x: 0.0, y: 0.0 },
            Point { x: -1.0, y: 0.0 },
        );
        assert!((b - 270.0).abs() < 1e-9, "{b}");
    }

    /// WGS84 distances agree with published reference geodesics within 1 mm. The cases
    /// are lines of Karney's geodesic test set GeodTest.dat as used by GeographicLib's
    /// own test suite (python/geographiclib/test/test_geodesic.py, `testcases`:
    /// lat1, lon1, lat2, lon2, s12 in metres, computed there to about 15 nm), and
    /// GeographicLib's inverse example from (0°, 0°) to (1°, 1°).
    #[test]
    #[allow(clippy::excessive_precision)] // the reference values, digit for digit
    fn wgs84_distance_matches_geographiclib_reference() {
        let cases = [
            (
                35.60777,
                -139.44815,
                -11.17491,
                -69.95921,
                8_935_244.560_481_830_5,
            ),
            (
                55.52454,
                106.05087,
                77.03196,
                197.18234,
                4_105_086.171_392_440_6,
            ),
            (
                -29.47124,
                95.14681,
                -27.46601,
                -69.15955,
                13_487_015.838_114_549_2,
            ),
            (0.0, 0.0, 1.0, 1.0, 156_899.568_291_340_26),
        ];
        for (lat1, lon1, lat2, lon2, s12) in cases {
            let d = distance(
                Space::Wgs84,
                Point { x: lon1, y: lat1 },
                Point { x: lon2, y: lat2 },
            );
            assert!((d - s12).abs() < 1e-3, "{d} vs {s12}");
            // And the other way round.
            let back = distance(
                Space::Wgs84,
                Point { x: lon2, y: lat2 },
                Point { x: lon1, y: lat1 },
            );
            assert!((back - s12).abs() < 1e-3, "{back} vs {s12}");
        }
    }
}
