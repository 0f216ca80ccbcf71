//! Distances and bearings in a net's space: Euclidean for planar, geodesic (Karney) on WGS84.

use std::sync::LazyLock;

use geographiclib_rs::{DirectGeodesic, Geodesic, InverseGeodesic};

use super::planar::euclidean;
use crate::event::{Point, Space};

/// The WGS84 ellipsoid's geodesics (Karney's algorithms, `geographiclib-rs`).
static WGS84: LazyLock<Geodesic> = LazyLock::new(Geodesic::wgs84);

/// The length of the geodesic from `a` to `b`, (lon, lat) degrees, in metres.
pub(crate) fn geodesic_distance(a: Point, b: Point) -> f64 {
    InverseGeodesic::<f64>::inverse(&*WGS84, a.y, a.x, b.y, b.x)
}

/// The geodesic's initial azimuth from `a` towards `b`, degrees clockwise from north,
/// in [0, 360) but for rounding (see [`norm360`]).
pub(crate) fn geodesic_azimuth(a: Point, b: Point) -> f64 {
    let (azi1, _, _): (f64, f64, f64) = WGS84.inverse(a.y, a.x, b.y, b.x);
    (azi1 + 360.0) % 360.0
}

/// The point `metres` from `from` along the geodesic leaving it at `azimuth` degrees
/// clockwise from north.
pub(crate) fn geodesic_destination(from: Point, azimuth: f64, metres: f64) -> Point {
    let (lat, lon): (f64, f64) = WGS84.direct(from.y, from.x, azimuth, metres);
    Point { x: lon, y: lat }
}

/// The distance between two points: same unit as the coordinates for planar nets,
/// metres along the WGS84 ellipsoid's geodesic for WGS84 nets.
pub(crate) fn distance(space: Space, a: Point, b: Point) -> f64 {
    match space {
        Space::Planar => euclidean(a, b),
        Space::Wgs84 => geodesic_distance(a, b),
    }
}

/// The mean earth radius (IUGG R₁, metres), of the sphere used to settle most WGS84
/// comparisons without a geodesic, and on which WGS84 points are filed in cells
/// ([`on_sphere`]).
pub(crate) const EARTH_R: f64 = 6_371_008.771_4;
/// WGS84 equatorial radius, metres.
pub(crate) const WGS84_A: f64 = 6_378_137.0;
/// WGS84 flattening.
pub(crate) const WGS84_F: f64 = 1.0 / 298.257_223_563;
/// WGS84 first eccentricity squared.
pub(crate) const WGS84_E2: f64 = WGS84_F * (2.0 - WGS84_F);
/// The fewest metres in a degree of latitude anywhere on WGS84 (at the equator, the
/// meridian's radius of curvature a(1 − e²) being least there): no path between two
/// parallels is shorter than this times the degrees between them.
pub(crate) const MIN_METRES_PER_DEG_LAT: f64 =
    WGS84_A * (1.0 - WGS84_E2) * std::f64::consts::PI / 180.0;

/// The position, in metres, of the point at `p`'s latitude and longitude (degrees) on
/// the sphere of radius [`EARTH_R`] centred on the earth's centre: a Cartesian frame
/// with no seam at the antimeridian and no singularity at the poles.
pub(crate) fn on_sphere(p: Point) -> [f64; 3] {
    let (sin_lat, cos_lat) = p.y.to_radians().sin_cos();
    let (sin_lon, cos_lon) = p.x.to_radians().sin_cos();
    [
        EARTH_R * cos_lat * cos_lon,
        EARTH_R * cos_lat * sin_lon,
        EARTH_R * sin_lat,
    ]
}
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

/// A WGS84 point with the trigonometry of its latitude and longitude, computed once
/// for the many spherical estimates a point takes part in (a zone's centre, an event
/// stabbing a tree of zones).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SpherePoint {
    /// The point, (lon, lat) degrees.
    pub(crate) at: Point,
    sin_lat: f64,
    cos_lat: f64,
    sin_lon: f64,
    cos_lon: f64,
}

impl SpherePoint {
    pub(crate) fn new(at: Point) -> SpherePoint {
        let (sin_lat, cos_lat) = at.y.to_radians().sin_cos();
        let (sin_lon, cos_lon) = at.x.to_radians().sin_cos();
        SpherePoint {
            at,
            sin_lat,
            cos_lat,
            sin_lon,
            cos_lon,
        }
    }

