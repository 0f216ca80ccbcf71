//! The index of live points that finds a new point's candidate neighbours: a hashed
//! grid (the default) or an R*-tree, both over the embeddings of `metric`.
//!
//! **Why the grid.** Points arrive and leave in time order, one insertion and one
//! removal per event, and a query covers a fixed radius. The grid hashes each point
//! into a cell of side three times the largest rule's reach; a cell is a queue of its points
//! (id and embedding) in arrival order, kept in one slice, so adding appends at the back
//! and expiry steps past the front (dropping the dead front when the storage is full)
//! — no allocation per event (emptied cells' storage is reused), no rebalancing — and
//! a query filters each cell's points by distance in one pass over one slice (1–5 %
//! faster through the detector than over a `VecDeque`'s two slices). It
//! visits one or two cells per axis (three dimensions for WGS84). The R*-tree (`rstar`)
//! pays a descent on every insertion, a search on every removal, and rebalancing. On the
//! `count` benches (one rule, n = 3, 1,000 live points, uniform), the whole index ran at
//! 1.15 M events/s with the grid against 0.46 M with the tree (planar, 5 neighbours),
//! 0.93 M against 0.42 M (WGS84, 5 neighbours), and 180 k against 138 k (planar, 20
//! neighbours, where the matches dominate). Cells of one reach (a query visits 3 × 3
//! cells) ran 10–20% slower; two, three and four reaches were within noise, three
//! slightly ahead on WGS84 (fewer hash lookups in 3-D). The tree stays as an alternative (`Lookup::Tree`) that
//! the tests check against the grid and the reference.
//!
//! WGS84 points are embedded on a sphere in 3-D, so the grid is Cartesian in metres and
//! has no seam at the antimeridian and no singularity at the poles. The sphere crosses
//! the cubes obliquely, and of the 4.6 cubes a query spans on average some lie wholly
//! inside or outside it: a query does not look those up (it measured 8–12 % faster
//! through the detector, for all it adds in arithmetic).

use rstar::primitives::GeomWithData;
use rstar::RTree;
use rustc_hash::FxHashMap;

use super::metric::{self, Embedded};

/// Which index of live points finds neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A hashed grid of cells three reaches wide (the default: fastest on the benches).
    #[default]
    Grid,
    /// An R*-tree (`rstar`), queried with the reach's bounding box.
    #[cfg_attr(not(test), allow(dead_code))] // compared with the grid in tests and benches
    Tree,
}

/// Cells per axis a query may span before the grid gives up and scans every point
/// (only for coordinates so large that the reach is below their rounding).
const MAX_SPAN: i64 = 4;
/// Cell side over reach: with 3, a query spans one or two cells per axis.
const CELL_OVER_REACH: f64 = 3.0;
/// Emptied cells' storage kept for reuse, so that cells come and go without allocating.
const SPARE_CELLS: usize = 256;

/// The live points' index.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum Neighbours {
    /// A hashed grid.
    Grid(Grid),
    /// An R*-tree in two dimensions (planar).
    Tree2(RTree<GeomWithData<[f64; 2], u64>>),
    /// An R*-tree in three dimensions (WGS84 embeddings).
    Tree3(RTree<GeomWithData<[f64; 3], u64>>),
}

impl Neighbours {
    /// An empty index; `dims` is 2 (planar) or 3 (WGS84), and queries cover `reach`.
    pub(super) fn new(lookup: Lookup, dims: usize, reach: f64) -> Neighbours {
        match lookup {
            Lookup::Grid => Neighbours::Grid(Grid::new(dims, reach)),
            Lookup::Tree if dims == 2 => Neighbours::Tree2(RTree::new()),
            Lookup::Tree => Neighbours::Tree3(RTree::new()),
        }
    }

    /// Adds point `id` (ids increase from call to call).
    pub(super) fn insert(&mut self, id: u64, at: &Embedded) {
        match self {
            Neighbours::Grid(g) => g.insert(id, at),
            Neighbours::Tree2(t) => t.insert(GeomWithData::new([at[0], at[1]], id)),
            Neighbours::Tree3(t) => t.insert(GeomWithData::new(*at, id)),
        }
    }

