//! Tests of the counting index: hand-checked cases, and property tests against the
//! brute-force reference, planar and WGS84, one rule and many.

use proptest::prelude::*;

use crate::event::{Point, Space, Timestamp};

use super::reference::Reference;
use super::{CountIndex, Lookup, Matches as Flat, Rule};

impl<T: Clone> Flat<T> {
    /// The matches as owned pairs.
    fn to_vec(&self) -> Vec<(usize, Vec<T>)> {
        self.iter().map(|(r, m)| (r, m.to_vec())).collect()
    }
}

const SEC: i64 = 1_000_000;

/// One insertion: cause, time (µs), location, distinct value.
#[derive(Clone, Debug)]
struct Ev {
    cause: u64,
    time: i64,
    at: Point,
    distinct: Option<u8>,
}

fn ev(cause: u64, secs: f64, x: f64, y: f64, distinct: Option<u8>) -> Ev {
    Ev {
        cause,
        time: (secs * 1e6).round() as i64,
        at: Point { x, y },
        distinct,
    }
}

fn ts(us: i64) -> Timestamp {
    Timestamp::from_micros(us).unwrap()
}

fn rule(n: usize, distance: f64, window_s: f64, distinct: bool) -> Rule {
    Rule {
        n,
        distance,
        window: (window_s * 1e6).round() as i64,
        distinct,
    }
}

type Matches = Vec<(usize, Vec<usize>)>;

/// Each insertion's matches, payloads being insertion indices.
fn run(space: Space, rules: &[Rule], events: &[Ev], lookup: Lookup) -> Vec<Matches> {
    let mut index = CountIndex::with_lookup(space, rules.to_vec(), 10_000_000, lookup);
    let out = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut out = Flat::new();
            index.insert(e.cause, ts(e.time), e.at, e.distinct, i, &mut out);
            out.to_vec()
        })
        .collect();
    assert_eq!(index.refused(), 0);
    out
}

fn reference(space: Space, rules: &[Rule], events: &[Ev]) -> Vec<Matches> {
    let mut r = Reference::new(space, rules.to_vec());
    events
        .iter()
        .map(|e| r.insert(e.cause, ts(e.time), e.at, e.distinct))
        .collect()
}

fn check(space: Space, rules: &[Rule], events: &[Ev]) {
    let want = reference(space, rules, events);
    for lookup in [Lookup::Grid, Lookup::Tree] {
        let got = run(space, rules, events, lookup);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g, w,
                "{lookup:?}: insertion {i} of {events:?} with {rules:?}"
            );
        }
    }
}

fn matches_of(space: Space, rules: &[Rule], events: &[Ev]) -> Vec<Matches> {
    let got = run(space, rules, events, Lookup::Grid);
    assert_eq!(got, reference(space, rules, events));
    got
}

// ---------------------------------------------------------------- hand-checked cases

#[test]
fn a_side_exactly_d_is_not_close() {
    // Sides 3, 4 and 5.
    let events = [
        ev(1, 0.0, 0.0, 0.0, None),
        ev(2, 1.0, 3.0, 4.0, None),
        ev(3, 2.0, 3.0, 0.0, None),
    ];
    let none = matches_of(Space::Planar, &[rule(3, 5.0, 10.0, false)], &events);
    assert!(none.iter().all(Vec::is_empty));
    let one = matches_of(Space::Planar, &[rule(3, 5.000_001, 10.0, false)], &events);
    assert_eq!(one[2], vec![(0, vec![0, 1, 2])]);
    assert!(one[0].is_empty() && one[1].is_empty());
}

#[test]
fn a_geodesic_side_exactly_d_is_not_close() {
    let a = Point { x: 121.5, y: 25.0 };
    let b = Point {
        x: 121.5004,
        y: 25.0003,
    };
    let d = crate::spatial::distance(Space::Wgs84, a, b);
    let events = [ev(1, 0.0, a.x, a.y, None), ev(2, 0.0, b.x, b.y, None)];
    let none = matches_of(Space::Wgs84, &[rule(2, d, 1.0, false)], &events);
    assert!(none[1].is_empty());
    let one = matches_of(Space::Wgs84, &[rule(2, d.next_up(), 1.0, false)], &events);
    assert_eq!(one[1], vec![(0, vec![0, 1])]);
}

