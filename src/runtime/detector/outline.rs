//! The net's zones as GeoJSON, moving zones where they are now: for a map of what
//! the detector watches ([`Detector::zones_geojson`]).

use serde_json::{json, Value};

use super::Detector;
use crate::event::{Point, Space};
use crate::spatial::{Shape, Zone};

/// Vertices of a whole circle drawn as a polygon.
const CIRCLE_VERTICES: usize = 72;

impl Detector {
    /// The net's zones as a GeoJSON `FeatureCollection`, one `Feature` per zone, in
    /// the net's order, each with the properties `name`, `shape` (`"polygon"`,
    /// `"multipolygon"`, `"rect"`, `"circle"`, `"sector"` or `"line"`) and `moving`.
    ///
    /// A moving zone is where its anchor's latest occurrence put it (at its declared
    /// `center` until the first). Circles and sectors are drawn as polygons (on WGS84
    /// along geodesics, so a circle's vertices are `radius` metres from its centre),
    /// with `radius` among the properties; a widened line is its `LineString` with the
    /// property `width`. Coordinates are `[x, y]`, or `[lon, lat]` on WGS84.
    ///
    /// ```
    /// use ccpn::{Detector, Net};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(
    ///     zones: {"box": Rect(min: (0.0, 0.0), max: (2.0, 1.0))},
    ///     events: {"a": Atomic(type: "A"), "in": Within(of: "a", zones: ["box"])},
    ///     outputs: ["in"],
    /// )"#)?;
    /// let zones = Detector::new(&net).zones_geojson();
    /// assert_eq!(zones["features"][0]["properties"]["name"], "box");
    /// assert_eq!(zones["features"][0]["geometry"]["type"], "Polygon");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn zones_geojson(&self) -> Value {
        let model = &self.program.model;
        let features: Vec<Value> = model
            .zones
            .iter()
            .enumerate()
            .map(|(z, base)| {
                let moving = model.moving.iter().any(|m| m.zone == z);
                // A moving zone's current shape is in the R*-trees that hold it.
                let now = self.program.zone_stabs[z]
                    .first()
                    .and_then(|&u| self.components[u].zone(z))
                    .filter(|_| moving)
                    .unwrap_or(base);
                feature(model.space, now, moving)
            })
            .collect();
        json!({"type": "FeatureCollection", "features": features})
    }
}

/// One zone as a GeoJSON feature.
fn feature(space: Space, zone: &Zone, moving: bool) -> Value {
    let mut properties = json!({"name": &*zone.name, "moving": moving});
    let (kind, geometry) = match &zone.shape {
        Shape::Polygon(p) => (
            "polygon",
            json!({"type": "Polygon", "coordinates": rings(p)}),
        ),
        Shape::MultiPolygon(mp) => (
            "multipolygon",
            json!({"type": "MultiPolygon", "coordinates": mp.0.iter().map(rings).collect::<Vec<_>>()}),
        ),
        Shape::Rect(r) => {
            let (a, b) = (r.min(), r.max());
            let ring = [[a.x, a.y], [b.x, a.y], [b.x, b.y], [a.x, b.y], [a.x, a.y]];
            ("rect", json!({"type": "Polygon", "coordinates": [ring]}))
        }
        Shape::Circle { center, radius } => {
            properties["radius"] = json!(radius);
            let ring = arc(space, *center, *radius, 0.0, 360.0, false);
            ("circle", json!({"type": "Polygon", "coordinates": [ring]}))
        }
        Shape::Sector {
            center,
            radius,
            from_deg,
            to_deg,
        } => {
            properties["radius"] = json!(radius);
            properties["from_deg"] = json!(from_deg);
            properties["to_deg"] = json!(to_deg);
            // As the zone test reads them: clockwise from `from` to `to`, the whole
            // circle when 360° or more apart (or not finite).
            let span = to_deg - from_deg;
            let whole = !span.is_finite() || span >= 360.0 || !from_deg.is_finite();
            let (from, to) = if whole {
                (0.0, 360.0)
            } else {
                let from = from_deg.rem_euclid(360.0);
                (from, from + span.rem_euclid(360.0))
            };
            let ring = arc(space, *center, *radius, from, to, !whole);
            ("sector", json!({"type": "Polygon", "coordinates": [ring]}))
        }
        Shape::Line {
            line, half_width, ..
        } => {
            properties["width"] = json!(half_width * 2.0);
            let points: Vec<[f64; 2]> = line.0.iter().map(|c| [c.x, c.y]).collect();
            ("line", json!({"type": "LineString", "coordinates": points}))
        }
    };
    properties["shape"] = json!(kind);
    json!({"type": "Feature", "properties": properties, "geometry": geometry})
}

