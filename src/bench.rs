//! The crate-private indexes, opened to the benchmarks (`benches/count.rs`,
//! `benches/zones.rs`) with the `bench` feature, and the seeded event streams of the
//! benchmarks and examples ([`stream`]) and the nets of many zones ([`zone_net`]). Not part of ccpn's API: it may change in any
//! release.
//!
//! Each type wraps the crate's own and forwards to it, so a benchmark runs exactly the
//! code the detector runs: [`CountIndex`] is `count::CountIndex` (the `Count`
//! operator's level-wise index), [`ZoneIndex`] is `spatial::ZoneIndex` (the zone
//! index behind `Within`).

pub mod stream;
pub mod zone_net;

use std::sync::Arc;

use geo_types::{LineString, MultiPolygon, Polygon, Rect};

use crate::event::{Point, Space, Timestamp};
use crate::{count, spatial};

/// The distance between two points in `space`: planar units, or metres along the
/// WGS84 geodesic (the metric of `Dist` and `Count`).
pub fn distance(space: Space, a: Point, b: Point) -> f64 {
    spatial::distance(space, a, b)
}

/// One counting rule: `n` points pairwise closer than `distance`, within `window`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// How many points make a match.
    pub n: usize,
    /// Pairs must be strictly closer than this (planar units, or metres on WGS84).
    pub distance: f64,
    /// Latest minus earliest member time must not exceed this (microseconds).
    pub window: i64,
    /// Members must each have a distinct value, pairwise different.
    pub distinct: bool,
}

impl From<Rule> for count::Rule {
    fn from(r: Rule) -> count::Rule {
        count::Rule {
            n: r.n,
            distance: r.distance,
            window: r.window,
            distinct: r.distinct,
        }
    }
}

/// How the counting index finds a new point's neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lookup {
    /// A hashed grid of cells three reaches wide (what the detector uses).
    #[default]
    Grid,
    /// An R*-tree, queried with the reach's bounding box.
    Tree,
}

impl From<Lookup> for count::Lookup {
    fn from(l: Lookup) -> count::Lookup {
        match l {
            Lookup::Grid => count::Lookup::Grid,
            Lookup::Tree => count::Lookup::Tree,
        }
    }
}

/// The matches of insertions: for each, its rule and its members' payloads.
#[derive(Clone, Debug, Default)]
pub struct Matches<T>(count::Matches<T>);

impl<T> Matches<T> {
    /// No matches.
    pub fn new() -> Self {
        Matches(count::Matches::new())
    }

    /// Forgets every match, keeping the storage.
    #[inline]
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The number of matches.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Are there none?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The level-wise counting index for a list of rules sharing one stream of points;
/// `T` is the payload reported for each member of a match, `D` the distinct value.
pub struct CountIndex<T, D>(count::CountIndex<T, D>);

impl<T: Clone, D: Eq + Clone> CountIndex<T, D> {
    /// An index for `rules` in `space`, keeping at most `max_sets` sets.
    pub fn new(space: Space, rules: Vec<Rule>, max_sets: usize) -> Self {
        Self::with_lookup(space, rules, max_sets, Lookup::default())
    }

    /// As [`CountIndex::new`], finding neighbours with `lookup`.
    pub fn with_lookup(space: Space, rules: Vec<Rule>, max_sets: usize, lookup: Lookup) -> Self {
        let rules = rules.into_iter().map(count::Rule::from).collect();
        CountIndex(count::CountIndex::with_lookup(
            space,
            rules,
            max_sets,
            lookup.into(),
        ))
    }

    /// Inserts a point caused by input event `cause` at `time` (non-decreasing across
    /// calls; this expires first), appending to `out` one match per newly complete set.
    #[inline]
    pub fn insert(
        &mut self,
        cause: u64,
        time: Timestamp,
        at: Point,
        distinct: Option<D>,
        payload: T,
        out: &mut Matches<T>,
    ) {
        self.0
            .insert(cause, time, at, distinct, payload, &mut out.0);
    }

    /// Live sets per level, levels 2 ..= the largest `n` (entry `i` is level `i + 2`).
    pub fn live_sets(&self) -> Vec<usize> {
        self.0.live_sets()
    }

