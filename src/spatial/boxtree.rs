//! Zone boxes in `f32`, and the R*-tree of them: the filter the zone index stabs before
//! testing a zone's exact shape.
//!
//! Boxes are kept in `f32`, rounded outwards, and points are looked up rounded to the
//! nearest `f32`: rounding is monotonic, so a point inside a box stays inside the
//! rounded box (never a miss), and a box takes half the memory, which is what a stab
//! among many zones waits on. The grid ([`super::grid`]) keeps its boxes the same way.
//!
//! The tree is the spatial index of "An Indexing Method of Continuous Spatiotemporal
//! Queries for Stream Data Processing Rules of Detected Target Objects" (seed 002): its
//! Algorithm 1 (rule insertion) adds each spatial condition's minimum bounding
//! rectangle to an R*-tree, and its Algorithm 2 (event stabbing) walks the tree with
//! the event's location. Algorithm 2 descends into the *first* child whose box holds
//! the point, but R*-tree siblings overlap, so [`BoxTree::stab`] descends into *every*
//! such child (rstar's `locate_all_at_point`), for the answer to equal a scan of every
//! zone.

use std::ops::ControlFlow;

use geo_types::Rect;
use rstar::{
    Envelope, PointDistance, RStarInsertionStrategy, RTree, RTreeObject, RTreeParams, AABB,
};

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

/// Coordinates are clamped to ±this: rstar sorts boxes by their corners and centres
/// with `partial_cmp(..).unwrap()`, so every corner, width and centre must be a finite
/// `f32`. Clamping boxes and looked-up points alike keeps every point in the boxes
/// that hold it (clamping is monotonic).
pub(super) const KEY_LIMIT: f32 = 1e37;

/// The largest `f32` at most `x`, within ±[`KEY_LIMIT`].
pub(super) fn down(x: f64) -> f32 {
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
pub(super) fn up(x: f64) -> f32 {
    -down(-x)
}

/// A point as boxes are looked up at (rounded to the nearest `f32`, clamped).
pub(super) fn key(x: f64, y: f64) -> [f32; 2] {
    [
        (x as f32).clamp(-KEY_LIMIT, KEY_LIMIT),
        (y as f32).clamp(-KEY_LIMIT, KEY_LIMIT),
    ]
}

/// A box in `f32`, rounded outwards: `[min x, min y, max x, max y]`.
pub(super) fn rounded(r: &Rect<f64>) -> [f32; 4] {
    [
        down(r.min().x),
        down(r.min().y),
        up(r.max().x),
        up(r.max().y),
    ]
}

/// A slot number as boxes keep it (an index holds fewer than 2³² zones; past that the
/// number names none, and the zone is never found).
pub(crate) fn slot_u32(slot: usize) -> u32 {
    u32::try_from(slot).unwrap_or(u32::MAX)
}

/// One box of one zone in the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Leaf {
    env: AABB<[f32; 2]>,
    /// The zone's slot in the index.
    slot: u32,
}

impl Leaf {
    fn new(r: &Rect<f64>, slot: u32) -> Leaf {
        let [x0, y0, x1, y1] = rounded(r);
        Leaf {
            env: AABB::from_corners([x0, y0], [x1, y1]),
            slot,
        }
    }
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

/// An R*-tree of zone boxes, each under its zone's slot.
#[derive(Clone, Debug, Default)]
pub(super) struct BoxTree(RTree<Leaf, StabParams>);

impl BoxTree {
    /// A tree of `boxes`, bulk-loaded.
    pub(super) fn new<'a>(boxes: impl IntoIterator<Item = (&'a Rect<f64>, u32)>) -> BoxTree {
        let leaves = boxes.into_iter().map(|(r, s)| Leaf::new(r, s)).collect();
        BoxTree(RTree::bulk_load_with_params(leaves))
    }

    /// How many boxes the tree holds.
    pub(super) fn len(&self) -> usize {
        self.0.size()
    }

    pub(super) fn insert(&mut self, r: &Rect<f64>, slot: u32) {
        self.0.insert(Leaf::new(r, slot));
    }

    pub(super) fn remove(&mut self, r: &Rect<f64>, slot: u32) {
        self.0.remove(&Leaf::new(r, slot));
    }

    /// Calls `hit` with the slot of every box holding `key` (a point as [`key`] gives).
    #[inline]
    pub(super) fn stab(&self, key: &[f32; 2], mut hit: impl FnMut(u32)) {
        let _ = self.0.locate_all_at_point_int(key, |leaf| {
            hit(leaf.slot);
            ControlFlow::<()>::Continue(())
        });
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
}
