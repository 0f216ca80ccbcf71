//! Building a net's zones from its `zones:` entries: shapes written in RON and polygons
//! read from GeoJSON files, every coordinate checked.
//!
//! # Syntax
//!
//! ```ron
//! zones: {
//!     "dock":    Polygon([(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]),
//!     "pier":    PolygonWithHoles(
//!                    exterior: [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)],
//!                    holes: [[(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)]],
//!                ),
//!     "islands": MultiPolygon([
//!                    Polygon(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]),
//!                    (exterior: [(5.0, 5.0), (9.0, 5.0), (9.0, 9.0)], holes: [[(6.0, 6.0), (7.0, 6.0), (7.0, 7.0)]]),
//!                ]),
//!     "box":     Rect(min: (0.0, 0.0), max: (2.0, 2.0)),
//!     "radar":   Circle(center: (5.0, 5.0), radius: 3.0),
//!     "sonar":   Sector(center: (5.0, 5.0), radius: 8.0, from_deg: 330.0, to_deg: 30.0),
//!     "lane":    Line(points: [(0.0, 0.0), (9.0, 9.0)], width: 1.0),
//!     "harbour": GeoJson(path: "zones/harbour.geojson"),
//!     "anchor":  GeoJson(path: "zones/all.geojson", name: "anchorage"),
//!     "berth":   GeoJson(path: "zones/all.geojson", name: "B7", property: "berth_id"),
//! }
//! ```
//!
//! - **Polygons.** A ring lists at least three distinct points; repeating the first
//!   point at the end is optional. `PolygonWithHoles` adds holes; `MultiPolygon` takes
//!   a list of polygons, each `Polygon(exterior: [...], holes: [...])` (the name and
//!   `holes` may be left out). A point on any boundary, a hole's included, is inside;
//!   a point strictly inside a hole is not; a point in any part of a multipolygon is
//!   inside. Rings are tested with the non-zero winding rule and need not be oriented
//!   or simple.
//! - **Rect**: `min` ≤ `max` on both axes; on WGS84 `min.lon > max.lon` is a rectangle
//!   crossing the antimeridian (from `min.lon` east to `max.lon`).
//! - **Circle**, **Sector**: `radius` in the net's unit, metres on WGS84 (geodesic);
//!   sector bearings are degrees clockwise from north, from `from_deg` clockwise to
//!   `to_deg`, wrapping through north when `from_deg > to_deg` (330 → 30 is the 60°
//!   around north); 360° or more apart is the whole circle.
//! - **Line**: at least two points; a point within `width / 2` of a segment is inside.
//!   On WGS84 segments are geodesics, distances are geodesic metres (accurate to
//!   0.1 mm, see `spatial/geoline.rs`), and each segment must be shorter than
//!   10,000 km.
//! - **GeoJson**: `path` is relative to the directory of the net file (as named when
//!   loading; a net loaded from text resolves it against the working directory). The
//!   file holds a Polygon or MultiPolygon geometry, a GeometryCollection of them, a
//!   Feature, or a FeatureCollection. Without `name:` the zone is every polygon in the
//!   file; with `name: "x"` it is the polygons of the features whose `property` (by
//!   default `"name"`) is the string `"x"` — so one FeatureCollection can define many
//!   zones, one `GeoJson(…, name: …)` entry each; the file is read once. Positions are
//!   `[x, y]` / `[lon, lat]` (a third value, altitude, is ignored). Selected features
//!   must have polygonal geometry.
//!
//! On WGS84 nets, polygon and rectangle edges are straight lines in (lon, lat), as in
//! GeoJSON (RFC 7946 §3.1.1); a polygon whose longitudes span more than 180° is
//! rejected: one crossing the antimeridian must be split there into a MultiPolygon
//! (RFC 7946 §3.1.9).
//!
//! # Limits
//!
//! Coordinates must be finite, and on WGS84 |lat| ≤ 90 and |lon| ≤ 180; radii and
//! widths positive and finite; bearings finite. A zone has at most [`MAX_VERTICES`]
//! vertices (all rings and parts together) and a GeoJSON file at most
//! [`MAX_GEOJSON_BYTES`] bytes. Every violation, an unreadable GeoJSON file, or a bad
//! geometry in one is a net error at the zone's entry, naming the file and what is
//! wrong.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use geo::{Distance, Geodesic, LineString, MultiPolygon, Point as GeoPoint, Polygon, Rect};
use geojson::{Feature, GeoJson, Geometry, GeometryValue};
use sha2::{Digest, Sha256};

