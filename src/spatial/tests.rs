//! Property tests of the zone R*-tree: on random zones of every kind, planar and WGS84
//! (sectors wrapping through north, zones across the antimeridian and around the
//! poles), [`ZoneIndex::stab`] answers exactly what a brute-force scan of every zone
//! answers, on random points and on points placed on the zones' boundaries, also
//! after zones are inserted, removed and moved.

use std::collections::BTreeMap;

use geo_types::{LineString, MultiPolygon, Polygon, Rect};
use proptest::prelude::*;

use super::metric::geodesic_destination;
use super::{Shape, Zone, ZoneIndex};
use crate::event::{Point, Space};

pub(super) fn pt(x: f64, y: f64) -> Point {
    Point { x, y }
}

pub(super) fn zone(i: usize, shape: Shape) -> Zone {
    Zone {
        name: format!("z{i}").into(),
        shape,
    }
}

/// Does `z` contain `p`? As [`Zone::contains`], except that a WGS84 line measures
/// every segment, so that the boxes `contains` skips segments by are tested too, and
/// WGS84 circles and sectors are decided by the geodesic alone (distance and initial
/// azimuth), without the spherical estimates `contains` settles most points with.
fn contains(space: Space, z: &Zone, p: Point) -> bool {
    match &z.shape {
        Shape::Circle { center, radius } if space == Space::Wgs84 => {
            super::zone::valid_point(space, p)
                && super::metric::distance(space, *center, p) <= *radius
        }
        Shape::Sector {
            center,
            radius,
            from_deg,
            to_deg,
        } if space == Space::Wgs84 => {
            super::zone::valid_point(space, p)
                && super::metric::distance(space, *center, p) <= *radius
                && (*center == p
                    || super::zone::in_arc(
                        *from_deg,
                        *to_deg,
                        super::metric::bearing(space, *center, p),
                    ))
        }
        Shape::Line {
            line,
            half_width,
            geodesic,
        } if space == Space::Wgs84 => {
            super::zone::valid_point(space, p)
                && super::geoline::within_unfiltered(
                    geodesic.segments(line, *half_width),
                    p,
                    *half_width,
                )
        }
        _ => z.contains(space, p),
    }
}

/// Every zone containing `p`, by testing each one.
fn brute(space: Space, zones: &BTreeMap<usize, Zone>, p: Point) -> Vec<usize> {
    zones
        .iter()
        .filter(|(_, z)| contains(space, z, p))
        .map(|(id, _)| *id)
        .collect()
}

/// A point `d` away from `c` at bearing `deg`, in the space's units.
fn offset(space: Space, c: Point, deg: f64, d: f64) -> Point {
    match space {
        Space::Planar => {
            let (s, co) = deg.to_radians().sin_cos();
            pt(c.x + d * s, c.y + d * co)
        }
        Space::Wgs84 => geodesic_destination(c, deg, d),
    }
}

/// Points on (or within rounding of) the zone's boundary.
pub(super) fn boundary(space: Space, shape: &Shape) -> Vec<Point> {
    let mut v = Vec::new();
    let ring_pts = |r: &LineString<f64>, v: &mut Vec<Point>| {
        for w in r.0.windows(2) {
            v.push(w[0]);
            v.push(pt((w[0].x + w[1].x) / 2.0, (w[0].y + w[1].y) / 2.0));
        }
    };
    match shape {
        Shape::Polygon(p) => {
            ring_pts(p.exterior(), &mut v);
            for h in p.interiors() {
                ring_pts(h, &mut v);
            }
        }
        Shape::MultiPolygon(mp) => {
            for p in &mp.0 {
                ring_pts(p.exterior(), &mut v);
                for h in p.interiors() {
                    ring_pts(h, &mut v);
                }
            }
        }
        Shape::Rect(r) => {
            let (lo, hi) = (r.min(), r.max());
            v.extend([
                lo,
                hi,
                pt(lo.x, hi.y),
                pt(hi.x, lo.y),
                pt(lo.x, (lo.y + hi.y) / 2.0),
            ]);
        }
        Shape::Circle { center, radius } => {
            for k in 0..8 {
                v.push(offset(space, *center, 45.0 * f64::from(k), *radius));
            }
        }
        Shape::Sector {
            center,
            radius,
            from_deg,
            to_deg,
        } => {
            v.push(*center);
            for deg in [*from_deg, *to_deg] {
                v.push(offset(space, *center, deg, *radius));
                v.push(offset(space, *center, deg, radius / 2.0));
            }
            for k in 0..4 {
                v.push(offset(space, *center, 90.0 * f64::from(k), *radius));
            }
        }
        Shape::Line {
            line, half_width, ..
        } => {
            for w in line.0.windows(2) {
                let (a, b) = (w[0], w[1]);
                v.push(a);
                let deg = super::metric::bearing(space, a, b);
                v.push(offset(space, a, deg + 180.0, *half_width));
                // The middle of the segment (where a geodesic bows most), and beside it.
                let len = super::metric::distance(space, a, b);
                let mid = offset(space, a, deg, len / 2.0);
                let mid_deg = super::metric::bearing(space, mid, b);
                v.push(mid);
                for side in [90.0, -90.0] {
                    v.push(offset(space, a, deg + side, *half_width));
                    v.push(offset(space, mid, mid_deg + side, *half_width));
                }
            }
        }
    }
    v
}