    /// Removes point `id` at `at`, which must be the oldest point in the index.
    pub(super) fn remove_oldest(&mut self, id: u64, at: &Embedded) {
        match self {
            Neighbours::Grid(g) => g.remove_oldest(id, at),
            Neighbours::Tree2(t) => {
                t.remove(&GeomWithData::new([at[0], at[1]], id));
            }
            Neighbours::Tree3(t) => {
                t.remove(&GeomWithData::new(*at, id));
            }
        }
    }

    /// Appends to `out`, in no particular order, the ids of the points whose squared
    /// embedded distance to `at` is at most `reach_squared` (the square of the reach
    /// the index was made with, or less).
    pub(super) fn query(&self, at: &Embedded, reach_squared: f64, out: &mut Vec<u64>) {
        match self {
            Neighbours::Grid(g) => g.query(at, reach_squared, out),
            Neighbours::Tree2(t) => out.extend(
                t.locate_within_distance([at[0], at[1]], reach_squared)
                    .map(|g| g.data),
            ),
            Neighbours::Tree3(t) => {
                out.extend(t.locate_within_distance(*at, reach_squared).map(|g| g.data))
            }
        }
    }
}

/// A bound below every coordinate within `reach` of `v`, despite rounding.
fn margin_lo(v: f64, reach: f64) -> f64 {
    v - reach * (1.0 + 1e-9) - v.abs() * 1e-15
}

/// A bound above every coordinate within `reach` of `v`, despite rounding.
fn margin_hi(v: f64, reach: f64) -> f64 {
    v + reach * (1.0 + 1e-9) + v.abs() * 1e-15
}

/// The key a cell is filed under: its indexes' low 21 bits, side by side (one word to
/// hash and compare rather than three). Cells 2²¹ apart on an axis share a key, and so
/// a queue; that is harmless: a query filters what it reads by distance and spans at
/// most [`MAX_SPAN`] cells per axis, so it never reads a queue twice; and a queue still
/// holds its points in arrival order, so the oldest point is still at the front of its
/// queue.
fn pack(k: [i64; 3]) -> u64 {
    const LOW: u64 = (1 << 21) - 1;
    (k[0] as u64 & LOW) | (k[1] as u64 & LOW) << 21 | (k[2] as u64 & LOW) << 42
}

/// A hashed grid of cells, each holding its points (id, embedding) in arrival order.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Grid {
    /// 2 or 3.
    dims: usize,
    /// Cell side; `None` puts every point in one cell (degenerate reach).
    side: Option<f64>,
    /// The reach queries must cover.
    reach: f64,
    /// By packed cell key (see [`pack`]).
    cells: FxHashMap<u64, Cell>,
    #[serde(skip)]
    spare: Vec<Cell>,
}

/// One cell's points (id, embedding) in arrival order: a queue kept in one slice, so
/// that a query reads it in one pass. A leaving point is skipped by moving `head`;
/// the dead front is dropped when the storage is full and at least an eighth of it is
/// dead (otherwise the storage grows by a quarter). So compacting moves at most seven
/// points per point that left, and the storage stays within twice the most points
/// the cell has held, as a `VecDeque`'s would.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Cell {
    head: usize,
    points: Vec<(u64, Embedded)>,
}

impl Cell {
    /// The points, oldest first.
    fn live(&self) -> &[(u64, Embedded)] {
        &self.points[self.head..]
    }

    fn push(&mut self, id: u64, at: Embedded) {
        let len = self.points.len();
        if len == self.points.capacity() && self.head > 0 {
            if self.head * 8 >= len {
                self.points.drain(..self.head);
                self.head = 0;
            } else {
                self.points.reserve_exact(len / 4 + 1);
            }
        }
        self.points.push((id, at));
    }

    /// Removes point `id` (the oldest, unless misused).
    fn remove(&mut self, id: u64) {
        match self.live().iter().position(|&(q, _)| q == id) {
            Some(0) => self.head += 1,
            Some(i) => {
                self.points.remove(self.head + i);
            }
            None => {}
        }
        if self.head == self.points.len() {
            self.head = 0;
            self.points.clear();
        }
    }

