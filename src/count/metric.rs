//! Closeness tests for the counting index: a cheap embedding that settles almost every
//! pair, and the exact distance of `crate::spatial` for the few it cannot settle.
//!
//! A point is embedded in three coordinates: `(x, y, 0)` for planar nets, and for WGS84
//! nets the point on a sphere of the earth's mean radius `R` at the same latitude and
//! longitude, `R · (cos φ cos λ, cos φ sin λ, sin φ)` in metres. The squared Euclidean
//! distance between embeddings (for WGS84, the squared chord) is monotone in the planar
//! distance and in the great-circle distance on that sphere.
//!
//! The WGS84 bound: the ellipsoid's metric is `M² dφ² + N² cos²φ dλ²` (meridional and
//! prime-vertical radii of curvature), the sphere's is `R² (dφ² + cos²φ dλ²)`, and
//! `a(1 − e²) ≤ M ≤ N ≤ a²/b`, so every path's ellipsoidal length lies between
//! `0.99442` and `1.00449` times its length on the sphere; so does the geodesic distance
//! relative to the great-circle distance. With a wider band (`0.993`, `1.006`) and an
//! absolute margin of a micrometre for rounding, a squared chord below a threshold's
//! `inside` proves the geodesic distance is below `d`, one above `outside` proves it is
//! not, and only the thin band between calls the geodesic (Karney) distance. Planar nets
//! use a relative band of 10⁻⁹ around `d²`.
//!
//! The same argument holds with the radii at the pair's own latitudes: over a path
//! whose geodetic latitudes keep `sin²φ` within `[lo, hi]`, the ratio lies between
//! `M(lo)/R` and `N(hi)/R` (`M` and `N` grow with `|φ|`), a band of 0.3 % at
//! mid-latitudes instead of 1.3 %. Both paths that matter (the great-circle arc, whose
//! copy on the ellipsoid bounds the geodesic from above, and the geodesic, whose copy
//! on the sphere bounds the great-circle distance from above) stay within their length
//! of an endpoint, so their latitudes differ from an endpoint's by at most
//! `1.02·d / a(1 − e²)` radians for a pair in the global band, and `sin²φ` (whose
//! derivative is `sin 2φ`) by at most as much. [`Threshold::settle`] takes this
//! second look at a pair of the global band before the geodesic is computed, which it
//! then is for a fifth as many pairs.
//!
//! So the index decides closeness exactly as `distance(space, a, b) < d` would, with
//! `a` the earlier-inserted point — the brute-force reference computes it the same way.

use crate::event::{Point, Space};
pub(super) use crate::spatial::EARTH_R;
use crate::spatial::{WGS84_A, WGS84_E2};

/// Lower bound used for geodesic / great-circle distance (the true bound is 0.99442).
const RATIO_LO: f64 = 0.993;
/// Upper bound used for geodesic / great-circle distance (the true bound is 1.00449).
const RATIO_HI: f64 = 1.006;
/// Absolute margin on chords (metres), far above the rounding of the embedding.
const CHORD_MARGIN: f64 = 1e-6;
/// Relative band around `d²` in which planar pairs are measured exactly.
const PLANAR_BAND: f64 = 1e-9;
/// The smallest meridional radius of curvature, `a(1 − e²)` (at the equator), rounded
/// down: no path moves faster in latitude than one radian per this many metres.
const MERIDIAN_MIN: f64 = 6_335_439.0;

/// A point's embedding: `[x, y, 0]` (planar) or a point on the sphere in metres (WGS84).
pub(super) type Embedded = [f64; 3];

/// Embeds a point (see the module documentation).
pub(super) fn embed(space: Space, p: Point) -> Embedded {
    match space {
        Space::Planar => [p.x, p.y, 0.0],
        Space::Wgs84 => crate::spatial::on_sphere(p),
    }
}

/// The squared Euclidean distance between two embeddings.
pub(super) fn squared(a: &Embedded, b: &Embedded) -> f64 {
    let (dx, dy, dz) = (a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    dx * dx + dy * dy + dz * dz
}

/// The exact distance, from the earlier-inserted point `a` to the later one `b`.
pub(super) fn exact(space: Space, a: Point, b: Point) -> f64 {
    crate::spatial::distance(space, a, b)
}

/// The closeness test for one distance `d`, on squared embedded distances.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Threshold {
    /// The distance: pairs strictly closer than this are close.
    pub(super) d: f64,
    /// A squared embedded distance below this is certainly close.
    inside: f64,
    /// A squared embedded distance above this is certainly not close.
    outside: f64,
}

/// What the embedding alone says about a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Certainly closer than `d`.
    Close,
    /// Certainly not closer than `d`.
    Far,
    /// In the band: measure exactly.
    Measure,
}