/// A polygon's rings as GeoJSON positions.
fn rings(p: &geo_types::Polygon<f64>) -> Vec<Vec<[f64; 2]>> {
    std::iter::once(p.exterior())
        .chain(p.interiors())
        .map(|ring| ring.0.iter().map(|c| [c.x, c.y]).collect())
        .collect()
}

/// The closed ring of an arc of `radius` around `center` from bearing `from` to
/// `to` (degrees clockwise from north), through the centre when `wedge`.
fn arc(space: Space, center: Point, radius: f64, from: f64, to: f64, wedge: bool) -> Vec<[f64; 2]> {
    let steps = ((to - from) / 360.0 * CIRCLE_VERTICES as f64)
        .ceil()
        .max(2.0) as usize;
    let at = |deg: f64| -> [f64; 2] {
        match space {
            Space::Planar => {
                let rad = deg.to_radians();
                [center.x + radius * rad.sin(), center.y + radius * rad.cos()]
            }
            Space::Wgs84 => {
                let p = crate::spatial::geodesic_destination(center, deg, radius);
                [p.x, p.y]
            }
        }
    };
    let mut ring: Vec<[f64; 2]> = Vec::with_capacity(steps + 3);
    if wedge {
        ring.push([center.x, center.y]);
    }
    ring.extend((0..=steps).map(|i| at(from + (to - from) * i as f64 / steps as f64)));
    if let Some(&first) = ring.first() {
        ring.push(first);
    }
    ring
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sector(from_deg: f64, to_deg: f64) -> Zone {
        Zone {
            name: "s".into(),
            shape: Shape::Sector {
                center: Point { x: 0.0, y: 0.0 },
                radius: 1.0,
                from_deg,
                to_deg,
            },
        }
    }

    #[test]
    fn sectors_turned_far_round_are_drawn_without_looping() {
        for (from, to) in [
            (1e300, 1e300 + 60.0),
            (330.0, 30.0),
            (f64::MAX, -f64::MAX),
            (0.0, 720.0),
        ] {
            let f = feature(Space::Planar, &sector(from, to), true);
            let ring = f["geometry"]["coordinates"][0].as_array().unwrap().len();
            assert!(
                (3..=CIRCLE_VERTICES + 4).contains(&ring),
                "{from} {to}: {ring}"
            );
        }
    }

    #[test]
    fn a_sector_is_a_wedge_clockwise_from_north() {
        let f = feature(Space::Planar, &sector(0.0, 90.0), false);
        let ring = f["geometry"]["coordinates"][0].as_array().unwrap();
        assert_eq!(ring[0], json!([0.0, 0.0]));
        let p = |i: usize| (ring[i][0].as_f64().unwrap(), ring[i][1].as_f64().unwrap());
        assert!(
            (p(1).0).abs() < 1e-12 && (p(1).1 - 1.0).abs() < 1e-12,
            "north first"
        );
        let last = p(ring.len() - 2);
        assert!(
            (last.0 - 1.0).abs() < 1e-12 && last.1.abs() < 1e-12,
            "east last"
        );
    }
}
