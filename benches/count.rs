//! Benchmarks of the counting index (`src/count`): events per second through it on
//! seeded uniform and clustered streams, planar and WGS84; against batch Apriori
//! recomputed from the snapshot per event; the grid against the R*-tree; and
//! ten rules in one shared index against one index per rule.
//!
//! Every stream has 1,000 points in the live window (one event per millisecond, a
//! one-second window); the distance is calibrated so that a new point has on average
//! 5, 20 or 50 earlier live points closer than it (`nbrs=`). One criterion iteration
//! is one event, processed by an index that has run since the start of the stream, so
//! the figures are steady-state events/s. Each benchmark also prints the distance, the
//! matches per event and the index's live sets per level.
//!
//! - `index/{uniform,clustered,wgs84-uniform}/nbrs=K/n=N`: one rule, the grid.
//! - `index/uniform-live=20000/nbrs=5/n=3`: 20 times as many live points.
//! - `tree/…/n=3`: the same index with the R*-tree finding neighbours.
//! - `apriori/uniform/nbrs=K/n=N`: the batch method (not run for 50 neighbours and
//!   n ≥ 4, where it rebuilds over a million sets per event). Before the benchmarks
//!   run, it is checked to report as many matches as the index, event by event.
//! - `rules10/{shared,separate}/uniform/nbrs=K`: ten rules (n 3 or 4, distances
//!   64–100%, windows 46–100% of the workload's) in one index, or one index each.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::{FxHashMap, FxHashSet};

// The counting index is crate-private: the `bench` feature opens it as `ccpn::bench`.
use ccpn::bench::{distance, CountIndex, Lookup, Matches, Rule};
use ccpn::{Point, Space, Timestamp};

/// Live points in the window.
const LIVE: usize = 1_000;
/// Microseconds between events.
const STEP: i64 = 1_000;
/// Events generated per stream (replayed with shifted times when exhausted).
const STREAM: usize = 60_000;
/// The cap on kept sets.
const MAX_SETS: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Uniform,
    Clustered,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Uniform => "uniform",
            Shape::Clustered => "clustered",
        }
    }
}

/// A seeded stream of locations, with the distance that gives `nbrs` neighbours.
struct Workload {
    space: Space,
    points: Vec<Point>,
    distance: f64,
    /// Live points in the window.
    live: usize,
}