impl Threshold {
    /// The test for distance `d` in `space`; any `d` is accepted (zero, negative, NaN
    /// and infinite distances included).
    pub(super) fn new(space: Space, d: f64) -> Threshold {
        // No distance is < d when d <= 0 or d is NaN.
        if d.is_nan() || d <= 0.0 {
            return Threshold {
                d,
                inside: f64::NEG_INFINITY,
                outside: -1.0,
            };
        }
        match space {
            Space::Planar => {
                let (inside, outside) = if d == f64::INFINITY {
                    // Every finite distance is close; an overflowing square is measured.
                    (f64::MAX, f64::INFINITY)
                } else if (1e-140..=1e140).contains(&d) {
                    let d2 = d * d;
                    (d2 * (1.0 - PLANAR_BAND), d2 * (1.0 + PLANAR_BAND))
                } else {
                    // Squares would lose precision: measure every candidate.
                    (f64::NEG_INFINITY, f64::INFINITY)
                };
                Threshold { d, inside, outside }
            }
            Space::Wgs84 => {
                let chord = |sphere: f64| {
                    let half = sphere / (2.0 * EARTH_R);
                    (half < std::f64::consts::FRAC_PI_2).then(|| 2.0 * EARTH_R * half.sin())
                };
                // Certainly close when the great-circle distance is below d / RATIO_HI.
                let inside = match chord(d / RATIO_HI) {
                    Some(c) if c > CHORD_MARGIN => (c - CHORD_MARGIN).powi(2),
                    Some(_) => f64::NEG_INFINITY,
                    None => f64::INFINITY,
                };
                // Certainly far when it is above d / RATIO_LO.
                let outside = match chord(d / RATIO_LO) {
                    Some(c) => (c + CHORD_MARGIN).powi(2),
                    None => f64::INFINITY,
                };
                Threshold { d, inside, outside }
            }
        }
    }

    /// What a squared embedded distance says about closeness.
    pub(super) fn verdict(&self, squared: f64) -> Verdict {
        if squared < self.inside {
            Verdict::Close
        } else if squared > self.outside {
            Verdict::Far
        } else {
            Verdict::Measure
        }
    }

    /// The largest squared embedded distance that may still be close.
    pub(super) fn reach_squared(&self) -> f64 {
        self.outside
    }

