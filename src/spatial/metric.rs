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

/// The mean earth radius (IUGG R₁, metres), of the sphere used to settle most WGS84
/// comparisons without a geodesic.
const EARTH_R: f64 = 6_371_008.771_4;
/// Bounds on (geodesic distance on the ellipsoid) / (great-circle distance on that
/// sphere): the ellipsoid's radii of curvature lie between a(1 − e²) and a²/b, so the
/// true ratio is within [0.99442, 1.00449]; these are wider.
const RATIO_LO: f64 = 0.993;
const RATIO_HI: f64 = 1.006;
/// Absolute margin (metres) for rounding in the spherical estimate.
const MARGIN_M: f64 = 1e-3;

/// The great-circle distance on the sphere of radius [`EARTH_R`] (metres).
fn great_circle(a: Point, b: Point) -> f64 {
    let (sa, ca) = a.y.to_radians().sin_cos();
    let (sb, cb) = b.y.to_radians().sin_cos();
    let (sl, cl) = (b.x - a.x).to_radians().sin_cos();
    // The chord between the two points on the unit sphere, then its arc.
    let (x, y, z) = (cb * cl - ca, cb * sl, sb - sa);
    let chord = (x * x + y * y + z * z).sqrt().min(2.0);
    2.0 * EARTH_R * (chord / 2.0).asin()
}

/// Is `b` within `max` of `a`? Planar nets compare squared distances (no square root).
/// WGS84 nets decide with the geodesic distance, computed only when a spherical
/// estimate (bounded relative to it, see [`RATIO_LO`]) cannot settle the question.
pub(crate) fn within_distance(space: Space, a: Point, b: Point, max: f64) -> bool {
    match space {
        Space::Planar => {
            let (dx, dy) = (a.x - b.x, a.y - b.y);
            dx * dx + dy * dy <= max * max
        }
        Space::Wgs84 => {
            let valid = |p: Point| p.y.abs() <= 90.0 && p.x.abs() <= 360.0;
            if !(valid(a) && valid(b) && max.is_finite()) {
                // Outside the sphere's bounds (never from a checked net or event).
                return distance(space, a, b) <= max;
            }
            let gc = great_circle(a, b);
            if gc * RATIO_HI + MARGIN_M < max {
                true
            } else if gc * RATIO_LO - MARGIN_M > max {
                false
            } else {
                distance(space, a, b) <= max
            }
        }
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
    fn wgs84_within_distance_agrees_with_the_geodesic() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        for _ in 0..20_000 {
            let a = Point {
                x: rng.random_range(-180.0..180.0),
                y: rng.random_range(-90.0..90.0),
            };
            let b = Point {
                x: (a.x + rng.random_range(-2.0..2.0) + 540.0) % 360.0 - 180.0,
                y: (a.y + rng.random_range(-2.0..2.0)).clamp(-90.0, 90.0),
            };
            let d = distance(Space::Wgs84, a, b);
            // Thresholds around the true distance, and far from it.
            for max in [d * 0.9, d * 0.995, d, d * 1.005, d * 1.1, 1.0, 1e7] {
                assert_eq!(
                    within_distance(Space::Wgs84, a, b, max),
                    d <= max,
                    "{a:?} {b:?} {max}"
                );
            }
        }
    }

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
