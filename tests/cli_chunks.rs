//! `ccpn-run` parsing a large file on two threads gives what it gives reading the same
//! lines from standard input on one: the same detections, the same reports of bad,
//! late and unlocated lines, the same `--late` file, the same `--strict` stop and the
//! same checkpoints.

mod support;

use std::process::Output;

use support::tempfile_path::Temp;
use support::*;

/// About 2 MiB of events for the benchmark net, with bad, blank, too long, late and
/// unlocated lines among them.
fn messy_input() -> String {
    messy_input_with_notes(0)
}

/// [`messy_input`] with a `note` of `note` bytes on each ordinary line: lines long
/// enough that a chunk ends at its text's bound before its count of lines.
fn messy_input_with_notes(note: usize) -> String {
    let note = if note == 0 {
        String::new()
    } else {
        format!(",\"note\":\"{}\"", "n".repeat(note))
    };
    let mut out = String::new();
    let mut seed: u64 = 7;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        seed >> 33
    };
    for i in 0..24_000u64 {
        let r = next();
        let kind = ["A", "B", "C", "D", "E"][(r % 5) as usize];
        // Every 50th line steps back in time: late under a short --max-delay.
        let t = if i % 50 == 49 {
            i as f64 * 0.01 - 0.3
        } else {
            i as f64 * 0.01
        };
        let (x, y) = (next() % 1000, next() % 1000);
        let line = match i % 997 {
            13 => "{\"id\": 1, \"time\": ".to_owned(),
            14 => "[1, 2]".to_owned(),
            15 => String::new(),
            16 => format!("{{\"id\":{i},\"type\":\"{kind}\",\"time\":{t}}}"),
            17 => format!("{{\"id\":{i},\"time\":{t},\"ship\":\"{}\"}}", "x".repeat(400)),
            18 => format!("{{\"id\":{i},\"time\":{t},\"x\":1}}"),
            _ => format!(
                "{{\"id\":{i},\"type\":\"{kind}\",\"time\":{t},\"x\":{x}.5,\"y\":{y},\"ship\":\"s{}\",\"speed\":{}{note}}}",
                next() % 200,
                next() % 40
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    assert!(out.len() > 1 << 20);
    out
}

/// `ccpn-run` on the benchmark net with `flags`, reading `input` from a file and
/// from standard input; both outputs, and what each wrote to `--late` or
/// `--checkpoint` if a flag names `@` (the file's place).
fn both(input: &str, flags: &[&str]) -> [(Output, Vec<u8>); 2] {
    let net = root().join("benches/nets/twenty.ron");
    let net = net.to_str().expect("utf-8 path");
    let file = Temp::with("events.jsonl", input);
    [file.path(), "-"].map(|events| {
        let side = Temp::with("side", "");
        let flags: Vec<&str> = flags
            .iter()
            .map(|f| if *f == "@" { side.path() } else { f })
            .collect();
        let mut args = vec![net, events];
        args.extend(flags);
        let out = run(&args, if events == "-" { input } else { "" });
        let side = std::fs::read(&side.0).unwrap_or_default();
        (out, side)
    })
}

fn same(flags: &[&str]) {
    same_on(&messy_input(), flags);
}

fn same_on(input: &str, flags: &[&str]) {
    let [(file, file_side), (stdin, stdin_side)] = both(input, flags);
    assert_eq!(file.status.code(), stdin.status.code(), "{flags:?}");
    assert_eq!(text(&file.stderr), text(&stdin.stderr), "{flags:?}");
    assert!(file.stdout == stdin.stdout, "{flags:?}: detections differ");
    assert!(file_side == stdin_side, "{flags:?}: the side files differ");
    assert!(text(&file.stderr).contains("rejected"), "{flags:?}");
    assert!(!flags.contains(&"@") || !file_side.is_empty(), "{flags:?}");
}

#[test]
fn a_large_file_reads_as_standard_input_does() {
    same(&["--max-line-bytes", "300"]);
}

#[test]
fn late_lines_are_reported_and_kept_alike() {
    same(&["--max-delay", "0.1", "--late", "@"]);
}

#[test]
fn strict_stops_at_the_same_line() {
    same(&["--strict", "--max-delay", "0.1"]);
}

#[test]
fn checkpoints_mark_the_same_positions() {
    same(&[
        "--checkpoint",
        "@",
        "--checkpoint-every",
        "3000",
        "--max-delay",
        "1",
    ]);
}

#[test]
fn chunks_ended_by_their_text_read_alike() {
    // Lines of about 250 bytes: a chunk reaches its bound on text (192 KiB) after
    // some 800 lines, well before its 2,048.
    let input = messy_input_with_notes(160);
    assert!(input.len() > 5 << 20);
    same_on(&input, &["--max-delay", "0.1", "--late", "@"]);
}
