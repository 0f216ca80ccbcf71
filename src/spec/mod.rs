//! What a net file says: serde types mirroring the RON syntax, before any checking.
//!
//! Nothing here is trusted: names are unresolved strings, durations are unparsed.
//! [`crate::model`] turns a [`NetSpec`] into something the compiler may rely on.

mod load;
mod pieces;
mod plain;
mod problem;
mod refs;
mod unique;

pub(crate) use load::{drop_aside, parse, SourceMap};
pub(crate) use pieces::PARALLEL_BYTES;
pub use problem::Problem;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::event::Space;

/// A whole net file: `Net(space: …, zones: {…}, events: {…}, outputs: […])`.
#[derive(Debug, Deserialize)]
#[serde(rename = "Net", deny_unknown_fields)]
pub(crate) struct NetSpec {
    #[serde(default)]
    pub(crate) space: Space,
    #[serde(default, deserialize_with = "unique::zones")]
    pub(crate) zones: Zones,
    #[serde(deserialize_with = "unique::events")]
    pub(crate) events: BTreeMap<String, OpSpec>,
    pub(crate) outputs: Vec<String>,
}

/// A net's zones by name, in name order, each name once: a sorted vector, into which
/// the pieces of a large net's zones are merged without building a tree.
#[derive(Debug, Default)]
pub(crate) struct Zones(Vec<(String, ZoneSpec)>);

impl Zones {
    /// `entries`, sorted by name here if they are not already; `None` when a name is
    /// given twice.
    fn sorted(mut entries: Vec<(String, ZoneSpec)>) -> Option<Zones> {
        // Stable, so that entries already in runs of names in order (pieces read one
        // after another) are merged rather than sorted again.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        if entries.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(Zones(entries))
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ZoneSpec> {
        let i = self
            .0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        Some(&self.0[i].1)
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a Zones {
    type Item = (&'a String, &'a ZoneSpec);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, ZoneSpec)>,
        fn(&'a (String, ZoneSpec)) -> (&'a String, &'a ZoneSpec),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, z)| (n, z))
    }
}

/// A coordinate pair `(x, y)` or `(lon, lat)`.
pub(crate) type Xy = (f64, f64);

/// A zone definition (`zones: { "name": … }`). Coordinates are `(x, y)` on planar nets
/// and `(lon, lat)` degrees on WGS84 nets; boundaries count as inside.
///
/// ```ron
/// "dock":    Polygon([(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]),
/// "pier":    PolygonWithHoles(
///                exterior: [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)],
///                holes: [[(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)]],
///            ),
/// "islands": MultiPolygon([
///                Polygon(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]),
///                (exterior: [(5.0, 5.0), (6.0, 5.0), (6.0, 6.0)], holes: []),
///            ]),
/// "box":     Rect(min: (0.0, 0.0), max: (2.0, 2.0)),
/// "radar":   Circle(center: (5.0, 5.0), radius: 3.0),
/// "sonar":   Sector(center: (5.0, 5.0), radius: 8.0, from_deg: 330.0, to_deg: 30.0),
/// "lane":    Line(points: [(0.0, 0.0), (9.0, 9.0)], width: 1.0),
/// "harbour": GeoJson(path: "zones/harbour.geojson"),
/// "anchor":  GeoJson(path: "zones/all.geojson", name: "anchorage"),
/// ```
///
/// See `model/zones.rs` for what each means and the limits that apply.
#[derive(Debug, Deserialize)]
#[serde(rename = "Zone", deny_unknown_fields)]
pub(crate) enum ZoneSpec {
    /// A polygon without holes: its exterior ring (closing it is optional).
    Polygon(Vec<Xy>),
    /// A polygon with holes: `PolygonWithHoles(exterior: [...], holes: [[...], ...])`.
    PolygonWithHoles {
        exterior: Vec<Xy>,
        #[serde(default)]
        holes: Vec<Vec<Xy>>,
    },
    /// Several polygons, each `Polygon(exterior: [...], holes: [...])` or
    /// `(exterior: [...])`: a point in any of them is in the zone.
    MultiPolygon(Vec<PolygonSpec>),
    Rect {
        min: Xy,
        max: Xy,
    },
    /// A circle; with `anchor: "event"` it moves with that event's occurrences
    /// (`center` is where it is until the first one).
    Circle {
        center: Xy,
        radius: f64,
        #[serde(default)]
        anchor: Option<Name>,
    },
    /// A sector; with `anchor` it moves like a circle, and with `heading: "attr"` its
    /// bearings are taken clockwise from the anchor's heading attribute (degrees).
    Sector {
        center: Xy,
        radius: f64,
        from_deg: f64,
        to_deg: f64,
        #[serde(default)]
        anchor: Option<Name>,
        #[serde(default)]
        heading: Option<Name>,
    },
    Line {
        points: Vec<Xy>,
        width: f64,
    },
    /// Polygons read from a GeoJSON file, `path` relative to the net file's directory:
    /// the file's Polygon/MultiPolygon geometry, Feature or FeatureCollection (all its
    /// features), or with `name:` only the features whose `property` (default
    /// `"name"`) equals it.
    GeoJson {
        path: String,
        #[serde(default)]
        name: Option<Name>,
        #[serde(default)]
        property: Option<Name>,
    },
}

/// A name a zone may give and mostly does not (an anchor, a heading attribute, a
/// feature's name): boxed, so that a zone without one, and so every entry of a map of
/// many zones, is smaller (64 bytes rather than 96).
pub(crate) type Name = Box<String>;

/// One polygon of a `MultiPolygon`: `Polygon(exterior: [...], holes: [[...], ...])`,
/// the name being optional and `holes` defaulting to none.
#[derive(Debug, Deserialize)]
#[serde(rename = "Polygon", deny_unknown_fields)]
pub(crate) struct PolygonSpec {
    /// The outer ring.
    pub(crate) exterior: Vec<Xy>,
    /// Rings cut out of it (their boundaries stay inside the zone).
    #[serde(default)]
    pub(crate) holes: Vec<Vec<Xy>>,
}

/// A duration: seconds, or text such as `"90s"`, `"10m"`, `"2h"`, `"3d"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum DurationSpec {
    Secs(f64),
    Text(String),
}

/// A pairing context, after Snoop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
pub(crate) enum ContextSpec {
    #[default]
    Recent,
    Chronicle,
    Continuous,
    Cumulative,
    Unrestricted,
}

/// A projection-based direction relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub(crate) enum DirSpec {
    N,
    S,
    E,
    W,
    NE,
    NW,
    SE,
    SW,
}