#[test]
fn the_window_includes_its_end() {
    let rules = [rule(2, 10.0, 1.0, false)];
    let fits = [ev(1, 0.0, 0.0, 0.0, None), ev(2, 1.0, 1.0, 0.0, None)];
    assert_eq!(
        matches_of(Space::Planar, &rules, &fits)[1],
        vec![(0, vec![0, 1])]
    );
    let late = [ev(1, 0.0, 0.0, 0.0, None), ev(2, 1.000_001, 1.0, 0.0, None)];
    assert!(matches_of(Space::Planar, &rules, &late)[1].is_empty());
    // A zero window pairs only simultaneous points.
    let zero = [rule(2, 10.0, 0.0, false)];
    let same = [ev(1, 5.0, 0.0, 0.0, None), ev(2, 5.0, 1.0, 0.0, None)];
    assert_eq!(matches_of(Space::Planar, &zero, &same)[1].len(), 1);
}

#[test]
fn distinct_values_must_differ() {
    let rules = [rule(3, 10.0, 10.0, true), rule(3, 10.0, 10.0, false)];
    let events = [
        ev(1, 0.0, 0.0, 0.0, Some(1)),
        ev(2, 0.0, 1.0, 0.0, Some(1)),
        ev(3, 0.0, 0.0, 1.0, Some(2)),
        ev(4, 0.0, 1.0, 1.0, Some(3)),
        ev(5, 0.0, 0.5, 0.5, None),
    ];
    let got = matches_of(Space::Planar, &rules, &events);
    assert_eq!(got[2], vec![(1, vec![0, 1, 2])]);
    assert_eq!(
        got[3],
        vec![
            (0, vec![0, 2, 3]),
            (0, vec![1, 2, 3]),
            (1, vec![0, 1, 3]),
            (1, vec![0, 2, 3]),
            (1, vec![1, 2, 3]),
        ]
    );
    // No value: in no distinct set.
    assert!(got[4].iter().all(|(r, _)| *r == 1));
    assert_eq!(got[4].len(), 6);
}

#[test]
fn one_cause_never_pairs_with_itself() {
    let rules = [rule(3, 10.0, 10.0, false), rule(2, 10.0, 10.0, false)];
    let events = [
        ev(7, 0.0, 0.0, 0.0, None),
        ev(7, 0.0, 1.0, 0.0, None),
        ev(8, 0.0, 0.0, 1.0, None),
    ];
    let got = matches_of(Space::Planar, &rules, &events);
    assert!(got[1].is_empty());
    assert_eq!(got[2], vec![(1, vec![0, 2]), (1, vec![1, 2])]);
}

#[test]
fn payloads_come_in_insertion_order() {
    let mut index = CountIndex::new(Space::Planar, vec![rule(3, 2.0, 10.0, false)], 1000);
    let mut out = Flat::new();
    for (i, x) in [0.0, 1.0, 0.5].into_iter().enumerate() {
        index.insert(
            i as u64,
            ts(0),
            Point { x, y: 0.0 },
            None::<u8>,
            ["a", "b", "c"][i],
            &mut out,
        );
    }
    assert_eq!(out.to_vec(), vec![(0, vec!["a", "b", "c"])]);
}

#[test]
fn a_set_outlives_a_short_window_for_a_long_one() {
    // r0 reaches 10 units for 1 s; r1 reaches 3 units for 100 s.
    let rules = vec![rule(3, 10.0, 1.0, false), rule(3, 3.0, 100.0, false)];
    let mut index = CountIndex::new(Space::Planar, rules, 1000);
    let mut out = Flat::new();
    let p = |x: f64| Point { x, y: 0.0 };
    index.insert(0, ts(0), p(0.0), None::<u8>, 0, &mut out);
    index.insert(1, ts(SEC / 2), p(5.0), None, 1, &mut out); // r0 only
    index.insert(2, ts(SEC / 2), p(1.0), None, 2, &mut out); // {0,2}: r0, r1; {1,2}: r0
    assert_eq!(index.live_sets(), vec![3, 0]);
    assert_eq!(out.to_vec(), vec![(0, vec![0, 1, 2])]);
    out.clear();
    index.expire(ts(2 * SEC));
    // The r0-only pairs are gone; {0,2} stays for r1.
    assert_eq!(index.live_sets(), vec![1, 0]);
    assert_eq!(index.live_points(), 3);
    index.insert(3, ts(50 * SEC), p(0.5), None, 3, &mut out);
    assert_eq!(out.to_vec(), vec![(1, vec![0, 2, 3])]);
    index.expire(ts(200 * SEC));
    assert_eq!((index.live_points(), index.live_sets()), (0, vec![0, 0]));
}

