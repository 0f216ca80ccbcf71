//! Property tests of the zone index's two structures: on random zones of mixed sizes
//! (tiny, huge, points, far away, rectangles on a lattice so that their edges fall on
//! cell borders), planar and WGS84 (across the antimeridian, around the poles), the
//! grid, the R*-tree and the index's own choice each answer exactly what a scan of
//! every zone answers, on random points, on the zones' boundaries and on their boxes'
//! corners, also while zones are inserted, removed and moved (far too, past the
//! grid's extent, which lays the boxes out again).

use std::collections::BTreeMap;

use geo_types::Rect;
use proptest::prelude::*;

use super::tests::{
    geo_pt, geo_shape, moved, ops, planar_pt, planar_shape, probe_points, pt, zone, Op,
};
use super::{IndexKind, Shape, Zone, ZoneIndex};
use crate::event::{Point, Space};

const KINDS: [IndexKind; 3] = [IndexKind::Auto, IndexKind::Tree, IndexKind::Grid];

fn circle((center, radius): (Point, f64)) -> Shape {
    Shape::Circle { center, radius }
}

/// A rectangle with integer corners, `scale` apart, from `(x, y)` in lattice steps.
fn lattice(x: i32, y: i32, w: i32, h: i32, scale: f64) -> Shape {
    let (x, y) = (f64::from(x) * scale, f64::from(y) * scale);
    let (w, h) = (f64::from(w) * scale, f64::from(h) * scale);
    Shape::Rect(Rect::new(pt(x, y), pt(x + w, y + h)))
}

fn mixed_planar() -> impl Strategy<Value = Shape> {
    prop_oneof![
        3 => planar_shape(),
        3 => (0i32..40, 0i32..40, 0i32..6, 0i32..6).prop_map(|(x, y, w, h)| lattice(x, y, w, h, 2.5)),
        1 => (planar_pt(), 1e-9..1e-3f64).prop_map(circle),
        1 => planar_pt().prop_map(|p| Shape::Rect(Rect::new(p, p))),
        1 => (planar_pt(), 200.0..1e7f64).prop_map(circle),
        1 => ((-1e6..1e6f64, -1e6..1e6f64).prop_map(|(x, y)| pt(x, y)), 0.0..5.0f64).prop_map(circle),
        1 => Just(Shape::Rect(Rect::new(pt(-f64::MAX, -1.0), pt(f64::MAX, 1.0)))),
    ]
}

fn mixed_wgs84() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => geo_shape(),
        2 => (geo_pt(), 1.0..50_000.0f64).prop_map(circle),
        1 => (geo_pt(), 5_000_000.0..15_000_000.0f64).prop_map(circle),
        2 => (-36i32..36, -18i32..18, 0i32..3, 0i32..3).prop_map(|(x, y, w, h)| lattice(x, y, w, h, 5.0)),
    ]
}

/// Points to stab: `extra`, the zones' boundaries, their boxes' corners and points a
/// hair either side of them, and on WGS84 the antimeridian, the poles and longitudes
/// beyond ±180°. Points
/// beyond ±1e15 are left out: there the polygon test's products overflow, and the
/// scan finds polygons no box holds (a filter of the scan, not of the index).
fn probes(space: Space, zones: &[(usize, Zone)], extra: &[Point]) -> Vec<Point> {
    let map: BTreeMap<usize, Zone> = zones.iter().cloned().collect();
    let mut pts = probe_points(space, &map, extra);
    let mut boxes = Vec::new();
    for (_, z) in zones {
        boxes.clear();
        z.boxes(space, &mut boxes);
        for r in &boxes {
            let (lo, hi) = (r.min(), r.max());
            for p in [lo, hi, pt(lo.x, hi.y), pt(hi.x, lo.y)] {
                let hair = 1e-9 * (1.0 + p.x.abs().max(p.y.abs()));
                pts.extend([p, pt(p.x - hair, p.y - hair), pt(p.x + hair, p.y + hair)]);
            }
        }
    }
    pts.retain(|p| !(p.x.abs() > 1e15 || p.y.abs() > 1e15));
    pts
}

