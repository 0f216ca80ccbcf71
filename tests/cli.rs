//! `ccpn-run` end to end: errors for bad nets and bad lines, exit codes, stats,
//! reordering, CSV, `--dot`, and a closed stdout.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

mod support;

use support::*;

const SEQ_NET: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"), "ab": Seq(of: ["a", "b"], within: 10.0) },
    outputs: ["ab"],
)"#;

fn seq_net() -> tempfile_path::Temp {
    tempfile_path::Temp::with("seq.ron", SEQ_NET)
}

#[test]
fn bad_net_reports_every_problem_with_file_line_and_column() {
    let out = run(&[net("bad_names.ron").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let file = net("bad_names.ron").display().to_string();
    for expected in [
        format!("{file}:4:29: `ab` refers to `nowhere`, which is not an event of the net"),
        format!("{file}:5:9: cycle between composite events: x -> y -> x"),
        "`many`: `m` must be between 1 and 2 (the operand count), got 4".to_owned(),
        "`neg`: `within`: duration -3 is negative".to_owned(),
        format!("{file}:9:40: `inz` refers to unknown zone `atlantis`"),
        format!("{file}:11:21: output `ghost` is not an event of the net"),
    ] {
        assert!(err.contains(&expected), "missing {expected:?} in:\n{err}");
    }
}

#[test]
fn bad_moving_zones_are_reported() {
    let out = run(&["--check", net("bad_anchor.ron").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    for expected in [
        "bad_anchor.ron:2:67: zone `r` is anchored to `ghost`, which is not an event of the net",
        "zone `b`: `heading` needs an `anchor`",
        "`x`: zone `r` moves with an anchor: a `box` needs a fixed zone",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
}

#[test]
fn unknown_field_is_located() {
    let out = run(&["--check", net("bad_syntax.ron").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bad_syntax.ron:3:"), "{err}");
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn bad_when_expression_points_into_the_string() {
    let out = run(&["--check", net("bad_when.ron").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bad_when.ron:3:"), "{err}");
    assert!(err.contains("bad `when` expression"), "{err}");
}

#[test]
fn missing_net_file_is_an_error() {
    let out = run(&["/nonexistent/net.ron"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read net file /nonexistent/net.ron"));
}

#[test]
fn check_prints_summary_and_warnings() {
    let out = run(&["--check", net("unbounded.ron").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let o = text(&out.stdout);
    assert!(o.contains(": ok: 3 components"), "{o}");
    assert!(!o.contains("warning"), "warnings on stdout: {o}");
    let err = text(&out.stderr);
    assert!(
        err.starts_with("ccpn-run: warning: ") && err.contains("`ab` has no `within`"),
        "{err}"
    );
}

#[test]
fn bad_and_late_lines_are_reported_counted_and_the_run_goes_on() {
    let n = seq_net();
    let input = "{\"id\":1,\"type\":\"A\",\"time\":5}\n\
                 not json\n\
                 \n\
                 {\"id\":2,\"type\":\"B\",\"time\":3}\n\
                 {\"type\":\"B\",\"time\":6}\n\
                 {\"id\":3,\"type\":\"B\",\"time\":7}\n";
    let out = run(&[n.path(), "--stats"], input);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(err.contains("line 2: rejected: not valid JSON"), "{err}");
    assert!(
        err.contains("line 4: late: time 3 is before 5 already processed"),
        "{err}"
    );
    assert!(
        err.contains("line 5: rejected: missing field `id`"),
        "{err}"
    );
    let s = stats(&out);
    assert_eq!(
        (s["read"].as_u64(), s["processed"].as_u64()),
        (Some(5), Some(2))
    );
    assert_eq!(
        (s["rejected"].as_u64(), s["late"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(s["detections"].as_u64(), Some(1));
    assert!(s["events_per_s"].as_f64().is_some());
    let o = text(&out.stdout);
    assert_eq!(o.lines().count(), 1, "{o}");
    assert!(o.contains("\"ids\":[1,3]"), "{o}");
}

/// A corpus of 54 kinds of bad lines (not JSON, wrong types, missing and duplicate
/// fields, out-of-range and overflowing numbers, deep nesting, an over-long line,
/// invalid UTF-8): every line is reported with its number and counted; none panics.
/// Lines 33 and 34 give an array and an object to an attribute the net never reads
/// (it is ignored), line 47 a time of seconds written in a string: those events are
/// processed.
#[test]
fn every_bad_line_of_the_corpus_is_reported_and_counted() {
    let corpus = root().join("tests/corpus/bad_lines.jsonl");
    for format in ["auto", "jsonl"] {
        let out = bin()
            .args([net("unbounded.ron"), corpus.clone()])
            .args(["--format", format, "--stats"])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(0), "{format}");
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        for line in [33, 34, 47] {
            assert!(!err.contains(&format!("line {line}: ")), "{format}: {err}");
        }
        for line in (1..=54).filter(|l| ![33, 34, 47].contains(l)) {
            assert!(
                err.contains(&format!("line {line}: rejected: ")),
                "{format}: line {line} in:\n{err}"
            );
        }
        let s = stats(&out);
        assert_eq!(
            (s["read"].as_u64(), s["rejected"].as_u64()),
            (Some(54), Some(51)),
            "{format}"
        );
        assert_eq!(
            (s["processed"].as_u64(), s["late"].as_u64()),
            (Some(3), Some(0)),
            "{format}"
        );
    }
}

#[test]
fn a_garbage_first_line_does_not_decide_the_format() {
    let n = seq_net();
    let input =
        "garbage\n{\"id\":1,\"type\":\"A\",\"time\":0}\n{\"id\":2,\"type\":\"B\",\"time\":1}\n";
    let out = run(&[n.path(), "--stats"], input);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("\"ids\":[1,2]"));
    let s = stats(&out);
    assert_eq!(
        (
            s["read"].as_u64(),
            s["processed"].as_u64(),
            s["rejected"].as_u64()
        ),
        (Some(3), Some(2), Some(1))
    );
}

#[test]
fn strict_stops_at_the_first_bad_line() {
    let n = seq_net();
    let input =
        "{\"id\":1,\"type\":\"A\",\"time\":5}\nnot json\n{\"id\":3,\"type\":\"B\",\"time\":7}\n";
    let out = run(&[n.path(), "--strict", "--stats"], input);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stdout).is_empty());
    let s = stats(&out);
    assert_eq!(s["read"].as_u64(), Some(2));
}

#[test]
fn max_delay_reorders_and_late_file_keeps_late_lines_unchanged() {
    let n = seq_net();
    let late = tempfile_path::Temp::with("late.jsonl", "");
    let input = "{\"id\":2,\"type\":\"B\",\"time\":6}\n\
                 {\"id\":1,\"type\":\"A\",\"time\":5}\n\
                 {\"id\":9,\"type\":\"A\",\"time\":20}\n\
                 {\"id\":3, \"type\":\"B\", \"time\":4}\n";
    let out = run(
        &[
            n.path(),
            "--max-delay",
            "2s",
            "--late",
            late.path(),
            "--stats",
        ],
        input,
    );
    assert_eq!(out.status.code(), Some(0));
    let o = text(&out.stdout);
    assert!(o.contains("\"ids\":[1,2]"), "a reordered within 2 s: {o}");
    let s = stats(&out);
    assert_eq!(s["late"].as_u64(), Some(1));
    let kept = std::fs::read_to_string(&late.0).expect("late file");
    assert_eq!(kept, "{\"id\":3, \"type\":\"B\", \"time\":4}\n");
}

#[test]
fn csv_input_is_detected_from_its_header() {
    let n = seq_net();
    let input = "id,type,time,ship\n1,A,0,s1\n2,B,4,\"s,2\"\n";
    let out = run(&[n.path(), "--stats"], input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("\"ids\":[1,2]"));
    assert_eq!(stats(&out)["read"].as_u64(), Some(2));
}

#[test]
fn dot_output_renders_with_graphviz() {
    let out = run(
        &["--dot", root().join("nets/harbour.ron").to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let dot = text(&out.stdout);
    assert!(dot.starts_with("digraph ccpn {"));
    assert!(dot.contains("shape=circle") && dot.contains("shape=box"));
    let has_dot = Command::new("dot").arg("-V").output().is_ok();
    if !has_dot {
        // CI installs graphviz; elsewhere the structural checks above must do.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have graphviz's `dot`"
        );
        return;
    }
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dot");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(dot.as_bytes())
        .expect("feed dot");
    let rendered = child.wait_with_output().expect("dot runs");
    assert!(
        rendered.status.success(),
        "dot failed: {}",
        text(&rendered.stderr)
    );
    assert!(text(&rendered.stdout).contains("<svg"));
}

#[test]
fn geojson_output_is_one_feature_collection_with_member_points() {
    let out = bin()
        .args([
            root().join("nets/hotspots.ron"),
            root().join("examples/incidents.csv"),
        ])
        .args(["--output", "geojson"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["type"], "FeatureCollection");
    let features = v["features"].as_array().expect("features");
    assert!(!features.is_empty());
    let first = &features[0];
    assert_eq!(first["type"], "Feature");
    assert_eq!(first["properties"]["event"], "hotspot");
    assert!(first["properties"]["lon"].is_number(), "{first}");
    let members = &first["geometry"];
    assert_eq!(members["type"], "MultiPoint", "{first}");
    assert_eq!(
        members["coordinates"].as_array().map(Vec::len),
        Some(3),
        "a set of three"
    );
}

/// The reader reports bad lines on stderr while the detector warns there about
/// evictions: neither may wait on the other (a regression: the reader used to hold
/// the stderr lock for the whole run).
#[test]
fn warnings_and_bad_line_reports_interleave_without_deadlock() {
    let mut input = String::new();
    for i in 0..200_000u32 {
        if i % 50 == 0 {
            input.push_str("not json\n");
        } else {
            input.push_str(&format!(
                "{{\"id\":{i},\"type\":\"A\",\"time\":{}}}\n",
                i / 10
            ));
        }
    }
    let n = seq_net();
    let mut child = bin()
        .args([n.path(), "--max-tokens", "5", "--stats"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let drain = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("ccpn-run did not finish in 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    feeder.join().expect("feeder");
    let err = drain.join().expect("stderr");
    assert_eq!(status.code(), Some(0));
    assert!(
        err.contains("--max-tokens 5 reached"),
        "{}",
        &err[..err.len().min(500)]
    );
    assert!(err.contains("line 1: rejected"));
}

#[test]
fn closed_stdout_ends_quietly() {
    let harbour = root().join("nets/harbour.ron");
    let events = root().join("examples/harbour.jsonl");
    let out =
        close_after_first_bytes(bin().args([harbour.to_str().unwrap(), events.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn shipped_sample_detects_entries() {
    let out = bin()
        .args([
            root().join("nets/harbour.ron"),
            root().join("examples/harbour.jsonl"),
        ])
        .arg("--stats")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let s = stats(&out);
    assert_eq!(s["read"].as_u64(), s["processed"].as_u64());
    assert!(s["by_output"]["entry"].as_u64().unwrap_or(0) > 0, "{s}");
    assert!(Path::new(&root().join("README.md")).exists());
}

/// Hostile input for states: every report is a new tracker. Their key values count
/// against `--max-tokens`: the peak stays at the cap, the newcomers past it are
/// turned away and counted, a warning says so, and the run goes on.
#[test]
fn new_key_values_of_states_stay_within_max_tokens() {
    let n = tempfile_path::Temp::with(
        "states.ron",
        r#"Net(
    zones: { "site": Rect(min: (0.0, 0.0), max: (1000.0, 1000.0)) },
    events: {
        "report": Atomic(type: "gps"),
        "on_site": Inside(of: "report", zones: ["site"], key: "tracker", margin: 5.0),
        "dark": Silent(of: "report", for: "1h", key: "tracker"),
        "parked": Stationary(of: "report", radius: 10.0, for: "10m", key: "tracker"),
        "arrived": Starts(of: "on_site"),
    },
    outputs: ["arrived"],
)"#,
    );
    let trackers = 30_000;
    let mut input = String::new();
    for i in 0..trackers {
        input.push_str(&format!(
            "{{\"id\":{i},\"type\":\"gps\",\"time\":{},\"x\":{},\"y\":500,\"tracker\":\"t{i}\"}}\n",
            i / 100,
            10 + i % 900
        ));
    }
    let out = run(&[n.path(), "--max-tokens", "3000", "--stats"], &input);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("--max-tokens 3000 reached")
            && err.contains("new key values of states turned away"),
        "{err}"
    );
    let s = stats(&out);
    assert_eq!(s["processed"], trackers);
    assert_eq!(s["peak_live_tokens"], 3000, "{s}");
    assert_eq!(s["live_tokens"], 3000, "{s}");
    // Three states, one entry each per tracker: 1,000 trackers fit.
    assert_eq!(s["evicted"], 3 * (trackers - 1000), "{s}");
    assert_eq!(s["by_output"]["arrived"], 1000, "{s}");
}
