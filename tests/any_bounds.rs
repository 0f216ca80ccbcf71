//! The cost of one occurrence completing `Any` in the Unrestricted context is bounded:
//! its sets can number exponentially many, and with `distinct` the search for them
//! can be exponential even when there are none.

use ccpn::{Detector, Event, Net, Timestamp};

fn t(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s).unwrap()
}

/// `Any(m)` over `n` operands that every `A` event matches (different filters, so the
/// operands are not one shared node), Unrestricted, with `distinct: "v"` if asked.
fn net(m: usize, n: usize, distinct: bool) -> Net {
    let mut events = String::new();
    let mut names = Vec::new();
    for i in 0..n {
        events.push_str(&format!(
            "\"o{i}\": Atomic(type: \"A\", when: \"speed > {i}\"),\n"
        ));
        names.push(format!("\"o{i}\""));
    }
    let distinct = if distinct { ", distinct: \"v\"" } else { "" };
    let src = format!(
        "Net(events: {{ {events} \"any\": Any(m: {m}, of: [{}], within: 1000.0, context: Unrestricted{distinct}) }}, outputs: [\"any\"])",
        names.join(", ")
    );
    Net::from_ron("any.ron", &src).unwrap()
}

/// Two lines, each matching 30 operands, with two values of `v`: no set of 15 pairwise
/// distinct members exists, but there are C(29, 15) choices of operands to find that
/// out from; the search stops at its step cap instead of taking minutes.
#[test]
fn any_with_distinct_over_many_operands_stops_searching() {
    let mut d = Detector::new(&net(16, 30, true));
    let mut found = Vec::new();
    for (id, v) in [(1, 1.0), (2, 2.0)] {
        let e = Event::new(id, "A", t(f64::from(id as u8)))
            .with("speed", 100.0)
            .with("v", v);
        found.extend(d.push(e).unwrap());
    }
    assert!(found.is_empty(), "{} detections", found.len());
    let stats = d.stats();
    assert!(stats.truncated_firings >= 1, "{stats:?}");
}

/// 50 occurrences of each of three operands, then one of the fourth: 125,000 sets,
/// of which the first 100,000 (operands in order, oldest first) fire.
#[test]
fn any_unrestricted_fires_at_most_the_set_cap() {
    let src = r#"Net(events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"), "e": Atomic(type: "E"),
        "any": Any(m: 4, of: ["a", "b", "c", "e"], within: 1000.0, context: Unrestricted),
    }, outputs: ["any"])"#;
    let net = Net::from_ron("any.ron", src).unwrap();
    let mut d = Detector::new(&net);
    let mut id = 0i64;
    for kind in ["A", "B", "C"] {
        for _ in 0..50 {
            id += 1;
            assert!(d
                .push(Event::new(id, kind, t(id as f64)))
                .unwrap()
                .is_empty());
        }
    }
    let found = d.push(Event::new(1000, "E", t(200.0))).unwrap();
    assert_eq!(found.len(), 100_000);
    assert_eq!(d.stats().truncated_firings, 1);
    // The first set: the oldest a, b and c; the last fired: a's 40th, then all b, c
    // (40 × 50 × 50 = 100,000 sets have an a among the first 40).
    let ids = |k: usize| found[k].ids().map(|i| i.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(0), ["1", "51", "101", "1000"]);
    assert_eq!(ids(99_999), ["40", "100", "150", "1000"]);
}
