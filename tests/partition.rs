#![allow(missing_docs)]

//! Partitioned detecting (`ccpn::partition`) against one detector: on random
//! streams, the partitions together report exactly one detector's detections, for a
//! keyed net, two spatial nets (planar, and WGS84 across the antimeridian and near a
//! pole) and a net that cannot be split.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use ccpn::partition::{Partitioned, Partitioner, Plan};
use ccpn::{Detection, Detector, DetectorOptions, Event, Net, Timestamp};

const KEYED: &str = r#"Net(
    zones: { "radar": Circle(center: (0.0, 0.0), radius: 6.0, anchor: "own") },
    events: {
        "own": Atomic(type: "S"),
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
        "ab": Seq(of: ["a", "b"], within: 20.0, key: "ship", context: Chronicle),
        "quiet": Not(start: "a", absent: "c", end: "b", within: 20.0, key: "ship"),
        "twice": Times(k: 2, of: "c", within: 10.0, key: "ship"),
        "during": A(start: "a", e: "c", end: "b", within: 30.0, key: "ship"),
        "tick": P(start: "a", period: 3.0, end: "b", within: 12.0, key: "ship"),
        "two": Any(m: 2, of: ["a", "b", "c"], within: 8.0, key: "ship", context: Continuous),
        "near": Dist(a: "a", b: "c", max: 5.0, within: 10.0, key: "ship"),
        "nw": Direction(rel: NW, of: "a", from: "b", within: 10.0, key: "ship"),
        "c_in": Within(of: "c", zones: ["radar"]),
        "late_in": Seq(of: ["ab", "c_in"], within: 30.0, key: "ship"),
    },
    outputs: ["ab", "quiet", "twice", "during", "tick", "two", "near", "nw", "c_in", "late_in"],
)"#;

const PLANAR: &str = r#"Net(
    zones: {
        "radar": Circle(center: (0.0, 0.0), radius: 6.0, anchor: "own"),
        "box": Rect(min: (10.0, 10.0), max: (20.0, 20.0)),
    },
    events: {
        "own": Atomic(type: "S"),
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
        "near": Dist(a: "a", b: "b", max: 3.0, within: 15.0),
        "near_c": Dist(a: "near", b: "c", max: 2.0, within: 15.0, context: Unrestricted),
        "trio": Count(of: "a", n: 3, distance: 4.0, window: 20.0),
        "trio_ships": Count(of: "b", n: 3, distance: 5.0, window: 20.0, distinct: "ship"),
        "pair_same": Dist(a: "c", b: "c", max: 4.0, within: 10.0, key: "ship"),
        "b_in": Within(of: "b", zones: ["radar", "box"]),
        "nw_box": Direction(rel: NW, of: "c", box: "box"),
    },
    outputs: ["near", "near_c", "trio", "trio_ships", "pair_same", "b_in", "nw_box"],
)"#;

const WGS84: &str = r#"Net(
    space: Wgs84,
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "near": Dist(a: "a", b: "b", max: 800.0, within: 15.0),
        "trio": Count(of: "a", n: 3, distance: 1000.0, window: 20.0),
    },
    outputs: ["near", "trio"],
)"#;

const GLOBAL: &str = r#"Net(
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "ab": Seq(of: ["a", "b"], within: 10.0),
        "trio": Count(of: "a", n: 3, distance: 4.0, window: 20.0),
    },
    outputs: ["ab", "trio"],
)"#;

/// One event: time step, type, location, ship.
type Spec = (u8, u8, (u16, u16), Option<u8>);

fn specs() -> impl Strategy<Value = Vec<Spec>> {
    prop::collection::vec(
        (
            prop_oneof![3 => Just(0u8), 3 => Just(1u8), 1 => 2..6u8],
            0..4u8,
            (0..400u16, 0..400u16),
            prop::option::weighted(0.85, 0..4u8),
        ),
        5..120,
    )
}

/// Events from specs; `place` maps a spec's grid location to the net's space.
fn events(specs: &[Spec], place: impl Fn(u16, u16) -> (f64, f64)) -> Vec<Event> {
    let mut t = 0u64;
    specs
        .iter()
        .enumerate()
        .map(|(i, &(dt, ty, (gx, gy), ship))| {
            t += u64::from(dt);
            let kind = ["A", "B", "C", "S"][ty as usize];
            let (x, y) = place(gx, gy);
            let mut e =
                Event::new(i as i64, kind, Timestamp::from_secs_f64(t as f64).unwrap()).at(x, y);
            if let Some(s) = ship {
                e = e.with("ship", format!("s{s}").as_str());
            }
            e
        })
        .collect()
}

/// A detection without its `seq`, comparable as part of a multiset.
fn key(d: &Detection) -> String {
    format!(
        "{} t={} at={:?} ids={:?} {:?} start={}",
        d.event,
        d.time.micros(),
        d.location,
        d.ids().collect::<Vec<_>>(),
        d.detail,
        d.start.micros()
    )
}

fn unlimited() -> DetectorOptions {
    DetectorOptions {
        max_tokens: usize::MAX,
        max_sets: usize::MAX,
        ..DetectorOptions::default()
    }
}

fn one(net: &Net, events: &[Event]) -> Vec<String> {
    let mut d = Detector::with_options(net, unlimited());
    let mut all: Vec<String> = Vec::new();
    for e in events {
        all.extend(d.push(e.clone()).unwrap().iter().map(key));
    }
    all.extend(d.finish().iter().map(key));
    all.sort();
    all
}

