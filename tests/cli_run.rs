//! `ccpn-run` as a command: a closed pipe on every write path, messages in one form,
//! capped repeated reports, the exit status of a run that could use no line,
//! argument errors, `-h`, and I/O errors that name their file.

mod support;

use std::process::Stdio;

use support::tempfile_path::Temp;
use support::*;

/// Two detections per event after the first: a net whose output outruns a reader.
const COUNT_NET: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "c": Count(of: "a", n: 2, distance: 1000.0, window: 100000.0) },
    outputs: ["c"],
)"#;

fn many_events(n: usize) -> String {
    (0..n)
        .map(|i| format!("{{\"id\":{i},\"type\":\"A\",\"time\":{i},\"x\":0,\"y\":0}}\n"))
        .collect()
}

#[test]
fn a_closed_pipe_ends_every_output_quietly() {
    let planar = Temp::with("count.ron", COUNT_NET);
    let planar_events = Temp::with("ev.jsonl", &many_events(600));
    // GeoJSON is for lon/lat nets.
    let wgs84 = Temp::with(
        "count84.ron",
        &COUNT_NET.replace("Net(", "Net(space: Wgs84,"),
    );
    let wgs84_events = Temp::with(
        "ev84.jsonl",
        &many_events(600)
            .replace("\"x\"", "\"lon\"")
            .replace("\"y\"", "\"lat\""),
    );
    for (net, events, extra) in [
        (&planar, &planar_events, &[][..]),
        (&wgs84, &wgs84_events, &["--output", "geojson"]),
        (&planar, &planar_events, &["--workers", "2"]),
    ] {
        let out = close_after_first_bytes(bin().args([net.path(), events.path()]).args(extra));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{extra:?}: {err}");
    }
}

#[test]
fn every_message_has_the_error_or_warning_prefix() {
    let net = Temp::with("count.ron", COUNT_NET);
    let input = "{\"id\":1,\"type\":\"A\",\"time\":5,\"x\":0,\"y\":0}\nnot json\n{\"id\":2,\"type\":\"A\",\"time\":1,\"x\":0,\"y\":0}\n";
    let out = run(&[net.path()], input);
    let err = text(&out.stderr);
    assert!(
        err.contains("ccpn-run: warning: line 2: rejected: "),
        "{err}"
    );
    assert!(err.contains("ccpn-run: warning: line 3: "), "{err}");
    let out = run(&[net.path(), "/no/such/events.jsonl"], "");
    assert!(text(&out.stderr).starts_with("ccpn-run: error: "));
    let out = run(&["/no/such/net.ron"], "");
    assert!(text(&out.stderr).starts_with("ccpn-run: error: "));
}