    fn is_empty(&self) -> bool {
        self.head == self.points.len()
    }
}

impl Grid {
    fn new(dims: usize, reach: f64) -> Grid {
        let side = reach * CELL_OVER_REACH;
        Grid {
            dims,
            side: (side.is_normal() && side > 0.0).then_some(side),
            reach,
            cells: FxHashMap::default(),
            spare: Vec::new(),
        }
    }

    fn cell_of(&self, v: f64) -> i64 {
        match self.side {
            // Saturating: huge coordinates share the extreme cells, which stays correct.
            Some(s) => crate::spatial::floor_to_i64(v / s),
            None => 0,
        }
    }

    /// The indexes of the cell holding `at`.
    fn cell(&self, at: &Embedded) -> [i64; 3] {
        let mut k = [0; 3];
        for (i, slot) in k.iter_mut().enumerate().take(self.dims) {
            *slot = self.cell_of(at[i]);
        }
        k
    }

    fn key(&self, at: &Embedded) -> u64 {
        pack(self.cell(at))
    }

    fn insert(&mut self, id: u64, at: &Embedded) {
        let key = self.key(at);
        let spare = &mut self.spare;
        self.cells
            .entry(key)
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push(id, *at);
    }

    fn remove_oldest(&mut self, id: u64, at: &Embedded) {
        let key = self.key(at);
        let Some(cell) = self.cells.get_mut(&key) else {
            return;
        };
        cell.remove(id);
        if cell.is_empty() {
            if let Some(cell) = self.cells.remove(&key) {
                if self.spare.len() < SPARE_CELLS {
                    self.spare.push(cell);
                }
            }
        }
    }

    fn query(&self, at: &Embedded, reach_squared: f64, out: &mut Vec<u64>) {
        let near = |cell: &Cell, out: &mut Vec<u64>| {
            out.extend(
                cell.live()
                    .iter()
                    .filter(|(_, p)| metric::squared(p, at) <= reach_squared)
                    .map(|&(q, _)| q),
            );
        };
        let mut lo = [0i64; 3];
        let mut hi = [0i64; 3];
        for i in 0..self.dims {
            lo[i] = self.cell_of(margin_lo(at[i], self.reach));
            hi[i] = self.cell_of(margin_hi(at[i], self.reach));
            if hi[i].saturating_sub(lo[i]) >= MAX_SPAN {
                // Coordinates too large for the cell size: scan every point.
                for cell in self.cells.values() {
                    near(cell, out);
                }
                return;
            }
        }
        for x in lo[0]..=hi[0] {
            for y in lo[1]..=hi[1] {
                for z in lo[2]..=hi[2] {
                    if self.dims == 3 && !self.meets_sphere([x, y, z]) {
                        continue;
                    }
                    if let Some(cell) = self.cells.get(&pack([x, y, z])) {
                        near(cell, out);
                    }
                }
            }
        }
    }

