//! The zone R*-tree: which zones contain a point, found by stabbing an R*-tree of the
//! zones' bounding boxes and testing the exact shape only on the boxes hit.
//!
//! This is the spatial index of "An Indexing Method of Continuous Spatiotemporal
//! Queries for Stream Data Processing Rules of Detected Target Objects" (seed 002):
//! its Algorithm 1 (rule insertion) adds each spatial condition's minimum bounding
//! rectangle to an R*-tree, and its Algorithm 2 (event stabbing) walks the tree with
//! the event's location and evaluates only the conditions it reaches. Two departures,
//! both needed for the answer to equal a scan of every zone: Algorithm 2 descends into
//! the *first* child whose box holds the point, but R*-tree siblings overlap, so
//! [`ZoneIndex::stab`] descends into *every* such child (rstar's
//! `locate_all_at_point`); and a box is only a filter, so each zone it reaches is
//! tested exactly ([`Zone::contains`]). A zone may own several boxes (one on each side
//! of the antimeridian, one per segment of a widened line on WGS84).
//!
//! Zones can be inserted, removed and replaced in place, so a zone that moves with a
//! tracked object is re-centred with [`ZoneIndex::update`] at the cost of one
//! removal and one insertion in the tree (O(log n)).

use std::ops::ControlFlow;

use geo_types::Rect;
use rstar::{
    Envelope, PointDistance, RStarInsertionStrategy, RTree, RTreeObject, RTreeParams, AABB,
};
use rustc_hash::FxHashMap;

use super::bounds::equivalent_lons;
use super::metric::SpherePoint;
#[cfg(test)]
use super::zone::Shape;
use super::zone::{valid_point, Probe, Zone};
use crate::event::{Point, Space};

/// Node sizes of the zone tree. Wider nodes than rstar's default (6) make the tree
/// shallower, which matters more for stabbing (every overlapping child is visited)
/// than the slightly larger per-node scan.
#[derive(Clone, Copy, Debug)]
struct StabParams;

impl RTreeParams for StabParams {
    const MIN_SIZE: usize = 4;
    const MAX_SIZE: usize = 12;
    const REINSERTION_COUNT: usize = 3;
    type DefaultInsertionStrategy = RStarInsertionStrategy;
}

/// One box of one zone in the tree. Boxes are kept in `f32`, rounded outwards, and
/// points are looked up rounded to the nearest `f32`: rounding is monotonic, so a point
/// inside a box stays inside the rounded box (never a miss), and the tree takes half
/// the memory, which is what a stab among many zones waits on.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Leaf {
    env: AABB<[f32; 2]>,
    /// The zone's slot in [`ZoneIndex::slots`] (an index holds fewer than 2³² zones).
    slot: u32,
}

impl RTreeObject for Leaf {
    type Envelope = AABB<[f32; 2]>;

    fn envelope(&self) -> Self::Envelope {
        self.env
    }
}

impl PointDistance for Leaf {
    fn distance_2(&self, point: &[f32; 2]) -> f32 {
        self.env.distance_2(point)
    }

    fn contains_point(&self, point: &[f32; 2]) -> bool {
        self.env.contains_point(point)
    }
}

/// A zone held by the index, with the boxes it has in the tree and its centre's
/// trigonometry on WGS84.
#[derive(Clone, Debug)]
struct Slot {
    id: usize,
    zone: Zone,
    boxes: Vec<Rect<f64>>,
    centre: Option<SpherePoint>,
}

impl Slot {
    fn new(space: Space, id: usize, zone: Zone, boxes: Vec<Rect<f64>>) -> Slot {
        Slot {
            id,
            centre: zone.centre(space),
            zone,
            boxes,
        }
    }

    fn contains(&self, space: Space, probe: &mut Probe) -> bool {
        self.zone.contains_probe(space, probe, self.centre.as_ref())
    }
}

/// A set of zones, each under a caller's id (such as `model::ZoneId`), indexed for
/// stabbing: [`stab`](ZoneIndex::stab) returns every zone that contains a point.
#[derive(Clone)]
pub(crate) struct ZoneIndex {
    space: Space,
    tree: RTree<Leaf, StabParams>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    by_id: FxHashMap<usize, usize>,
}

impl std::fmt::Debug for ZoneIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoneIndex")
            .field("space", &self.space)
            .field("zones", &self.by_id.len())
            .field("boxes", &self.tree.size())
            .finish()
    }
}

/// Tree coordinates are clamped to ±this: rstar sorts boxes by their corners and
/// centres with `partial_cmp(..).unwrap()`, so every corner, width and centre must be
/// a finite `f32`. Clamping boxes and looked-up points alike keeps every point in the
/// boxes that hold it (clamping is monotonic).
const KEY_LIMIT: f32 = 1e37;

