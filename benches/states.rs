//! Benchmarks of states through `Detector::push`, over seeded streams of objects
//! that wander, stop and fall silent:
//!
//! - `states/push/net=heavy/keys=1e4/events=1e6`: `Inside` with a margin over 1,000
//!   zones, a `Lasting` of it, `Silent`, `Stationary`, and an `AllOf` and an `Unless`
//!   of them, all keyed by object, 10,000 objects;
//! - `states/push/net=close/objects=N/events=1e6`: `Close` (500 m, 5 minutes) over N =
//!   1,000 and 10,000 objects at the same density (about five others within 500 m of
//!   each), the area growing with N: the cost per event must not grow with the
//!   objects far away;
//! - `states/push/net=close/objects=N/reports=100`: the same over N = 1,000, 10,000
//!   and 100,000 objects each reporting 100 times (N × 100 events), so that every N
//!   has the same history per object and the same detections per event;
//! - `states/push/net=close/objects=1e4/far=F`: the 10,000 objects' 100 reports each
//!   with F = 0, 10,000 and 100,000 more objects far away, in pairs that hold (pushed
//!   before the clock starts, and quiet after): the cost of an event among the
//!   10,000 with F objects far away.
//!
//! Run with `benches/run.sh --bench states` to measure the build `ccpn-run` ships
//! (no unwinding); `cargo bench --bench states` builds with unwinding.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use ccpn::io::read::LineParser;
use ccpn::{Detector, DetectorOptions, Event, Net};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EVENTS: usize = 1_000_000;
/// Reports per object in the `Close` series of one history per object.
const REPORTS: usize = 100;

/// The heavy net's 1,000 zones: 100 × 100 squares, one in each cell of a 32 × 32
/// grid of 312.5-unit cells over a 10,000 square (the first 1,000 cells).
fn heavy_net() -> Net {
    let mut zones = String::new();
    let mut names = Vec::new();
    for i in 0..1000 {
        let (cx, cy) = (
            (i % 32) as f64 * 312.5 + 156.25,
            (i / 32) as f64 * 312.5 + 156.25,
        );
        let _ = write!(
            zones,
            "\"z{i}\": Rect(min: ({}, {}), max: ({}, {})), ",
            cx - 50.0,
            cy - 50.0,
            cx + 50.0,
            cy + 50.0
        );
        names.push(format!("\"z{i}\""));
    }
    let text = format!(
        r#"Net(
    zones: {{ {zones} }},
    events: {{
        "fix": Atomic(type: "T"),
        "inside": Inside(of: "fix", zones: [{}], key: "k", margin: 5.0),
        "dwell": Lasting(of: "inside", min: 60.0),
        "dark": Silent(of: "fix", for: 30.0, key: "k"),
        "still": Stationary(of: "fix", radius: 10.0, for: 20.0, key: "k"),
        "parked": AllOf(of: ["dwell", "still"]),
        "loitering": Unless(of: "still", except: "inside"),
    }},
    outputs: ["dwell", "dark", "parked", "loitering"],
)"#,
        names.join(", ")
    );
    Net::from_ron("heavy.ron", &text).expect("the heavy net")
}

fn close_net() -> Net {
    Net::from_ron(
        "close.ron",
        r#"Net(
    events: {
        "fix": Atomic(type: "T"),
        "close": Close(of: "fix", max: 500.0, within: "5m", distinct: "k"),
    },
    outputs: ["close"],
)"#,
    )
    .expect("the close net")
}

/// `n` JSON lines of `objects` objects in a `side` × `side` square (offset by
/// `origin`), one report each `dt` seconds of the stream: a random object reports,
/// having kept still (jitter of a few units), crept or moved by up to `step`;
/// one object in twenty reports ten times less often, and goes silent now and then.
fn stream(objects: usize, side: f64, origin: f64, step: f64, dt: f64, n: usize) -> Vec<String> {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut at: Vec<(f64, f64)> = (0..objects)
        .map(|_| {
            (
                origin + rng.random_range(0.0..side),
                origin + rng.random_range(0.0..side),
            )
        })
        .collect();
    let mut lines = Vec::with_capacity(n);
    let mut i = 0;
    while lines.len() < n {
        let k = rng.random_range(0..objects);
        if k % 20 == 0 && rng.random_range(0..10) != 0 {
            continue;
        }
        let d = match rng.random_range(0..10) {
            0..=5 => 3.0,
            6..=8 => step / 5.0,
            _ => step,
        };
        let (x, y) = &mut at[k];
        *x = (*x + rng.random_range(-d..=d)).clamp(origin, origin + side);
        *y = (*y + rng.random_range(-d..=d)).clamp(origin, origin + side);
        lines.push(format!(
            "{{\"id\":{i},\"type\":\"T\",\"time\":{:.3},\"x\":{x:.2},\"y\":{y:.2},\"k\":{k}}}",
            1_700_000_000.0 + i as f64 * dt
        ));
        i += 1;
    }
    lines
}

fn events(net: &Net, lines: &[String]) -> Vec<Event> {
    // As ccpn-run does: events share one copy of each name the net reads.
    let parser = LineParser::json(net.space()).with_known_names(net.names_read());
    lines
        .iter()
        .map(|l| parser.parse(l.as_bytes()).expect("generated line"))
        .collect()
}