    /// Whether cube `key` may hold a point of the sphere on which WGS84 points are
    /// embedded (cubes it misses are always empty: no need to look them up).
    fn meets_sphere(&self, key: [i64; 3]) -> bool {
        let Some(side) = self.side else { return true };
        let (mut near, mut far) = (0.0, 0.0);
        for k in key {
            let (lo, hi) = (k as f64 * side, (k as f64 + 1.0) * side);
            let closest = if lo > 0.0 {
                lo
            } else if hi < 0.0 {
                hi
            } else {
                0.0
            };
            near += closest * closest;
            far += lo.abs().max(hi.abs()).powi(2);
        }
        // A metre of slack for rounding, far above it.
        let (inner, outer) = (metric::EARTH_R - 1.0, metric::EARTH_R + 1.0);
        near <= outer * outer && far >= inner * inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(points: &[(u64, Embedded)], at: &Embedded, reach: f64) -> Vec<u64> {
        points
            .iter()
            .filter(|(_, p)| super::super::metric::squared(p, at) <= reach * reach)
            .map(|(id, _)| *id)
            .collect()
    }

    /// A seeded generator of numbers uniform in [0, 1).
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn a_cell_is_a_queue_in_arrival_order() {
        let at = [0.0; 3];
        let ids = |c: &Cell| c.live().iter().map(|p| p.0).collect::<Vec<_>>();
        let mut c = Cell::default();
        for id in 0..8 {
            c.push(id, at);
        }
        let capacity = c.points.capacity();
        // Oldest first: skipped until the storage is full, then dropped.
        for id in 0..4 {
            c.remove(id);
        }
        for id in 8..8 + (capacity as u64 - 8) {
            c.push(id, at);
        }
        assert_eq!(c.head, 4);
        assert_eq!(c.points.capacity(), capacity);
        c.push(100, at);
        assert_eq!(c.head, 0, "full with dead points: compacted, not grown");
        assert_eq!(c.points.capacity(), capacity);
        let want: Vec<u64> = (4..capacity as u64).chain([100]).collect();
        assert_eq!(ids(&c), want);
        // Out of order (misuse): found and removed all the same.
        c.remove(5);
        c.remove(4);
        assert_eq!(ids(&c)[..2], [6, 7]);
        for id in want.iter().filter(|&&id| id > 5) {
            c.remove(*id);
        }
        assert!(c.is_empty());
        assert_eq!((c.head, c.points.len()), (0, 0));
    }

    #[test]
    fn a_steady_cell_stays_within_its_storage() {
        // As many points arrive as leave: the storage stops growing.
        let at = [0.0; 3];
        let mut c = Cell::default();
        for id in 0..1000 {
            c.push(id, at);
        }
        let before = c.points.capacity();
        for id in 1000..100_000 {
            c.push(id, at);
            c.remove(id - 1000);
        }
        assert!(
            c.points.capacity() <= before * 3 / 2,
            "{before} -> {}",
            c.points.capacity()
        );
        assert_eq!(c.live().len(), 1000);
        assert_eq!(c.live()[0].0, 99_000);
    }

    #[test]
    fn cells_sharing_a_key_share_a_queue_harmlessly() {
        // Cells 2²¹ apart on an axis are filed under one key.
        let reach = 1.0;
        let far = CELL_OVER_REACH * reach * (1u64 << 21) as f64;
        let mut n = Neighbours::new(Lookup::Grid, 2, reach);
        let points = [
            (0, [0.5, 0.5, 0.0]),
            (1, [0.5 + far, 0.5, 0.0]),
            (2, [0.7, 0.4, 0.0]),
            (3, [0.6 + far, 0.6, 0.0]),
        ];
        for (id, at) in &points {
            n.insert(*id, at);
        }
        let query = |n: &Neighbours, at: &Embedded| {
            let mut got = Vec::new();
            n.query(at, reach * reach, &mut got);
            got.sort_unstable();
            got
        };
        assert_eq!(query(&n, &[0.6, 0.5, 0.0]), [0, 2]);
        assert_eq!(query(&n, &[0.6 + far, 0.5, 0.0]), [1, 3]);
        // Oldest first, whichever cell of the queue it lies in.
        for (id, at) in &points[..2] {
            n.remove_oldest(*id, at);
        }
        assert_eq!(query(&n, &[0.6, 0.5, 0.0]), [2]);
        assert_eq!(query(&n, &[0.6 + far, 0.5, 0.0]), [3]);
    }

    #[test]
    fn grid_and_tree_cover_the_reach() {
        for lookup in [Lookup::Grid, Lookup::Tree] {
            let reach = 1.5;
            let mut n = Neighbours::new(lookup, 2, reach);
            let mut live: Vec<(u64, Embedded)> = Vec::new();
            let mut rnd = uniform(17);
            for id in 0..400u64 {
                let at = [rnd() * 20.0 - 10.0, rnd() * 20.0 - 10.0, 0.0];
                let mut got = Vec::new();
                n.query(&at, reach * reach, &mut got);
                got.sort_unstable();
                for want in brute(&live, &at, reach) {
                    assert!(got.binary_search(&want).is_ok(), "{lookup:?} {id} {want}");
                }
                n.insert(id, &at);
                live.push((id, at));
                if live.len() > 60 {
                    let (old, p) = live.remove(0);
                    n.remove_oldest(old, &p);
                }
            }
        }
    }

    /// Around the poles, the antimeridian and the diagonals of the embedding's axes, at
    /// reaches from metres to thousands of kilometres, the sphere's grid finds exactly
    /// the points within the reach, each once.
    #[test]
    fn sphere_grid_finds_every_point_in_reach_once() {
        use crate::event::{Point, Space};
        let mut rnd = uniform(5);
        // (lon, lat): where two or three coordinates have equal magnitudes, both
        // poles, the antimeridian, and an ordinary place.
        let centres = [
            (45.0, 0.0),
            (-135.0, 0.0),
            (0.0, 45.0),
            (180.0, -45.0),
            (45.0, 35.264_389_682_754_654),
            (-135.0, -35.264_389_682_754_654),
            (10.0, 90.0),
            (0.0, -89.99),
            (180.0, 12.0),
            (10.5, 50.5),
        ];
        for &(lon, lat) in &centres {
            for reach in [10.0f64, 5_000.0, 500_000.0, 5_000_000.0] {
                let spread = (2.0 * reach / 111_000.0).min(60.0);
                let points: Vec<(u64, Embedded)> = (0..300u64)
                    .map(|id| {
                        let y = (lat + (rnd() - 0.5) * 2.0 * spread).clamp(-90.0, 90.0);
                        let x = lon + (rnd() - 0.5) * 2.0 * spread;
                        (id, metric::embed(Space::Wgs84, Point { x, y }))
                    })
                    .collect();
                let mut n = Neighbours::new(Lookup::Grid, 3, reach);
                for (id, at) in &points {
                    n.insert(*id, at);
                }
                for (id, at) in &points {
                    let mut got = Vec::new();
                    n.query(at, reach * reach, &mut got);
                    got.sort_unstable();
                    let want = brute(&points, at, reach);
                    assert_eq!(got, want, "({lon}, {lat}) reach {reach}, point {id}");
                }
                for (id, at) in &points {
                    n.remove_oldest(*id, at);
                }
                let mut got = Vec::new();
                n.query(&points[0].1, f64::INFINITY, &mut got);
                assert!(got.is_empty());
            }
        }
    }

    /// The cube holding a point of the sphere is never skipped, at cell sizes from
    /// centimetres to hundreds of kilometres, near the planes of the axes too; cubes
    /// far from the sphere are.
    #[test]
    fn cubes_holding_points_meet_the_sphere() {
        use crate::event::{Point, Space};
        let mut rnd = uniform(11);
        for reach in [0.1f64, 10.0, 5_000.0, 300_000.0] {
            let Neighbours::Grid(grid) = Neighbours::new(Lookup::Grid, 3, reach) else {
                unreachable!("a grid was asked for")
            };
            for i in 0..20_000 {
                // Every fourth point on a plane of the axes (a meridian of 0°, 90° or
                // 180°, or the equator), where cubes straddle a coordinate's zero.
                let x = match i % 8 {
                    0 => 0.0,
                    1 => 90.0,
                    _ => rnd() * 360.0 - 180.0,
                };
                let y = if i % 8 == 2 {
                    0.0
                } else {
                    rnd() * 180.0 - 90.0
                };
                let at = metric::embed(Space::Wgs84, Point { x, y });
                assert!(grid.meets_sphere(grid.cell(&at)), "{reach} ({x}, {y})");
            }
            assert!(!grid.meets_sphere([0, 0, 0]), "{reach}");
        }
    }

    #[test]
    fn degenerate_reach_is_one_cell() {
        for reach in [0.0, f64::INFINITY, f64::MIN_POSITIVE / 4.0] {
            let mut n = Neighbours::new(Lookup::Grid, 2, reach);
            n.insert(0, &[1e300, -1e300, 0.0]);
            n.insert(1, &[0.0, 0.0, 0.0]);
            let mut got = Vec::new();
            n.query(&[0.0, 0.0, 0.0], f64::INFINITY, &mut got);
            assert!(got.contains(&1), "{reach}");
            n.remove_oldest(0, &[1e300, -1e300, 0.0]);
            n.remove_oldest(1, &[0.0, 0.0, 0.0]);
        }
    }
}
