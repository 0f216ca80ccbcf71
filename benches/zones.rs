//! Benchmarks of zone stabbing, the zone index the detector uses (a grid, or the
//! R*-tree of "An Indexing Method of Continuous Spatiotemporal Queries for Stream Data
//! Processing Rules of Detected Target Objects", as its rule chooses), the R*-tree
//! alone and a linear scan of the same zones: `stab/zones=N`, `stab_tree/zones=N` and
//! `stab_linear/zones=N`
//! for N = 100, 10,000 and 100,000 seeded random circles, sectors, rectangles and
//! polygons (some with holes) on a planar net, and `stab_wgs84/zones=N` for the same
//! kinds of zones on WGS84 (geodesic circles and sectors). Each iteration stabs one
//! point, drawn uniformly over the region. `stab_track/zones=N` stabs instead the
//! successive positions of 256 targets moving about the region (a random walk), as a
//! stream of radar plots does. `stab_ahead/zones=N` stabs the uniform points as
//! `stab` does, each after bringing the grid cell of the point four stabs ahead into
//! cache, as the detector does for the events of a batch (`Detector::prefetch`);
//! `stab_sparse_ahead/zones=N` the same among zones a thousandth of the size, so
//! that most points fall where no zone reaches (the grid reads its masks).
//!
//! `start/zones=N` is the start of the nets `examples/gen_zone_net.rs` writes, 100
//! zones and 100,000 smaller ones: `Net::from_ron` on their text.
//!
//! The region grows with N so that a point lies in about one zone on average
//! whatever N (as rules watching different places do); with a fixed region the cost
//! would grow with the number of zones *found*, which no index can avoid. The target
//! is that a stab among 100,000 zones costs at most twice a stab among 100.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use geo::{LineString, Polygon, Rect};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// The zone index is crate-private: the `bench` feature opens it as `ccpn::bench`.
use ccpn::bench::{Shape, Zone, ZoneIndex};
use ccpn::{Point, Space};

// As `ccpn-run` allocates (Cargo.toml's default features): the index's arrays are
// laid out where that allocator puts them.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [100, 10_000, 100_000];
/// Mean zone area, in square units, of [`random_shape`]'s zones (about).
const MEAN_AREA: f64 = 32.0;
/// Points stabbed in turn (a power of two).
const POINTS: usize = 4096;
/// Moving targets, and the positions of them stabbed in turn (a power of two).
const TARGETS: usize = 256;
const TRACK: usize = 1 << 16;

fn pt(x: f64, y: f64) -> Point {
    Point { x, y }
}

/// A random zone around `c`, sizes in units of `unit` (1 on planar nets; metres per
/// unit on WGS84).
fn random_shape(rng: &mut StdRng, space: Space, c: Point, unit: f64, size: f64) -> Shape {
    let deg = |d: f64| match space {
        Space::Planar => d * size,
        Space::Wgs84 => d * size * unit / 111_000.0,
    };
    let unit = unit * size;
    match rng.random_range(0..4) {
        0 => Shape::Circle {
            center: c,
            radius: rng.random_range(2.0..6.0) * unit,
        },
        1 => {
            let from: f64 = rng.random_range(0.0..360.0);
            Shape::Sector {
                center: c,
                radius: rng.random_range(3.0..9.0) * unit,
                from_deg: from,
                to_deg: from + rng.random_range(30.0..120.0),
            }
        }
        2 => {
            let (w, h) = (rng.random_range(2.0..8.0), rng.random_range(2.0..8.0));
            Shape::Rect(Rect::new(c, pt(c.x + deg(w), c.y + deg(h))))
        }
        _ => {
            let n = rng.random_range(5..9);
            let r = rng.random_range(2.0..6.0);
            let ring = |scale: f64, rng: &mut StdRng| -> LineString<f64> {
                (0..n)
                    .map(|i| {
                        let a = std::f64::consts::TAU * f64::from(i) / f64::from(n);
                        let k = scale * r * rng.random_range(0.6..1.0);
                        pt(c.x + deg(k * a.sin()), c.y + deg(k * a.cos()))
                    })
                    .collect()
            };
            let exterior = ring(1.0, rng);
            let holes = if rng.random_bool(0.3) {
                vec![ring(0.2, rng)]
            } else {
                vec![]
            };
            Shape::Polygon(Polygon::new(exterior, holes))
        }
    }
}

/// `n` seeded zones over a region holding about one zone per point when `size` is 1,
/// and points uniform over it; `size` scales the zones' sides (the region and the
/// points stay): [`SPARSE`] makes zones that cover a thousandth of it.
fn setup(space: Space, n: usize, size: f64) -> (Vec<(usize, Zone)>, Vec<Point>) {
    let mut rng = StdRng::seed_from_u64(n as u64);
    let side = (n as f64 * MEAN_AREA).sqrt();
    // On WGS84: a square region around (0°, 0°) in degrees (±8° for 100,000 zones),
    // zones in metres scaled like the planar ones (a unit of 1 km).
    let (unit, scale) = match space {
        Space::Planar => (1.0, 1.0),
        Space::Wgs84 => (1_000.0, 1_000.0 / 111_000.0),
    };
    let half = side * scale / 2.0;
    let point = |rng: &mut StdRng| pt(rng.random_range(-half..half), rng.random_range(-half..half));
    let zones: Vec<(usize, Zone)> = (0..n)
        .map(|i| {
            let c = point(&mut rng);
            let shape = random_shape(&mut rng, space, c, unit, size);
            (
                i,
                Zone {
                    name: format!("z{i}").into(),
                    shape,
                },
            )
        })
        .collect();
    let points = (0..POINTS).map(|_| point(&mut rng)).collect();
    (zones, points)
}

