//! The zone index: which zones contain a point, found by stabbing the zones' bounding
//! boxes (in a uniform grid, [`super::grid`], or an R*-tree, [`super::boxtree`]) and
//! testing the exact shape only on the boxes hit ([`Zone::contains`]): a box is only a
//! filter, so the answer equals a scan of every zone. A zone may own several boxes
//! (one on each side of the antimeridian, one per segment of a widened line on WGS84).
//!
//! The boxes are held in a [`BoxIndex`] (a grid, or an R*-tree for sizes too uneven
//! for one cell size). Zones can be inserted, removed and replaced in place, so a
//! zone that moves with a tracked object is re-centred with [`ZoneIndex::update`] at
//! the cost of one removal and one insertion: O(cells covered) in the grid, O(log n)
//! in the tree. The boxes are laid out again when [`BoxIndex::worn`] says so.

use geo_types::Rect;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::bounds::equivalent_lons;
use super::boxes::{BoxIndex, IndexKind};
use super::boxtree::slot_u32;
use super::metric::SpherePoint;
use super::zone::{valid_point, Probe, Zone};
use crate::event::{Point, Space};
use crate::hint::prefetch;

/// A zone held by the index, under the caller's id. Its boxes are not kept: they are
/// computed again from the zone when it leaves the index (a net may hold a hundred
/// thousand zones, and a slot is fetched for each box a stab hits).
#[derive(Clone, Debug)]
struct Slot {
    id: usize,
    zone: Zone,
}

/// A zone's boxes.
type ZoneBoxes = SmallVec<[Rect<f64>; 1]>;

/// A set of zones, each under a caller's id (such as `model::ZoneId`), indexed for
/// stabbing: [`stab`](ZoneIndex::stab) returns every zone that contains a point.
#[derive(Clone)]
pub(crate) struct ZoneIndex {
    space: Space,
    boxes: BoxIndex,
    slots: Vec<Option<Slot>>,
    /// On WGS84, the trigonometry of each slot's zone centre (for its distance tests),
    /// beside `slots`; empty on the plane.
    centres: Vec<Option<SpherePoint>>,
    free: Vec<usize>,
    by_id: FxHashMap<usize, usize>,
}

impl std::fmt::Debug for ZoneIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoneIndex")
            .field("space", &self.space)
            .field("zones", &self.by_id.len())
            .field("boxes", &self.boxes.len())
            .field("grid", &self.boxes.is_grid())
            .finish()
    }
}

/// A zone's boxes. A zone whose boxes cannot be computed (coordinates that are not
/// numbers, which the net loader rejects) gets one box holding everything, so that its
/// exact test decides, as in a linear scan.
fn zone_boxes(space: Space, zone: &Zone) -> ZoneBoxes {
    let mut boxes = Vec::new();
    zone_boxes_into(space, zone, &mut boxes);
    SmallVec::from_slice(&boxes)
}

/// [`zone_boxes`] in `boxes`, which is cleared first: one vector for many zones.
fn zone_boxes_into(space: Space, zone: &Zone, boxes: &mut Vec<Rect<f64>>) {
    boxes.clear();
    zone.boxes(space, boxes);
    let nan = |r: &Rect<f64>| {
        let (lo, hi) = (r.min(), r.max());
        lo.x.is_nan() || lo.y.is_nan() || hi.x.is_nan() || hi.y.is_nan()
    };
    if boxes.iter().any(nan) {
        let inf = f64::INFINITY;
        boxes.clear();
        boxes.push(Rect::new(
            Point { x: -inf, y: -inf },
            Point { x: inf, y: inf },
        ));
    }
}

impl ZoneIndex {
    /// An index of `zones` in `space`, bulk-loaded; a repeated id keeps the last zone.
    pub(crate) fn new(space: Space, zones: impl IntoIterator<Item = (usize, Zone)>) -> ZoneIndex {
        ZoneIndex::with_kind(space, zones, IndexKind::Auto)
    }

