//! The library API: `Detector` is `Send`, bounded by `max_tokens`, driven by event
//! time through `advance_to`, rejects events older than its time and locations the
//! readers refuse, and the README's example detects.

use ccpn::{Detail, Detector, DetectorOptions, Event, Net, PushError, Timestamp};

fn t(secs: f64) -> Timestamp {
    Timestamp::from_secs_f64(secs).expect("time in range")
}

fn net(events: &str, outputs: &str) -> Net {
    Net::from_ron(
        "test.ron",
        &format!("Net(events: {{ {events} }}, outputs: [{outputs}])"),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn detector_and_net_are_send() {
    fn send<T: Send>() {}
    send::<Detector>();
    send::<Net>();
}

#[test]
fn max_tokens_caps_an_unbounded_place_and_counts_evictions() {
    let n = net(
        r#""a": Atomic(type: "A"), "b": Atomic(type: "B"), "ab": Seq(of: ["a", "b"])"#,
        r#""ab""#,
    );
    assert!(n
        .warnings()
        .iter()
        .any(|w| w.message.contains("no `within`")));
    let mut d = Detector::with_options(
        &n,
        DetectorOptions {
            max_tokens: 10,
            ..DetectorOptions::default()
        },
    );
    for i in 0..100 {
        d.push(Event::new(i, "A", t(i as f64))).expect("in order");
    }
    let s = d.stats();
    assert_eq!(s.live_tokens, 10);
    assert_eq!(s.peak_live_tokens, 10);
    assert_eq!(s.evicted, 90);
    // The most recent initiators are the ones kept.
    let found = d.push(Event::new(1000, "B", t(200.0))).expect("in order");
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].ids().cloned().collect::<Vec<_>>(),
        vec![99.into(), 1000.into()]
    );
}

#[test]
fn windows_bound_live_tokens() {
    let n = net(
        r#""a": Atomic(type: "A"), "b": Atomic(type: "B"), "ab": Seq(of: ["a", "b"], within: 10.0, key: "k")"#,
        r#""ab""#,
    );
    let mut d = Detector::new(&n);
    for i in 0..100_000i64 {
        let e = Event::new(i, "A", t(i as f64 * 0.1)).with("k", (i % 1000) as f64);
        d.push(e).expect("in order");
    }
    // 10 s of events at 10 per second, swept within a window or two.
    let s = d.stats();
    assert!(s.live_tokens <= 300, "{s:?}");
    assert!(s.peak_live_tokens <= 300, "{s:?}");
    assert_eq!(s.evicted, 0);
}

#[test]
fn advance_to_fires_ticks_strictly_before_the_new_time() {
    let n = net(
        r#""s": Atomic(type: "S"), "z": Atomic(type: "Z"), "tick": P(start: "s", period: 10.0, end: "z", within: 100.0)"#,
        r#""tick""#,
    );
    let mut d = Detector::new(&n);
    assert!(d
        .push(Event::new(1, "S", t(0.0)))
        .expect("in order")
        .is_empty());
    let ticks: Vec<f64> = d
        .advance_to(t(30.0))
        .iter()
        .map(|x| x.time.as_secs_f64())
        .collect();
    assert_eq!(ticks, vec![10.0, 20.0]);
    // The tick at 30 waits: an end at 30 would still come first.
    assert!(d
        .push(Event::new(2, "Z", t(30.0)))
        .expect("in order")
        .is_empty());
    assert!(d.advance_to(t(100.0)).is_empty());
    assert!(d.finish().is_empty());
}

#[test]
fn finish_fires_ticks_at_the_last_time() {
    let n = net(
        r#""s": Atomic(type: "S"), "x": Atomic(type: "X"), "z": Atomic(type: "Z"), "tick": P(start: "s", period: 10.0, end: "z")"#,
        r#""tick""#,
    );
    let mut d = Detector::new(&n);
    d.push(Event::new(1, "S", t(0.0))).expect("in order");
    let before: Vec<f64> = d
        .push(Event::new(2, "X", t(20.0)))
        .expect("in order")
        .iter()
        .map(|x| x.time.as_secs_f64())
        .collect();
    assert_eq!(before, vec![10.0]);
    let last: Vec<f64> = d.finish().iter().map(|x| x.time.as_secs_f64()).collect();
    assert_eq!(last, vec![20.0]);
}