/// `rel: NW` or `rel: [N, NE, NW]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum RelSpec {
    One(DirSpec),
    Many(Vec<DirSpec>),
}

/// One entry of `events`: an operator with named fields.
#[derive(Debug, Deserialize)]
#[serde(rename = "Operator", deny_unknown_fields)]
pub(crate) enum OpSpec {
    Atomic {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        when: Option<String>,
    },
    Within {
        of: String,
        zones: Vec<String>,
    },
    Or {
        of: Vec<String>,
    },
    Seq {
        of: Vec<String>,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    And {
        of: Vec<String>,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    Any {
        m: i64,
        of: Vec<String>,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    Not {
        start: String,
        absent: String,
        end: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    Dist {
        a: String,
        b: String,
        max: f64,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    Direction {
        rel: RelSpec,
        of: String,
        #[serde(default)]
        from: Option<String>,
        #[serde(default, rename = "box")]
        in_box: Option<String>,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        distinct: Option<String>,
        #[serde(default)]
        context: ContextSpec,
    },
    Count {
        of: String,
        n: i64,
        distance: f64,
        window: DurationSpec,
        #[serde(default)]
        distinct: Option<String>,
    },
    A {
        start: String,
        e: String,
        end: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
    },
    AStar {
        start: String,
        e: String,
        end: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
    },
    P {
        start: String,
        period: DurationSpec,
        end: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
    },
    PStar {
        start: String,
        period: DurationSpec,
        end: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
    },
    Times {
        k: i64,
        of: String,
        #[serde(default)]
        within: Option<DurationSpec>,
        #[serde(default)]
        key: Option<String>,
    },
    // States: situations that hold over time, per key value.
    State {
        on: String,
        off: String,
        #[serde(default)]
        key: Option<String>,
    },
    Inside {
        of: String,
        zones: Vec<String>,
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        margin: f64,
    },
    Stationary {
        of: String,
        radius: f64,
        #[serde(rename = "for")]
        hold: DurationSpec,
        #[serde(default)]
        key: Option<String>,
    },
    Silent {
        of: String,
        #[serde(rename = "for")]
        hold: DurationSpec,
        #[serde(default)]
        key: Option<String>,
    },
    Close {
        of: String,
        max: f64,
        #[serde(default)]
        within: Option<DurationSpec>,
        distinct: String,
    },
    Lasting {
        of: String,
        min: DurationSpec,
    },
    AllOf {
        of: Vec<String>,
    },
    AnyOf {
        of: Vec<String>,
    },
    Unless {
        of: String,
        except: String,
    },
    // Occurrences from states.
    Starts {
        of: String,
    },
    Ends {
        of: String,
    },
    During {
        of: String,
        state: String,
        #[serde(default = "holds_default")]
        holds: bool,
    },
}

/// `During`'s `holds` when left out: occurrences while the state holds.
fn holds_default() -> bool {
    true
}
