//! Tests of the side rasters: a settled cell's answer is the margin test's, on
//! polygons with holes, multipolygons and rectangles.

use geo_types::{LineString, MultiPolygon, Polygon, Rect};
use proptest::prelude::*;

use super::*;
use crate::spatial::margin::{boundary_distance, side};

/// Tests enough for any raster here.
const TESTS: usize = 1 << 24;

fn tests() -> usize {
    TESTS
}

/// The planar raster of `z` over `a` settled by `margin` (padded by it), in at
/// most `cells` cells, with tests enough.
fn planar(z: &Zone, a: Rect<f64>, margin: f64, cells: usize) -> Option<Sides> {
    Sides::new(
        z,
        Space::Planar,
        a,
        ((margin, margin), margin),
        cells,
        &mut tests(),
    )
    .map(Sides::pack)
}

fn pt(x: f64, y: f64) -> Point {
    Point { x, y }
}

fn zone(shape: Shape) -> Zone {
    Zone {
        name: "z".into(),
        shape,
    }
}

fn area(lo: (f64, f64), hi: (f64, f64)) -> Rect<f64> {
    Rect::new(pt(lo.0, lo.1), pt(hi.0, hi.1))
}

/// A polygon around `(cx, cy)` through `radii` at even angles (star-shaped, so
/// simple), with a hole of half its smallest radius when `hole`.
fn star(cx: f64, cy: f64, radii: &[f64], hole: bool) -> Polygon<f64> {
    let n = radii.len();
    let ring = |scale: f64, rs: &[f64]| -> LineString<f64> {
        let mut pts: Vec<Point> = rs
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                pt(cx + scale * r * a.cos(), cy + scale * r * a.sin())
            })
            .collect();
        pts.push(pts[0]);
        LineString(pts)
    };
    let holes = if hole {
        let smallest = radii.iter().copied().fold(f64::INFINITY, f64::min);
        vec![ring(0.5 * smallest, &[1.0; 8])]
    } else {
        Vec::new()
    };
    Polygon::new(ring(1.0, radii), holes)
}

#[test]
fn a_square_is_settled_inside_in_its_middle_and_outside_past_its_corners() {
    let z = zone(Shape::Rect(area((0.0, 0.0), (10.0, 10.0))));
    let sides =
        planar(&z, area((-1.0, -1.0), (11.0, 11.0)), 0.1, 4096).expect("a rectangle has a raster");
    assert_eq!(sides.at(pt(5.0, 5.0)), Some(Side::Inside));
    assert_eq!(sides.at(pt(-0.8, -0.8)), Some(Side::Outside));
    // Within the margin of an edge; off the raster's area; not a number.
    assert_eq!(sides.at(pt(0.05, 5.0)), None);
    assert_eq!(sides.at(pt(10.02, 5.0)), None);
    assert_eq!(sides.at(pt(12.0, 5.0)), Some(Side::Outside));
    assert_eq!(sides.at(pt(f64::NAN, 5.0)), None);
}

#[test]
fn a_hole_is_outside_and_its_ring_unsettled() {
    let poly = star(0.0, 0.0, &[10.0; 12], true);
    let z = zone(Shape::Polygon(poly));
    let sides =
        planar(&z, area((-11.0, -11.0), (11.0, 11.0)), 0.2, 4096).expect("a polygon has a raster");
    assert_eq!(sides.at(pt(0.0, 0.0)), Some(Side::Outside));
    assert_eq!(sides.at(pt(7.0, 0.0)), Some(Side::Inside));
    assert_eq!(sides.at(pt(5.0, 0.0)), None);
}

#[test]
fn a_circle_is_settled_inside_and_out_and_sectors_and_lines_get_no_raster() {
    let a = area((-2.0, -2.0), (2.0, 2.0));
    let circle = zone(Shape::Circle {
        center: pt(0.0, 0.0),
        radius: 1.0,
    });
    let sides = planar(&circle, a, 0.1, 4096).expect("a circle has a raster");
    assert_eq!(sides.at(pt(0.0, 0.0)), Some(Side::Inside));
    assert_eq!(sides.at(pt(1.5, 1.5)), Some(Side::Outside));
    assert_eq!(sides.at(pt(0.0, 1.0)), None, "on the boundary");
    let sector = zone(Shape::Sector {
        center: pt(0.0, 0.0),
        radius: 1.0,
        from_deg: 0.0,
        to_deg: 90.0,
    });
    assert!(planar(&sector, a, 0.1, 4096).is_none());
    let line = zone(Shape::line(
        LineString(vec![pt(0.0, 0.0), pt(1.0, 1.0)]),
        0.1,
    ));
    assert!(planar(&line, a, 0.1, 4096).is_none());
}

