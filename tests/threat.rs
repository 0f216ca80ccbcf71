//! End-to-end tests of the threat scenario: the target generator's scripted tracks
//! (`examples/common/targets.rs`, shared with `examples/gen_targets.rs`) run through
//! `nets/threat.ron` with the library, checking hand-verified detections.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ccpn::io::read::{is_blank, LineParser};
use ccpn::{Detection, Detector, Net, Value};

#[path = "../examples/common/targets.rs"]
mod targets;

fn net() -> Net {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("nets/threat.ron");
    Net::from_file(path).expect("nets/threat.ron loads")
}

/// Runs JSON lines through the threat net and returns every detection.
fn run<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Detection> {
    let net = net();
    let parser = LineParser::json(net.space());
    let mut detector = Detector::new(&net);
    let mut out = Vec::new();
    for line in lines {
        if is_blank(line.as_bytes()) {
            continue;
        }
        let ev = parser
            .parse(line.as_bytes())
            .expect("generated line parses");
        out.extend(detector.push(ev).expect("events in time order"));
    }
    out.extend(detector.finish());
    out
}

fn run_script(name: &str) -> Vec<Detection> {
    let legs = targets::script(name).expect("known script");
    let lines: Vec<String> = targets::scripted(&legs).iter().map(|r| r.json()).collect();
    run(lines.iter().map(String::as_str))
}

fn ids(d: &Detection) -> Vec<String> {
    d.ids().map(ToString::to_string).collect()
}

fn num(d: &Detection, member: usize, attr: &str) -> f64 {
    match d.members().nth(member).and_then(|e| e.attr(attr)) {
        Some(Value::Num(x)) => *x,
        other => panic!("member {member} of {} has {attr} = {other:?}", d.event),
    }
}

fn secs(d: &Detection) -> f64 {
    d.time.as_secs_f64() - targets::T0
}

/// Object 101 closes from due north, 100 m per 4 s report, with own ship reporting
/// every 10 s: ids run own@0 (1), 101@0 (2), 101@4 (3), 101@8 (4), own@10 (5), …
/// Report k of 101 is 20,030 − 100·k m out at 4·k s. Report 79 (316 s, 12,130 m) is
/// the last beyond the 12,100 m band; before it come 80 track and 32 own reports, so
/// its id is 112. Report 81 (324 s, 11,930 m) is the first inside 12 km, after 82
/// track and 33 own reports: id 115.
#[test]
fn known_approach_is_one_entry() {
    let got = run_script("approach");
    assert_eq!(got.len(), 1, "{got:#?}");
    let d = &got[0];
    assert_eq!(&*d.event, "vessel_entry");
    assert_eq!(ids(d), ["112", "115"]);
    assert!((secs(d) - 324.0).abs() < 1e-6, "time {}", secs(d));
    assert!((d.start.as_secs_f64() - targets::T0 - 316.0).abs() < 1e-6);
    assert_eq!(num(d, 0, "object"), 101.0);
    assert_eq!(num(d, 1, "object"), 101.0);
    assert!((num(d, 0, "range") - 12_130.0).abs() < 1.0);
    assert!((num(d, 1, "range") - 11_930.0).abs() < 1.0);
}

/// Objects 201–203 come from the east in line abreast (bearings 90°, 85.7°, 94.3°,
/// 20,030 m out; 1.5 km apart), 80 m per 4 s report, reporting together. Report k
/// of 201 is 20,030 − 80·k m out: 99 (396 s) at 12,110 m is beyond the band, 101
/// (404 s) at 11,950 m is inside; the wing boats (about 30 m further out) cross
/// between the same two reports. Ids: at 396 s, 40 own and 297 track reports came
/// before, so 201–203 are 338–340; at 404 s, 41 own and 303 track: 345–347. The three
/// entries are 1.5–3 km apart, so one swarm, at 203's entry (the last processed).
#[test]
fn known_swarm_is_detected_once_with_its_three_boats() {
    let got = run_script("swarm");
    let entries: Vec<_> = got.iter().filter(|d| &*d.event == "vessel_entry").collect();
    assert_eq!(entries.len(), 3, "{got:#?}");
    for (d, (start, end)) in entries.iter().zip([(338, 345), (339, 346), (340, 347)]) {
        assert_eq!(ids(d), [start.to_string(), end.to_string()]);
        assert!((secs(d) - 404.0).abs() < 1e-6);
    }
    let swarms: Vec<_> = got.iter().filter(|d| &*d.event == "swarm").collect();
    assert_eq!(swarms.len(), 1, "{got:#?}");
    let s = swarms[0];
    assert_eq!(ids(s), ["338", "339", "340", "345", "346", "347"]);
    assert!((secs(s) - 404.0).abs() < 1e-6);
    let objects: BTreeSet<i64> = (0..6).map(|i| num(s, i, "object") as i64).collect();
    assert_eq!(objects, BTreeSet::from([201, 202, 203]));
    assert_eq!(got.len(), 4, "nothing else: {got:#?}");
}

