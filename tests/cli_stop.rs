//! How a `ccpn-run` run stops and goes on: Ctrl-C and SIGTERM on a live input, the
//! final checkpoint of a finished run (rerunning the README's checkpoint command adds
//! nothing), the note of where a run resumed, and `--strict` with events held for
//! reordering.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use support::tempfile_path::Temp;
use support::*;

/// One detection per `A` event.
const ATOMIC_NET: &str = r#"Net(events: { "a": Atomic(type: "A") }, outputs: ["a"])"#;

/// `A` then `B` within a minute.
const SEQ_NET: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"), "ab": Seq(of: ["a", "b"], within: 60.0) },
    outputs: ["ab"],
)"#;

fn event(id: u64, kind: &str, time: u64) -> String {
    format!("{{\"id\":{id},\"type\":\"{kind}\",\"time\":{time}}}\n")
}

/// Starts `ccpn-run args` on a pipe kept open, writes `lines`, and waits until it has
/// written `expect` detections: the run is then waiting for more input.
fn start_live(args: &[&str], lines: &str, expect: usize) -> (Child, Vec<String>) {
    let mut child = spawn_piped(bin().args(args));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(lines.as_bytes()).expect("write");
    stdin.flush().expect("flush");
    // Kept open, as a live feed is: the run cannot end by itself.
    std::mem::forget(stdin);
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut seen = Vec::new();
    while seen.len() < expect {
        let mut line = String::new();
        assert!(out.read_line(&mut line).expect("read") > 0, "stdout closed");
        seen.push(line);
    }
    // What the run writes after this, until it ends, is not looked at.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    (child, seen)
}

/// Sends the signals, named as `kill` names them, to `child` in one shell command.
fn signal(child: &Child, signals: &[&str]) {
    let script: Vec<String> = signals
        .iter()
        .map(|s| format!("kill -{s} {}", child.id()))
        .collect();
    let ok = Command::new("sh")
        .arg("-c")
        .arg(script.join("; "))
        .status()
        .expect("kill");
    assert!(ok.success());
}

/// Waits for `child` to end, at most 20 s.
fn wait(mut child: Child) -> Output {
    let started = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "ccpn-run did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn ctrl_c_on_a_quiet_input_writes_the_checkpoint_and_the_stats_and_exits_130() {
    let net = Temp::with("a.ron", ATOMIC_NET);
    let ckpt = Temp::with("run.ckpt", "");
    std::fs::remove_file(&ckpt.0).unwrap();
    let input: String = (1..=3).map(|i| event(i, "A", i)).collect();
    let (child, seen) = start_live(
        &[net.path(), "--stats", "--checkpoint", ckpt.path()],
        &input,
        3,
    );
    assert!(seen[2].contains("\"ids\":[3]"), "{seen:?}");
    signal(&child, &["INT"]);
    let out = wait(child);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("ccpn-run: note: stopped by SIGINT after line 3"),
        "{err}"
    );
    let s = stats(&out);
    assert_eq!(
        (s["read"].as_u64(), s["processed"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(ckpt.0.exists(), "no final checkpoint: {err}");
    // Resumed on the whole input, the run goes on after line 3.
    let more: String = (4..=5).map(|i| event(i, "A", i)).collect();
    let out = run(
        &[
            net.path(),
            "--checkpoint",
            ckpt.path(),
            "--resume",
            ckpt.path(),
        ],
        &format!("{input}{more}"),
    );
    let det = text(&out.stdout);
    assert_eq!(det.lines().count(), 2, "{det}");
    assert!(det.lines().next().unwrap().contains("\"seq\":3"), "{det}");
}

#[test]
fn sigterm_exits_143_and_a_second_ctrl_c_ends_at_once() {
    let net = Temp::with("a.ron", ATOMIC_NET);
    let (child, _) = start_live(&[net.path(), "--stats"], &event(1, "A", 1), 1);
    signal(&child, &["TERM"]);
    let out = wait(child);
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("stopped by SIGTERM after line 1"));

    // A consumer that reads nothing: the orderly stop waits on the full stdout, and
    // the second Ctrl-C ends it.
    let mut child = spawn_piped(bin().args([net.path(), "--stats"]));
    let mut stdin = child.stdin.take().unwrap();
    let input: String = (1..=20_000).map(|i| event(i, "A", i)).collect();
    std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
        std::thread::sleep(Duration::from_secs(30));
    });
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, &["INT"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "stopped though stdout is full"
    );
    let sent = Instant::now();
    signal(&child, &["INT"]);
    let out = wait(child);
    assert!(sent.elapsed() < Duration::from_secs(5));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!err.contains("stopped by"), "an orderly stop: {err}");
}

