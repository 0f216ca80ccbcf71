//! Feedback on long runs: `--stats-every` for a live feed of counters, `--quiet`
//! for runs whose warnings nobody reads, and no progress line when stderr is not a
//! terminal.

mod support;

use support::{root, run, text};

/// The harbour net's sample (6,000 reports), as a string.
fn harbour() -> (String, String) {
    let net = root().join("nets/harbour.ron").display().to_string();
    let events = std::fs::read_to_string(root().join("examples/harbour.jsonl")).unwrap();
    (net, events)
}

#[test]
fn stats_every_prints_a_json_line_of_counters_every_n_events() {
    let (net, events) = harbour();
    // From the file, not a pipe: a reader that catches up with a pipe passes on the
    // part of a batch it has, which would move the lines.
    let file = root().join("examples/harbour.jsonl").display().to_string();
    let out = run(&[&net, &file, "--stats-every", "2000"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    // Events come in batches of 1,024: a line after each batch that passes 2,000,
    // 4,000 and 6,000 (the last batch ends at 6,000 exactly).
    let processed: Vec<u64> = lines
        .iter()
        .map(|l| l["processed"].as_u64().unwrap())
        .collect();
    assert_eq!(processed, [2048, 4096, 6000], "{lines:?}");
    for l in &lines {
        for field in [
            "elapsed_s",
            "read",
            "rejected",
            "late",
            "detections",
            "live_tokens",
            "events_per_s",
        ] {
            assert!(l.get(field).is_some(), "{field} missing from {l}");
        }
    }
    // Without the flag (and stderr not a terminal): nothing on stderr at all.
    let quiet = run(&[&net], &events);
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    assert_eq!(quiet.stdout, out.stdout);
}

#[test]
fn quiet_silences_the_warnings_but_says_what_it_silenced() {
    let (net, events) = harbour();
    let bad =
        format!("{events}not json\n{{\"id\": 1}}\n{{\"id\":9,\"type\":\"track\",\"time\":1}}\n");
    let loud = run(&[&net], &bad);
    assert!(
        text(&loud.stderr).contains("line 6001: rejected"),
        "{}",
        text(&loud.stderr)
    );
    let out = run(&[&net, "--quiet"], &bad);
    assert!(out.status.success());
    assert_eq!(out.stdout, loud.stdout);
    assert_eq!(
        text(&out.stderr),
        "ccpn-run: warning: 2 lines rejected and 1 late, not reported one by one (--quiet); \
         --stats counts them, --late FILE keeps the late ones\n"
    );
    // Errors are still said.
    let missing = run(&[&net, "--quiet", "/nonexistent/events.jsonl"], "");
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("ccpn-run: error:"),
        "{}",
        text(&missing.stderr)
    );
}

/// On a terminal (here the pseudo-terminal of util-linux's `script`), a progress line
/// counts lines, events, detections, late and rejected lines as the run goes, and is
/// cleared at the end; `--quiet` leaves it out.
#[test]
fn a_progress_line_on_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_ccpn-run");
    let net = root().join("nets/harbour.ron").display().to_string();
    let events = root().join("examples/harbour.jsonl").display().to_string();
    let on_tty = |extra: &str| {
        let cmd = format!("{bin} {net} {events} {extra} > /dev/null");
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .expect("util-linux's script runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let shown = on_tty("");
    // The line is redrawn at most a few times a second: some state of the run is shown.
    for part in [
        " lines, ",
        " events (",
        "/s), ",
        " detections, 0 late, 0 rejected",
    ] {
        assert!(shown.contains(part), "{part:?} not in {shown:?}");
    }
    // Cleared: the last thing written erases the line.
    assert!(shown.trim_end().ends_with("\u{1b}[2K"), "{shown:?}");
    assert!(!on_tty("--quiet").contains("lines,"));
}