/// The same tracks flown and sailed by friends (plus an allied aircraft passing over
/// the convoy and an allied submarine north-west): nothing at all.
#[test]
fn friends_only_detect_nothing() {
    let got = run_script("friends");
    assert!(got.is_empty(), "{got:#?}");
}

/// Ally 401 (5 km east, north at 3 m/s), hostile aircraft 402 (15 km east, west at
/// 50 m/s) and hostile submarine 403 (3 km NW, inside the bow sonar), all reporting
/// every 4 s for 60 reports; own ship every 10 s. At report k the aircraft is
/// about 10,000 − 200·k m east of the ally, which is 12·k m north of where it began.
/// At 160 s (k = 40) ids are own 137, 401 138, 402 139, 403 140; at 164 s 141–143.
/// The aircraft's report at 164 s (k = 41) is 1,866 m from the ally's at 164 s and
/// 1,863 m from its 160 s report (1,865 m by the geodesic): Chronicle takes the older,
/// so the first pass alert is [138, 142]. Its report at 160 s was 2,057 m away: none.
/// It stays within 2 km through k = 59 (1,934 m): one alert per report, 19 in all.
///
/// The submarine: each sonar report is a NW fix with own ship's latest report, so
/// the first six (0–20 s) make the first `sub_nw`: own 1, sub 4, 7, 10, own 11,
/// sub 14, 17, own 18, sub 21; then one every six reports (24 s): 10 in 240 s.
#[test]
fn air_pass_and_submarine_north_west() {
    let got = run_script("contacts");
    let air: Vec<_> = got
        .iter()
        .filter(|d| &*d.event == "air_near_ally")
        .collect();
    assert_eq!(air.len(), 19, "{got:#?}");
    assert_eq!(ids(air[0]), ["138", "142"]);
    assert!((secs(air[0]) - 164.0).abs() < 1e-6);
    assert!((secs(air[18]) - 236.0).abs() < 1e-6);
    for d in &air {
        assert_eq!(num(d, 0, "object"), 401.0);
        assert_eq!(num(d, 1, "object"), 402.0);
        match d.detail {
            ccpn::Detail::Distance(m) => assert!(m <= 2_000.0),
            ref other => panic!("no distance: {other:?}"),
        }
    }
    let sub: Vec<_> = got.iter().filter(|d| &*d.event == "sub_nw").collect();
    assert_eq!(sub.len(), 10, "{got:#?}");
    assert_eq!(
        ids(sub[0]),
        ["1", "4", "7", "10", "11", "14", "17", "18", "21"]
    );
    assert!((secs(sub[0]) - 20.0).abs() < 1e-6);
    assert_eq!(got.len(), 29, "nothing else: {got:#?}");
}

/// The three scripts an hour apart: the same detections, shifted.
#[test]
fn scripts_in_turn_detect_the_same() {
    let got = run_script("all");
    let names: Vec<&str> = got.iter().map(|d| &*d.event).collect();
    assert_eq!(
        names,
        [
            "vessel_entry",
            "vessel_entry",
            "vessel_entry",
            "vessel_entry",
            "swarm"
        ]
    );
    assert!((secs(&got[0]) - 324.0).abs() < 1e-6);
    assert!((secs(&got[4]) - 4_004.0).abs() < 1e-6);
}

/// The generator follows the seed's table 3 and reporting rate, and the shipped
/// sample gives the detections the README shows.
#[test]
fn generated_tracks_follow_the_object_model() {
    for mix in [targets::Mix::Uniform, targets::Mix::NonUniform] {
        let reports: Vec<_> = targets::Scenario::new(5, 30, 120.0, mix).collect();
        let mut last: BTreeMap<u32, u64> = BTreeMap::new();
        let mut own = 0;
        for (i, r) in reports.iter().enumerate() {
            assert_eq!(r.id, i as u64 + 1);
            if r.own_course.is_some() {
                own += 1;
                continue;
            }
            let ((s0, s1), (e0, e1)) = match r.kind {
                targets::Kind::Aircraft => ((10.0, 100.0), (10.0, 100.0)),
                targets::Kind::Vessel => ((3.0, 100.0), (0.0, 10.0)),
                targets::Kind::Submarine => ((0.0, 100.0), (-10.0, 0.0)),
            };
            assert!((s0..=s1).contains(&r.speed), "{r:?}");
            assert!((e0..=e1).contains(&r.elevation), "{r:?}");
            if let Some(prev) = last.insert(r.object, r.ms) {
                assert!((3_000..=5_000).contains(&(r.ms - prev)), "{r:?}");
            }
        }
        assert_eq!(own, 61, "own ship every 2 s for 120 s");
        assert_eq!(last.len(), 30);
    }
}

/// `ccpn-run nets/threat.ron examples/targets.jsonl` — the counts per output.
#[test]
fn shipped_sample_detections() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/targets.jsonl");
    let text = std::fs::read_to_string(path).expect("examples/targets.jsonl");
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for d in run(text.lines()) {
        *counts.entry(d.event.to_string()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [
        ("air_near_ally", 7),
        ("in_minefield", 1),
        ("minefield_entry", 1),
        ("sub_nw", 9),
        ("vessel_entry", 5),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(counts, want);
}
