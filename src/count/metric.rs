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
//! So the index decides closeness exactly as `distance(space, a, b) < d` would, with
//! `a` the earlier-inserted point — the brute-force reference computes it the same way.

use crate::event::{Point, Space};

/// The mean earth radius (IUGG R₁, metres): the radius of the embedding sphere.
const EARTH_R: f64 = 6_371_008.771_4;
/// Lower bound used for geodesic / great-circle distance (the true bound is 0.99442).
const RATIO_LO: f64 = 0.993;
/// Upper bound used for geodesic / great-circle distance (the true bound is 1.00449).
const RATIO_HI: f64 = 1.006;
/// Absolute margin on chords (metres), far above the rounding of the embedding.
const CHORD_MARGIN: f64 = 1e-6;
/// Relative band around `d²` in which planar pairs are measured exactly.
const PLANAR_BAND: f64 = 1e-9;

/// A point's embedding: `[x, y, 0]` (planar) or a point on the sphere in metres (WGS84).
pub(super) type Embedded = [f64; 3];

/// Embeds a point (see the module documentation).
pub(super) fn embed(space: Space, p: Point) -> Embedded {
    match space {
        Space::Planar => [p.x, p.y, 0.0],
        Space::Wgs84 => {
            let (sin_lat, cos_lat) = p.y.to_radians().sin_cos();
            let (sin_lon, cos_lon) = p.x.to_radians().sin_cos();
            [
                EARTH_R * cos_lat * cos_lon,
                EARTH_R * cos_lat * sin_lon,
                EARTH_R * sin_lat,
            ]
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    /// The verdict never contradicts the exact distance.
    fn agrees(space: Space, a: Point, b: Point, d: f64) {
        let t = Threshold::new(space, d);
        let exact = exact(space, a, b) < d;
        match t.verdict(squared(&embed(space, a), &embed(space, b))) {
            Verdict::Close => assert!(exact, "{a:?} {b:?} {d}"),
            Verdict::Far => assert!(!exact, "{a:?} {b:?} {d}"),
            Verdict::Measure => {}
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