/// The largest `f32` at most `x`, within ±[`KEY_LIMIT`].
fn down(x: f64) -> f32 {
    let f = x as f32;
    let f = if f64::from(f) <= x || f.is_nan() {
        f
    } else if f > 0.0 {
        f32::from_bits(f.to_bits() - 1)
    } else if f == 0.0 {
        -f32::from_bits(1)
    } else {
        f32::from_bits(f.to_bits() + 1)
    };
    f.clamp(-KEY_LIMIT, KEY_LIMIT)
}

/// The smallest `f32` at least `x`, within ±[`KEY_LIMIT`].
fn up(x: f64) -> f32 {
    -down(-x)
}

fn leaf(r: &Rect<f64>, slot: usize) -> Leaf {
    Leaf {
        env: AABB::from_corners(
            [down(r.min().x), down(r.min().y)],
            [up(r.max().x), up(r.max().y)],
        ),
        // Past 2³² − 1 zones the slot names none, and the zone is never found.
        slot: u32::try_from(slot).unwrap_or(u32::MAX),
    }
}

/// A point as the tree looks it up (rounded to the nearest `f32`, clamped).
fn key(x: f64, y: f64) -> [f32; 2] {
    [
        (x as f32).clamp(-KEY_LIMIT, KEY_LIMIT),
        (y as f32).clamp(-KEY_LIMIT, KEY_LIMIT),
    ]
}

/// A zone's boxes. A zone whose boxes cannot be computed (coordinates that are not
/// numbers, which the net loader rejects) gets one box holding everything, so that its
/// exact test decides, as in a linear scan.
fn zone_boxes(space: Space, zone: &Zone) -> Vec<Rect<f64>> {
    let mut boxes = Vec::new();
    zone.boxes(space, &mut boxes);
    let nan = |r: &Rect<f64>| {
        let (lo, hi) = (r.min(), r.max());
        lo.x.is_nan() || lo.y.is_nan() || hi.x.is_nan() || hi.y.is_nan()
    };
    if boxes.iter().any(nan) {
        let inf = f64::INFINITY;
        boxes = vec![Rect::new(
            Point { x: -inf, y: -inf },
            Point { x: inf, y: inf },
        )];
    }
    boxes
}

impl ZoneIndex {
    /// An index of `zones` in `space`, bulk-loaded; a repeated id keeps the last zone.
    pub(crate) fn new(space: Space, zones: impl IntoIterator<Item = (usize, Zone)>) -> ZoneIndex {
        let mut index = ZoneIndex {
            space,
            tree: RTree::new_with_params(),
            slots: Vec::new(),
            free: Vec::new(),
            by_id: FxHashMap::default(),
        };
        for (id, zone) in zones {
            let boxes = zone_boxes(space, &zone);
            let slot = match index.by_id.get(&id) {
                Some(&slot) => slot,
                None => {
                    index.slots.push(None);
                    index.slots.len() - 1
                }
            };
            index.by_id.insert(id, slot);
            index.slots[slot] = Some(Slot::new(space, id, zone, boxes));
        }
        let leaves: Vec<Leaf> = index
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .flat_map(|(i, s)| s.boxes.iter().map(move |r| leaf(r, i)))
            .collect();
        index.tree = RTree::bulk_load_with_params(leaves);
        index
    }

    /// How many zones the index holds.
    #[cfg_attr(not(test), allow(dead_code))] // for tests and benches/zones.rs
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// The zone with id `id`.
    pub(crate) fn get(&self, id: usize) -> Option<&Zone> {
        let slot = *self.by_id.get(&id)?;
        self.slots.get(slot)?.as_ref().map(|s| &s.zone)
    }