    /// Sets not kept because `max_sets` was reached.
    pub fn refused(&self) -> u64 {
        self.0.refused()
    }
}

/// The geometry of a zone (boundaries count as inside); coordinates are (x, y), or
/// (lon, lat) degrees with distances in metres on WGS84.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A polygon, possibly with holes.
    Polygon(Polygon<f64>),
    /// Several polygons.
    MultiPolygon(MultiPolygon<f64>),
    /// An axis-aligned rectangle.
    Rect(Rect<f64>),
    /// Points within `radius` of `center`.
    Circle {
        /// The centre.
        center: Point,
        /// The radius.
        radius: f64,
    },
    /// Points within `radius` of `center` whose bearing from it lies clockwise from
    /// `from_deg` to `to_deg` (degrees from north).
    Sector {
        /// The centre.
        center: Point,
        /// The radius.
        radius: f64,
        /// The arc's first bearing.
        from_deg: f64,
        /// The arc's last bearing.
        to_deg: f64,
    },
    /// Points within `half_width` of the polyline.
    Line {
        /// The polyline.
        line: LineString<f64>,
        /// The half-width.
        half_width: f64,
    },
}

impl From<Shape> for spatial::Shape {
    fn from(s: Shape) -> spatial::Shape {
        match s {
            Shape::Polygon(p) => spatial::Shape::Polygon(p),
            Shape::MultiPolygon(m) => spatial::Shape::MultiPolygon(m),
            Shape::Rect(r) => spatial::Shape::Rect(r),
            Shape::Circle { center, radius } => spatial::Shape::Circle { center, radius },
            Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => spatial::Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            },
            Shape::Line { line, half_width } => spatial::Shape::line(line, half_width),
        }
    }
}

/// A named zone.
#[derive(Clone, Debug)]
pub struct Zone {
    /// Its name.
    pub name: Arc<str>,
    /// Its geometry.
    pub shape: Shape,
}

/// A set of zones under ids, indexed for stabbing (the index behind `Within`).
#[derive(Clone, Debug)]
pub struct ZoneIndex(spatial::ZoneIndex);

impl ZoneIndex {
    /// An index of `zones` in `space`, bulk-loaded; a repeated id keeps the last zone.
    /// It holds the boxes in a grid or an R*-tree, as the detector's rule chooses.
    pub fn new(space: Space, zones: impl IntoIterator<Item = (usize, Zone)>) -> ZoneIndex {
        ZoneIndex::of_kind(space, zones, spatial::IndexKind::Auto)
    }

    /// [`new`](ZoneIndex::new), the boxes always in the R*-tree (to compare).
    pub fn tree(space: Space, zones: impl IntoIterator<Item = (usize, Zone)>) -> ZoneIndex {
        ZoneIndex::of_kind(space, zones, spatial::IndexKind::Tree)
    }

    fn of_kind(
        space: Space,
        zones: impl IntoIterator<Item = (usize, Zone)>,
        kind: spatial::IndexKind,
    ) -> ZoneIndex {
        let zones = zones.into_iter().map(|(id, z)| {
            let zone = spatial::Zone {
                name: z.name,
                shape: z.shape.into(),
            };
            (id, zone)
        });
        ZoneIndex(spatial::ZoneIndex::with_kind(space, zones, kind))
    }

    /// Does the index hold the boxes in a grid (else an R*-tree)?
    pub fn is_grid(&self) -> bool {
        self.0.is_grid()
    }

    /// Sets `out` to the ids of every zone that contains `p`, sorted, by the index.
    #[inline]
    pub fn stab(&self, p: Point, out: &mut Vec<usize>) {
        self.0.stab(p, out);
    }

    /// Brings what a stab at `p` reads first into cache (a hint: see
    /// [`crate::Detector::prefetch`]).
    #[inline]
    pub fn prefetch(&self, p: Point) {
        self.0.prefetch(p);
    }

    /// What [`stab`](ZoneIndex::stab) returns, by testing every zone in turn.
    #[inline]
    pub fn stab_linear(&self, p: Point, out: &mut Vec<usize>) {
        self.0.stab_linear(p, out);
    }
}
