//! Named zones (polygons with holes, multipolygons, rectangles, circles, sectors,
//! widened lines) and point-in-zone tests; boundaries count as inside.
//!
//! On WGS84 nets coordinates are (lon, lat) degrees. Circles, sectors and widened lines
//! are measured along the WGS84 ellipsoid's geodesics (metres, bearings clockwise from
//! north); polygon and rectangle edges are straight in (lon, lat), as in GeoJSON
//! (RFC 7946 §3.1.1), and a polygon crossing the antimeridian is given as a
//! multipolygon split at ±180° (RFC 7946 §3.1.9).

use std::sync::Arc;

use geo_types::{LineString, MultiPolygon, Polygon, Rect};

use super::bounds::{geo_circle_boxes, hull, pad, planar_slack, reach, Boxes};
use super::geoline::{self, GeoLine};
use super::metric::{
    approximate_bearing, bearing, norm360, within_distance, within_distance_sphere, SpherePoint,
    BEARING_ERROR_DEG,
};
use super::planar::{bounding_rect, line_distance, polygon_holds, polygon_rect};
use crate::event::{Point, Space};

/// The geometry of a zone. Boundaries count as inside.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// A polygon, possibly with holes; its coordinates are (x, y) or (lon, lat). Each
    /// ring is tested with the non-zero winding rule; a point inside a hole (not on its
    /// boundary) is outside the zone.
    Polygon(Polygon<f64>),
    /// Several polygons: a point is inside if it is inside one of them.
    MultiPolygon(MultiPolygon<f64>),
    /// An axis-aligned rectangle.
    Rect(Rect<f64>),
    /// Points within `radius` of `center` (metres on WGS84).
    Circle { center: Point, radius: f64 },
    /// Points within `radius` of `center` whose bearing from it lies clockwise from
    /// `from_deg` to `to_deg` (degrees from north; wraps through north when `from > to`;
    /// the whole circle when they are 360° or more apart). On WGS84 the bearing is the
    /// geodesic's initial azimuth.
    Sector {
        center: Point,
        radius: f64,
        from_deg: f64,
        to_deg: f64,
    },
    /// Points within `half_width` of the polyline (planar units; on WGS84, metres of
    /// geodesic distance to segments that are geodesics, see [`super::geoline`]).
    /// `geodesic` caches the WGS84 segments: build it with `GeoLine::default()`.
    Line {
        line: LineString<f64>,
        half_width: f64,
        geodesic: GeoLine,
    },
}

/// A named zone.
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    pub(crate) name: Arc<str>,
    pub(crate) shape: Shape,
}

impl Shape {
    /// A widened line of half-width `half_width`.
    pub(crate) fn line(line: LineString<f64>, half_width: f64) -> Shape {
        Shape::Line {
            line,
            half_width,
            geodesic: GeoLine::default(),
        }
    }
}

/// Is `p` a location of the space (finite; on WGS84 a latitude within ±90°)? Points
/// that are not lie in no zone.
pub(crate) fn valid_point(space: Space, p: Point) -> bool {
    p.x.is_finite() && p.y.is_finite() && (space == Space::Planar || (-90.0..=90.0).contains(&p.y))
}

/// Does a sector from `from_deg` to `to_deg` hold bearing `b` (in [0, 360))?
pub(super) fn in_arc(from_deg: f64, to_deg: f64, b: f64) -> bool {
    let (from, to) = (norm360(from_deg), norm360(to_deg));
    if (to_deg - from_deg).abs() >= 360.0 {
        true
    } else if from <= to {
        from <= b && b <= to
    } else {
        b >= from || b <= to
    }
}

/// Is bearing `b` more than `margin` degrees from both edges of the arc from
/// `from_deg` to `to_deg`, so that any bearing within `margin` of it lies on the
/// same side of the arc?
fn clear_of_edges(from_deg: f64, to_deg: f64, b: f64, margin: f64) -> bool {
    let apart = |e: f64| {
        let d = (b - e).rem_euclid(360.0);
        d.min(360.0 - d)
    };
    apart(from_deg) > margin && apart(to_deg) > margin
}

/// A point tested against many zones: its WGS84 trigonometry is computed on first
/// need, once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    at: Point,
    sphere: Option<SpherePoint>,
}

impl Probe {
    pub(crate) fn new(at: Point) -> Probe {
        Probe { at, sphere: None }
    }

    fn sphere(&mut self) -> SpherePoint {
        *self.sphere.get_or_insert_with(|| SpherePoint::new(self.at))
    }
}