    /// A second look at a pair in the band ([`Verdict::Measure`] from
    /// [`Threshold::verdict`]) on WGS84, with the radii of curvature of the pair's
    /// latitudes (see the module documentation); `za` and `zb` are the embeddings'
    /// third coordinates, `R·sin φ`. `Measure` on a plane, or when it cannot settle.
    pub(super) fn settle(&self, space: Space, squared: f64, za: f64, zb: f64) -> Verdict {
        let d = self.d;
        if space != Space::Wgs84 || !(d > 0.0 && d < 1e6) {
            // (Beyond 1,000 km the latitudes' range is too wide to gain anything.)
            return Verdict::Measure;
        }
        let (sa, sb) = ((za / EARTH_R).powi(2), (zb / EARTH_R).powi(2));
        let slack = 1.02 * d / MERIDIAN_MIN + 1e-12;
        // On either side of the equator, a path between them may cross it.
        let lo = if (za < 0.0) == (zb < 0.0) {
            (sa.min(sb) - slack).max(0.0)
        } else {
            0.0
        };
        let hi = (sa.max(sb) + slack).min(1.0);
        // M = a(1 − e²) / W³ and N = a / W, with W² = 1 − e² sin²φ.
        let meridional = WGS84_A * (1.0 - WGS84_E2) / (1.0 - WGS84_E2 * lo).powf(1.5);
        let normal = WGS84_A / (1.0 - WGS84_E2 * hi).sqrt();
        // Close when even the largest ratio keeps the geodesic below d: a great-circle
        // distance below d·R/N, that is a chord below 2R·sin(d / 2N); far when even the
        // smallest ratio keeps it at d or above: a chord above 2R·sin(d / 2M).
        let chord = |half_angle: f64| 2.0 * EARTH_R * half_angle.sin();
        let inside = chord(d / (2.0 * normal)) * (1.0 - 1e-12) - CHORD_MARGIN;
        let outside = chord(d / (2.0 * meridional)) * (1.0 + 1e-12) + CHORD_MARGIN;
        if inside > 0.0 && squared < inside * inside {
            Verdict::Close
        } else if squared > outside * outside {
            Verdict::Far
        } else {
            Verdict::Measure
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    /// Neither the verdict nor the second look contradicts the exact distance; the
    /// second look's verdict, for a pair in the band.
    fn agrees(space: Space, a: Point, b: Point, d: f64) -> Option<Verdict> {
        let t = Threshold::new(space, d);
        let exact = exact(space, a, b) < d;
        let (ea, eb) = (embed(space, a), embed(space, b));
        let sq = squared(&ea, &eb);
        let check = |v: Verdict| match v {
            Verdict::Close => assert!(exact, "{a:?} {b:?} {d}: {v:?}"),
            Verdict::Far => assert!(!exact, "{a:?} {b:?} {d}: {v:?}"),
            Verdict::Measure => {}
        };
        let v = t.verdict(sq);
        check(v);
        (v == Verdict::Measure).then(|| {
            let settled = t.settle(space, sq, ea[2], eb[2]);
            check(settled);
            settled
        })
    }

    /// Pairs at every latitude (across the equator and the antimeridian, near the
    /// poles), at distances from metres to hundreds of kilometres, with thresholds
    /// packed around their geodesic distance: the second look is never wrong, and at
    /// mid-latitudes settles pairs 0.4 % from the threshold, which the global band
    /// cannot.
    #[test]
    fn local_band_is_sound_and_narrower() {
        let mut seed = 9u64;
        let mut rnd = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut settled, mut banded) = (0, 0);
        for i in 0..4_000 {
            let lat = match i % 4 {
                0 => rnd() * 178.0 - 89.0,
                1 => (rnd() - 0.5) * 0.2,    // the equator
                2 => 89.0 + rnd() * 0.99,    // near the north pole
                _ => -(89.0 + rnd() * 0.99), // near the south pole
            };
            let lon = rnd() * 360.0 - 180.0;
            let reach_deg = [0.0001, 0.01, 0.1, 2.0][i % 4 / 2 + 2 * (i % 2)];
            let a = p(lon, lat);
            let b = p(
                lon + (rnd() - 0.5) * 2.0 * reach_deg,
                (lat + (rnd() - 0.5) * 2.0 * reach_deg).clamp(-90.0, 90.0),
            );
            let g = exact(Space::Wgs84, a, b);
            if g == 0.0 {
                continue;
            }
            for f in [
                0.993, 0.996, 0.999, 0.9999, 1.0, 1.0001, 1.001, 1.004, 1.006,
            ] {
                if let Some(v) = agrees(Space::Wgs84, a, b, g * f) {
                    banded += 1;
                    if v != Verdict::Measure {
                        settled += 1;
                    }
                }
            }
        }
        // Most pairs the global band leaves are settled by the second look.
        assert!(banded > 10_000, "{banded}");
        assert!(settled * 2 > banded, "{settled} of {banded}");
        // At mid-latitude, 0.4 % either side of the threshold is settled.
        for (lon, lat) in [(10.5, 50.5), (-70.0, -33.0), (179.99, 40.0)] {
            let (a, b) = (p(lon, lat), p(lon + 0.01, lat + 0.007));
            let g = exact(Space::Wgs84, a, b);
            assert_eq!(agrees(Space::Wgs84, a, b, g * 1.004), Some(Verdict::Close));
            assert_eq!(agrees(Space::Wgs84, a, b, g * 0.996), Some(Verdict::Far));
        }
    }

    #[test]
    fn band_is_sound_on_wgs84() {
        let pairs = [
            (p(0.0, 0.0), p(0.001, 0.0)),
            (p(0.0, 0.0), p(0.0, 0.001)),
            (p(179.9995, 10.0), p(-179.9995, 10.0)),
            (p(30.0, 89.999), p(-150.0, 89.999)),
            (p(12.0, -89.5), p(13.0, -89.5)),
            (p(121.5, 25.0), p(121.6, 25.1)),
        ];
        for (a, b) in pairs {
            let g = exact(Space::Wgs84, a, b);
            for f in [0.5, 0.99, 0.995, 0.999, 1.0, 1.001, 1.005, 1.01, 2.0] {
                agrees(Space::Wgs84, a, b, g * f);
            }
            // Far from the boundary the embedding settles the pair alone.
            let t = Threshold::new(Space::Wgs84, g * 1.02);
            let sq = squared(&embed(Space::Wgs84, a), &embed(Space::Wgs84, b));
            assert_eq!(t.verdict(sq), Verdict::Close);
            let t = Threshold::new(Space::Wgs84, g * 0.98);
            assert_eq!(t.verdict(sq), Verdict::Far);
        }
    }

    #[test]
    fn degenerate_distances() {
        for space in [Space::Planar, Space::Wgs84] {
            let (a, b) = (p(1.0, 1.0), p(1.0, 1.0));
            for d in [0.0, -1.0, f64::NAN] {
                let t = Threshold::new(space, d);
                assert_eq!(t.verdict(0.0), Verdict::Far);
            }
            agrees(space, a, b, f64::MIN_POSITIVE);
            agrees(space, a, p(1.0, 1.000_000_1), 1e-300);
            agrees(space, a, p(1.0, 1.000_000_1), f64::INFINITY);
            agrees(space, a, p(1.0, 1.000_000_1), 1e200);
        }
        let t = Threshold::new(Space::Planar, 5.0);
        assert_eq!(t.verdict(25.0), Verdict::Measure);
        assert_eq!(t.verdict(24.0), Verdict::Close);
        assert_eq!(t.verdict(26.0), Verdict::Far);
    }
}