    /// The chord to `b` on the unit sphere.
    fn chord(&self, b: &SpherePoint) -> f64 {
        let (a, b) = (self, b);
        let x = b.cos_lat * b.cos_lon - a.cos_lat * a.cos_lon;
        let y = b.cos_lat * b.sin_lon - a.cos_lat * a.sin_lon;
        let z = b.sin_lat - a.sin_lat;
        (x * x + y * y + z * z).sqrt().min(2.0)
    }

    /// The sine and cosine of the reduced (parametric) latitude β, tan β = (1 − f) tan φ:
    /// the latitude on Bessel's auxiliary sphere, where geodesics keep their azimuths.
    fn reduced(&self) -> (f64, f64) {
        let (s, c) = ((1.0 - WGS84_F) * self.sin_lat, self.cos_lat);
        // Both within [-1, 1]: no overflow for `hypot` to guard against.
        let h = (s * s + c * c).sqrt();
        (s / h, c / h)
    }
}

/// Largest error, degrees, of [`approximate_bearing`] against the geodesic azimuth,
/// with margin: its proof bounds the error by f · σ / sin σ ≤ 0.23° (f the
/// flattening; σ ≤ [`APPROX_MAX_CHORD`]'s arc).
pub(crate) const BEARING_ERROR_DEG: f64 = 0.5;
/// Longest chord (unit sphere) over which [`approximate_bearing`] answers: an arc of
/// about 0.93 rad, where σ / sin σ < 1.17.
const APPROX_MAX_CHORD: f64 = 0.9;

/// The geodesic's initial azimuth from `from` to `to` (degrees clockwise from north,
/// in [0, 360)) within [`BEARING_ERROR_DEG`], or `None` where that is not proven: near
/// a pole or over long arcs.
///
/// It is the azimuth on the auxiliary sphere (reduced latitudes β) towards the
/// ellipsoidal longitude difference λ instead of the spherical one ω. The ellipsoid's
/// geodesic keeps its azimuths on that sphere, and |ω − λ| ≤ f σ (the integrand of
/// λ − ω is at most f sin α₀); moving the end point by f σ cos β₂ sideways turns the
/// azimuth by at most f σ cos β₂ / sin σ.
pub(crate) fn approximate_bearing(from: &SpherePoint, to: &SpherePoint) -> Option<f64> {
    if from.cos_lat < 0.02 || to.cos_lat < 0.02 || from.chord(to) > APPROX_MAX_CHORD {
        return None;
    }
    let (sb1, cb1) = from.reduced();
    let (sb2, cb2) = to.reduced();
    // sin and cos of λ₂ − λ₁.
    let sl = to.sin_lon * from.cos_lon - to.cos_lon * from.sin_lon;
    let cl = to.cos_lon * from.cos_lon + to.sin_lon * from.sin_lon;
    let deg = (cb2 * sl).atan2(cb1 * sb2 - sb1 * cb2 * cl).to_degrees();
    Some(norm360(deg))
}

/// [`within_distance`] on WGS84, the trigonometry of both points given.
pub(crate) fn within_distance_sphere(a: &SpherePoint, b: &SpherePoint, max: f64) -> bool {
    let valid = |p: Point| p.y.abs() <= 90.0 && p.x.abs() <= 360.0;
    if !(valid(a.at) && valid(b.at) && max.is_finite()) {
        return distance(Space::Wgs84, a.at, b.at) <= max;
    }
    let gc = 2.0 * EARTH_R * (a.chord(b) / 2.0).asin();
    settle(gc, max).unwrap_or_else(|| distance(Space::Wgs84, a.at, b.at) <= max)
}

/// Bounds on the WGS84 geodesic distance between `a` and `b` from their great-circle
/// distance ([`RATIO_LO`], [`RATIO_HI`]), without a geodesic; `None` for points outside
/// the sphere's bounds (never from a checked net or event).
pub(crate) fn geodesic_bounds(a: Point, b: Point) -> Option<(f64, f64)> {
    let valid = |p: Point| p.y.abs() <= 90.0 && p.x.abs() <= 360.0;
    if !(valid(a) && valid(b)) {
        return None;
    }
    let gc = great_circle(a, b);
    Some((gc * RATIO_LO - MARGIN_M, gc * RATIO_HI + MARGIN_M))
}

/// Is a geodesic whose great-circle estimate is `gc` within `max`, if the estimate's
/// bounds settle it?
fn settle(gc: f64, max: f64) -> Option<bool> {
    if gc * RATIO_HI + MARGIN_M < max {
        Some(true)
    } else if gc * RATIO_LO - MARGIN_M > max {
        Some(false)
    } else {
        None
    }
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
            // Farther apart in latitude alone than `max` (with room for the
            // geodesic's rounding): no trigonometry. Most pairs far apart end here.
            if (a.y - b.y).abs() * MIN_METRES_PER_DEG_LAT * (1.0 - 1e-9) > max {
                return false;
            }
            settle(great_circle(a, b), max).unwrap_or_else(|| distance(space, a, b) <= max)
        }
    }
}