/// The bounding box of a planar sector: its centre, the ends of its arc and the
/// compass points the arc passes.
fn planar_sector_box(center: Point, radius: f64, from_deg: f64, to_deg: f64) -> Rect<f64> {
    let at = |deg: f64| {
        let (s, c) = deg.to_radians().sin_cos();
        Point {
            x: center.x + radius * s,
            y: center.y + radius * c,
        }
    };
    let mut pts = vec![center, at(from_deg), at(to_deg)];
    for k in 0..4 {
        let deg = 90.0 * f64::from(k);
        if in_arc(from_deg, to_deg, deg) {
            pts.push(at(deg));
        }
    }
    let mut r = Rect::new(center, center);
    for p in pts {
        r = Rect::new(
            Point {
                x: r.min().x.min(p.x),
                y: r.min().y.min(p.y),
            },
            Point {
                x: r.max().x.max(p.x),
                y: r.max().y.max(p.y),
            },
        );
    }
    r
}

impl Zone {
    /// Does the zone contain `p` (boundary included)? A point that is not a valid
    /// location (see [`valid_point`]) is in no zone.
    #[cfg_attr(not(test), allow(dead_code))] // the index tests with its kept centres
    pub(crate) fn contains(&self, space: Space, p: Point) -> bool {
        self.contains_probe(space, &mut Probe::new(p), self.centre(space).as_ref())
    }

    /// The centre of a circle or sector on WGS84, with its trigonometry, for
    /// [`contains_probe`](Zone::contains_probe).
    pub(crate) fn centre(&self, space: Space) -> Option<SpherePoint> {
        match (&self.shape, space) {
            (Shape::Circle { center, .. } | Shape::Sector { center, .. }, Space::Wgs84) => {
                Some(SpherePoint::new(*center))
            }
            _ => None,
        }
    }

    /// [`contains`](Zone::contains) for a point tested against many zones; `centre` is
    /// what [`centre`](Zone::centre) gives, kept with the zone.
    pub(crate) fn contains_probe(
        &self,
        space: Space,
        probe: &mut Probe,
        centre: Option<&SpherePoint>,
    ) -> bool {
        let p = probe.at;
        if !valid_point(space, p) {
            return false;
        }
        let within = |probe: &mut Probe, center: Point, radius: f64| match (space, centre) {
            (Space::Wgs84, Some(c)) => within_distance_sphere(c, &probe.sphere(), radius),
            _ => within_distance(space, center, p, radius),
        };
        match &self.shape {
            Shape::Polygon(poly) => polygon_holds(poly, p),
            Shape::MultiPolygon(mp) => mp.0.iter().any(|poly| polygon_holds(poly, p)),
            Shape::Rect(r) => {
                let (lo, hi) = (r.min(), r.max());
                lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y
            }
            Shape::Circle { center, radius } => within(probe, *center, *radius),
            Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => {
                if !within(probe, *center, *radius) {
                    return false;
                }
                if *center == p {
                    return true;
                }
                // On WGS84 the geodesic azimuth is needed only near the arc's edges.
                let approx = match (space, centre) {
                    (Space::Wgs84, Some(c)) => approximate_bearing(c, &probe.sphere())
                        .filter(|&b| clear_of_edges(*from_deg, *to_deg, b, BEARING_ERROR_DEG)),
                    _ => None,
                };
                let b = approx.unwrap_or_else(|| bearing(space, *center, p));
                in_arc(*from_deg, *to_deg, b)
            }
            Shape::Line {
                line,
                half_width,
                geodesic,
            } => match space {
                Space::Planar => line_distance(p, line) <= *half_width,
                Space::Wgs84 => {
                    geoline::within(geodesic.segments(line, *half_width), p, *half_width)
                }
            },
        }
    }

    /// Boxes whose union holds every point of the zone, in coordinate units: never too
    /// small (on WGS84, conservative in degrees near the poles too), and on WGS84 each
    /// within longitudes [-180, 180], a zone crossing the antimeridian getting a box on
    /// each side. Used to index zones; appended to `out`.
    pub(crate) fn boxes(&self, space: Space, out: &mut Vec<Rect<f64>>) {
        match &self.shape {
            Shape::Polygon(poly) => out.extend(polygon_rect(poly)),
            Shape::MultiPolygon(mp) => out.extend(mp.0.iter().filter_map(polygon_rect)),
            Shape::Rect(r) => out.push(*r),
            Shape::Circle { center, radius } => match space {
                Space::Planar => {
                    let r = Rect::new(*center, *center);
                    out.push(pad(r, radius + planar_slack(*radius, *center)));
                }
                Space::Wgs84 => {
                    let mut b = Boxes::new();
                    geo_circle_boxes(*center, *radius, &mut b);
                    out.extend(b);
                }
            },
            Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => match space {
                Space::Planar => {
                    let r = planar_sector_box(*center, *radius, *from_deg, *to_deg);
                    out.push(pad(r, planar_slack(*radius, *center)));
                }
                Space::Wgs84 => {
                    let mut b = Boxes::new();
                    geo_circle_boxes(*center, *radius, &mut b);
                    out.extend(b);
                }
            },
            Shape::Line {
                line,
                half_width,
                geodesic,
            } => match space {
                Space::Planar => {
                    if let Some(r) = bounding_rect(&line.0) {
                        let m = half_width
                            + planar_slack(*half_width, r.max())
                            + planar_slack(0.0, r.min());
                        out.push(pad(r, m));
                    }
                }
                Space::Wgs84 => {
                    for seg in geodesic.segments(line, *half_width) {
                        out.extend(seg.boxes.iter().copied());
                    }
                }
            },
        }
    }