fn normal(rng: &mut SmallRng) -> f64 {
    let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

impl Workload {
    fn new(space: Space, shape: Shape, nbrs: f64, seed: u64) -> Workload {
        Workload::with_live(space, shape, nbrs, seed, LIVE)
    }

    fn with_live(space: Space, shape: Shape, nbrs: f64, seed: u64, live: usize) -> Workload {
        let mut rng = SmallRng::seed_from_u64(seed);
        // A 1000 × 1000 square, or about 50 × 44 km around Taipei.
        let (x0, y0, w, h) = match space {
            Space::Planar => (0.0, 0.0, 1000.0, 1000.0),
            Space::Wgs84 => (121.0, 24.8, 0.5, 0.4),
        };
        let centres: Vec<(f64, f64)> = (0..20)
            .map(|_| (x0 + rng.random::<f64>() * w, y0 + rng.random::<f64>() * h))
            .collect();
        let points = (0..STREAM)
            .map(|_| match shape {
                Shape::Uniform => Point {
                    x: x0 + rng.random::<f64>() * w,
                    y: y0 + rng.random::<f64>() * h,
                },
                Shape::Clustered => {
                    // 90% around one of 20 centres, 10% background.
                    if rng.random::<f64>() < 0.1 {
                        Point {
                            x: x0 + rng.random::<f64>() * w,
                            y: y0 + rng.random::<f64>() * h,
                        }
                    } else {
                        let c = centres[rng.random_range(0..centres.len())];
                        Point {
                            x: c.0 + normal(&mut rng) * w / 60.0,
                            y: c.1 + normal(&mut rng) * h / 60.0,
                        }
                    }
                }
            })
            .collect();
        let mut wl = Workload {
            space,
            points,
            distance: 0.0,
            live,
        };
        wl.distance = wl.calibrate(nbrs);
        wl
    }

    /// Approximate distance (local equirectangular metres on WGS84): for calibration only.
    fn rough(&self, a: Point, b: Point) -> f64 {
        match self.space {
            Space::Planar => ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt(),
            Space::Wgs84 => {
                let k = 111_195.0;
                let dx = (a.x - b.x) * k * a.y.to_radians().cos();
                let dy = (a.y - b.y) * k;
                (dx * dx + dy * dy).sqrt()
            }
        }
    }

    /// The distance at which a point has `nbrs` earlier live points closer, on average.
    fn calibrate(&self, nbrs: f64) -> f64 {
        let sample = self.live..self.live + 400;
        let mut dists: Vec<f64> = Vec::new();
        for i in sample.clone() {
            for j in i - self.live..i {
                dists.push(self.rough(self.points[j], self.points[i]));
            }
        }
        // The k-th smallest of all sampled pair distances, k = nbrs × samples.
        let k = ((nbrs * sample.len() as f64) as usize).min(dists.len() - 1);
        dists.select_nth_unstable_by(k, f64::total_cmp);
        dists[k]
    }

    /// Event `i` of the endless replay: (time, location).
    fn event(&self, i: usize) -> (Timestamp, Point) {
        let t = 1_700_000_000_000_000 + i as i64 * STEP;
        (Timestamp::from_micros(t).unwrap(), self.points[i % STREAM])
    }

    fn window(&self) -> i64 {
        self.live as i64 * STEP
    }
}

/// A subject driven one event per iteration.
trait Subject {
    fn push(&mut self, i: usize, time: Timestamp, at: Point) -> usize;

    /// Takes an event before the measurement starts.
    fn fill(&mut self, i: usize, time: Timestamp, at: Point) {
        self.push(i, time, at);
    }

    /// The state worth reporting after the run.
    fn describe(&self) -> String {
        String::new()
    }
}

struct Index(CountIndex<u32, ()>, Matches<u32>);

impl Subject for Index {
    fn push(&mut self, i: usize, time: Timestamp, at: Point) -> usize {
        self.1.clear();
        self.0
            .insert(i as u64, time, at, None, i as u32, &mut self.1);
        self.1.len()
    }

    fn describe(&self) -> String {
        format!(
            ", live sets {:?}, refused {}",
            self.0.live_sets(),
            self.0.refused()
        )
    }
}

struct Separate(Vec<CountIndex<u32, ()>>, Matches<u32>);

impl Subject for Separate {
    fn push(&mut self, i: usize, time: Timestamp, at: Point) -> usize {
        self.1.clear();
        for ix in &mut self.0 {
            ix.insert(i as u64, time, at, None, i as u32, &mut self.1);
        }
        self.1.len()
    }
}

/// The batch method: on every event, take the snapshot (the points in the
/// window), compute L2 from it, grow L3 … Ln by joining (k−1)-sets that share k−2
/// members and whose two other members are a pair in L2, and report the n-sets that
/// contain the new point. L2 uses a grid over the snapshot (as a spatial database
/// would use its index); the join pairs sets with a common (k−2)-prefix, which
/// generates each candidate once.
struct Apriori {
    space: Space,
    n: usize,
    distance: f64,
    window: i64,
    snapshot: std::collections::VecDeque<(u32, i64, Point)>,
}

impl Apriori {
    fn pairs(&self) -> Vec<(u32, u32)> {
        // Planar streams only: cells of side d.
        let cell = self.distance;
        let key = |p: Point| ((p.x / cell).floor() as i64, (p.y / cell).floor() as i64);
        let mut grid: FxHashMap<(i64, i64), Vec<usize>> = FxHashMap::default();
        for (k, s) in self.snapshot.iter().enumerate() {
            grid.entry(key(s.2)).or_default().push(k);
        }
        let mut pairs = Vec::new();
        for (k, s) in self.snapshot.iter().enumerate() {
            let (cx, cy) = key(s.2);
            for x in cx - 1..=cx + 1 {
                for y in cy - 1..=cy + 1 {
                    for &j in grid.get(&(x, y)).into_iter().flatten() {
                        if j > k && distance(self.space, s.2, self.snapshot[j].2) < self.distance {
                            pairs.push((s.0, self.snapshot[j].0));
                        }
                    }
                }
            }
        }
        pairs
    }
}

impl Subject for Apriori {
    fn fill(&mut self, i: usize, time: Timestamp, at: Point) {
        let now = time.micros();
        while self
            .snapshot
            .front()
            .is_some_and(|s| now - s.1 > self.window)
        {
            self.snapshot.pop_front();
        }
        self.snapshot.push_back((i as u32, now, at));
    }

    fn push(&mut self, i: usize, time: Timestamp, at: Point) -> usize {
        self.fill(i, time, at);
        let pairs = self.pairs();
        let l2: FxHashSet<(u32, u32)> = pairs.iter().copied().collect();
        let mut level: Vec<Vec<u32>> = pairs.iter().map(|&(a, b)| vec![a, b]).collect();
        for _ in 3..=self.n {
            level.sort_unstable();
            let mut next = Vec::new();
            let mut start = 0;
            while start < level.len() {
                let k = level[start].len();
                let prefix = &level[start][..k - 1];
                let end = start
                    + level[start..]
                        .iter()
                        .take_while(|s| &s[..k - 1] == prefix)
                        .count();
                for x in start..end {
                    for y in x + 1..end {
                        let (a, b) = (level[x][k - 1], level[y][k - 1]);
                        if l2.contains(&(a.min(b), a.max(b))) {
                            let mut u = level[x].clone();
                            u.push(b);
                            next.push(u);
                        }
                    }
                }
                start = end;
            }
            level = next;
        }
        let e = i as u32;
        level.iter().filter(|s| s.last() == Some(&e)).count()
    }
}

/// Runs `subject` one event per iteration after filling the window.
fn drive<S: Subject>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    wl: &Workload,
    subject: S,
) {
    let state = RefCell::new((subject, 0usize));
    {
        let (s, i) = &mut *state.borrow_mut();
        while *i < wl.live {
            let (t, p) = wl.event(*i);
            s.fill(*i, t, p);
            *i += 1;
        }
    }
    let mut found = 0usize;
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let (s, i) = &mut *state.borrow_mut();
            let start = Instant::now();
            for _ in 0..iters {
                let (t, p) = wl.event(*i);
                found += black_box(s.push(*i, t, p));
                *i += 1;
            }
            start.elapsed()
        })
    });
    let (s, events) = &*state.borrow();
    eprintln!(
        "{name}: d = {:.4}, {:.2} matches/event{}",
        wl.distance,
        found as f64 / (*events - wl.live).max(1) as f64,
        s.describe()
    );
}