use super::Problem;
use crate::event::{Point, Space};
use crate::spatial::{Shape, Zone, MAX_SEGMENT_M};
use crate::spec::{self, NetSpec, PolygonSpec, Xy, ZoneSpec};

/// The largest number of vertices a zone may have, all rings and parts together.
pub(crate) const MAX_VERTICES: usize = 1_000_000;

/// The largest GeoJSON file a zone may be read from, in bytes (256 MiB).
pub(crate) const MAX_GEOJSON_BYTES: u64 = 256 << 20;

/// Builds the zones of `spec`, in name order. Zones that cannot be built are left out
/// and reported, each at its entry in `src` (the text of the net file `file`).
pub(super) fn build<'a>(
    file: &str,
    src: &str,
    spec: &'a NetSpec,
    digest: &mut Sha256,
) -> (Vec<(&'a str, Zone)>, Vec<Problem>) {
    let mut b = Builder {
        digest,
        space: spec.space,
        base: Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        files: HashMap::new(),
    };
    let mut zones = Vec::new();
    let mut problems = Vec::new();
    for (name, z) in &spec.zones {
        match b.shape(z) {
            Ok(shape) => zones.push((
                name.as_str(),
                Zone {
                    name: name.as_str().into(),
                    shape,
                },
            )),
            Err(msg) => {
                let (line, col) = spec::locate(src, &[name]);
                problems.push(Problem {
                    file: file.to_owned(),
                    line,
                    col,
                    message: format!("zone `{name}`: {msg}"),
                });
            }
        }
    }
    (zones, problems)
}

/// A parsed GeoJSON file, or why it could not be read.
type Loaded = Rc<Result<GeoJson, String>>;

struct Builder<'d> {
    /// Takes in each GeoJSON file read (its path and text): part of the net's fingerprint.
    digest: &'d mut Sha256,
    space: Space,
    /// The directory GeoJSON paths are relative to.
    base: PathBuf,
    /// GeoJSON files read so far, by resolved path.
    files: HashMap<PathBuf, Loaded>,
}

/// Checks a coordinate pair.
fn coord(space: Space, p: Xy) -> Result<Point, String> {
    if !(p.0.is_finite() && p.1.is_finite()) {
        return Err(format!("coordinate ({}, {}) is not finite", p.0, p.1));
    }
    if space == Space::Wgs84 && (p.1.abs() > 90.0 || p.0.abs() > 180.0) {
        return Err(format!(
            "({}, {}) is not a (lon, lat) in degrees: |lat| must be at most 90 and |lon| at most 180",
            p.0, p.1
        ));
    }
    Ok(Point { x: p.0, y: p.1 })
}

fn positive(what: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "`{what}` must be a positive finite number, got {v}"
        ))
    }
}

/// Counts vertices against [`MAX_VERTICES`].
struct Budget(usize);

impl Budget {
    fn take(&mut self, n: usize) -> Result<(), String> {
        self.0 = self.0.saturating_add(n);
        if self.0 > MAX_VERTICES {
            Err(format!("more than {MAX_VERTICES} vertices"))
        } else {
            Ok(())
        }
    }
}

/// A checked ring: at least three distinct points (a closing repeat of the first point
/// is dropped, and `geo` closes the ring again).
fn ring(space: Space, pts: &[Xy], budget: &mut Budget) -> Result<LineString<f64>, String> {
    budget.take(pts.len())?;
    let mut ring: Vec<Point> = pts
        .iter()
        .map(|p| coord(space, *p))
        .collect::<Result<_, _>>()?;
    if ring.len() > 1 && ring.first() == ring.last() {
        ring.pop();
    }
    let first = ring.first().copied();
    let second = ring.iter().find(|p| Some(**p) != first).copied();
    let third = ring.iter().any(|p| Some(*p) != first && Some(*p) != second);
    if !third {
        return Err(format!(
            "a ring needs at least 3 distinct points, got {}",
            pts.len()
        ));
    }
    Ok(LineString::from(ring))
}