#[test]
fn small_and_degenerate_rules_do_not_panic() {
    let rules = vec![
        rule(0, 1.0, 1.0, false),
        rule(1, 1.0, 1.0, true),
        rule(usize::MAX, 5.0, 10.0, false),
        rule(3, 0.0, 10.0, false),
        rule(3, -1.0, 10.0, false),
        rule(3, f64::NAN, 10.0, false),
        rule(3, f64::INFINITY, 10.0, false),
        rule(3, f64::MIN_POSITIVE, 0.0, false),
        rule(2, 1e300, -1.0, false),
        rule(4, 5.0, 0.0, false),
    ];
    let events: Vec<Ev> = (0..12)
        .map(|i| {
            ev(
                i,
                (i / 4) as f64,
                (i % 3) as f64,
                0.0,
                (i % 2 == 0).then_some(1),
            )
        })
        .chain([
            ev(99, 3.0, 1e300, -1e300, None),
            ev(100, 3.0, 0.0, 0.0, None),
        ])
        .collect();
    check(Space::Planar, &rules, &events);
    let wgs: Vec<Ev> = events
        .iter()
        .map(|e| Ev {
            at: Point {
                x: e.at.x.clamp(-180.0, 180.0),
                y: e.at.y.clamp(-90.0, 90.0),
            },
            ..e.clone()
        })
        .collect();
    check(Space::Wgs84, &rules, &wgs);
    // Coordinates whose rounding exceeds the distance: the grid scans instead.
    let far = [
        ev(1, 0.0, 1e15, 1e15, None),
        ev(2, 0.0, 1e15, 1e15, None),
        ev(3, 0.0, 1e15 + 0.125, 1e15, None),
    ];
    let got = matches_of(Space::Planar, &[rule(2, 1e-3, 1.0, false)], &far);
    assert_eq!(got[1], vec![(0, vec![0, 1])]);
    assert!(got[2].is_empty());
    // Times going backwards break the contract, not the index.
    let mut index = CountIndex::new(Space::Planar, rules.clone(), 100);
    let mut out = Flat::new();
    for (i, e) in events.iter().enumerate() {
        index.insert(
            e.cause,
            ts(-e.time * (i as i64 % 3)),
            e.at,
            e.distinct,
            0u8,
            &mut out,
        );
        index.expire(ts(e.time * (i as i64 % 2)));
    }
    // The huge rule grew its levels; the reported list stays short.
    let mut index = CountIndex::new(Space::Planar, rules, 100);
    let mut out = Flat::new();
    for e in &events {
        index.insert(e.cause, ts(e.time), e.at, e.distinct, 0u8, &mut out);
    }
    assert!(index.live_sets().len() <= 65);
}

#[test]
fn wgs84_across_the_antimeridian_and_at_the_poles() {
    let rules = [rule(3, 30.0, 10.0, false)];
    // About 11 m apart, on both sides of lon 180.
    let seam = [
        ev(1, 0.0, 179.99995, 0.0, None),
        ev(2, 0.0, -179.99995, 0.0, None),
        ev(3, 0.0, 180.0, 0.00005, None),
    ];
    assert_eq!(
        matches_of(Space::Wgs84, &rules, &seam)[2],
        vec![(0, vec![0, 1, 2])]
    );
    // Around the north pole: lon differs wildly, the points are metres apart.
    let pole = [
        ev(1, 0.0, 0.0, 89.9999, None),
        ev(2, 0.0, 120.0, 89.9999, None),
        ev(3, 0.0, -120.0, 89.9999, None),
    ];
    assert_eq!(
        matches_of(Space::Wgs84, &rules, &pole)[2],
        vec![(0, vec![0, 1, 2])]
    );
    let south = [
        ev(1, 0.0, 10.0, -90.0, None),
        ev(2, 0.0, 170.0, -89.9999, None),
        ev(3, 0.0, -100.0, -89.9999, None),
    ];
    assert_eq!(
        matches_of(Space::Wgs84, &rules, &south)[2],
        vec![(0, vec![0, 1, 2])]
    );
}