// ----- planar zones -----

pub(super) fn planar_pt() -> impl Strategy<Value = Point> {
    (0.0..100.0f64, 0.0..100.0f64).prop_map(|(x, y)| pt(x, y))
}

/// A star-shaped ring around `c`: vertex `i` at `r·f[i]`, evenly spaced around.
fn star(space: Space, c: Point, r: f64, f: &[f64]) -> LineString<f64> {
    let n = f.len() as f64;
    let pts: Vec<Point> = f
        .iter()
        .enumerate()
        .map(|(i, k)| offset(space, c, 360.0 * i as f64 / n, r * k))
        .collect();
    LineString::from(pts)
}

fn star_polygon(space: Space, c: Point, r: f64, f: &[f64], hole: bool) -> Polygon<f64> {
    let holes = if hole {
        vec![star(space, c, r * 0.1, &[1.0, 0.8, 1.0, 0.9, 1.0])]
    } else {
        vec![]
    };
    Polygon::new(star(space, c, r, f), holes)
}

pub(super) fn planar_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (planar_pt(), 0.5..20.0f64).prop_map(|(center, radius)| Shape::Circle { center, radius }),
        (
            planar_pt(),
            0.5..30.0f64,
            prop_oneof![-720.0..720.0f64, Just(330.0), Just(0.0), Just(90.0)],
            prop_oneof![-720.0..720.0f64, Just(30.0), Just(360.0), Just(270.0)],
        )
            .prop_map(|(center, radius, from_deg, to_deg)| Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg
            }),
        (planar_pt(), 0.0..30.0f64, 0.0..30.0f64)
            .prop_map(|(lo, w, h)| Shape::Rect(Rect::new(lo, pt(lo.x + w, lo.y + h)))),
        (
            planar_pt(),
            1.0..20.0f64,
            prop::collection::vec(0.3..1.0f64, 3..10),
            any::<bool>()
        )
            .prop_map(|(c, r, f, hole)| Shape::Polygon(star_polygon(
                Space::Planar,
                c,
                r,
                &f,
                hole
            ))),
        prop::collection::vec(
            (
                planar_pt(),
                1.0..10.0f64,
                prop::collection::vec(0.3..1.0f64, 3..8),
                any::<bool>()
            ),
            1..4
        )
        .prop_map(|parts| Shape::MultiPolygon(MultiPolygon(
            parts
                .iter()
                .map(|(c, r, f, h)| star_polygon(Space::Planar, *c, *r, f, *h))
                .collect()
        ))),
        (prop::collection::vec(planar_pt(), 2..6), 0.1..10.0f64)
            .prop_map(|(pts, w)| Shape::line(LineString::from(pts), w / 2.0)),
    ]
}

// ----- WGS84 zones -----

/// Longitudes biased towards the antimeridian.
fn lon() -> impl Strategy<Value = f64> {
    prop_oneof![
        -180.0..=180.0f64,
        179.0..=180.0f64,
        -180.0..=-179.0f64,
        Just(180.0),
        Just(-180.0)
    ]
}

/// Latitudes biased towards the poles.
fn lat() -> impl Strategy<Value = f64> {
    prop_oneof![-85.0..=85.0f64, 85.0..=90.0f64, -90.0..=-85.0f64]
}

pub(super) fn geo_pt() -> impl Strategy<Value = Point> {
    (lon(), lat()).prop_map(|(x, y)| pt(x, y))
}