/// The successive positions of [`TARGETS`] targets walking about a planar region of
/// `n` zones (steps of about a tenth of a zone's size), round robin.
fn track(n: usize) -> Vec<Point> {
    let mut rng = StdRng::seed_from_u64(7 + n as u64);
    let half = (n as f64 * MEAN_AREA).sqrt() / 2.0;
    let mut at: Vec<(Point, f64)> = (0..TARGETS)
        .map(|_| {
            let p = pt(rng.random_range(-half..half), rng.random_range(-half..half));
            (p, rng.random_range(0.0..std::f64::consts::TAU))
        })
        .collect();
    (0..TRACK)
        .map(|t| {
            let (p, heading) = &mut at[t % TARGETS];
            *heading += rng.random_range(-0.3..0.3);
            let (s, c) = heading.sin_cos();
            p.x = (p.x + 0.4 * s).clamp(-half, half);
            p.y = (p.y + 0.4 * c).clamp(-half, half);
            *p
        })
        .collect()
}

/// What a group measures: the index as the detector builds it, the R*-tree alone, or
/// a scan of every zone.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Index,
    /// The index, each point's cell fetched [`AHEAD`] stabs before.
    Ahead,
    Tree,
    Linear,
    /// [`Mode::Ahead`] among zones [`SPARSE`] times the size: most points fall in a
    /// part of their cell that no zone reaches (as in `gen_zone_net 100000 100 0.0316`).
    SparseAhead,
}

/// The sides of `stab_sparse_ahead`'s zones against the others' (a thousandth of the
/// area).
const SPARSE: f64 = 0.0316;

/// How many stabs ahead `stab_ahead` fetches a point's cell (as `ccpn-run` does).
const AHEAD: usize = 4;

fn bench(c: &mut Criterion, group: &str, space: Space, sizes: &[usize], mode: Mode) {
    let mut g = c.benchmark_group(group);
    g.sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    for &n in sizes {
        let size = if mode == Mode::SparseAhead {
            SPARSE
        } else {
            1.0
        };
        let (zones, mut points) = setup(space, n, size);
        let index = match mode {
            Mode::Tree => ZoneIndex::tree(space, zones),
            _ => ZoneIndex::new(space, zones),
        };
        if matches!(mode, Mode::Index | Mode::Ahead | Mode::SparseAhead) {
            let kind = if index.is_grid() { "grid" } else { "R*-tree" };
            eprintln!("{group}/zones={n}: {kind}");
        }
        if group == "stab_track" {
            points = track(n);
        }
        let mask = points.len() - 1;
        let mut out = Vec::new();
        let mut i = 0;
        g.bench_function(BenchmarkId::from_parameter(format!("zones={n}")), |b| {
            b.iter(|| {
                i = (i + 1) & mask;
                match mode {
                    Mode::Linear => index.stab_linear(black_box(points[i]), &mut out),
                    Mode::Ahead | Mode::SparseAhead => {
                        index.prefetch(black_box(points[(i + AHEAD) & mask]));
                        index.stab(black_box(points[i]), &mut out);
                    }
                    Mode::Index | Mode::Tree => index.stab(black_box(points[i]), &mut out),
                }
                black_box(out.len())
            })
        });
    }
    g.finish();
}

fn stab(c: &mut Criterion) {
    bench(c, "stab", Space::Planar, &SIZES, Mode::Index);
    bench(c, "stab_ahead", Space::Planar, &SIZES, Mode::Ahead);
    bench(
        c,
        "stab_sparse_ahead",
        Space::Planar,
        &SIZES,
        Mode::SparseAhead,
    );
    bench(c, "stab_tree", Space::Planar, &SIZES, Mode::Tree);
    bench(c, "stab_linear", Space::Planar, &SIZES, Mode::Linear);
    bench(c, "stab_wgs84", Space::Wgs84, &SIZES, Mode::Index);
    bench(c, "stab_wgs84_tree", Space::Wgs84, &SIZES, Mode::Tree);
    bench(c, "stab_track", Space::Planar, &SIZES, Mode::Index);
}

/// The start of a net of many zones: `Net::from_ron` on the text of
/// `gen_zone_net 100 100` and `gen_zone_net 100000 100 0.0316` (parsing, checking,
/// compiling, the zone index), what `ccpn-run` does before its first event.
fn start(c: &mut Criterion) {
    let mut g = c.benchmark_group("start");
    g.sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(4));
    for (n, scale) in [(100, 1.0), (100_000, 0.0316)] {
        let text = ccpn::bench::zone_net::zone_net(n, 100, scale);
        g.bench_function(BenchmarkId::from_parameter(format!("zones={n}")), |b| {
            b.iter_with_large_drop(|| ccpn::Net::from_ron("zones.ron", black_box(&text)))
        });
    }
    g.finish();
}

criterion_group!(benches, stab, start);
criterion_main!(benches);