#[test]
fn repeated_reports_are_capped_and_a_run_with_no_usable_line_fails() {
    let net = Temp::with("count.ron", COUNT_NET);
    let input = "{\"id\":1\n".repeat(500);
    let out = run(&[net.path(), "--stats"], &input);
    let err = text(&out.stderr);
    assert_eq!(err.matches(": rejected: ").count(), 20, "{err}");
    assert!(
        err.contains(
            "ccpn-run: warning: 480 more lines rejected for the same reason as line 1 (not shown)"
        ),
        "{err}"
    );
    assert!(
        err.contains("ccpn-run: error: none of the 500 lines read could be used"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(4));
    let s = stats(&out);
    assert_eq!(s["rejected"].as_u64(), Some(500));
    // One usable line is enough for a normal end.
    let input = format!("{input}{{\"id\":2,\"type\":\"A\",\"time\":1}}\n");
    assert_eq!(run(&[net.path()], &input).status.code(), Some(0));
}

#[test]
fn coordinates_under_the_other_space_names_are_counted_and_warned_once() {
    let net = Temp::with("count.ron", COUNT_NET);
    let input = "{\"id\":1,\"type\":\"A\",\"time\":0,\"lon\":1,\"lat\":2}\n{\"id\":2,\"type\":\"A\",\"time\":1,\"lon\":1,\"lat\":2}\n{\"id\":3,\"type\":\"A\",\"time\":2}\n";
    let out = run(&[net.path(), "--stats"], input);
    let err = text(&out.stderr);
    assert_eq!(
        err.matches("has `lon`/`lat` but the net is Planar").count(),
        1,
        "{err}"
    );
    assert!(err.contains("--field x=lon --field y=lat"), "{err}");
    assert_eq!(stats(&out)["unlocated"].as_u64(), Some(3));
}

#[test]
fn argument_errors_exit_2_naming_the_flag() {
    let net = Temp::with("count.ron", COUNT_NET);
    for (args, flag) in [
        (&["-n", "2"][..], "--hostfile"),
        (&["-p", "1"], "--process"),
        (&["--hostfile", "hosts.txt"], "--hostfile"),
        (&["-n", "2", "-p", "2", "-H", "hosts.txt"], "--process 2"),
        (
            &["--checkpoint", "c", "--output", "geojson"],
            "--checkpoint",
        ),
        (&["--workers", "2", "--resume", "c"], "--resume"),
        (&["--max-tokens", "many"], "--max-tokens"),
    ] {
        let mut all = vec![net.path()];
        all.extend(args);
        let out = run(&all, "");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("ccpn-run: error: "), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn dash_h_is_help() {
    let out = run(&["-h"], "");
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("Usage: ccpn-run") && help.contains("-H, --hostfile"),
        "{help}"
    );
}

#[test]
fn help_lists_the_input_fields() {
    let help = text(&run(&["--help"], "").stdout);
    assert!(help.contains("Input fields"), "{help}");
    for field in ["  id ", "  time ", "  type ", "  lon, lat ", "  x, y "] {
        assert!(help.contains(field), "{field:?} in {help}");
    }
}

#[test]
fn io_errors_name_the_file() {
    let net = Temp::with("count.ron", COUNT_NET);
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    for (args, expected) in [
        (
            vec![net.path(), "/no/such/events.jsonl"],
            "cannot open the events file /no/such/events.jsonl: ",
        ),
        (
            vec![net.path(), dir],
            &*format!("cannot read {dir} after line 0: "),
        ),
        (
            vec![net.path(), "--late", "/no/such/dir/late.jsonl"],
            "cannot create the --late file /no/such/dir/late.jsonl: ",
        ),
    ] {
        let out = run(&args, "");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::File::create("/dev/full").expect("/dev/full");
        let out = bin()
            .arg(net.path())
            .stdin(Stdio::piped())
            .stdout(full)
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(many_events(200).as_bytes())?;
                c.wait_with_output()
            })
            .expect("run");
        let err = text(&out.stderr);
        assert!(
            err.contains("cannot write the detections to standard output: "),
            "{err}"
        );
    }
}

#[test]
fn check_says_what_an_unused_event_feeds_and_counts_in_good_grammar() {
    let net = Temp::with(
        "unused.ron",
        r#"Net(
    events: {
        "a": Atomic(type: "A"),
        "b": Atomic(type: "B"),
        "c": Atomic(type: "C"),
        "bc": Seq(of: ["b", "c"], within: 10.0),
    },
    outputs: ["a"],
)"#,
    );
    let out = run(&["--check", net.path()], "");
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "event `c` is not an output and no output depends on it (it feeds only `bc`, which no output depends on either)"
        ),
        "{err}"
    );
    assert!(
        err.contains("event `bc` is not an output and feeds no other event"),
        "{err}"
    );
    assert!(!err.contains("feeds none"), "{err}");
    let one = Temp::with(
        "one.ron",
        r#"Net(events: { "a": Atomic(type: "A") }, outputs: ["a"])"#,
    );
    let out = run(&["--check", one.path()], "");
    let o = text(&out.stdout);
    assert!(
        o.contains(": ok: 1 component, 3 places, 1 transition, 1 connection transition, 4 arcs"),
        "{o}"
    );
}

#[test]
fn geojson_output_of_a_planar_net_is_refused() {
    let net = Temp::with("count.ron", COUNT_NET);
    let out = run(&[net.path(), "--output", "geojson"], &many_events(3));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("ccpn-run: error: --output geojson needs a `space: Wgs84` net"),
        "{err}"
    );
    assert!(text(&out.stdout).is_empty());
}
