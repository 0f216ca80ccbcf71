//! The halo never misses a cell that holds a point within reach.

use proptest::prelude::*;

use super::cells::{Cells, Grid, Halo};
use crate::event::{Point, Space};
use crate::spatial::geodesic_destination;

/// Checks that `q`'s cell is in `p`'s halo.
fn covered(grid: &Grid, p: Point, q: Point) -> Result<(), TestCaseError> {
    let mut cells = Cells::new();
    if grid.halo(p, &mut cells) == Halo::Cells {
        prop_assert!(
            cells.contains(&grid.cell(q)),
            "{q:?} (cell {:?}) is within reach of {p:?} but not in its halo {cells:?}",
            grid.cell(q)
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn planar_halo_holds_every_point_within_reach(
        x in -1e4f64..1e4, y in -1e4f64..1e4,
        reach in 0.001f64..500.0,
        angle in 0.0f64..std::f64::consts::TAU, frac in 0.0f64..=1.0,
    ) {
        let grid = Grid::new(Space::Planar, reach);
        let p = Point { x, y };
        let q = Point { x: x + reach * frac * angle.cos(), y: y + reach * frac * angle.sin() };
        covered(&grid, p, q)?;
    }

    #[test]
    fn wgs84_halo_holds_every_point_within_reach(
        lon in -180.0f64..180.0,
        // Dense near the poles and the antimeridian, where cells are hardest.
        lat in prop_oneof![-90.0f64..=90.0, 85.0f64..=90.0, -90.0f64..=-85.0],
        reach in prop_oneof![1.0f64..1_000.0, 1_000.0f64..200_000.0],
        bearing in 0.0f64..360.0, frac in 0.0f64..=1.0,
    ) {
        let grid = Grid::new(Space::Wgs84, reach);
        let p = Point { x: lon, y: lat };
        let q = geodesic_destination(p, bearing, reach * frac);
        covered(&grid, p, q)?;
    }
}

#[test]
fn wgs84_halo_wraps_the_antimeridian() {
    let grid = Grid::new(Space::Wgs84, 1_000.0);
    let mut cells = Cells::new();
    let p = Point {
        x: 179.9999,
        y: 10.0,
    };
    assert_eq!(grid.halo(p, &mut cells), Halo::Cells);
    assert!(cells.contains(&grid.cell(Point {
        x: -179.9999,
        y: 10.0
    })));
}

#[test]
fn wgs84_halo_at_a_pole_is_everywhere() {
    let grid = Grid::new(Space::Wgs84, 1_000.0);
    let mut cells = Cells::new();
    assert_eq!(
        grid.halo(Point { x: 0.0, y: 90.0 }, &mut cells),
        Halo::Everywhere
    );
}

#[test]
fn most_planar_events_are_not_copied() {
    // With cells four times the reach, a point is copied only within reach of a
    // border: (1 + 2r/s)² = 2.25 cells on average, at most 4.
    let grid = Grid::new(Space::Planar, 1.0);
    let mut cells = Cells::new();
    grid.halo(Point { x: 2.0, y: 2.0 }, &mut cells);
    assert_eq!(cells.len(), 1);
    grid.halo(Point { x: 0.5, y: 0.5 }, &mut cells);
    assert_eq!(cells.len(), 4);
}