#[test]
fn ctrl_c_leaves_the_events_held_for_reordering_to_the_resumed_run() {
    let net = Temp::with("seq.ron", SEQ_NET);
    let ckpt = Temp::with("run.ckpt", "");
    std::fs::remove_file(&ckpt.0).unwrap();
    // A at 1 is released once B at 20 comes (--max-delay 10); B is held.
    let input = format!("{}{}", event(1, "A", 1), event(2, "B", 20));
    let mut child = spawn_piped(
        bin()
            .args([net.path(), "--max-delay", "10", "--stats"])
            .args(["--checkpoint", ckpt.path()]),
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, &["INT"]);
    let out = wait(child);
    drop(stdin);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("the event held for reordering (--max-delay) was not processed"),
        "{err}"
    );
    assert_eq!(stats(&out)["held_unprocessed"].as_u64(), Some(1), "{err}");
    // The resumed run processes it: A at 1 and B at 20 are within the minute.
    let input = format!("{input}{}", event(3, "C", 40));
    let out = run(
        &[
            net.path(),
            "--max-delay",
            "10",
            "--checkpoint",
            ckpt.path(),
            "--resume",
            ckpt.path(),
        ],
        &input,
    );
    let det = text(&out.stdout);
    assert!(det.contains("\"ids\":[1,2]"), "{det}");
}

#[test]
fn rerunning_the_checkpoint_command_after_a_finished_run_appends_nothing() {
    let net = Temp::with("a.ron", ATOMIC_NET);
    let ckpt = Temp::with("run.ckpt", "");
    std::fs::remove_file(&ckpt.0).unwrap();
    let input: String = (1..=5).map(|i| event(i, "A", i)).collect();
    let args = [
        net.path(),
        "--checkpoint",
        ckpt.path(),
        "--resume",
        ckpt.path(),
    ];
    let first = run(&args, &input);
    assert_eq!(text(&first.stdout).lines().count(), 5);
    assert!(
        text(&first.stderr).contains("no checkpoint at"),
        "{}",
        text(&first.stderr)
    );
    let again = run(&args, &input);
    assert_eq!(text(&again.stdout), "", "{}", text(&again.stderr));
    assert_eq!(again.status.code(), Some(0));
    let err = text(&again.stderr);
    assert!(
        err.contains(&format!(
            "ccpn-run: note: resuming from checkpoint {}: lines 1 to 5 were consumed; the next detection is seq 5",
            ckpt.path()
        )),
        "{err}"
    );
}

#[test]
fn strict_with_max_delay_emits_what_the_held_events_detect_and_says_it_stopped() {
    let net = Temp::with("seq.ron", SEQ_NET);
    let input = format!(
        "{}{}not json\n{}",
        event(1, "A", 1),
        event(2, "B", 2),
        event(3, "B", 3)
    );
    let out = run(
        &[net.path(), "--strict", "--max-delay", "10", "--stats"],
        &input,
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(text(&out.stdout).contains("\"ids\":[1,2]"), "{err}");
    assert!(
        err.contains(
            "ccpn-run: error: --strict stopped the run at line 3: the lines after it were not \
             read; the 2 events held for reordering (--max-delay) before it were processed"
        ),
        "{err}"
    );
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