#[test]
fn an_event_older_than_the_detector_time_is_refused() {
    let n = net(r#""a": Atomic(type: "A")"#, r#""a""#);
    let mut d = Detector::new(&n);
    d.push(Event::new(1, "A", t(10.0))).expect("in order");
    let err = d.push(Event::new(2, "A", t(9.0))).unwrap_err();
    assert_eq!(
        err,
        PushError::Late {
            time: t(9.0),
            now: t(10.0)
        }
    );
    assert_eq!(d.stats().processed, 1);
}

#[test]
fn shared_sub_expressions_are_one_component() {
    let shared = net(
        r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
           "ab1": Seq(of: ["a", "b"], within: 5.0), "ab2": Seq(of: ["a", "b"], within: 5.0),
           "x": And(of: ["ab1", "ab2"], within: 5.0)"#,
        r#""ab1", "ab2", "x""#,
    );
    // a, b, one Seq, one And.
    assert!(
        shared.summary().starts_with("4 components"),
        "{}",
        shared.summary()
    );
    let mut d = Detector::new(&shared);
    d.push(Event::new(1, "A", t(0.0))).expect("in order");
    let found = d.push(Event::new(2, "B", t(1.0))).expect("in order");
    let names: Vec<&str> = found.iter().map(|x| &*x.event).collect();
    assert_eq!(
        names,
        vec!["ab1", "ab2"],
        "x pairs one occurrence with itself: never"
    );
}

#[test]
fn the_same_within_is_one_component() {
    let n = Net::from_ron(
        "z.ron",
        r#"Net(
            zones: { "b": Rect(min: (0.0, 0.0), max: (1.0, 1.0)), "a": Circle(center: (0.0, 0.0), radius: 2.0) },
            events: {
                "p": Atomic(type: "P"),
                "q": Atomic(type: "Q"),
                "in1": Within(of: "p", zones: ["a", "b"]),
                "in2": Within(of: "p", zones: ["b", "a", "b"]),
                "in_a": Within(of: "p", zones: ["a"]),
                "q_in": Within(of: "q", zones: ["a", "b"]),
            },
            outputs: ["in1", "in2", "in_a", "q_in"],
        )"#,
    )
    .expect("valid");
    // p, q; one Within of p over both zones, one of p over `a`, one of q.
    assert!(n.summary().starts_with("5 components"), "{}", n.summary());
    let mut d = Detector::new(&n);
    let found = d
        .push(Event::new(1, "P", t(0.0)).at(0.5, 0.5))
        .expect("in order");
    let names: Vec<&str> = found.iter().map(|x| &*x.event).collect();
    assert_eq!(names, vec!["in1", "in2", "in_a"]);
}

#[test]
fn within_reports_its_zone_and_dist_its_distance() {
    let n = Net::from_ron(
        "z.ron",
        r#"Net(
            zones: { "b": Rect(min: (0.0, 0.0), max: (1.0, 1.0)), "a": Circle(center: (0.0, 0.0), radius: 2.0) },
            events: {
                "p": Atomic(type: "P"),
                "in": Within(of: "p", zones: ["b", "a"]),
                "near": Dist(a: "p", b: "p", max: 5.0, within: 10.0),
            },
            outputs: ["in", "near"],
        )"#,
    )
    .expect("net");
    let mut d = Detector::new(&n);
    let first = d
        .push(Event::new(1, "P", t(0.0)).at(0.5, 0.5))
        .expect("in order");
    assert_eq!(
        first[0].detail,
        Detail::Zone("a".into()),
        "zones are tried in name order"
    );
    let second = d
        .push(Event::new(2, "P", t(1.0)).at(3.5, 4.5))
        .expect("in order");
    assert_eq!(second.len(), 1);
    match second[0].detail {
        Detail::Distance(x) => assert!((x - 5.0).abs() < 1e-12, "{x}"),
        ref other => panic!("{other:?}"),
    }
}

/// `Dist` on WGS84 files initiators in cells on the sphere: every pair within the
/// distance is found, across the antimeridian and around the poles, as a scan finds it.
#[test]
fn wgs84_dist_finds_exactly_the_pairs_a_scan_finds() {
    use geo::{Distance, Geodesic, Point as GeoPoint};
    use rand::{Rng, SeedableRng};
    let n = Net::from_ron(
        "d.ron",
        r#"Net(space: Wgs84, events: { "p": Atomic(type: "P"),
            "near": Dist(a: "p", b: "p", max: 5000.0, within: 1000.0, context: Unrestricted) },
            outputs: ["near"])"#,
    )
    .expect("net");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
    // Clusters at the antimeridian, near both poles and at mid-latitude.
    let centres = [
        (179.99, 0.0),
        (-179.99, 10.0),
        (0.0, 89.97),
        (120.0, -89.97),
        (10.0, 45.0),
    ];
    let mut points = Vec::new();
    for i in 0..600 {
        let (lon, lat) = centres[i % centres.len()];
        let lat = (lat + rng.random_range(-0.05..0.05f64)).clamp(-90.0, 90.0);
        let lon = (lon + rng.random_range(-0.1..0.1f64) + 540.0) % 360.0 - 180.0;
        points.push((lon, lat));
    }
    let mut d = Detector::new(&n);
    let mut got = std::collections::BTreeSet::new();
    for (i, &(lon, lat)) in points.iter().enumerate() {
        for det in d
            .push(Event::new(i as i64, "P", t(i as f64)).at(lon, lat))
            .expect("in order")
        {
            let ids: Vec<i64> = det
                .ids()
                .map(|id| match id {
                    ccpn::Id::Int(v) => *v,
                    other => panic!("{other:?}"),
                })
                .collect();
            got.insert(ids);
        }
    }
    let mut want = std::collections::BTreeSet::new();
    for j in 0..points.len() {
        for i in 0..j {
            let (a, b) = (
                GeoPoint::new(points[i].0, points[i].1),
                GeoPoint::new(points[j].0, points[j].1),
            );
            if Geodesic.distance(a, b) <= 5000.0 {
                want.insert(vec![i as i64, j as i64]);
            }
        }
    }
    assert!(want.len() > 1000, "{} pairs", want.len());
    assert_eq!(got, want);
}

