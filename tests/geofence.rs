//! The geofence net (`nets/geofence.ron`) over its shipped sample
//! (`examples/geofence.jsonl`): every detection checked by hand.
//!
//! The depot's fence runs from 4.4000 to 4.4060 east and 51.9000 to 51.9030 north.
//! At 51.9° north, 0.0001° of longitude is 6.9 m and 0.001° of latitude 111 m, so
//! the sample's fixes at 51.9015 are 167 m from the north and south sides, and
//! their distance to the fence is set by their longitude alone:
//!
//! | id | tracker | time | lon | where, against the 15 m margin |
//! |---|---|---|---|---|
//! | 1 | van1 | 0 | 4.3990 | 69 m outside: off site (it already is) |
//! | 2 | van1 | 60 | 4.4001 | 7 m inside: near the fence, no change |
//! | 3 | van1 | 120 | 4.4010 | 69 m inside: **on site** |
//! | 4 | van1 | 180 | 4.3999 | 7 m outside: near, no change (no flap) |
//! | 5 | van1 | 240 | 4.4002 | 14 m inside: near, no change |
//! | 6 | van2 | 300 | 4.4030 | 206 m inside: **on site** |
//! | 7 | van1 | 900 | 4.4020 (51.9010) | 137 m inside (111 m from the south side) |
//! | 8 | van1 | 1200 | 4.3985 | 103 m outside: **off site** |
//! | 9 | van2 | 1500 | 4.4030 (51.9020) | 111 m inside (from the north side) |
//!
//! (times in seconds after 1767600000).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ccpn::io::read::LineParser;
use ccpn::io::write::JsonLines;
use ccpn::{Detector, Net};
use serde_json::Value;

const T0: f64 = 1_767_600_000.0;

/// A detection as the test checks it: phase (states only), time and `start`
/// (ends only) in seconds after T0, and ids.
type Seen = (Option<String>, f64, Option<f64>, Vec<i64>);

/// The detections of `net_text` over the sample, per output, in order.
fn run(net_text: &str) -> BTreeMap<String, Vec<Seen>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let net = Net::from_ron("geofence.ron", net_text).expect("the net loads");
    let parser = LineParser::json(net.space());
    let writer = JsonLines::new(net.space());
    let mut detector = Detector::new(&net);
    let mut found = Vec::new();
    let events = fs::read_to_string(root.join("examples/geofence.jsonl")).expect("sample");
    for line in events.lines() {
        let ev = parser.parse(line.as_bytes()).expect("the sample parses");
        found.extend(detector.push(ev).expect("in time order"));
    }
    found.extend(detector.finish());
    let mut out: BTreeMap<String, Vec<Seen>> = BTreeMap::new();
    for d in &found {
        let mut line = Vec::new();
        writer.write(&mut line, d).expect("write");
        let v: Value = serde_json::from_slice(&line).expect("a JSON line");
        let phase = v.get("phase").and_then(Value::as_str).map(str::to_owned);
        let start = (phase.as_deref() == Some("end")).then(|| v["start"].as_f64().unwrap() - T0);
        let ids = v["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_i64().unwrap())
            .collect();
        out.entry(d.event.to_string()).or_default().push((
            phase,
            v["time"].as_f64().unwrap() - T0,
            start,
            ids,
        ));
    }
    out
}

fn net_text() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::read_to_string(root.join("nets/geofence.ron")).expect("nets/geofence.ron")
}

fn start(t: f64, ids: &[i64]) -> Seen {
    (Some("start".into()), t, None, ids.to_vec())
}

fn end(t: f64, since: f64, ids: &[i64]) -> Seen {
    (Some("end".into()), t, Some(since), ids.to_vec())
}

fn occurrence(t: f64, ids: &[i64]) -> Seen {
    (None, t, None, ids.to_vec())
}

#[test]
fn geofence_detections_are_the_hand_worked_ones() {
    let found = run(&net_text());
    let want: BTreeMap<String, Vec<Seen>> = [
        // van1 arrives at its first fix 15 m inside (id 3, not the 7 m of id 2); van2
        // at its first fix (id 6).
        (
            "arrived",
            vec![occurrence(120.0, &[3]), occurrence(300.0, &[6])],
        ),
        // van1 leaves at id 8, 103 m out; id 4, 7 m out, was within the margin.
        ("left", vec![occurrence(1200.0, &[8])]),
        // Ten minutes after each arrival (with the arrival's fix), both still on
        // site. van2's, due at 900, comes after van1's fix at 900. van1's dwell ends
        // when it leaves; van2 never leaves.
        (
            "dwell",
            vec![
                start(720.0, &[3]),
                start(900.0, &[6]),
                end(1200.0, 720.0, &[8]),
            ],
        ),
        // van2's last fix before the gap is at 300: dark from 1200 (with that fix),
        // after van1's fix at 1200, until its next fix at 1500. van1's gaps (at most
        // 660 s) are shorter than 15 minutes, and its dark due at 2100 is after the
        // sample's end, so it never happens.
        ("dark", vec![start(1200.0, &[6]), end(1500.0, 1200.0, &[9])]),
        // van2 goes dark on site.
        ("dark_on_site", vec![occurrence(1200.0, &[6])]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(found, want);
}

/// Without the margin the state is "the latest fix is inside": van1's fixes near
/// the fence (ids 2, 4, 5, 7 m and 14 m either side of it) make it arrive, leave and
/// arrive again within three minutes. The margin is what keeps it from flapping.
#[test]
fn without_the_margin_a_van_by_the_fence_flaps() {
    let text = net_text().replace("margin: 15.0", "margin: 0.0");
    assert_ne!(text, net_text());
    let found = run(&text);
    assert_eq!(
        found["arrived"],
        vec![
            occurrence(60.0, &[2]),
            occurrence(240.0, &[5]),
            occurrence(300.0, &[6])
        ]
    );
    assert_eq!(
        found["left"],
        vec![occurrence(180.0, &[4]), occurrence(1200.0, &[8])]
    );
}