    /// The zone's bounding rectangle in coordinate units (for `Direction(box: …)`): exact
    /// for polygons and rectangles and for planar circles, sectors and lines; on WGS84
    /// a circle's or sector's box is that of its circle, slightly (< 1 %) larger than
    /// the circle, and may extend past ±180° for a circle crossing the antimeridian.
    pub(crate) fn bbox(&self, space: Space) -> Option<Rect<f64>> {
        match &self.shape {
            Shape::Polygon(poly) => polygon_rect(poly),
            Shape::MultiPolygon(mp) => bounding_rect(mp.0.iter().flat_map(|p| &p.exterior().0)),
            Shape::Rect(r) => Some(*r),
            Shape::Circle { center, radius } => Some(circle_bbox(space, *center, *radius)),
            Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => Some(match space {
                Space::Planar => planar_sector_box(*center, *radius, *from_deg, *to_deg),
                Space::Wgs84 => circle_bbox(space, *center, *radius),
            }),
            Shape::Line {
                line, half_width, ..
            } => match space {
                Space::Planar => bounding_rect(&line.0).map(|r| pad(r, *half_width)),
                Space::Wgs84 => {
                    let mut v = Vec::new();
                    self.boxes(space, &mut v);
                    hull(&v)
                }
            },
        }
    }
}