/// `far` objects (keys from 10,000,000) in pairs 100 m apart, the pairs 2 km apart
/// in a square far from every other object's, each reporting once in the minute
/// before `t0`: every pair holds, and keeps its objects' latest reports, until one
/// of them reports again.
fn far_pairs(far: usize, t0: f64) -> Vec<String> {
    let per_row = ((far / 2) as f64).sqrt().ceil().max(1.0) as usize;
    (0..far)
        .map(|i| {
            let pair = i / 2;
            let x = 5.0e7 + (pair % per_row) as f64 * 2000.0 + (i % 2) as f64 * 100.0;
            let y = 5.0e7 + (pair / per_row) as f64 * 2000.0;
            let t = t0 - 60.0 + 60.0 * i as f64 / far as f64;
            format!(
                "{{\"id\":{i},\"type\":\"T\",\"time\":{t:.3},\"x\":{x:.2},\"y\":{y:.2},\"k\":{}}}",
                10_000_000 + i
            )
        })
        .collect()
}

/// A new detector (no token cap: the streams are bounded by their objects).
fn detector(net: &Net) -> Detector {
    let options = DetectorOptions {
        max_tokens: usize::MAX,
        ..DetectorOptions::default()
    };
    Detector::with_options(net, options)
}

/// Pushes every event through a new detector and counts the detections.
fn run(net: &Net, events: Vec<Event>) -> usize {
    run_on(detector(net), events)
}

/// Pushes every event through `d` and counts the detections.
fn run_on(mut d: Detector, events: Vec<Event>) -> usize {
    run_kept(&mut d, events) + d.finish().len()
}

/// Benchmarks `name`: `run` over a fresh copy of `evs`; the detections are printed
/// once.
fn bench(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, net: &Net, evs: &[Event]) {
    let mut shown = false;
    g.bench_function(name, |b| {
        b.iter_batched(
            || evs.to_vec(),
            |evs| {
                let found = run(net, evs);
                if !shown {
                    shown = true;
                    eprintln!("{name}: {found} detections");
                }
                black_box(found)
            },
            BatchSize::PerIteration,
        )
    });
}

fn push(c: &mut Criterion) {
    let mut g = c.benchmark_group("states");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    let heavy = heavy_net();
    // 10,000 objects over the zones' square, each reporting every 10 s or so.
    let evs = events(&heavy, &stream(10_000, 10_000.0, 0.0, 60.0, 0.001, EVENTS));
    bench(&mut g, "push/net=heavy/keys=1e4/events=1e6", &heavy, &evs);
    let close = close_net();
    // 1,000,000 events over 1,000 and 10,000 objects; then the same density and the
    // same history per object (100 reports, 1,000 s): the far objects add their own
    // reports and nothing else, so the cost per event and the detections per event
    // are alike for every N, and any growth of the cost with N is what the objects
    // far away cost.
    let series = [1_000, 10_000]
        .map(|objects| (objects, EVENTS, "events=1e6".to_owned()))
        .into_iter()
        .chain(
            [1_000, 10_000, 100_000]
                .map(|objects| (objects, objects * REPORTS, format!("reports={REPORTS}"))),
        );
    for (objects, n, length) in series {
        g.throughput(Throughput::Elements(n as u64));
        let dt = 10.0 / objects as f64;
        let evs = events(
            &close,
            &stream(objects, close_side(objects), 4.0e5, 50.0, dt, n),
        );
        let name = format!("push/net=close/objects={objects}/{length}");
        bench(&mut g, &name, &close, &evs);
    }
    // The 10,000 objects' 100 reports each, with F more objects far away.
    let (objects, n) = (10_000, 10_000 * REPORTS);
    g.throughput(Throughput::Elements(n as u64));
    let near = events(
        &close,
        &stream(
            objects,
            close_side(objects),
            4.0e5,
            50.0,
            10.0 / objects as f64,
            n,
        ),
    );
    for far in [0, 10_000, 100_000] {
        let before = events(&close, &far_pairs(far, 1_700_000_000.0));
        let name = format!("push/net=close/objects=1e4/far={far}");
        let mut shown = false;
        // The detector, which holds the far objects, is made and dropped off the
        // clock.
        g.bench_function(&name, |b| {
            b.iter_batched_ref(
                || {
                    let mut d = detector(&close);
                    let held = run_kept(&mut d, before.to_vec());
                    assert_eq!(held, far / 2, "every far pair holds");
                    (d, near.to_vec())
                },
                |(d, evs)| {
                    let found = run_kept(d, std::mem::take(evs));
                    if !shown {
                        shown = true;
                        eprintln!("{name}: {found} detections");
                    }
                    black_box(found)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// Pushes every event through `d`, which it keeps, and counts the detections.
fn run_kept(d: &mut Detector, events: Vec<Event>) -> usize {
    let mut out = Vec::new();
    let mut found = 0usize;
    for e in events {
        d.push_into(e, &mut out).expect("in order");
        found += out.len();
        out.clear();
    }
    found
}

/// The side of the square `objects` objects fill with about five others within 500 m
/// of each (one object per π·500²/5 m²); the square lies far from the origin, as
/// projected coordinates do.
fn close_side(objects: usize) -> f64 {
    (objects as f64 * std::f64::consts::PI * 500.0 * 500.0 / 5.0).sqrt()
}

criterion_group!(benches, push);
criterion_main!(benches);