/// Atomic events of one type are reached through a hash on the value their filters
/// require (`kind == "…"`); wrapping each requirement in `||` hides it from the hash.
/// Both nets must report the same detections in the same order, whatever the events
/// carry: the value, another value, another type, or no such attribute.
#[test]
fn atomics_found_by_a_required_value_match_as_every_filter_tested() {
    use rand::{Rng, SeedableRng};
    let filters = [
        r#"kind == "vessel" && iff == "foe""#,
        r#"kind == "vessel""#,
        r#"kind == "aircraft" && speed > 50"#,
        r#"speed > 20"#,
        r#"kind == "submarine" && kind == "vessel""#,
        r#"iff == "friend" && kind == "aircraft""#,
    ];
    let make = |hidden: bool| {
        let mut events = String::new();
        for (i, f) in filters.iter().enumerate() {
            let f = if hidden {
                // `x == v` as `(x == v || x == v)`: the same test, not a requirement.
                f.split(" && ")
                    .map(|c| format!("({c} || {c})"))
                    .collect::<Vec<_>>()
                    .join(" && ")
            } else {
                (*f).to_owned()
            };
            events.push_str(&format!("\"a{i}\": Atomic(type: \"track\", when: {f:?}), "));
        }
        events.push_str(r#""pair": Seq(of: ["a1", "a3"], within: 5.0), "#);
        let outputs = (0..filters.len())
            .map(|i| format!("\"a{i}\""))
            .chain(["\"pair\"".to_owned()])
            .collect::<Vec<_>>()
            .join(", ");
        net(&events, &outputs)
    };
    let (hashed, tested) = (make(false), make(true));
    let mut rng = rand::rngs::SmallRng::seed_from_u64(4);
    let kinds = ["vessel", "aircraft", "submarine", "ship"];
    let mut events = Vec::new();
    for i in 0..3_000i64 {
        let mut e = Event::new(
            i,
            if rng.random_bool(0.9) {
                "track"
            } else {
                "other"
            },
            t(i as f64 * 0.5),
        );
        match rng.random_range(0..6) {
            0 => {}
            1 => e = e.with("kind", 7.0),
            _ => e = e.with("kind", kinds[rng.random_range(0..kinds.len())]),
        }
        if rng.random_bool(0.8) {
            e = e.with(
                "iff",
                if rng.random_bool(0.5) {
                    "foe"
                } else {
                    "friend"
                },
            );
        }
        e = e.with("speed", rng.random_range(0.0..100.0));
        events.push(e);
    }
    let run = |n: &Net| {
        let mut d = Detector::new(n);
        let mut out = Vec::new();
        for e in &events {
            for found in d.push(e.clone()).expect("in order") {
                out.push((
                    found.event.to_string(),
                    found.ids().cloned().collect::<Vec<_>>(),
                ));
            }
        }
        out
    };
    let (a, b) = (run(&hashed), run(&tested));
    assert!(a.len() > 1_000, "{}", a.len());
    assert_eq!(a, b);
}

#[test]
fn push_refuses_what_the_readers_refuse() {
    let planar = net(r#""a": Atomic(type: "A")"#, r#""a""#);
    let mut d = Detector::new(&planar);
    for (x, y) in [(f64::NAN, 0.0), (0.0, f64::INFINITY)] {
        let refused = d.push(Event::new(1, "A", t(1.0)).at(x, y)).unwrap_err();
        assert!(matches!(refused, PushError::NotFinite { .. }), "{refused}");
    }
    // Planar coordinates have no range.
    assert_eq!(
        d.push(Event::new(2, "A", t(1.0)).at(1e6, -1e6))
            .unwrap()
            .len(),
        1
    );
    let wgs84 = Net::from_ron(
        "w.ron",
        r#"Net(space: Wgs84, events: { "a": Atomic(type: "A") }, outputs: ["a"])"#,
    )
    .unwrap();
    let mut d = Detector::new(&wgs84);
    for (lon, lat) in [(0.0, 90.5), (-180.5, 0.0)] {
        let refused = d.push(Event::new(3, "A", t(2.0)).at(lon, lat)).unwrap_err();
        assert_eq!(refused, PushError::OutOfRange { lon, lat });
        assert!(refused.to_string().contains("beyond"), "{refused}");
    }
    assert_eq!(d.stats().processed, 0, "refused events are not processed");
    assert_eq!(
        d.push(Event::new(4, "A", t(2.0)).at(180.0, -90.0))
            .unwrap()
            .len(),
        1
    );
    assert!(Timestamp::from_secs_f64(f64::NAN).is_none());
}

/// The README's library example pushes these two reports through nets/harbour.ron
/// and prints the `entry` they make.
#[test]
fn the_readme_library_example_prints_a_detection() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let harbour = Net::from_file(concat!(env!("CARGO_MANIFEST_DIR"), "/nets/harbour.ron")).unwrap();
    let mut d = Detector::new(&harbour);
    let mut printed = Vec::new();
    for (id, s, x) in [(1, 0.0, -2000.0), (2, 60.0, -1000.0)] {
        let report = Event::new(id, "track", t(1_700_000_000.0 + s))
            .at(x, 0.0)
            .with("iff", "foe")
            .with("track", 7.0);
        for found in d.push(report).unwrap() {
            let ids: Vec<String> = found.ids().map(|id| id.to_string()).collect();
            printed.push(format!(
                "{} at {} (reports {})",
                found.event,
                found.time,
                ids.join(", ")
            ));
        }
    }
    assert_eq!(printed, ["entry at 1700000060 (reports 1, 2)"]);
    assert!(readme.contains(&format!("prints `{}`", printed[0])));
    assert!(readme.contains(".at(-2000.0, 0.0)") && readme.contains(".at(-1000.0, 0.0)"));
}

/// `Detector::prefetch` is a hint: on a net of 10,000 zones (whose index is fetched
/// ahead) the detections are those of the same events pushed without it, whatever
/// event is named, and events do land in the zones. The net's two groups (15,000
/// zone references in all) have their indexes built on two threads: they find what
/// testing every zone finds.
#[test]
fn prefetching_changes_no_detection() {
    use std::fmt::Write;
    let mut zones = String::new();
    for i in 0..10_000u32 {
        let (x, y) = (f64::from(i % 100) * 10.0, f64::from(i / 100) * 10.0);
        write!(
            zones,
            r#""z{i}": Circle(center: ({x}, {y}), radius: 4.0), "#
        )
        .expect("text");
    }
    let names: Vec<String> = (0..10_000).map(|i| format!("\"z{i}\"")).collect();
    let n = Net::from_ron(
        "zones.ron",
        &format!(
            r#"Net(zones: {{ {zones} }}, events: {{ "a": Atomic(type: "A"), "b": Atomic(type: "B"),
                "a_in": Within(of: "a", zones: [{list}]), "b_in": Within(of: "b", zones: [{half}]) }},
                outputs: ["a_in", "b_in"])"#,
            list = names.join(", "),
            half = names[..5_000].join(", ")
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<std::sync::Arc<str>> = vec!["A".into(), "B".into()];
    let events: Vec<Event> = (0..5_000u32)
        .map(|i| {
            let mut e = Event::new(i64::from(i), "A", t(f64::from(i)));
            e.kind = std::sync::Arc::clone(&kinds[(i % 7 == 0) as usize]);
            let (x, y) = (f64::from(i * 37 % 1000), f64::from(i * 91 % 1000));
            e.at(x, y)
        })
        .collect();
    let (mut plain, mut hinted) = (Detector::new(&n), Detector::new(&n));
    let linear = DetectorOptions {
        zone_index: false,
        ..DetectorOptions::default()
    };
    let mut scanning = Detector::with_options(&n, linear);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for (i, e) in events.iter().enumerate() {
        plain.push_into(e.clone(), &mut a).expect("in order");
        scanning.push_into(e.clone(), &mut c).expect("in order");
        for ahead in [1, 4, 4_000] {
            if let Some(next) = events.get(i + ahead) {
                hinted.prefetch(next);
            }
        }
        hinted.prefetch(e);
        hinted.push_into(e.clone(), &mut b).expect("in order");
    }
    assert!(a.len() > 100, "{} detections", a.len());
    let text = |d: &[ccpn::Detection]| d.iter().map(|d| format!("{d:?}")).collect::<Vec<_>>();
    assert_eq!(text(&a), text(&b));
    assert_eq!(text(&a), text(&c), "the indexes against every zone tested");
    let outputs: std::collections::BTreeSet<&str> = a.iter().map(|d| &*d.event).collect();
    assert_eq!(outputs.len(), 2, "both groups detect: {outputs:?}");
}
