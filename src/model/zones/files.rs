//! Zones read from GeoJSON files: each file read once (and hashed into the net's
//! fingerprint), geometries, features and collections turned into polygons, a
//! feature selected by a property's value (each file indexed once by each property
//! zones pick by).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use geojson::{Feature, FeatureCollection, GeoJson, Geometry, GeometryValue};

use geo_types::Polygon;

use super::{polygon, Builder, Loaded, VertexBudget, MAX_GEOJSON_BYTES};
use crate::event::Space;
use crate::spec::Xy;

impl Builder<'_> {
    /// Reads and parses a GeoJSON file once; returns how to name it in messages, its
    /// resolved path and what it holds.
    pub(super) fn load(&mut self, path: &str) -> (String, PathBuf, Loaded) {
        let resolved = self.base.join(path);
        let shown = if resolved.as_path() == Path::new(path) {
            format!("GeoJSON file `{path}`")
        } else {
            format!("GeoJSON file `{path}` ({})", resolved.display())
        };
        if let Some(loaded) = self.files.get(&resolved) {
            let loaded = loaded.clone();
            return (shown, resolved, loaded);
        }
        let supplied = self.supplied.iter().find(|(p, _)| *p == resolved);
        let text = match supplied {
            Some((_, text)) => Ok(text.clone()),
            None => read_text(&resolved),
        };
        let loaded = Rc::new(text.and_then(|text| {
            self.digest.update(resolved.as_os_str().as_encoded_bytes());
            self.digest.update(&text.len().to_le_bytes());
            self.digest.update(text.as_bytes());
            let parsed = text.parse::<GeoJson>();
            self.read.push((resolved.clone(), text));
            parsed.map_err(|e| format!("not valid GeoJSON: {e}"))
        }));
        self.files.insert(resolved.clone(), loaded.clone());
        (shown, resolved, loaded)
    }

    /// The positions in `fc` (the collection of the file at `file`) of the features
    /// whose `property` is `name`, in file order. The features are indexed by the
    /// property's value at the first such question about the file and property, so
    /// that a net of n zones picking from a file of m features costs n + m, not n × m.
    fn features_named(
        &mut self,
        file: &Path,
        property: &str,
        fc: &FeatureCollection,
        name: &str,
    ) -> &[usize] {
        let by_property = self.names.entry(file.to_path_buf()).or_default();
        if !by_property.contains_key(property) {
            let mut index: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, f) in fc.features.iter().enumerate() {
                if let Some(v) = feature_name(f, property) {
                    index.entry(v.to_owned()).or_default().push(i);
                }
            }
            by_property.insert(property.to_owned(), index);
        }
        by_property
            .get(property)
            .and_then(|index| index.get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// The polygons a GeoJSON document gives a zone (see the module's docs).
    pub(super) fn polygons(
        &mut self,
        file: &Path,
        gj: &GeoJson,
        name: Option<&str>,
        property: &str,
        budget: &mut VertexBudget,
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
                let picked: Vec<usize> = match name {
                    Some(n) => self.features_named(file, property, fc, n).to_vec(),
                    None => (0..fc.features.len()).collect(),
                };
                let matched = picked.len();
                for i in picked {
                    if let Some(f) = fc.features.get(i) {
                        self.feature(f, i, property, budget, &mut out)?;
                    }
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
        budget: &mut VertexBudget,
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
        budget: &mut VertexBudget,
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
    budget: &mut VertexBudget,
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
    let mut unlimited = VertexBudget(0);
    polygon(space, exterior, holes, &mut unlimited)
}

/// Reads a GeoJSON file's text, of at most [`MAX_GEOJSON_BYTES`].
fn read_text(path: &Path) -> Result<Arc<str>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut text = String::new();
    file.take(MAX_GEOJSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    if text.len() as u64 > MAX_GEOJSON_BYTES {
        return Err(format!("larger than {} MiB", MAX_GEOJSON_BYTES >> 20));
    }
    Ok(text.into())
}