/// `x.floor() as i64` (saturating, NaN to 0) without a call to `floor`, which x86-64
/// without SSE4.1 makes a library call: grids compute several cells per event.
#[inline]
pub(crate) fn floor_to_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// `x.floor()`, without the library call (see [`floor_to_i64`]) for the values a
/// grid's cell numbers take: below 2^52 in size, every `f64` truncates exactly.
#[inline]
pub(crate) fn floor(x: f64) -> f64 {
    if x.abs() < 4_503_599_627_370_496.0 {
        let t = x as i64 as f64;
        if t > x {
            t - 1.0
        } else if t == x {
            // (-0.0 stays -0.0.)
            x
        } else {
            t
        }
    } else {
        x.floor()
    }
}

/// The bearing from `from` to `to` in degrees clockwise from north, in `[0, 360)`.
pub(crate) fn bearing(space: Space, from: Point, to: Point) -> f64 {
    let deg = match space {
        Space::Planar => (to.x - from.x).atan2(to.y - from.y).to_degrees(),
        Space::Wgs84 => geodesic_azimuth(from, to),
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

    /// Both WGS84 closeness tests (from points, and from their kept trigonometry)
    /// decide as the geodesic distance does.
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
            let (sa, sb) = (SpherePoint::new(a), SpherePoint::new(b));
            // Thresholds around the true distance, and far from it, and about the
            // meridian arc between the two latitudes (which the cheap rejection
            // bounds the distance by).
            let arc = (a.y - b.y).abs() * MIN_METRES_PER_DEG_LAT;
            for max in [
                d * 0.9,
                d * 0.995,
                d,
                d * 1.005,
                d * 1.1,
                1.0,
                1e7,
                arc,
                arc * (1.0 - 1e-9),
                arc * 0.999,
            ] {
                let truth = d <= max;
                assert_eq!(
                    within_distance(Space::Wgs84, a, b, max),
                    truth,
                    "{a:?} {b:?} {max}"
                );
                assert_eq!(
                    within_distance_sphere(&sa, &sb, max),
                    truth,
                    "{a:?} {b:?} {max}"
                );
            }
        }
    }

    /// The approximate bearing stays within half its stated error of the geodesic's
    /// azimuth, from metres to thousands of kilometres, at every latitude it answers.
    #[test]
    fn approximate_bearing_is_within_its_error() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut answered = 0;
        let mut worst: f64 = 0.0;
        for i in 0..200_000 {
            let a = Point {
                x: rng.random_range(-180.0..180.0),
                y: rng.random_range(-90.0..90.0),
            };
            // Offsets from 1e-6° to 60°, log-uniform.
            let scale = 10f64.powf(rng.random_range(-6.0..1.8));
            let b = Point {
                x: (a.x + scale * rng.random_range(-1.0..1.0) + 540.0) % 360.0 - 180.0,
                y: (a.y + scale * rng.random_range(-1.0..1.0)).clamp(-90.0, 90.0),
            };
            if a == b {
                continue;
            }
            let Some(approx) = approximate_bearing(&SpherePoint::new(a), &SpherePoint::new(b))
            else {
                continue;
            };
            answered += 1;
            let exact = bearing(Space::Wgs84, a, b);
            let diff = (approx - exact).rem_euclid(360.0);
            let err = diff.min(360.0 - diff);
            worst = worst.max(err);
            assert!(
                err < BEARING_ERROR_DEG / 2.0,
                "#{i} {a:?} {b:?}: {approx} vs {exact}"
            );
        }
        assert!(answered > 150_000, "{answered}");
        assert!(
            worst > 0.01,
            "the cases reach the flattening's effect: {worst}"
        );
    }

    #[test]
    fn floor_to_i64_is_floor_as_i64() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.999_999,
            -2.000_001,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            9.3e18,
            -9.3e18,
            9_007_199_254_740_993.0,
            -4_503_599_627_370_495.5,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
        ];
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        xs.extend((0..10_000).map(|_| rng.random_range(-1e6..1e6)));
        xs.extend((0..10_000).map(|_| rng.random_range(-1e19..1e19)));
        for x in xs {
            assert_eq!(floor_to_i64(x), x.floor() as i64, "{x}");
            let (f, g) = (floor(x), x.floor());
            assert!(
                f == g && f.is_sign_negative() == g.is_sign_negative() || f.is_nan() && g.is_nan(),
                "{x}: {f} {g}"
            );
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