    /// Adds `zone` under `id`, replacing (and returning) the zone that had that id.
    pub(crate) fn insert(&mut self, id: usize, zone: Zone) -> Option<Zone> {
        let old = self.remove(id);
        let boxes = zone_boxes(self.space, &zone);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        for r in &boxes {
            self.tree.insert(leaf(r, slot));
        }
        self.by_id.insert(id, slot);
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some(Slot::new(self.space, id, zone, boxes));
        }
        old
    }

    /// Removes the zone with id `id`, returning it.
    pub(crate) fn remove(&mut self, id: usize) -> Option<Zone> {
        let slot = self.by_id.remove(&id)?;
        let s = self.slots.get_mut(slot)?.take()?;
        for r in &s.boxes {
            self.tree.remove(&leaf(r, slot));
        }
        self.free.push(slot);
        Some(s.zone)
    }

    /// Replaces the zone with id `id` by `zone` (a moving zone re-centred), or adds it;
    /// returns the zone it replaces.
    pub(crate) fn update(&mut self, id: usize, zone: Zone) -> Option<Zone> {
        self.insert(id, zone)
    }

    /// Sets `out` to the ids of every zone that contains `p` (boundary included) in
    /// the index's space, sorted and without repeats. Only zones with a box holding `p`
    /// are tested exactly: O(log n + k) for n zones, k of whose boxes hold `p`.
    pub(crate) fn stab(&self, p: Point, out: &mut Vec<usize>) {
        let space = self.space;
        out.clear();
        if !valid_point(space, p) {
            return;
        }
        let mut probe = Probe::new(p);
        let mut visit = |x: f64| {
            let _ = self.tree.locate_all_at_point_int(&key(x, p.y), |leaf| {
                if let Some(Some(s)) = self.slots.get(leaf.slot as usize) {
                    if s.contains(space, &mut probe) {
                        out.push(s.id);
                    }
                }
                ControlFlow::<()>::Continue(())
            });
        };
        match space {
            Space::Planar => visit(p.x),
            // Strictly inside (-180, 180): the longitude is its only equivalent.
            Space::Wgs84 if p.x > -180.0 && p.x < 180.0 => visit(p.x),
            Space::Wgs84 => {
                for x in equivalent_lons(p.x) {
                    visit(x);
                }
            }
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// What [`stab`](ZoneIndex::stab) returns, by testing every zone: the reference the
    /// tree is checked and measured against.
    pub(crate) fn stab_linear(&self, p: Point, out: &mut Vec<usize>) {
        let space = self.space;
        out.clear();
        let mut probe = Probe::new(p);
        for s in self.slots.iter().flatten() {
            if s.contains(space, &mut probe) {
                out.push(s.id);
            }
        }
        out.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_rounding_is_outwards() {
        for x in [
            0.1,
            -0.1,
            1e-300,
            -1e-300,
            0.0,
            179.999_999_9,
            -180.0,
            1e30,
            -1e30,
            3.0,
        ] {
            assert!(f64::from(down(x)) <= x, "{x}");
            assert!(f64::from(up(x)) >= x, "{x}");
            assert!(down(x) <= x as f32 && x as f32 <= up(x), "{x}");
        }
        assert_eq!(down(3.0), 3.0);
        assert_eq!(up(f64::INFINITY), KEY_LIMIT);
        assert_eq!(down(-1e300), -KEY_LIMIT);
    }

    /// Huge and meaningless coordinates neither panic the tree nor lose a zone.
    #[test]
    fn extreme_coordinates() {
        let pt = |x: f64, y: f64| Point { x, y };
        let zone = |shape| Zone {
            name: "z".into(),
            shape,
        };
        let shapes = [
            Shape::Circle {
                center: pt(1e300, -1e300),
                radius: 1e300,
            },
            Shape::Circle {
                center: pt(f64::MAX, 0.0),
                radius: f64::MAX,
            },
            Shape::Rect(Rect::new(pt(-f64::MAX, -f64::MAX), pt(f64::MAX, f64::MAX))),
            Shape::Circle {
                center: pt(0.0, 0.0),
                radius: f64::NAN,
            },
            Shape::Sector {
                center: pt(f64::NAN, 0.0),
                radius: 1.0,
                from_deg: 0.0,
                to_deg: 1.0,
            },
            Shape::Rect(Rect::new(pt(1e38, 1e38), pt(1e39, 1e39))),
            Shape::Circle {
                center: pt(0.0, 0.0),
                radius: 1.0,
            },
        ];
        for space in [Space::Planar, Space::Wgs84] {
            let mut index = ZoneIndex::new(space, shapes.iter().cloned().map(zone).enumerate());
            for (i, s) in shapes.iter().enumerate() {
                index.update(i, zone(s.clone()));
                index.insert(i + 100, zone(s.clone()));
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for p in [
                pt(0.0, 0.0),
                pt(1e300, -1e300),
                pt(5e38, 5e38),
                pt(-f64::MAX, f64::MAX),
                pt(f64::NAN, 1.0),
                pt(1e37, 1e37),
            ] {
                index.stab(p, &mut a);
                index.stab_linear(p, &mut b);
                assert_eq!(a, b, "{space:?} {p:?}");
            }
            for i in 0..shapes.len() {
                assert!(index.remove(i).is_some());
            }
            assert_eq!(index.len(), shapes.len());
        }
    }
}