#[test]
fn a_raster_never_has_more_cells_than_asked() {
    let z = zone(Shape::Rect(area((0.0, 0.0), (1000.0, 1.0))));
    let sides =
        planar(&z, area((-1.0, -1.0), (1001.0, 2.0)), 0.1, 100).expect("a rectangle has a raster");
    assert!(sides.nx * sides.ny <= 100, "{} × {}", sides.nx, sides.ny);
    assert!(sides.nx > sides.ny);
}

#[test]
fn a_raster_spends_its_tests_and_gives_up_when_they_run_out() {
    let poly = star(0.0, 0.0, &[10.0; 64], false);
    let z = zone(Shape::Polygon(poly));
    let a = area((-11.0, -11.0), (11.0, 11.0));
    let mut plenty = TESTS;
    assert!(Sides::new(&z, Space::Planar, a, ((0.2, 0.2), 0.2), 4096, &mut plenty).is_some());
    let spent = TESTS - plenty;
    assert!(spent > 0);
    let mut short = spent - 1;
    assert!(Sides::new(&z, Space::Planar, a, ((0.2, 0.2), 0.2), 4096, &mut short).is_none());
    assert_eq!(short, 0, "what was left is spent");
    let mut exact = spent;
    assert!(Sides::new(&z, Space::Planar, a, ((0.2, 0.2), 0.2), 4096, &mut exact).is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Wherever a raster is settled, on the plane, the margin test gives its side, and
    /// the point is more than the margin from the boundary (polygons with holes,
    /// multipolygons, rectangles, circles).
    #[test]
    fn settled_cells_answer_as_the_margin_test(
        shapes in prop::collection::vec(
            (0.0..1.0f64, 0.0..1.0f64, prop::collection::vec(0.05..0.4f64, 3..12), any::<bool>()),
            1..4,
        ),
        kind in 0u8..4,
        margin in 0.0..0.1f64,
        cells in 16usize..5000,
        points in prop::collection::vec((-1.0..2.0f64, -1.0..2.0f64), 64),
    ) {
        let polys: Vec<Polygon<f64>> = shapes
            .iter()
            .map(|(x, y, radii, hole)| star(*x, *y, radii, *hole))
            .collect();
        let shape = match kind {
            0 => Shape::Polygon(polys[0].clone()),
            1 => Shape::MultiPolygon(MultiPolygon(polys)),
            2 => {
                let (x, y, r, _) = &shapes[0];
                Shape::Circle { center: pt(*x, *y), radius: r[0] }
            }
            _ => {
                let (x, y, r, _) = &shapes[0];
                Shape::Rect(area((*x, *y), (x + r[0], y + r[1])))
            }
        };
        let z = zone(shape);
        let a = area((-0.6, -0.6), (1.6, 1.6));
        let sides = planar(&z, a, margin, cells)
            .expect("a shape with straight edges has a raster");
        let mut settled = 0;
        for (x, y) in points {
            let p = pt(x, y);
            if let Some(s) = sides.at(p) {
                settled += 1;
                prop_assert_eq!(s, side(&z, Space::Planar, p, margin), "{:?}", p);
                prop_assert!(boundary_distance(&z.shape, Space::Planar, p, margin) > margin);
                prop_assert_eq!(s == Side::Inside, z.contains(Space::Planar, p));
            }
        }
        // Not a raster that settles nothing: a fine one settles some points.
        if cells >= 1024 && margin < 0.02 {
            prop_assert!(settled > 0);
        }
    }
}

proptest! {
    /// Packed two bits a cell, a raster reads back every cell as laid out, whatever
    /// the count of cells modulo four.
    #[test]
    fn packed_cells_read_back(cells in prop::collection::vec(0u8..3, 1..70)) {
        let n = cells.len();
        let mut s = Sides::blank(Rect::new(pt(0.0, 0.0), pt(n as f64, 1.0)), n)
            .expect("a raster");
        prop_assume!(s.nx * s.ny == n);
        s.cells.copy_from_slice(&cells);
        let s = s.pack();
        prop_assert!(s.cells.is_empty());
        prop_assert_eq!(s.packed.len(), n.div_ceil(4));
        for (k, &c) in cells.iter().enumerate() {
            prop_assert_eq!(s.cell(k), c, "cell {}", k);
        }
    }
}