fn index(wl: &Workload, rules: Vec<Rule>, lookup: Lookup) -> Index {
    Index(
        CountIndex::with_lookup(wl.space, rules, MAX_SETS, lookup),
        Matches::new(),
    )
}

fn rule(wl: &Workload, n: usize) -> Rule {
    Rule {
        n,
        distance: wl.distance,
        window: wl.window(),
        distinct: false,
    }
}

/// Ten rules around the workload's: n 3 or 4, distances 60–100%, windows 40–100%.
fn ten_rules(wl: &Workload) -> Vec<Rule> {
    (0..10)
        .map(|k| Rule {
            n: 3 + k % 2,
            distance: wl.distance * (1.0 - 0.04 * k as f64),
            window: wl.window() * (100 - 6 * k as i64) / 100,
            distinct: false,
        })
        .collect()
}

/// The batch method and the index agree, event by event.
fn check_apriori() {
    for (k, n) in [(5.0, 3), (5.0, 5), (20.0, 4)] {
        let wl = Workload::new(Space::Planar, Shape::Uniform, k, 7);
        let mut index = index(&wl, vec![rule(&wl, n)], Lookup::Grid);
        let mut batch = Apriori {
            space: wl.space,
            n,
            distance: wl.distance,
            window: wl.window(),
            snapshot: Default::default(),
        };
        for i in 0..wl.live + 100 {
            let (t, p) = wl.event(i);
            if i < wl.live {
                index.fill(i, t, p);
                batch.fill(i, t, p);
            } else {
                assert_eq!(index.push(i, t, p), batch.push(i, t, p), "event {i}");
            }
        }
    }
}