/// A point whose star of radius `r` metres keeps coordinates in range and does not
/// cross the antimeridian or a pole (as the net loader requires of polygons).
fn polygon_center() -> impl Strategy<Value = Point> {
    (-170.0..170.0f64, -75.0..75.0f64).prop_map(|(x, y)| pt(x, y))
}

pub(super) fn geo_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (geo_pt(), 10.0..2_000_000.0f64)
            .prop_map(|(center, radius)| Shape::Circle { center, radius }),
        (
            geo_pt(),
            10.0..2_000_000.0f64,
            prop_oneof![-720.0..720.0f64, Just(330.0), Just(0.0)],
            prop_oneof![-720.0..720.0f64, Just(30.0), Just(360.0)],
        )
            .prop_map(|(center, radius, from_deg, to_deg)| Shape::Sector {
                center,
                radius,
                from_deg,
                to_deg
            }),
        (geo_pt(), 0.0..20.0f64, 0.0..20.0f64).prop_map(|(lo, w, h)| {
            let hi = pt((lo.x + w).min(180.0), (lo.y + h).min(90.0));
            Shape::Rect(Rect::new(lo, hi))
        }),
        // A rectangle across the antimeridian, as the loader builds it.
        (
            170.0..180.0f64,
            -180.0..-170.0f64,
            -60.0..60.0f64,
            0.0..20.0f64
        )
            .prop_map(|(w, e, s, h)| {
                let west = Rect::new(pt(w, s), pt(180.0, s + h));
                let east = Rect::new(pt(-180.0, s), pt(e, s + h));
                Shape::MultiPolygon(MultiPolygon(vec![west.to_polygon(), east.to_polygon()]))
            }),
        (
            polygon_center(),
            1_000.0..800_000.0f64,
            prop::collection::vec(0.3..1.0f64, 3..9),
            any::<bool>()
        )
            .prop_map(|(c, r, f, hole)| Shape::Polygon(star_polygon(
                Space::Wgs84,
                c,
                r,
                &f,
                hole
            ))),
        (
            geo_pt(),
            prop::collection::vec((0.0..360.0f64, 1_000.0..500_000.0f64), 1..4),
            100.0..100_000.0f64
        )
            .prop_map(|(start, legs, w)| {
                let mut pts = vec![start];
                for (deg, d) in legs {
                    let last = *pts.last().unwrap_or(&start);
                    pts.push(geodesic_destination(last, deg, d));
                }
                Shape::line(LineString::from(pts), w / 2.0)
            }),
    ]
}

/// Points near `zones` (a random offset from one of their points), on their
/// boundaries, and a few awkward ones.
pub(super) fn probe_points(
    space: Space,
    zones: &BTreeMap<usize, Zone>,
    extra: &[Point],
) -> Vec<Point> {
    let mut pts: Vec<Point> = extra.to_vec();
    for z in zones.values() {
        pts.extend(boundary(space, &z.shape));
    }
    if space == Space::Wgs84 {
        pts.extend([
            pt(180.0, 0.0),
            pt(-180.0, 0.0),
            pt(0.0, 90.0),
            pt(0.0, -90.0),
            pt(190.0, 10.0),
            pt(-540.0, 45.0),
            pt(0.0, 90.5),
            pt(f64::NAN, 0.0),
        ]);
    }
    pts
}