/// Every kind of index of `zones` answers what the scan answers at every point.
fn check_kinds(
    space: Space,
    zones: &[(usize, Zone)],
    points: &[Point],
) -> Result<(), TestCaseError> {
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for kind in KINDS {
        let index = ZoneIndex::with_kind(space, zones.iter().cloned(), kind);
        for &p in points {
            index.stab(p, &mut got);
            index.stab_linear(p, &mut want);
            prop_assert_eq!(&got, &want, "{:?} at {:?}", kind, p);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn planar_grid_tree_and_scan_agree(
        shapes in prop::collection::vec(mixed_planar(), 1..120),
        extra in prop::collection::vec((-20.0..120.0f64, -20.0..120.0f64), 60),
    ) {
        let zones: Vec<(usize, Zone)> =
            shapes.into_iter().enumerate().map(|(i, s)| (i, zone(i, s))).collect();
        let extra: Vec<Point> = extra.into_iter().map(|(x, y)| pt(x, y)).collect();
        check_kinds(Space::Planar, &zones, &probes(Space::Planar, &zones, &extra))?;
    }

    #[test]
    fn wgs84_grid_tree_and_scan_agree(
        shapes in prop::collection::vec(mixed_wgs84(), 1..60),
        extra in prop::collection::vec(geo_pt(), 40),
    ) {
        let zones: Vec<(usize, Zone)> =
            shapes.into_iter().enumerate().map(|(i, s)| (i, zone(i, s))).collect();
        check_kinds(Space::Wgs84, &zones, &probes(Space::Wgs84, &zones, &extra))?;
    }
}

/// Applies `ops` to an index of each kind holding `initial`, checking every index
/// against the scan after each one.
fn run_ops(
    space: Space,
    initial: Vec<Shape>,
    ops: Vec<Op>,
    extra: &[Point],
) -> Result<(), TestCaseError> {
    let zones: Vec<(usize, Zone)> = initial
        .into_iter()
        .enumerate()
        .map(|(i, s)| (i, zone(i, s)))
        .collect();
    let mut indexes: Vec<ZoneIndex> = KINDS
        .iter()
        .map(|&k| ZoneIndex::with_kind(space, zones.iter().cloned(), k))
        .collect();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for op in ops {
        for index in &mut indexes {
            match &op {
                Op::Insert(id, s) => {
                    index.insert(*id, zone(*id, s.clone()));
                }
                Op::Remove(id) => {
                    index.remove(*id);
                }
                Op::Move(id, dx, dy) => {
                    if let Some(z) = index.get(*id) {
                        let z = zone(*id, moved(space, &z.shape, *dx, *dy));
                        index.update(*id, z);
                    }
                }
            }
        }
        let live: Vec<(usize, Zone)> = (0..64)
            .filter_map(|id| indexes[1].get(id).map(|z| (id, z.clone())))
            .collect();
        for index in &indexes {
            prop_assert_eq!(index.len(), live.len());
        }
        for p in probes(space, &live, extra) {
            indexes[1].stab_linear(p, &mut want);
            for (index, kind) in indexes.iter().zip(KINDS) {
                index.stab(p, &mut got);
                prop_assert_eq!(&got, &want, "{:?} after {:?} at {:?}", kind, op, p);
            }
        }
    }
    Ok(())
}

/// Small circles far apart: a grid of them is sparse, and reads its masks.
fn sparse_planar() -> impl Strategy<Value = Shape> {
    (planar_pt(), 0.01..0.3f64).prop_map(circle)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The grid's masks answer for the points no box reaches: with small zones far
    /// apart, through inserts, removes and moves, the grid answers what the scan does
    /// (the probes include every box's corners and points a hair either side).
    #[test]
    fn a_sparse_grid_agrees_through_inserts_removes_moves(
        initial in prop::collection::vec(sparse_planar(), 30..60),
        ops in ops(sparse_planar()),
        extra in prop::collection::vec(planar_pt(), 20),
    ) {
        let zones = initial.iter().cloned().enumerate().map(|(i, s)| (i, zone(i, s)));
        let grid = ZoneIndex::with_kind(Space::Planar, zones, IndexKind::Grid);
        prop_assert!(grid.is_sparse_grid());
        run_ops(Space::Planar, initial, ops, &extra)?;
    }

    #[test]
    fn planar_kinds_agree_through_inserts_removes_moves(
        initial in prop::collection::vec(mixed_planar(), 0..40),
        ops in ops(mixed_planar()),
        extra in prop::collection::vec(planar_pt(), 20),
    ) {
        run_ops(Space::Planar, initial, ops, &extra)?;
    }

    #[test]
    fn wgs84_kinds_agree_through_inserts_removes_moves(
        initial in prop::collection::vec(mixed_wgs84(), 0..30),
        ops in ops(mixed_wgs84()),
        extra in prop::collection::vec(geo_pt(), 20),
    ) {
        run_ops(Space::Wgs84, initial, ops, &extra)?;
    }
}

/// `n` circles of radius `r(i)` at seeded points of a 100 × 100 square.
fn circles(n: usize, r: impl Fn(usize) -> f64) -> Vec<(usize, Zone)> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 100.0
    };
    (0..n)
        .map(|i| {
            let center = pt(next(), next());
            (i, zone(i, circle((center, r(i)))))
        })
        .collect()
}

#[test]
fn the_grid_for_even_sizes_the_tree_for_uneven_ones() {
    let even = ZoneIndex::new(Space::Planar, circles(1000, |_| 1.0));
    assert!(even.is_grid());
    // Radii from 0.01 to 1,000, evenly on a log scale: a third of the boxes would
    // cover more than 32 cells of the median's size.
    let uneven = circles(1000, |i| 0.01 * 10f64.powf(5.0 * i as f64 / 1000.0));
    assert!(!ZoneIndex::new(Space::Planar, uneven.clone()).is_grid());
    assert!(ZoneIndex::with_kind(Space::Planar, uneven, IndexKind::Grid).is_grid());
    // A few huge zones among many small ones stay in the grid's tree of large boxes.
    let mut some_huge = circles(1000, |_| 1.0);
    for (i, z) in some_huge.iter_mut().take(10) {
        z.shape = circle((pt(50.0, 50.0), 1000.0 + *i as f64));
    }
    assert!(ZoneIndex::new(Space::Planar, some_huge).is_grid());
    assert!(!ZoneIndex::new(Space::Planar, []).is_grid());
}

#[test]
fn an_index_grown_from_empty_becomes_a_grid() {
    let mut index = ZoneIndex::new(Space::Planar, []);
    for (id, z) in circles(1000, |_| 1.0) {
        index.insert(id, z);
    }
    assert!(index.is_grid());
    let mut out = Vec::new();
    let (mut lin, mut hits) = (Vec::new(), 0);
    for i in 0..200 {
        let p = pt(f64::from(i) * 0.5, f64::from(i % 17) * 6.0);
        index.stab(p, &mut out);
        index.stab_linear(p, &mut lin);
        assert_eq!(out, lin, "{p:?}");
        hits += out.len();
    }
    assert!(hits > 0);
    for id in 0..1000 {
        index.remove(id);
    }
    assert_eq!(index.len(), 0);
    index.stab(pt(50.0, 50.0), &mut out);
    assert!(out.is_empty());
}