    /// [`new`](ZoneIndex::new), the boxes held as `kind` says.
    pub(crate) fn with_kind(
        space: Space,
        zones: impl IntoIterator<Item = (usize, Zone)>,
        kind: IndexKind,
    ) -> ZoneIndex {
        let mut index = ZoneIndex {
            space,
            boxes: BoxIndex::new(&[], kind),
            slots: Vec::new(),
            centres: Vec::new(),
            free: Vec::new(),
            by_id: FxHashMap::default(),
        };
        let zones = zones.into_iter();
        // (Reserved: a list of many zones is not copied from one doubling to the next.)
        index.slots.reserve(zones.size_hint().0);
        index.by_id.reserve(zones.size_hint().0);
        for (id, zone) in zones {
            let slot = match index.by_id.get(&id) {
                Some(&slot) => slot,
                None => {
                    index.slots.push(None);
                    index.slots.len() - 1
                }
            };
            index.by_id.insert(id, slot);
            index.fill(slot, id, zone);
        }
        index.lay_out();
        index
    }

    /// Lays every zone's boxes out again, in the grid or the tree (as the index's kind
    /// and the grid's rule say).
    fn lay_out(&mut self) {
        // Room for a box a zone at once, and one vector for each zone's boxes: a
        // hundred thousand zones allocate nothing each.
        let mut boxes: Vec<(Rect<f64>, u32)> = Vec::with_capacity(self.slots.len());
        let mut one = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(s) = s {
                zone_boxes_into(self.space, &s.zone, &mut one);
                boxes.extend(one.iter().map(|&r| (r, slot_u32(i))));
            }
        }
        self.boxes.lay_out(&boxes);
    }

    /// Is the index a grid (else an R*-tree)?
    pub(crate) fn is_grid(&self) -> bool {
        self.boxes.is_grid()
    }

    /// Is it a grid that reads its masks?
    #[cfg(test)]
    pub(crate) fn is_sparse_grid(&self) -> bool {
        self.boxes.is_sparse_grid()
    }

    /// How many zones the index holds.
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// The zone with id `id`.
    pub(crate) fn get(&self, id: usize) -> Option<&Zone> {
        let slot = *self.by_id.get(&id)?;
        self.slots.get(slot)?.as_ref().map(|s| &s.zone)
    }

    /// Adds `zone` under `id`, replacing (and returning) the zone that had that id.
    ///
    /// The boxes are laid out again (O(n)) when their number has doubled or halved
    /// since they last were, or when more than half of them went where the grid holds
    /// them badly (large, or past its extent): at most once every n / 2 insertions.
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
            self.boxes.insert(r, slot_u32(slot));
        }
        self.by_id.insert(id, slot);
        self.fill(slot, id, zone);
        if self.boxes.worn() {
            self.lay_out();
        }
        old
    }

    /// Removes the zone with id `id`, returning it.
    pub(crate) fn remove(&mut self, id: usize) -> Option<Zone> {
        let slot = self.by_id.remove(&id)?;
        let s = self.slots.get_mut(slot)?.take()?;
        if let Some(c) = self.centres.get_mut(slot) {
            *c = None;
        }
        // The boxes it was inserted with: the same function of the same zone.
        let boxes = zone_boxes(self.space, &s.zone);
        for r in &boxes {
            self.boxes.remove(r, slot_u32(slot));
        }
        self.free.push(slot);
        if self.boxes.worn() {
            self.lay_out();
        }
        Some(s.zone)
    }

    /// Puts zone `zone` under `id` in slot `slot` (which exists), with its centre's
    /// trigonometry on WGS84.
    fn fill(&mut self, slot: usize, id: usize, zone: Zone) {
        match zone.centre(self.space) {
            Some(centre) => {
                if self.centres.len() <= slot {
                    self.centres.resize(slot + 1, None);
                }
                self.centres[slot] = Some(centre);
            }
            // (A repeated id may put a zone without one where one with one was.)
            None => {
                if let Some(c) = self.centres.get_mut(slot) {
                    *c = None;
                }
            }
        }
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some(Slot { id, zone });
        }
    }

    /// Does the zone in `slot` contain the probe's point?
    #[inline]
    fn contains(&self, slot: usize, s: &Slot, probe: &mut Probe) -> bool {
        let centre = self.centres.get(slot).and_then(Option::as_ref);
        s.zone.contains_probe(self.space, probe, centre)
    }

    /// Replaces the zone with id `id` by `zone` (a moving zone re-centred), or adds it;
    /// returns the zone it replaces. O(log n) in the tree, O(cells covered) in the grid.
    pub(crate) fn update(&mut self, id: usize, zone: Zone) -> Option<Zone> {
        self.insert(id, zone)
    }

    /// Brings what a [`stab`](ZoneIndex::stab) at `p` reads first into cache (the
    /// grid's cell), for a caller that knows the points to come: their cells are then
    /// fetched from memory together, not one stab after the other. A hint: no result
    /// changes.
    #[inline]
    pub(crate) fn prefetch(&self, p: Point) {
        if self.one_x(p) {
            self.boxes.prefetch(p);
        }
    }

    /// Is `p` stabbed at its own x alone? On the plane, and on WGS84 strictly inside
    /// (-180, 180), where the longitude is its only equivalent; else at each of
    /// [`equivalent_lons`].
    #[inline]
    fn one_x(&self, p: Point) -> bool {
        self.space == Space::Planar || (p.x > -180.0 && p.x < 180.0)
    }

    /// Sets `out` to the ids of every zone that contains `p` (boundary included) in
    /// the index's space, sorted and without repeats. Only zones with a box holding `p`
    /// are tested exactly: O(k) in the grid for k boxes listed in `p`'s cell, O(log n +
    /// k) in the tree.
    pub(crate) fn stab(&self, p: Point, out: &mut Vec<usize>) {
        let space = self.space;
        out.clear();
        if !valid_point(space, p) {
            return;
        }
        // The boxes hit first, then their zones' exact tests: the zones are fetched
        // from memory together (prefetched), not one after the other.
        let mut hits: SmallVec<[u32; 16]> = SmallVec::new();
        let mut visit = |x: f64| {
            self.boxes
                .stab(Point { x, y: p.y }, |slot: u32| hits.push(slot));
        };
        if self.one_x(p) {
            visit(p.x);
        } else {
            for x in equivalent_lons(p.x) {
                visit(x);
            }
        }
        for &slot in &hits {
            if let Some(s) = self.slots.get(slot as usize) {
                let at: *const u8 = (s as *const Option<Slot>).cast();
                prefetch(at);
                prefetch(at.wrapping_add(64));
            }
            if let Some(c) = self.centres.get(slot as usize) {
                prefetch((c as *const Option<SpherePoint>).cast::<u8>());
            }
        }
        let mut probe = Probe::new(p);
        for slot in hits {
            if let Some(Some(s)) = self.slots.get(slot as usize) {
                if self.contains(slot as usize, s, &mut probe) {
                    out.push(s.id);
                }
            }
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// What [`stab`](ZoneIndex::stab) returns, by testing every zone: the reference the
    /// index is checked and measured against.
    pub(crate) fn stab_linear(&self, p: Point, out: &mut Vec<usize>) {
        out.clear();
        let mut probe = Probe::new(p);
        for (slot, s) in self.slots.iter().enumerate() {
            if let Some(s) = s {
                if self.contains(slot, s, &mut probe) {
                    out.push(s.id);
                }
            }
        }
        out.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::super::zone::Shape;
    use super::*;

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
        let kinds = [IndexKind::Auto, IndexKind::Tree, IndexKind::Grid];
        for (space, kind) in [Space::Planar, Space::Wgs84]
            .into_iter()
            .flat_map(|s| kinds.map(|k| (s, k)))
        {
            let zones = shapes.iter().cloned().map(zone).enumerate();
            let mut index = ZoneIndex::with_kind(space, zones, kind);
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
                assert_eq!(a, b, "{space:?} {kind:?} {p:?}");
            }
            for i in 0..shapes.len() {
                assert!(index.remove(i).is_some());
            }
            assert_eq!(index.len(), shapes.len());
        }
    }
}