fn check(
    space: Space,
    zones: &BTreeMap<usize, Zone>,
    points: &[Point],
) -> Result<(), TestCaseError> {
    let index = ZoneIndex::new(space, zones.iter().map(|(id, z)| (*id, z.clone())));
    let (mut got, mut lin) = (Vec::new(), Vec::new());
    for &p in points {
        index.stab(p, &mut got);
        index.stab_linear(p, &mut lin);
        let want = brute(space, zones, p);
        prop_assert_eq!(&got, &want, "stab at {:?}", p);
        prop_assert_eq!(&lin, &want, "stab_linear at {:?}", p);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn planar_stab_equals_brute_force(
        shapes in prop::collection::vec(planar_shape(), 1..40),
        extra in prop::collection::vec((-10.0..110.0f64, -10.0..110.0f64), 50),
    ) {
        let zones: BTreeMap<usize, Zone> =
            shapes.into_iter().enumerate().map(|(i, s)| (i * 3 + 1, zone(i, s))).collect();
        let extra: Vec<Point> = extra.into_iter().map(|(x, y)| pt(x, y)).collect();
        let points = probe_points(Space::Planar, &zones, &extra);
        check(Space::Planar, &zones, &points)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn wgs84_stab_equals_brute_force(
        shapes in prop::collection::vec(geo_shape(), 1..20),
        near in prop::collection::vec((0usize..20, 0.0..360.0f64, 0.0..1.5f64), 40),
        extra in prop::collection::vec(geo_pt(), 20),
    ) {
        let zones: BTreeMap<usize, Zone> =
            shapes.into_iter().enumerate().map(|(i, s)| (i, zone(i, s))).collect();
        // Points near a zone: from one of its boundary points, a random step inwards or out.
        let mut pts = extra;
        for (i, deg, k) in near {
            if let Some(z) = zones.get(&(i % zones.len())) {
                let (c, r) = match &z.shape {
                    Shape::Circle { center, radius } | Shape::Sector { center, radius, .. } => (*center, *radius),
                    _ => match boundary(Space::Wgs84, &z.shape).first() {
                        Some(b) => (*b, 50_000.0),
                        None => continue,
                    },
                };
                pts.push(offset(Space::Wgs84, c, deg, r * k));
            }
        }
        // Points just either side of every sector's edges, where the bearing's
        // spherical estimate gives way to the geodesic azimuth.
        for z in zones.values() {
            if let Shape::Sector { center, radius, from_deg, to_deg } = &z.shape {
                for edge in [*from_deg, *to_deg] {
                    for d in [-1.0, -0.55, -0.45, -0.2, -0.01, 0.01, 0.2, 0.45, 0.55, 1.0] {
                        pts.push(offset(Space::Wgs84, *center, edge + d, radius * 0.6));
                    }
                }
            }
        }
        let points = probe_points(Space::Wgs84, &zones, &pts);
        check(Space::Wgs84, &zones, &points)?;
    }
}

/// An operation on the index: insert (or replace) a zone, remove one, or move one.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Insert(usize, Shape),
    Remove(usize),
    Move(usize, f64, f64),
}

/// Up to 60 operations on ids below 30; one move in ten goes far (up to 10,000 units,
/// past a grid's extent).
pub(super) fn ops(shape: impl Strategy<Value = Shape>) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0usize..30, shape).prop_map(|(id, s)| Op::Insert(id, s)),
            3 => (0usize..30).prop_map(Op::Remove),
            3 => (0usize..30, -20.0..20.0f64, -20.0..20.0f64)
                .prop_map(|(id, dx, dy)| Op::Move(id, dx, dy)),
            1 => (0usize..30, -1e4..1e4f64, -1e4..1e4f64)
                .prop_map(|(id, dx, dy)| Op::Move(id, dx, dy)),
        ],
        1..60,
    )
}

/// `shape` re-centred by (dx, dy) (circles and sectors, as moving zones are).
pub(super) fn moved(space: Space, shape: &Shape, dx: f64, dy: f64) -> Shape {
    let shift = |c: &Point| match space {
        Space::Planar => pt(c.x + dx, c.y + dy),
        Space::Wgs84 => pt(
            ((c.x + dx * 9.0) + 180.0).rem_euclid(360.0) - 180.0,
            (c.y + dy).clamp(-90.0, 90.0),
        ),
    };
    match shape {
        Shape::Circle { center, radius } => Shape::Circle {
            center: shift(center),
            radius: *radius,
        },
        Shape::Sector {
            center,
            radius,
            from_deg,
            to_deg,
        } => Shape::Sector {
            center: shift(center),
            radius: *radius,
            from_deg: from_deg + dx * 10.0,
            to_deg: to_deg + dx * 10.0,
        },
        other => other.clone(),
    }
}