/// A checked polygon; on WGS84 its longitudes must span at most 180°.
fn polygon(
    space: Space,
    exterior: &[Xy],
    holes: &[Vec<Xy>],
    budget: &mut Budget,
) -> Result<Polygon<f64>, String> {
    let ext = ring(space, exterior, budget).map_err(|e| format!("exterior: {e}"))?;
    if space == Space::Wgs84 {
        let (lo, hi) = ext
            .0
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c.x), hi.max(c.x))
            });
        if hi - lo > 180.0 {
            return Err(format!(
                "the polygon spans {} degrees of longitude (from {lo} to {hi}); a polygon crossing the antimeridian must be split at ±180 into a MultiPolygon",
                hi - lo
            ));
        }
    }
    let holes = holes
        .iter()
        .enumerate()
        .map(|(i, h)| ring(space, h, budget).map_err(|e| format!("hole {}: {e}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Polygon::new(ext, holes))
}

fn multi(
    space: Space,
    parts: &[PolygonSpec],
    budget: &mut Budget,
) -> Result<MultiPolygon<f64>, String> {
    if parts.is_empty() {
        return Err("a multipolygon needs at least one polygon".into());
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            polygon(space, &p.exterior, &p.holes, budget)
                .map_err(|e| format!("polygon {}: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(MultiPolygon)
}

impl Builder<'_> {
    /// Builds one zone's shape.
    fn shape(&mut self, z: &ZoneSpec) -> Result<Shape, String> {
        let space = self.space;
        let mut budget = Budget(0);
        Ok(match z {
            ZoneSpec::Polygon(pts) => Shape::Polygon(polygon(space, pts, &[], &mut budget)?),
            ZoneSpec::PolygonWithHoles { exterior, holes } => {
                Shape::Polygon(polygon(space, exterior, holes, &mut budget)?)
            }
            ZoneSpec::MultiPolygon(parts) => Shape::MultiPolygon(multi(space, parts, &mut budget)?),
            ZoneSpec::Rect { min, max } => {
                let (lo, hi) = (coord(space, *min)?, coord(space, *max)?);
                if lo.y > hi.y {
                    return Err("`min` must not exceed `max`".into());
                }
                if lo.x > hi.x {
                    if space != Space::Wgs84 {
                        return Err("`min` must not exceed `max`".into());
                    }
                    // Crossing the antimeridian: east of min.lon and west of max.lon.
                    let west = Rect::new(lo, Point { x: 180.0, y: hi.y });
                    let east = Rect::new(Point { x: -180.0, y: lo.y }, hi);
                    Shape::MultiPolygon(MultiPolygon(vec![west.to_polygon(), east.to_polygon()]))
                } else {
                    Shape::Rect(Rect::new(lo, hi))
                }
            }
            ZoneSpec::Circle { center, radius, .. } => Shape::Circle {
                center: coord(space, *center)?,
                radius: positive("radius", *radius)?,
            },
            ZoneSpec::Sector {
                center,
                radius,
                from_deg,
                to_deg,
                ..
            } => {
                if !from_deg.is_finite() || !to_deg.is_finite() {
                    return Err("bearings must be finite".into());
                }
                Shape::Sector {
                    center: coord(space, *center)?,
                    radius: positive("radius", *radius)?,
                    from_deg: *from_deg,
                    to_deg: *to_deg,
                }
            }
            ZoneSpec::Line { points, width } => {
                if points.len() < 2 {
                    return Err(format!(
                        "a line needs at least 2 points, got {}",
                        points.len()
                    ));
                }
                budget.take(points.len())?;
                let line: Vec<Point> = points
                    .iter()
                    .map(|p| coord(space, *p))
                    .collect::<Result<_, _>>()?;
                let half_width = positive("width", *width)? / 2.0;
                if space == Space::Wgs84 {
                    for (i, w) in line.windows(2).enumerate() {
                        let len = Geodesic.distance(GeoPoint(w[0]), GeoPoint(w[1]));
                        if len.is_nan() || len >= MAX_SEGMENT_M {
                            return Err(format!(
                                "segment {} is {:.0} km long; segments must be shorter than {:.0} km",
                                i + 1,
                                len / 1000.0,
                                MAX_SEGMENT_M / 1000.0
                            ));
                        }
                    }
                }
                Shape::line(LineString::from(line), half_width)
            }
            ZoneSpec::GeoJson {
                path,
                name,
                property,
            } => {
                let (shown, loaded) = self.load(path);
                let gj = loaded
                    .as_ref()
                    .as_ref()
                    .map_err(|e| format!("{shown}: {e}"))?;
                let property = property.as_deref().unwrap_or("name");
                let polys = self
                    .polygons(gj, name.as_deref(), property, &mut budget)
                    .map_err(|e| format!("{shown}: {e}"))?;
                match <[Polygon<f64>; 1]>::try_from(polys) {
                    Ok([one]) => Shape::Polygon(one),
                    Err(many) => Shape::MultiPolygon(MultiPolygon(many)),
                }
            }
        })
    }

    /// Reads and parses a GeoJSON file once; returns how to name it in messages.
    fn load(&mut self, path: &str) -> (String, Loaded) {
        let resolved = self.base.join(path);
        let shown = if resolved.as_path() == Path::new(path) {
            format!("GeoJSON file `{path}`")
        } else {
            format!("GeoJSON file `{path}` ({})", resolved.display())
        };
        let loaded = self
            .files
            .entry(resolved.clone())
            .or_insert_with(|| Rc::new(read_geojson(&resolved, self.digest)))
            .clone();
        (shown, loaded)
    }

    /// The polygons a GeoJSON document gives a zone (see the module's docs).
    fn polygons(
        &self,
        gj: &GeoJson,
        name: Option<&str>,
        property: &str,
        budget: &mut Budget,
    ) -> Result<Vec<Polygon<f64>>, String> {
        let mut out = Vec::new();
        match gj {
            GeoJson::Geometry(g) => {
                if let Some(n) = name {
                    return Err(format!(
                        "`name: {n:?}` picks features, but the file holds a bare geometry"
                    ));
                }
                self.geometry(g, budget, &mut out)?;
            }
            GeoJson::Feature(f) => {
                if let Some(n) = name {
                    if feature_name(f, property) != Some(n) {
                        return Err(format!(
                            "the file's feature does not have `{property}` = {n:?}"
                        ));
                    }
                }
                self.feature(f, 0, property, budget, &mut out)?;
            }
            GeoJson::FeatureCollection(fc) => {
                let mut matched = 0;
                for (i, f) in fc.features.iter().enumerate() {
                    if name.is_some_and(|n| feature_name(f, property) != Some(n)) {
                        continue;
                    }
                    matched += 1;
                    self.feature(f, i, property, budget, &mut out)?;
                }
                if matched == 0 {
                    return Err(match name {
                        None => "the FeatureCollection has no features".into(),
                        Some(n) => {
                            let mut names: Vec<&str> = fc
                                .features
                                .iter()
                                .filter_map(|f| feature_name(f, property))
                                .collect();
                            names.sort_unstable();
                            names.dedup();
                            let more = names.len() > 20;
                            names.truncate(20);
                            let list: Vec<String> =
                                names.iter().map(|n| format!("{n:?}")).collect();
                            format!(
                                "no feature has `{property}` = {n:?} (found: {}{})",
                                if list.is_empty() {
                                    "none".to_owned()
                                } else {
                                    list.join(", ")
                                },
                                if more { ", …" } else { "" }
                            )
                        }
                    });
                }
            }
        }
        Ok(out)
    }

    /// The polygons of one feature (the `i`-th of its collection).
    fn feature(
        &self,
        f: &Feature,
        i: usize,
        property: &str,
        budget: &mut Budget,
        out: &mut Vec<Polygon<f64>>,
    ) -> Result<(), String> {
        let label = match feature_name(f, property) {
            Some(n) => format!("feature {} ({n:?})", i + 1),
            None => format!("feature {}", i + 1),
        };
        let g = f
            .geometry
            .as_ref()
            .ok_or_else(|| format!("{label} has no geometry"))?;
        self.geometry(g, budget, out)
            .map_err(|e| format!("{label}: {e}"))
    }

    /// Appends the polygons of a geometry (a Polygon, a MultiPolygon or a collection
    /// of them).
    fn geometry(
        &self,
        g: &Geometry,
        budget: &mut Budget,
        out: &mut Vec<Polygon<f64>>,
    ) -> Result<(), String> {
        let space = self.space;
        match &g.value {
            GeometryValue::Polygon { coordinates } => {
                out.push(geojson_polygon(space, coordinates, budget)?);
            }
            GeometryValue::MultiPolygon { coordinates } => {
                if coordinates.is_empty() {
                    return Err("an empty MultiPolygon".into());
                }
                for (i, p) in coordinates.iter().enumerate() {
                    out.push(
                        geojson_polygon(space, p, budget)
                            .map_err(|e| format!("polygon {}: {e}", i + 1))?,
                    );
                }
            }
            GeometryValue::GeometryCollection { geometries } => {
                if geometries.is_empty() {
                    return Err("an empty GeometryCollection".into());
                }
                for g in geometries {
                    self.geometry(g, budget, out)?;
                }
            }
            other => {
                return Err(format!(
                    "a {} geometry; a zone needs Polygon or MultiPolygon geometries",
                    other.type_name()
                ))
            }
        }
        Ok(())
    }
}

/// The string value of a feature's `property`.
fn feature_name<'f>(f: &'f Feature, property: &str) -> Option<&'f str> {
    f.properties.as_ref()?.get(property)?.as_str()
}

/// A GeoJSON polygon: its first ring the exterior, the others holes.
fn geojson_polygon(
    space: Space,
    rings: &[Vec<geojson::Position>],
    budget: &mut Budget,
) -> Result<Polygon<f64>, String> {
    let mut xy = Vec::with_capacity(rings.len());
    for r in rings {
        budget.take(r.len())?;
        let pts = r
            .iter()
            .map(|p| match p.as_slice() {
                [x, y, ..] => Ok((*x, *y)),
                other => Err(format!("a position needs 2 numbers, got {}", other.len())),
            })
            .collect::<Result<Vec<Xy>, _>>()?;
        xy.push(pts);
    }
    let Some((exterior, holes)) = xy.split_first() else {
        return Err("a polygon without rings".into());
    };
    // Vertices were counted above; count them once.
    let mut unlimited = Budget(0);
    polygon(space, exterior, holes, &mut unlimited)
}

/// Reads a GeoJSON file of at most [`MAX_GEOJSON_BYTES`].
fn read_geojson(path: &Path, digest: &mut Sha256) -> Result<GeoJson, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut text = String::new();
    file.take(MAX_GEOJSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    if text.len() as u64 > MAX_GEOJSON_BYTES {
        return Err(format!("larger than {} MiB", MAX_GEOJSON_BYTES >> 20));
    }
    digest.update(path.as_os_str().as_encoded_bytes());
    digest.update(text.len().to_le_bytes());
    digest.update(text.as_bytes());
    text.parse::<GeoJson>()
        .map_err(|e| format!("not valid GeoJSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::{Model, NetError};
    use crate::event::Point;
    use crate::spatial::Shape;

    const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zones");

    fn net(space: &str, zones: &str) -> String {
        format!(
            "Net(\n    space: {space},\n    zones: {{\n{zones}\n    }},\n    events: {{ \"t\": Atomic(type: \"T\") }},\n    outputs: [\"t\"],\n)"
        )
    }

    fn load(file: &str, src: &str) -> Result<Model, Vec<(usize, usize, String)>> {
        Model::load(file, src).map_err(|e| match e {
            NetError::Invalid { problems } => problems
                .into_iter()
                .map(|p| (p.line, p.col, p.message))
                .collect(),
            other => vec![(0, 0, other.to_string())],
        })
    }

    fn errors(space: &str, zones: &str) -> Vec<(usize, usize, String)> {
        let file = format!("{DATA}/net.ron");
        match load(&file, &net(space, zones)) {
            Ok(_) => panic!("expected errors for {zones}"),
            Err(e) => e,
        }
    }

    fn pt(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    #[test]
    fn geojson_feature_collection_defines_several_zones() {
        let file = format!("{DATA}/net.ron");
        let src = net(
            "Wgs84",
            r#"        "harbour": GeoJson(path: "harbour.geojson", name: "harbour"),
        "anchorage": GeoJson(path: "harbour.geojson", name: "anchorage"),
        "h": GeoJson(path: "harbour.geojson", name: "H", property: "berth_id"),"#,
        );
        let m = load(&file, &src).unwrap_or_else(|e| panic!("{e:?}"));
        let names: Vec<&str> = m.zones.iter().map(|z| &*z.name).collect();
        assert_eq!(names, ["anchorage", "h", "harbour"]);
        let (anchorage, h, harbour) = (&m.zones[0], &m.zones[1], &m.zones[2]);
        assert!(matches!(anchorage.shape, Shape::MultiPolygon(ref mp) if mp.0.len() == 2));
        assert!(matches!(harbour.shape, Shape::Polygon(ref p) if p.interiors().len() == 1));
        assert!(matches!(h.shape, Shape::Polygon(_)));
        let s = m.space;
        assert!(harbour.contains(s, pt(121.755, 25.155)));
        assert!(!harbour.contains(s, pt(121.7475, 25.1475)), "in the hole");
        assert!(
            harbour.contains(s, pt(121.745, 25.1475)),
            "on the hole's edge"
        );
        assert!(anchorage.contains(s, pt(121.805, 25.175)));
        assert!(!anchorage.contains(s, pt(121.795, 25.175)));
    }

    #[test]
    fn unreadable_geojson_is_an_error_at_the_zone() {
        let e = errors(
            "Wgs84",
            r#"        "harbour": GeoJson(path: "missing.geojson"),"#,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        let (line, col, msg) = &e[0];
        assert_eq!((*line, *col), (4, 9));
        assert!(
            msg.starts_with("zone `harbour`: GeoJSON file `missing.geojson`"),
            "{msg}"
        );
        assert!(msg.contains("cannot read"), "{msg}");
    }

    #[test]
    fn non_polygonal_or_unknown_features_are_errors() {
        let e = errors(
            "Wgs84",
            r#"        "a": GeoJson(path: "harbour.geojson", name: "lighthouse"),
        "b": GeoJson(path: "harbour.geojson", name: "nope"),
        "c": GeoJson(path: "harbour.geojson"),"#,
        );
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!((e[0].0, e[1].0, e[2].0), (4, 5, 6));
        assert!(
            e[0].2
                .contains("feature 4 (\"lighthouse\"): a Point geometry"),
            "{}",
            e[0].2
        );
        assert!(
            e[1].2.contains("no feature has `name` = \"nope\" (found: \"anchorage\", \"buoys\", \"harbour\", \"lighthouse\")"),
            "{}",
            e[1].2
        );
        assert!(e[2].2.contains("a Point geometry"), "{}", e[2].2);
    }

    #[test]
    fn bad_geojson_files() {
        let dir = std::env::temp_dir().join(format!("ccpn-zones-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).expect("write");
        };
        write(
            "broken.geojson",
            "{\"type\": \"Polygon\", \"coordinates\": [[[0, 0], [1, 0]",
        );
        write(
            "far.geojson",
            r#"{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 95], [0, 0]]]}"#,
        );
        write(
            "flat.geojson",
            r#"{"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}}"#,
        );
        write(
            "ok.geojson",
            r#"{"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6, 12.5]]]]}"#,
        );
        let file = dir.join("net.ron").display().to_string();
        let src = net(
            "Wgs84",
            r#"        "broken": GeoJson(path: "broken.geojson"),
        "far": GeoJson(path: "far.geojson"),
        "flat": GeoJson(path: "flat.geojson"),
        "named": GeoJson(path: "ok.geojson", name: "x"),
        "ok": GeoJson(path: "ok.geojson"),"#,
        );
        let e = load(&file, &src).expect_err("bad files");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(
            e[0].2.contains("broken.geojson") && e[0].2.contains("not valid GeoJSON"),
            "{}",
            e[0].2
        );
        assert!(e[1].2.contains("(1, 95) is not a (lon, lat)"), "{}", e[1].2);
        assert!(
            e[2].2.contains("a ring needs at least 3 distinct points"),
            "{}",
            e[2].2
        );
        assert!(
            e[3].2
                .contains("picks features, but the file holds a bare geometry"),
            "{}",
            e[3].2
        );
    }

    #[test]
    fn ron_polygons_with_holes_and_multipolygons() {
        let src = net(
            "Planar",
            r#"        "pier": PolygonWithHoles(
            exterior: [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0), (0.0, 0.0)],
            holes: [[(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)]],
        ),
        "islands": MultiPolygon([
            Polygon(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]),
            (exterior: [(5.0, 5.0), (9.0, 5.0), (9.0, 9.0), (5.0, 9.0)], holes: [[(6.0, 6.0), (7.0, 6.0), (7.0, 7.0)]]),
        ]),"#,
        );
        let m = load("n.ron", &src).unwrap_or_else(|e| panic!("{e:?}"));
        let (islands, pier) = (&m.zones[0], &m.zones[1]);
        let s = m.space;
        assert!(pier.contains(s, pt(1.0, 1.0)));
        assert!(!pier.contains(s, pt(5.0, 5.0)));
        assert!(
            pier.contains(s, pt(5.0, 4.0)),
            "the hole's boundary is inside"
        );
        assert!(islands.contains(s, pt(0.9, 0.5)));
        assert!(islands.contains(s, pt(8.0, 8.0)));
        assert!(
            !islands.contains(s, pt(6.8, 6.2)),
            "in the second part's hole"
        );
        assert!(!islands.contains(s, pt(3.0, 3.0)));
    }

    #[test]
    fn rect_across_the_antimeridian() {
        let src = net(
            "Wgs84",
            r#"        "dateline": Rect(min: (179.0, -1.0), max: (-179.0, 1.0)),"#,
        );
        let m = load("n.ron", &src).unwrap_or_else(|e| panic!("{e:?}"));
        let z = &m.zones[0];
        assert!(z.contains(m.space, pt(179.5, 0.0)));
        assert!(z.contains(m.space, pt(-179.5, 0.0)));
        assert!(z.contains(m.space, pt(180.0, 1.0)));
        assert!(!z.contains(m.space, pt(0.0, 0.0)));
        let e = errors(
            "Planar",
            r#"        "r": Rect(min: (179.0, -1.0), max: (-179.0, 1.0)),"#,
        );
        assert!(e[0].2.contains("`min` must not exceed `max`"), "{e:?}");
    }

    #[test]
    fn bad_ron_zones_are_errors_at_their_entries() {
        let e = errors(
            "Wgs84",
            r#"        "a": Polygon([(0.0, 0.0), (1.0, 0.0)]),
        "b": Circle(center: (0.0, 91.0), radius: 1.0),
        "c": Polygon([(-170.0, 0.0), (170.0, 0.0), (170.0, 1.0)]),
        "d": Line(points: [(0.0, 0.0), (100.0, 0.0)], width: 10.0),
        "e": MultiPolygon([]),
        "f": PolygonWithHoles(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)], holes: [[(0.1, 0.1), (0.1, 0.1), (0.2, 0.2)]]),
        "g": Sector(center: (0.0, 0.0), radius: -1.0, from_deg: 0.0, to_deg: 10.0),"#,
        );
        let msgs: Vec<String> = e.iter().map(|(l, _, m)| format!("{l}: {m}")).collect();
        let want = [
            "4: zone `a`: exterior: a ring needs at least 3 distinct points, got 2",
            "5: zone `b`: (0, 91) is not a (lon, lat) in degrees",
            "6: zone `c`: the polygon spans 340 degrees of longitude",
            "7: zone `d`: segment 1 is 11132 km long",
            "8: zone `e`: a multipolygon needs at least one polygon",
            "9: zone `f`: hole 1: a ring needs at least 3 distinct points, got 3",
            "10: zone `g`: `radius` must be a positive finite number, got -1",
        ];
        assert_eq!(msgs.len(), want.len(), "{msgs:#?}");
        for (m, w) in msgs.iter().zip(want) {
            assert!(m.starts_with(w), "{m}\n  wanted {w}");
        }
    }
}
