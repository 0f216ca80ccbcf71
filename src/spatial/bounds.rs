//! Conservative bounding boxes in a net's coordinates: circles and widened segments in
//! degrees on WGS84 (never too small, near the poles and across the antimeridian
//! included), boxes split at ±180°, and the longitudes a point may be queried at.
//!
//! On WGS84 every box lies within longitudes [-180, 180]: a box that would cross the
//! antimeridian is split in two, and a box that would reach a pole spans every
//! longitude. The bounds follow from the ellipsoid's metric
//! ds² = M² dφ² + N² cos²φ dλ²: a path of length L changes latitude by at most
//! L / M_min (M_min = a(1 − e²), the meridional radius of curvature at the equator) and
//! longitude by at most L / (a cos φ_max), φ_max being the largest latitude the path can
//! reach (N ≥ a everywhere).

use geo_types::Rect;
use smallvec::SmallVec;

use super::metric::{MIN_METRES_PER_DEG_LAT, WGS84_A};
use crate::event::Point;

/// Relative slack added to every distance bound (covers rounding in the geodesic
/// routines, which are accurate to about 15 nm).
const REL_SLACK: f64 = 1e-9;
/// Absolute slack, in degrees, added to every degree bound (about 0.1 mm).
const DEG_SLACK: f64 = 1e-9;

/// Up to two boxes (one, or two halves of a box split at the antimeridian).
pub(crate) type Boxes = SmallVec<[Rect<f64>; 2]>;

/// Degrees of latitude, and of longitude (`None`: any longitude, the path may reach a
/// pole), that a path of `len` metres may cover when it stays within latitudes
/// `[lat_lo, lat_hi]` before it starts.
pub(crate) fn reach(lat_lo: f64, lat_hi: f64, len: f64) -> (f64, Option<f64>) {
    let len = len * (1.0 + REL_SLACK);
    let dlat = len / MIN_METRES_PER_DEG_LAT + DEG_SLACK;
    let top = lat_lo.abs().max(lat_hi.abs()) + dlat;
    if top.is_nan() || top >= 90.0 {
        return (dlat, None);
    }
    let dlon = (len / (WGS84_A * top.to_radians().cos())).to_degrees() + DEG_SLACK;
    if dlon.is_finite() && dlon < 180.0 {
        (dlat, Some(dlon))
    } else {
        (dlat, None)
    }
}

/// Pushes the box of longitudes `[lo, hi]` (unwrapped: `lo` may be below -180 or `hi`
/// above 180) and latitudes `[lat_lo, lat_hi]`, split at the antimeridian into boxes
/// within [-180, 180]; `lon: None` means every longitude.
pub(crate) fn push_lon_range(lon: Option<(f64, f64)>, lat_lo: f64, lat_hi: f64, out: &mut Boxes) {
    let lat_lo = lat_lo.max(-90.0);
    let lat_hi = lat_hi.min(90.0);
    let rect = |a: f64, b: f64| Rect::new(Point { x: a, y: lat_lo }, Point { x: b, y: lat_hi });
    let Some((lo, hi)) = lon.filter(|(lo, hi)| hi - lo < 360.0 && lo.is_finite() && hi.is_finite())
    else {
        out.push(rect(-180.0, 180.0));
        return;
    };
    // Shift so that `lo` lies in [-180, 180).
    let k = ((lo + 180.0) / 360.0).floor();
    let (lo, hi) = (lo - 360.0 * k, hi - 360.0 * k);
    if hi <= 180.0 {
        out.push(rect(lo.max(-180.0), hi));
    } else {
        out.push(rect(lo.max(-180.0), 180.0));
        out.push(rect(-180.0, (hi - 360.0).min(180.0)));
    }
}

/// Boxes, in degrees, holding every point within `radius` metres (geodesic) of `center`
/// on WGS84.
pub(crate) fn geo_circle_boxes(center: Point, radius: f64, out: &mut Boxes) {
    let (dlat, dlon) = reach(center.y, center.y, radius);
    let lon = dlon.map(|d| (center.x - d, center.x + d));
    push_lon_range(lon, center.y - dlat, center.y + dlat, out);
}

/// Pads a planar box by `m` on every side.
pub(crate) fn pad(r: Rect<f64>, m: f64) -> Rect<f64> {
    let (lo, hi) = (r.min(), r.max());
    Rect::new(
        Point {
            x: lo.x - m,
            y: lo.y - m,
        },
        Point {
            x: hi.x + m,
            y: hi.y + m,
        },
    )
}

/// A planar padding that covers rounding in a distance test of `radius` around
/// coordinates as large as `c`.
pub(crate) fn planar_slack(radius: f64, c: Point) -> f64 {
    1e-12 * (radius.abs() + c.x.abs() + c.y.abs()) + 1e-300
}

/// Is `p` inside `r` (boundary included)?
pub(crate) fn in_rect(r: &Rect<f64>, p: Point) -> bool {
    let (lo, hi) = (r.min(), r.max());
    lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y
}

/// The longitudes at which a WGS84 point with longitude `x` is looked up in boxes that
/// lie within [-180, 180]: `x` itself, its equivalent in [-180, 180] if it lies
/// outside, and both ±180 for a point on the antimeridian.
pub(crate) fn equivalent_lons(x: f64) -> SmallVec<[f64; 3]> {
    let mut v = SmallVec::new();
    v.push(x);
    let n = if (-180.0..=180.0).contains(&x) {
        x
    } else {
        (x + 180.0).rem_euclid(360.0) - 180.0
    };
    if n != x {
        v.push(n);
    }
    if n == 180.0 || n == -180.0 {
        v.push(-n);
    }
    v
}

/// The smallest box holding all of `boxes`.
pub(crate) fn hull(boxes: &[Rect<f64>]) -> Option<Rect<f64>> {
    let first = boxes.first()?;
    let (mut lo, mut hi) = (first.min(), first.max());
    for r in &boxes[1..] {
        lo.x = lo.x.min(r.min().x);
        lo.y = lo.y.min(r.min().y);
        hi.x = hi.x.max(r.max().x);
        hi.y = hi.y.max(r.max().y);
    }
    Some(Rect::new(lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metres_per_degree_of_latitude_at_equator() {
        // The meridian arc from 0° to 1° is 110,574.389 m; the minimum of M·π/180 is a
        // little less (M grows with latitude).
        assert!((MIN_METRES_PER_DEG_LAT - 110_574.27).abs() < 0.01);
    }

    #[test]
    fn split_at_antimeridian() {
        let mut out = Boxes::new();
        geo_circle_boxes(Point { x: 179.9, y: 0.0 }, 50_000.0, &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].max().x, 180.0);
        assert_eq!(out[1].min().x, -180.0);
        assert!(out[1].max().x > -179.7 && out[1].max().x < -179.5);
    }

    #[test]
    fn near_pole_spans_every_longitude() {
        let mut out = Boxes::new();
        geo_circle_boxes(Point { x: 10.0, y: 89.9 }, 20_000.0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].min().x, out[0].max().x), (-180.0, 180.0));
        assert_eq!(out[0].max().y, 90.0);
    }

    #[test]
    fn equivalent_longitudes() {
        assert_eq!(equivalent_lons(10.0).as_slice(), &[10.0]);
        assert_eq!(equivalent_lons(180.0).as_slice(), &[180.0, -180.0]);
        assert_eq!(equivalent_lons(190.0).as_slice(), &[190.0, -170.0]);
        assert_eq!(equivalent_lons(540.0).as_slice(), &[540.0, -180.0, 180.0]);
    }
}