/// A circle's box, unsplit: on WGS84 it may extend past ±180°.
fn circle_bbox(space: Space, center: Point, radius: f64) -> Rect<f64> {
    let (dx, dy) = match space {
        Space::Planar => (radius, radius),
        Space::Wgs84 => {
            let (dlat, dlon) = reach(center.y, center.y, radius);
            (dlon.unwrap_or(180.0), dlat)
        }
    };
    let lo = Point {
        x: center.x - dx,
        y: center.y - dy,
    };
    let hi = Point {
        x: center.x + dx,
        y: center.y + dy,
    };
    match space {
        Space::Planar => Rect::new(lo, hi),
        Space::Wgs84 => Rect::new(
            Point {
                x: if dx >= 180.0 { -180.0 } else { lo.x },
                y: lo.y.max(-90.0),
            },
            Point {
                x: if dx >= 180.0 { 180.0 } else { hi.x },
                y: hi.y.min(90.0),
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn polygon_boundary_is_inside() {
        let poly = Polygon::new(
            vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)].into(),
            vec![],
        );
        let z = zone(Shape::Polygon(poly));
        assert!(z.contains(Space::Planar, pt(5.0, 5.0)));
        assert!(z.contains(Space::Planar, pt(10.0, 5.0)));
        assert!(z.contains(Space::Planar, pt(0.0, 0.0)));
        assert!(!z.contains(Space::Planar, pt(10.001, 5.0)));
    }

    #[test]
    fn circle_and_rect() {
        let c = zone(Shape::Circle {
            center: pt(5.0, 5.0),
            radius: 3.0,
        });
        assert!(c.contains(Space::Planar, pt(8.0, 5.0)));
        assert!(!c.contains(Space::Planar, pt(8.0, 5.1)));
        let r = zone(Shape::Rect(Rect::new(pt(0.0, 0.0), pt(2.0, 2.0))));
        assert!(r.contains(Space::Planar, pt(2.0, 0.0)));
        assert!(!r.contains(Space::Planar, pt(2.0, -0.1)));
    }

    #[test]
    fn sector_wraps_through_north() {
        let s = zone(Shape::Sector {
            center: pt(0.0, 0.0),
            radius: 10.0,
            from_deg: 330.0,
            to_deg: 30.0,
        });
        assert!(s.contains(Space::Planar, pt(0.0, 5.0)));
        assert!(s.contains(Space::Planar, pt(-1.0, 5.0)));
        assert!(!s.contains(Space::Planar, pt(5.0, 0.0)));
        assert!(!s.contains(Space::Planar, pt(0.0, 11.0)));
        let east = zone(Shape::Sector {
            center: pt(0.0, 0.0),
            radius: 10.0,
            from_deg: 30.0,
            to_deg: 90.0,
        });
        assert!(east.contains(Space::Planar, pt(5.0, 0.0)));
        assert!(!east.contains(Space::Planar, pt(0.0, 5.0)));
    }

    #[test]
    fn line_with_width() {
        let l = zone(Shape::line(vec![(0.0, 0.0), (9.0, 9.0)].into(), 0.5));
        assert!(l.contains(Space::Planar, pt(4.0, 4.5)));
        assert!(!l.contains(Space::Planar, pt(4.0, 5.0)));
    }

    #[test]
    fn wgs84_circle_in_metres() {
        let c = zone(Shape::Circle {
            center: pt(0.0, 0.0),
            radius: 1000.0,
        });
        assert!(c.contains(Space::Wgs84, pt(0.0, 0.0089)));
        assert!(!c.contains(Space::Wgs84, pt(0.0, 0.0091)));
    }

    #[test]
    fn polygon_with_hole() {
        let poly = Polygon::new(
            vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)].into(),
            vec![vec![(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)].into()],
        );
        let z = zone(Shape::Polygon(poly));
        assert!(z.contains(Space::Planar, pt(2.0, 2.0)));
        assert!(!z.contains(Space::Planar, pt(5.0, 5.0)), "inside the hole");
        assert!(
            z.contains(Space::Planar, pt(4.0, 5.0)),
            "the hole's edge is inside"
        );
        assert!(
            z.contains(Space::Planar, pt(6.0, 6.0)),
            "the hole's corner is inside"
        );
        assert!(!z.contains(Space::Planar, pt(5.9, 5.9)));
        assert!(z.contains(Space::Planar, pt(0.0, 5.0)));
    }

    #[test]
    fn multipolygon_is_the_union() {
        let sq = |x: f64| {
            Polygon::new(
                vec![(x, 0.0), (x + 1.0, 0.0), (x + 1.0, 1.0), (x, 1.0)].into(),
                vec![],
            )
        };
        let z = zone(Shape::MultiPolygon(MultiPolygon(vec![sq(0.0), sq(5.0)])));
        assert!(z.contains(Space::Planar, pt(0.5, 0.5)));
        assert!(z.contains(Space::Planar, pt(5.5, 0.5)));
        assert!(z.contains(Space::Planar, pt(6.0, 1.0)));
        assert!(!z.contains(Space::Planar, pt(3.0, 0.5)));
        let b = z.bbox(Space::Planar).unwrap();
        assert_eq!((b.min().x, b.max().x), (0.0, 6.0));
    }

    #[test]
    fn wgs84_sector_across_north_by_geodesic_bearing() {
        // 10 km, from 340° clockwise through north to 20°, at 60°N.
        let s = zone(Shape::Sector {
            center: pt(10.0, 60.0),
            radius: 10_000.0,
            from_deg: 340.0,
            to_deg: 20.0,
        });
        assert!(s.contains(Space::Wgs84, pt(10.0, 60.05)), "due north");
        assert!(
            s.contains(Space::Wgs84, pt(9.98, 60.05)),
            "bearing about 349°"
        );
        assert!(
            !s.contains(Space::Wgs84, pt(9.95, 60.05)),
            "bearing about 333°"
        );
        assert!(s.contains(Space::Wgs84, pt(10.0, 60.0)), "the centre");
        assert!(!s.contains(Space::Wgs84, pt(10.1, 60.0)), "east");
        assert!(
            !s.contains(Space::Wgs84, pt(10.0, 60.1)),
            "north but 11 km away"
        );
        assert!(
            !s.contains(Space::Wgs84, pt(10.0466, 60.05)),
            "bearing about 25°"
        );
        assert!(
            s.contains(Space::Wgs84, pt(10.02, 60.05)),
            "bearing about 11°"
        );
    }

    #[test]
    fn planar_sector_box_is_tight() {
        let s = zone(Shape::Sector {
            center: pt(0.0, 0.0),
            radius: 10.0,
            from_deg: 0.0,
            to_deg: 90.0,
        });
        let b = s.bbox(Space::Planar).unwrap();
        assert_eq!((b.min().x, b.min().y), (0.0, 0.0));
        assert!((b.max().x - 10.0).abs() < 1e-12 && (b.max().y - 10.0).abs() < 1e-12);
    }

    #[test]
    fn invalid_points_are_in_no_zone() {
        let c = zone(Shape::Circle {
            center: pt(0.0, 89.0),
            radius: 1e7,
        });
        assert!(!c.contains(Space::Wgs84, pt(0.0, 91.0)));
        assert!(!c.contains(Space::Wgs84, pt(f64::NAN, 0.0)));
        assert!(!c.contains(Space::Planar, pt(f64::INFINITY, 0.0)));
    }
}