fn benches(c: &mut Criterion) {
    check_apriori();
    let mut g = c.benchmark_group("count");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500))
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements(1));
    let nbrs = [5.0, 20.0, 50.0];
    for (space, tag) in [(Space::Planar, ""), (Space::Wgs84, "wgs84-")] {
        for shape in [Shape::Uniform, Shape::Clustered] {
            if space == Space::Wgs84 && shape == Shape::Clustered {
                continue;
            }
            for (s, &k) in nbrs.iter().enumerate() {
                let wl = Workload::new(space, shape, k, 7 + s as u64);
                for n in 3..=5 {
                    let name = format!("index/{tag}{}/nbrs={k}/n={n}", shape.name());
                    drive(
                        &mut g,
                        &name,
                        &wl,
                        index(&wl, vec![rule(&wl, n)], Lookup::Grid),
                    );
                }
            }
        }
    }
    // The same neighbours among 20 times as many live points: the cost stays.
    let wl = Workload::with_live(Space::Planar, Shape::Uniform, 5.0, 7, 20 * LIVE);
    let name = "index/uniform-live=20000/nbrs=5/n=3";
    drive(
        &mut g,
        name,
        &wl,
        index(&wl, vec![rule(&wl, 3)], Lookup::Grid),
    );
    for space in [Space::Planar, Space::Wgs84] {
        let tag = if space == Space::Wgs84 { "wgs84-" } else { "" };
        for (s, &k) in nbrs.iter().enumerate().take(2) {
            let wl = Workload::new(space, Shape::Uniform, k, 7 + s as u64);
            let name = format!("tree/{tag}uniform/nbrs={k}/n=3");
            drive(
                &mut g,
                &name,
                &wl,
                index(&wl, vec![rule(&wl, 3)], Lookup::Tree),
            );
        }
    }
    for (s, &k) in nbrs.iter().enumerate() {
        let wl = Workload::new(Space::Planar, Shape::Uniform, k, 7 + s as u64);
        for n in 3..=5 {
            if k > 20.0 && n > 3 {
                continue; // over a million sets rebuilt per event: a second per event
            }
            let name = format!("apriori/uniform/nbrs={k}/n={n}");
            let batch = Apriori {
                space: wl.space,
                n,
                distance: wl.distance,
                window: wl.window(),
                snapshot: Default::default(),
            };
            drive(&mut g, &name, &wl, batch);
        }
    }
    for (s, &k) in nbrs.iter().enumerate().take(2) {
        let wl = Workload::new(Space::Planar, Shape::Uniform, k, 7 + s as u64);
        let rules = ten_rules(&wl);
        let name = format!("rules10/shared/uniform/nbrs={k}");
        drive(&mut g, &name, &wl, index(&wl, rules.clone(), Lookup::Grid));
        let name = format!("rules10/separate/uniform/nbrs={k}");
        let separate = rules
            .into_iter()
            .map(|r| CountIndex::new(wl.space, vec![r], MAX_SETS))
            .collect();
        drive(&mut g, &name, &wl, Separate(separate, Matches::new()));
    }
    g.finish();
}

criterion_group!(count_benches, benches);
criterion_main!(count_benches);