fn split(net: &Net, events: &[Event], partitions: u32) -> (Vec<String>, f64) {
    let mut p = Partitioned::new(net, partitions, unlimited());
    let mut all: Vec<Detection> = Vec::new();
    for e in events {
        all.extend(p.push(e.clone()).unwrap());
    }
    all.extend(p.finish());
    for (i, d) in all.iter().enumerate() {
        assert_eq!(d.seq, i as u64, "seq numbers run from 0 without gaps");
    }
    let mut keys: Vec<String> = all.iter().map(key).collect();
    keys.sort();
    (keys, p.copy_factor())
}

fn check(src: &str, events: &[Event], partitions: u32) -> Result<(), TestCaseError> {
    let net = Net::from_ron("p.ron", src).unwrap();
    let expected = one(&net, events);
    let (got, _) = split(&net, events, partitions);
    prop_assert_eq!(got, expected, "{} partitions", partitions);
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(128),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x9a27),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn keyed_net_splits_by_key(specs in specs(), partitions in 1..17u32) {
        let evs = events(&specs, |x, y| (f64::from(x) / 20.0, f64::from(y) / 20.0));
        check(KEYED, &evs, partitions)?;
    }

    #[test]
    fn planar_net_splits_by_space(specs in specs(), partitions in 1..17u32) {
        // 20 × 20 units: a dozen cells of side 4 × reach (reach 9).
        let evs = events(&specs, |x, y| (f64::from(x) / 10.0 - 10.0, f64::from(y) / 10.0 - 10.0));
        check(PLANAR, &evs, partitions)?;
    }

    #[test]
    fn wgs84_net_splits_across_the_antimeridian(specs in specs(), partitions in 1..17u32) {
        // About 4.4 km east and west of 180°, on the equator.
        let evs = events(&specs, |x, y| {
            let lon = 179.98 + f64::from(x) / 10_000.0;
            (if lon > 180.0 { lon - 360.0 } else { lon }, f64::from(y) / 10_000.0)
        });
        check(WGS84, &evs, partitions)?;
    }

    #[test]
    fn wgs84_net_splits_near_a_pole(specs in specs(), partitions in 1..17u32) {
        let evs = events(&specs, |x, y| (f64::from(x) * 0.9 - 180.0, 89.95 + f64::from(y) / 10_000.0));
        check(WGS84, &evs, partitions)?;
    }

    #[test]
    fn global_net_stays_whole(specs in specs(), partitions in 1..17u32) {
        let evs = events(&specs, |x, y| (f64::from(x) / 10.0, f64::from(y) / 10.0));
        check(GLOBAL, &evs, partitions)?;
    }
}

#[test]
fn plans_are_read_off_the_operators() {
    let plan = |src: &str| {
        Partitioner::new(&Net::from_ron("p.ron", src).unwrap(), 8)
            .plan()
            .clone()
    };
    assert_eq!(
        plan(KEYED),
        Plan::ByKey {
            attr: "ship".into()
        }
    );
    // near_c: 2 + (3 + 0) = 5; trio_ships: 5; the reach is the largest span.
    assert_eq!(plan(PLANAR), Plan::BySpace { reach: 5.0 });
    assert_eq!(plan(WGS84), Plan::BySpace { reach: 1000.0 });
    match plan(GLOBAL) {
        Plan::Global { reason } => assert!(reason.contains("`ab` has no key"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let stateless = r#"Net(events: { "a": Atomic(type: "A") }, outputs: ["a"])"#;
    assert_eq!(plan(stateless), Plan::Stateless);
    let global = Partitioner::new(&Net::from_ron("p.ron", GLOBAL).unwrap(), 8);
    assert_eq!(global.partitions(), 1);
}

#[test]
fn anchors_go_everywhere() {
    let p = Partitioner::new(&Net::from_ron("p.ron", PLANAR).unwrap(), 8);
    assert_eq!(p.broadcast_types(), ["S".into()]);
    let mut to = Vec::new();
    let own = Event::new(1, "S", Timestamp::from_secs_f64(0.0).unwrap()).at(3.0, 3.0);
    p.targets(&own, &mut to);
    to.sort_unstable();
    assert_eq!(to, (0..8).collect::<Vec<_>>());
}

#[test]
fn uniform_planar_events_are_copied_about_twice() {
    // Cells of side 4 × reach: (1 + 2·reach/side)² = 2.25 partitions per event
    // when every cell has its own partition; a little less when cells share one.
    let net = Net::from_ron(
        "p.ron",
        GLOBAL
            .replace("\"ab\", ", "")
            .replace("\"ab\": Seq(of: [\"a\", \"b\"], within: 10.0),", "")
            .as_str(),
    )
    .unwrap();
    let specs: Vec<Spec> = (0..20_000u32)
        .map(|i| {
            (
                1,
                0,
                ((i * 7919 % 400) as u16, (i * 104_729 % 397) as u16),
                None,
            )
        })
        .collect();
    let evs = events(&specs, |x, y| {
        (f64::from(x) * 0.987 + 0.31, f64::from(y) * 0.993 + 0.17)
    });
    let (_, factor) = split(&net, &evs, 1024);
    assert!((2.0..2.4).contains(&factor), "copy factor {factor}");
}
