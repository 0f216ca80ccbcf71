//! The hand-worked cases of the states' semantics (`tests/states/<case>/`: a net,
//! events, and the detections the rules imply) through ccpn's `Detector`, read and
//! written as `ccpn-run` reads and writes them. Each output's detections must come in
//! the expected order with the expected `event`, `phase`, `time`, `ids` and, on ends,
//! `start`; the order between different outputs of one instant is left free (it
//! follows the net's topological order, which the cases do not fix).

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use ccpn::io::write::JsonLines;
use ccpn::io::EventReader;
use ccpn::{Detector, Event, Net, Timestamp};
use serde_json::Value;

/// The fields the cases fix, numbers compared as numbers.
fn fixed(v: &Value, keys: &[&str]) -> Fields {
    keys.iter()
        .filter_map(|k| {
            let x = v.get(*k)?;
            let shown = match x {
                Value::Number(n) => format!("{}", n.as_f64().unwrap()),
                other => other.to_string(),
            };
            Some((k.to_string(), shown))
        })
        .collect()
}

/// The case's detections; with `restarting`, the detector is dropped and restored
/// from its snapshot after every event (its counters surviving too).
fn run(dir: &Path, restarting: bool) -> Vec<Value> {
    let net = Net::from_file(dir.join("net.ron")).unwrap();
    let file = fs::File::open(dir.join("events.jsonl")).unwrap();
    let events = EventReader::new(BufReader::new(file), net.space()).map(|e| e.unwrap());
    run_events(&net, events, restarting)
}

fn run_events(net: &Net, events: impl Iterator<Item = Event>, restarting: bool) -> Vec<Value> {
    let mut detector = Detector::new(net);
    let writer = JsonLines::new(net.space());
    let mut out = Vec::new();
    for event in events {
        for d in detector.push(event).unwrap() {
            writer.write(&mut out, &d).unwrap();
        }
        if restarting {
            let stats = detector.stats();
            detector = Detector::restore(net, &detector.snapshot()).unwrap();
            assert_eq!(detector.stats(), stats);
        }
    }
    for d in detector.finish() {
        writer.write(&mut out, &d).unwrap();
    }
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A detection's fixed fields, as (name, value) pairs.
type Fields = Vec<(String, String)>;

/// Per output name, its detections' fixed fields in order.
fn by_output(
    found: &[Value],
    mut keys_of: impl FnMut(usize) -> Vec<&'static str>,
) -> Vec<(String, Vec<Fields>)> {
    let mut out: Vec<(String, Vec<Fields>)> = Vec::new();
    for (i, v) in found.iter().enumerate() {
        let name = v["event"].as_str().unwrap().to_owned();
        let f = fixed(v, &keys_of(i));
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.push(f),
            None => out.push((name, vec![f])),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The cases in `tests/states/`; those of the contract itself, in `shared/states-cases/`
/// beside the checkout, when it sits there; and those of the directory
/// `CCPN_STATES_CASES` names, if set (each the same layout: a folder per case).
#[test]
fn hand_worked_state_cases() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![manifest.join("tests/states")];
    let contract = manifest.join("../shared/states-cases");
    if contract.is_dir() {
        roots.push(contract);
    }
    roots.extend(std::env::var_os("CCPN_STATES_CASES").map(PathBuf::from));
    let failed: Vec<String> = roots.iter().flat_map(|root| check_cases(root)).collect();
    assert!(
        failed.is_empty(),
        "{} case(s) differ:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// Runs every case under `root` (at least 29 of them), plain and restoring the
/// detector after every event, and describes each that differs from its expected
/// detections.
fn check_cases(root: &Path) -> Vec<String> {
    let mut cases: Vec<_> = fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 29,
        "{}: {} cases",
        root.display(),
        cases.len()
    );
    let mut failed = Vec::new();
    for dir in &cases {
        let expected: Vec<Value> = fs::read_to_string(dir.join("expected.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for restarting in [false, true] {
            let found = run(dir, restarting);
            // Fields each expected detection gives (`start` only on ends); the found
            // detection in the same place of its output is compared on the same fields.
            let keys: Vec<Vec<&str>> = expected
                .iter()
                .map(|e| {
                    ["event", "phase", "time", "ids", "start"]
                        .into_iter()
                        .filter(|k| e.get(*k).is_some())
                        .collect()
                })
                .collect();
            let want = by_output(&expected, |i| keys[i].clone());
            // Match keys by position within each output.
            let mut positions: Vec<(String, usize)> = Vec::new();
            let got = by_output(&found, |i| {
                let name = found[i]["event"].as_str().unwrap().to_owned();
                let k = positions.iter().filter(|(n, _)| *n == name).count();
                positions.push((name.clone(), i));
                expected
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e["event"].as_str() == Some(&name))
                    .nth(k)
                    .map(|(j, _)| keys[j].clone())
                    .unwrap_or_else(|| vec!["event", "phase", "time", "ids"])
            });
            if want != got {
                failed.push(format!(
                    "{}{}\n  expected {want:?}\n  found    {got:?}",
                    dir.display(),
                    if restarting {
                        " (restored after every event)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    failed
}

/// A moving zone read only by an `Inside` state is where its anchor put it after a
/// restore: the snapshot keeps it though no `Within` reads it.
#[test]
fn inside_a_moving_zone_survives_restores() {
    let net = Net::from_ron(
        "moving.ron",
        r#"Net(space: Planar,
        zones: {"near_own": Circle(center: (0.0, 0.0), radius: 10.0, anchor: "own")},
        events: {
            "own": Atomic(type: "OWN"),
            "contact": Atomic(type: "T"),
            "close_to_own": Inside(of: "contact", zones: ["near_own"], key: "tag"),
        },
        outputs: ["close_to_own"])"#,
    )
    .unwrap();
    let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    let events = || {
        [
            // Own ship moves to (100, 0): the circle goes with it.
            Event::new(1, "OWN", t(0.0)).at(100.0, 0.0),
            // 5 from own ship: inside (it would be outside the circle at the origin).
            Event::new(2, "T", t(1.0)).at(105.0, 0.0).with("tag", 7.0),
            // Own ship moves away to (200, 0): the contact, unmoved, is outside now.
            Event::new(3, "OWN", t(2.0)).at(200.0, 0.0),
            Event::new(4, "T", t(3.0)).at(105.0, 0.0).with("tag", 7.0),
        ]
        .into_iter()
    };
    let fields = |found: Vec<Value>| -> Vec<(String, f64)> {
        found
            .iter()
            .map(|v| {
                (
                    v["phase"].as_str().unwrap().to_owned(),
                    v["time"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let want = vec![("start".to_owned(), 1.0), ("end".to_owned(), 3.0)];
    assert_eq!(fields(run_events(&net, events(), false)), want);
    assert_eq!(fields(run_events(&net, events(), true)), want);
}