#[test]
fn the_cap_bounds_live_sets() {
    let cap = 500;
    let mut index = CountIndex::new(Space::Planar, vec![rule(5, 1.0, 10.0, false)], cap);
    let mut out = Flat::new();
    let mut reported = 0;
    for i in 0..60u64 {
        index.insert(i, ts(0), Point { x: 3.0, y: 3.0 }, None::<u8>, i, &mut out);
        let live: usize = index.live_sets().iter().sum();
        assert!(live <= cap, "{live}");
        reported += out.len();
        out.clear();
    }
    assert!(index.refused() > 0);
    // Every match found extends kept sets only: fewer than all C(60, 5).
    assert!(reported > 0 && reported < 5_461_512);
    index.expire(ts(11 * SEC));
    assert_eq!(index.live_sets().iter().sum::<usize>(), 0);
    assert!(out.is_empty());
    // Room again: a new cluster is found in full.
    for i in 0..5u64 {
        index.insert(
            100 + i,
            ts(12 * SEC),
            Point { x: 0.0, y: 0.0 },
            None,
            i,
            &mut out,
        );
    }
    assert_eq!(out.to_vec(), vec![(0, vec![0, 1, 2, 3, 4])]);
}

#[test]
fn the_cap_keeps_first_come_sets() {
    // With a cap of 1, only the first pair is kept: {0,1}; {0,1,2} is then found, and
    // {0,2}, {1,2} are refused.
    let mut index = CountIndex::new(Space::Planar, vec![rule(3, 1.0, 10.0, false)], 1);
    let mut out = Flat::new();
    for i in 0..3u64 {
        index.insert(i, ts(0), Point { x: 0.0, y: 0.0 }, None::<u8>, i, &mut out);
    }
    assert_eq!(out.to_vec(), vec![(0, vec![0, 1, 2])]);
    assert_eq!(index.refused(), 2);
    index.insert(3, ts(0), Point { x: 0.0, y: 0.0 }, None, 3, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out.to_vec()[1], (0, vec![0, 1, 3]));
}

// ---------------------------------------------------------------- properties

/// Rules with n in 2..=6, distances in `dist`, windows 0–6 s.
fn rules_strategy(
    count: std::ops::RangeInclusive<usize>,
    dist: (f64, f64),
) -> impl Strategy<Value = Vec<Rule>> {
    prop::collection::vec(
        (2usize..=6, dist.0..dist.1, 0i64..=6, any::<bool>()).prop_map(
            |(n, distance, w, distinct)| Rule {
                n,
                distance,
                window: w * SEC,
                distinct,
            },
        ),
        count,
    )
}

/// Events: time steps of 0–2 s (so windows end exactly on points), a cause repeated
/// now and then, distinct values among three or none; offsets from `place`.
fn events_strategy(
    len: usize,
    extent: f64,
    place: fn(f64, f64) -> Point,
) -> impl Strategy<Value = Vec<Ev>> {
    prop::collection::vec(
        (
            0i64..=2,
            prop::bool::weighted(0.2),
            0.0..extent,
            0.0..extent,
            prop::option::weighted(0.8, 0u8..3),
        ),
        1..=len,
    )
    .prop_map(move |steps| {
        let (mut time, mut cause) = (0, 0);
        steps
            .into_iter()
            .map(|(dt, same, x, y, distinct)| {
                time += dt * SEC / 2;
                if !same {
                    cause += 1;
                }
                Ev {
                    cause,
                    time,
                    at: place(x, y),
                    distinct,
                }
            })
            .collect()
    })
}

fn planar(x: f64, y: f64) -> Point {
    Point { x, y }
}

