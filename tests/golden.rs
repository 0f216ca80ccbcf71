//! Golden tests as data: each `tests/data/<case>/` holds `net.ron`, `events.jsonl`
//! and the hand-checked `expected.jsonl`. `UPDATE_EXPECT=1 cargo test --test golden`
//! rewrites the expectations, which a person then reads and checks.

use std::fs;
use std::path::Path;

use ccpn::io::read::{is_blank, LineParser};
use ccpn::io::write::JsonLines;
use ccpn::{Detector, DetectorOptions, Net};

/// How a case is run.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// With the zone R*-tree.
    Indexed,
    /// Testing every zone.
    Linear,
    /// After every event the detector is dropped and restored from its snapshot.
    Restarting,
}

fn run_case(dir: &Path, mode: Mode) -> String {
    let net =
        Net::from_file(dir.join("net.ron")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let parser = LineParser::json(net.space());
    let writer = JsonLines::new(net.space());
    let options = DetectorOptions {
        zone_index: mode != Mode::Linear,
        ..DetectorOptions::default()
    };
    let mut detector = Detector::with_options(&net, options);
    let mut out = Vec::new();
    let events = fs::read_to_string(dir.join("events.jsonl")).expect("events.jsonl");
    for (i, line) in events.lines().enumerate() {
        if is_blank(line.as_bytes()) || line.trim_start().starts_with("//") {
            continue;
        }
        let ev = parser
            .parse(line.as_bytes())
            .unwrap_or_else(|e| panic!("{}:{}: {e}", dir.display(), i + 1));
        for d in detector.push(ev).expect("events in time order") {
            writer.write(&mut out, &d).expect("write");
        }
        if mode == Mode::Restarting {
            let stats = detector.stats();
            detector = Detector::restore(&net, &detector.snapshot())
                .unwrap_or_else(|e| panic!("{}:{}: restore: {e}", dir.display(), i + 1));
            assert_eq!(detector.stats(), stats, "{}:{}", dir.display(), i + 1);
        }
    }
    for d in detector.finish() {
        writer.write(&mut out, &d).expect("write");
    }
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn golden_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .expect("tests/data")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut ran = 0;
    for dir in dirs.iter().filter(|d| d.join("net.ron").exists()) {
        ran += 1;
        let got = run_case(dir, Mode::Indexed);
        // Testing every zone instead of stabbing the R*-tree changes nothing.
        assert_eq!(
            got,
            run_case(dir, Mode::Linear),
            "{}: with and without the zone index",
            dir.display()
        );
        // Nor does restoring the detector from a snapshot after every event.
        assert_eq!(
            got,
            run_case(dir, Mode::Restarting),
            "{}: restored from a snapshot after every event",
            dir.display()
        );
        let expected_path = dir.join("expected.jsonl");
        if update {
            fs::write(&expected_path, &got).expect("write expected");
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap_or_default();
        if got != expected {
            failures.push(format!(
                "== {}\n-- expected\n{expected}-- got\n{got}",
                dir.display()
            ));
        }
    }
    assert!(ran >= 10, "only {ran} golden cases found");
    assert!(
        failures.is_empty(),
        "{} golden case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
