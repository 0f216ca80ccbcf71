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
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use geo_types::{LineString, MultiPolygon, Polygon, Rect};
use geojson::GeoJson;
use xxhash_rust::xxh3::Xxh3Default;

mod files;

use super::Problem;
use crate::event::{Point, Space};
use crate::spatial::{geodesic_distance, Shape, Zone, MAX_SEGMENT_M};
use crate::spec::{NetSpec, PolygonSpec, SourceMap, Xy, ZoneSpec};

/// The largest number of vertices a zone may have, all rings and parts together.
pub(crate) const MAX_VERTICES: usize = 1_000_000;

/// The largest GeoJSON file a zone may be read from, in bytes (256 MiB).
pub(crate) const MAX_GEOJSON_BYTES: u64 = 256 << 20;

/// What [`build`] made of a net's zones.
pub(super) struct Built<'a> {
    /// The zones, in name order.
    pub(super) zones: Vec<Zone>,
    /// Their names, as the net spells them: `names[i]` is `zones[i]`'s.
    pub(super) names: Vec<&'a str>,
    /// Zones that could not be built, each reported at its entry.
    pub(super) problems: Vec<Problem>,
    /// The GeoJSON files read (by resolved path) and their texts, in the order read.
    pub(super) read: Vec<(PathBuf, Arc<str>)>,
}

/// Builds the zones of `spec`, in name order. Zones that cannot be built are left out
/// and reported, each at its entry in `source` (the text of the net file `file`).
/// A GeoJSON file whose resolved path is in `supplied` is taken from there, not read.
pub(super) fn build<'a>(
    file: &str,
    source: &SourceMap<'_>,
    spec: &'a NetSpec,
    digest: &mut Xxh3Default,
    supplied: &[(PathBuf, Arc<str>)],
) -> Built<'a> {
    let mut b = Builder {
        digest,
        supplied,
        read: Vec::new(),
        space: spec.space,
        base: Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        files: HashMap::new(),
        names: HashMap::new(),
    };
    // (Reserved: a net of many zones is not copied from one doubling to the next.)
    let mut zones = Vec::with_capacity(spec.zones.len());
    let mut names = Vec::with_capacity(spec.zones.len());
    let mut problems = Vec::new();
    for (name, z) in &spec.zones {
        match b.shape(z) {
            Ok(shape) => {
                names.push(name.as_str());
                zones.push(Zone {
                    name: name.as_str().into(),
                    shape,
                });
            }
            Err(msg) => {
                let (line, col) = source.locate(&[name]);
                problems.push(Problem {
                    file: file.to_owned(),
                    line,
                    col,
                    message: format!("zone `{name}`: {msg}"),
                });
            }
        }
    }
    Built {
        zones,
        names,
        problems,
        read: b.read,
    }
}

/// A parsed GeoJSON file, or why it could not be read.
type Loaded = Rc<Result<GeoJson, String>>;

struct Builder<'d> {
    /// Takes in each GeoJSON file read (its path and text): part of the net's fingerprint.
    digest: &'d mut Xxh3Default,
    /// GeoJSON texts to take rather than read, by resolved path.
    supplied: &'d [(PathBuf, Arc<str>)],
    /// GeoJSON texts read so far, by resolved path, in the order read.
    read: Vec<(PathBuf, Arc<str>)>,
    space: Space,
    /// The directory GeoJSON paths are relative to.
    base: PathBuf,
    /// GeoJSON files read so far, by resolved path.
    files: HashMap<PathBuf, Loaded>,
    /// For each file (resolved path) and property zones pick its features by, the
    /// positions of the features by the property's value ([`Builder::features_named`]).
    names: HashMap<PathBuf, HashMap<String, HashMap<String, Vec<usize>>>>,
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
struct VertexBudget(usize);

impl VertexBudget {
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
/// is dropped, and `geo_types::Polygon::new` closes the ring again).
fn ring(space: Space, pts: &[Xy], budget: &mut VertexBudget) -> Result<LineString<f64>, String> {
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
    budget: &mut VertexBudget,
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
    budget: &mut VertexBudget,
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
        let mut budget = VertexBudget(0);
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
                        let len = geodesic_distance(w[0], w[1]);
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
                let (shown, file, loaded) = self.load(path);
                let gj = loaded
                    .as_ref()
                    .as_ref()
                    .map_err(|e| format!("{shown}: {e}"))?;
                let property = property.as_deref().map_or("name", String::as_str);
                let polys = self
                    .polygons(
                        &file,
                        gj,
                        name.as_deref().map(String::as_str),
                        property,
                        &mut budget,
                    )
                    .map_err(|e| format!("{shown}: {e}"))?;
                match <[Polygon<f64>; 1]>::try_from(polys) {
                    Ok([one]) => Shape::Polygon(one),
                    Err(many) => Shape::MultiPolygon(MultiPolygon(many)),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests;