/// Offsets in metres east and north of a base point, to lon/lat (wrapped, clamped).
fn offset(base: (f64, f64), east: f64, north: f64) -> Point {
    let lat = (base.1 + north / 111_000.0).clamp(-90.0, 90.0);
    let scale = 111_000.0 * base.1.to_radians().cos().max(1e-6);
    let mut lon = base.0 + east / scale;
    if lon > 180.0 {
        lon -= 360.0;
    }
    Point { x: lon, y: lat }
}

fn equator(e: f64, n: f64) -> Point {
    offset((0.0, 0.0), e, n)
}
fn antimeridian(e: f64, n: f64) -> Point {
    offset((179.997, 10.0), e, n)
}
fn north(e: f64, n: f64) -> Point {
    offset((40.0, 89.0), e - 300.0, n - 300.0)
}
fn north_pole(e: f64, n: f64) -> Point {
    offset((-170.0, 89.997), e - 300.0, n - 300.0)
}
fn south(e: f64, n: f64) -> Point {
    offset((-120.0, -89.0), e - 300.0, n - 300.0)
}

const PLACES: [fn(f64, f64) -> Point; 5] = [equator, antimeridian, north, north_pole, south];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn one_planar_rule_agrees_with_the_reference(
        rules in rules_strategy(1..=1, (1.0, 5.0)),
        events in events_strategy(40, 6.0, planar),
    ) {
        check(Space::Planar, &rules, &events);
    }

    #[test]
    fn many_planar_rules_agree_with_the_reference(
        rules in rules_strategy(2..=5, (1.0, 5.0)),
        events in events_strategy(40, 6.0, planar),
    ) {
        check(Space::Planar, &rules, &events);
    }

    #[test]
    fn sparse_planar_rules_agree_with_the_reference(
        rules in rules_strategy(1..=3, (2.0, 8.0)),
        events in events_strategy(60, 40.0, planar),
    ) {
        // Many grid cells: the queries cross cell borders.
        check(Space::Planar, &rules, &events);
    }

    #[test]
    fn wgs84_rules_agree_with_the_reference(
        rules in rules_strategy(1..=4, (100.0, 450.0)),
        events in (0usize..PLACES.len()).prop_flat_map(|p| events_strategy(30, 600.0, PLACES[p])),
    ) {
        check(Space::Wgs84, &rules, &events);
    }

    #[test]
    fn the_shared_index_equals_one_index_per_rule(
        rules in rules_strategy(2..=6, (1.0, 5.0)),
        events in events_strategy(40, 6.0, planar),
    ) {
        let shared = run(Space::Planar, &rules, &events, Lookup::Grid);
        let separate: Vec<Vec<Matches>> = rules
            .iter()
            .map(|r| run(Space::Planar, std::slice::from_ref(r), &events, Lookup::Grid))
            .collect();
        for (i, got) in shared.iter().enumerate() {
            let want: Matches = separate
                .iter()
                .enumerate()
                .flat_map(|(r, per)| per[i].iter().map(move |(_, m)| (r, m.clone())))
                .collect();
            prop_assert_eq!(got, &want);
        }
    }

    #[test]
    fn expiring_early_changes_nothing(
        rules in rules_strategy(1..=3, (1.0, 5.0)),
        events in events_strategy(30, 6.0, planar),
    ) {
        // Expiring at every event's time before inserting it is what insert does itself.
        let mut index = CountIndex::new(Space::Planar, rules.clone(), 1_000_000);
        let mut got = Vec::new();
        for (i, e) in events.iter().enumerate() {
            index.expire(ts(e.time));
            index.expire(ts(e.time));
            let mut out = Flat::new();
            index.insert(e.cause, ts(e.time), e.at, e.distinct, i, &mut out);
            got.push(out.to_vec());
        }
        prop_assert_eq!(got, reference(Space::Planar, &rules, &events));
    }
}

#[test]
fn more_than_64_rules_make_groups() {
    let rules: Vec<Rule> = (0..70)
        .map(|i| rule(2 + i % 3, 1.0 + (i % 5) as f64, (i % 4) as f64, i % 7 == 0))
        .collect();
    let events: Vec<Ev> = (0..40)
        .map(|i| {
            let f = i as f64;
            ev(
                i,
                f * 0.3,
                (f * 2.7) % 6.0,
                (f * 1.3) % 5.0,
                Some((i % 3) as u8),
            )
        })
        .collect();
    check(Space::Planar, &rules, &events);
}
