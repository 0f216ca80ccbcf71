//! Named zones (polygons, rectangles, circles, sectors, widened lines) and point-in-zone tests.

use std::sync::Arc;

use geo::{
    BoundingRect, Distance, Euclidean, Intersects, LineString, Point as GeoPoint, Polygon, Rect,
};

use super::metric::{bearing, within_distance};
use crate::event::{Point, Space};

/// The geometry of a zone. Boundaries count as inside.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// A polygon; its coordinates are (x, y) or (lon, lat).
    Polygon(Polygon<f64>),
    /// An axis-aligned rectangle.
    Rect(Rect<f64>),
    /// Points within `radius` of `center` (metres on WGS84).
    Circle { center: Point, radius: f64 },
    /// Points within `radius` of `center` whose bearing from it lies clockwise from
    /// `from_deg` to `to_deg` (degrees from north; wraps through north when `from > to`).
    Sector {
        center: Point,
        radius: f64,
        from_deg: f64,
        to_deg: f64,
    },
    /// Points within `half_width` of the polyline (planar units; metres on WGS84,
    /// measured in a local equirectangular projection around the point).
    Line {
        line: LineString<f64>,
        half_width: f64,
    },
}

/// A named zone.
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    pub(crate) name: Arc<str>,
    pub(crate) shape: Shape,
}

/// Metres per degree of latitude used by the local projection of [`Shape::Line`] on WGS84.
const METRES_PER_DEGREE: f64 = 111_320.0;

impl Zone {
    /// Does the zone contain `p` (boundary included)?
    pub(crate) fn contains(&self, space: Space, p: Point) -> bool {
        match &self.shape {
            Shape::Polygon(poly) => poly.intersects(&p),
            Shape::Rect(r) => {
                let (lo, hi) = (r.min(), r.max());
                lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y
            }
            Shape::Circle { center, radius } => within_distance(space, *center, p, *radius),
            Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => {
                if !within_distance(space, *center, p, *radius) {
                    return false;
                }
                if *center == p {
                    return true;
                }
                let b = bearing(space, *center, p);
                let (from, to) = (from_deg.rem_euclid(360.0), to_deg.rem_euclid(360.0));
                if (to_deg - from_deg).abs() >= 360.0 {
                    true
                } else if from <= to {
                    from <= b && b <= to
                } else {
                    b >= from || b <= to
                }
            }
            Shape::Line { line, half_width } => match space {
                Space::Planar => Euclidean.distance(&GeoPoint(p), line) <= *half_width,
                Space::Wgs84 => {
                    let k = p.y.to_radians().cos();
                    let project = |c: geo::Coord<f64>| geo::Coord {
                        x: (c.x - p.x) * k * METRES_PER_DEGREE,
                        y: (c.y - p.y) * METRES_PER_DEGREE,
                    };
                    let local: LineString<f64> = line.coords().map(|c| project(*c)).collect();
                    Euclidean.distance(&GeoPoint::new(0.0, 0.0), &local) <= *half_width
                }
            },
        }
    }

    /// The zone's bounding rectangle in coordinate units (for `Direction(box: …)` and indexing).
    pub(crate) fn bbox(&self, space: Space) -> Option<Rect<f64>> {
        match &self.shape {
            Shape::Polygon(poly) => poly.bounding_rect(),
            Shape::Rect(r) => Some(*r),
            Shape::Circle { center, radius } | Shape::Sector { center, radius, .. } => {
                let (dx, dy) = match space {
                    Space::Planar => (*radius, *radius),
                    Space::Wgs84 => {
                        let dy = radius / 110_000.0;
                        let k = center.y.to_radians().cos().max(1e-6);
                        (dy / k, dy)
                    }
                };
                Some(Rect::new(
                    Point {
                        x: center.x - dx,
                        y: center.y - dy,
                    },
                    Point {
                        x: center.x + dx,
                        y: center.y + dy,
                    },
                ))
            }
            Shape::Line { line, .. } => line.bounding_rect(),
        }
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
        let l = zone(Shape::Line {
            line: vec![(0.0, 0.0), (9.0, 9.0)].into(),
            half_width: 0.5,
        });
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
}