fn run_ops(space: Space, ops: Vec<Op>, points: &[Point]) -> Result<(), TestCaseError> {
    let mut index = ZoneIndex::new(space, []);
    let mut model: BTreeMap<usize, Zone> = BTreeMap::new();
    let mut got = Vec::new();
    for op in ops {
        match op {
            Op::Insert(id, s) => {
                let old = index.insert(id, zone(id, s.clone()));
                prop_assert_eq!(old.is_some(), model.insert(id, zone(id, s)).is_some());
            }
            Op::Remove(id) => {
                prop_assert_eq!(index.remove(id).is_some(), model.remove(&id).is_some());
            }
            Op::Move(id, dx, dy) => {
                if let Some(z) = model.get_mut(&id) {
                    z.shape = moved(space, &z.shape, dx, dy);
                    index.update(id, z.clone());
                }
            }
        }
        prop_assert_eq!(index.len(), model.len());
        let mut probe: Vec<Point> = points.to_vec();
        for z in model.values() {
            probe.extend(boundary(space, &z.shape));
        }
        for &p in &probe {
            index.stab(p, &mut got);
            prop_assert_eq!(&got, &brute(space, &model, p), "at {:?}", p);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn planar_insert_remove_move(
        ops in ops(planar_shape()),
        points in prop::collection::vec(planar_pt(), 30),
    ) {
        run_ops(Space::Planar, ops, &points)?;
    }

    #[test]
    fn wgs84_insert_remove_move(
        ops in ops(prop_oneof![
            (geo_pt(), 10.0..500_000.0f64).prop_map(|(center, radius)| Shape::Circle { center, radius }),
            (geo_pt(), 10.0..500_000.0f64, -360.0..360.0f64, -360.0..360.0f64)
                .prop_map(|(center, radius, from_deg, to_deg)| Shape::Sector { center, radius, from_deg, to_deg }),
        ]),
        points in prop::collection::vec(geo_pt(), 30),
    ) {
        run_ops(Space::Wgs84, ops, &points)?;
    }
}

// ----- golden cases -----

#[test]
fn stab_sorted_ids_of_every_containing_zone() {
    let zones = vec![
        (
            7,
            zone(
                7,
                Shape::Circle {
                    center: pt(0.0, 0.0),
                    radius: 5.0,
                },
            ),
        ),
        (
            2,
            zone(2, Shape::Rect(Rect::new(pt(0.0, 0.0), pt(10.0, 10.0)))),
        ),
        (
            5,
            zone(
                5,
                Shape::Sector {
                    center: pt(0.0, 0.0),
                    radius: 10.0,
                    from_deg: 330.0,
                    to_deg: 30.0,
                },
            ),
        ),
    ];
    let mut index = ZoneIndex::new(Space::Planar, zones);
    let mut out = Vec::new();
    index.stab(pt(1.0, 3.0), &mut out);
    assert_eq!(out, [2, 5, 7]);
    index.stab(pt(-1.0, 8.0), &mut out);
    assert_eq!(out, [5], "the sector across north");
    index.stab(pt(10.0, 10.0), &mut out);
    assert_eq!(out, [2], "a corner is inside");
    index.stab(pt(20.0, 20.0), &mut out);
    assert!(out.is_empty());
    // Re-centre the circle on (20, 20), in place.
    index.update(
        7,
        zone(
            7,
            Shape::Circle {
                center: pt(20.0, 20.0),
                radius: 1.0,
            },
        ),
    );
    index.stab(pt(20.0, 20.0), &mut out);
    assert_eq!(out, [7]);
    index.stab(pt(1.0, 3.0), &mut out);
    assert_eq!(out, [2, 5]);
    assert!(index.remove(2).is_some());
    assert!(index.remove(2).is_none());
    index.stab(pt(1.0, 3.0), &mut out);
    assert_eq!(out, [5]);
    assert_eq!(index.len(), 2);
}

#[test]
fn wgs84_circle_across_the_antimeridian() {
    // 100 km around (179.9°, 0°) reaches about 0.8° past the antimeridian.
    let z = zone(
        0,
        Shape::Circle {
            center: pt(179.9, 0.0),
            radius: 100_000.0,
        },
    );
    let index = ZoneIndex::new(Space::Wgs84, [(0, z)]);
    let mut out = Vec::new();
    for p in [
        pt(-179.5, 0.0),
        pt(180.0, 0.0),
        pt(-180.0, 0.0),
        pt(179.5, 0.3),
        pt(180.5, 0.0),
    ] {
        index.stab(p, &mut out);
        assert_eq!(out, [0], "{p:?}");
    }
    index.stab(pt(-179.0, 0.0), &mut out);
    assert!(out.is_empty());
}

#[test]
fn wgs84_circle_around_the_pole() {
    // 300 km around (0°, 88°) holds the pole and every longitude near it.
    let z = zone(
        0,
        Shape::Circle {
            center: pt(0.0, 88.0),
            radius: 300_000.0,
        },
    );
    let index = ZoneIndex::new(Space::Wgs84, [(0, z)]);
    let mut out = Vec::new();
    for p in [
        pt(0.0, 90.0),
        pt(180.0, 89.5),
        pt(-90.0, 89.0),
        pt(135.0, 89.9),
    ] {
        index.stab(p, &mut out);
        assert_eq!(out, [0], "{p:?}");
    }
    index.stab(pt(180.0, 88.0), &mut out);
    assert!(out.is_empty(), "444 km away across the pole");
}
