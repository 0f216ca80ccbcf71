//! `ccpn-run` reloading its net while it runs: `--watch` picks up an edit of the
//! net file, a broken edit is refused and the running net goes on, SIGHUP reloads
//! on demand, `--stats` counts the reloads, and a run killed after a reload resumes
//! from its checkpoint with the reloaded net.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const V1: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
              "ab": Seq(of: ["a", "b"], within: 600.0) },
    outputs: ["ab"],
)"#;

const V2: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
              "ab": Seq(of: ["a", "b"], within: 600.0),
              "ba": Seq(of: ["b", "a"], within: 600.0) },
    outputs: ["ab", "ba"],
)"#;

struct Run {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: mpsc::Receiver<String>,
    lines: Vec<String>,
}

impl Run {
    fn start(net: &Path, watch: bool) -> Run {
        Run::start_with(net, watch, &[])
    }

    fn start_with(net: &Path, watch: bool, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccpn-run"));
        cmd.arg(net).arg("-").arg("--stats").args(args);
        if watch {
            cmd.arg("--watch");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stdin = child.stdin.take();
        Run {
            child,
            stdin,
            stderr,
            lines: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits (at most 20 s) for a line of stderr containing `what`.
    fn wait_for(&mut self, what: &str) -> String {
        loop {
            match self.stderr.recv_timeout(Duration::from_secs(20)) {
                Ok(line) => {
                    self.lines.push(line.clone());
                    if line.contains(what) {
                        return line;
                    }
                }
                Err(_) => panic!("no {what:?} on stderr; it said {:?}", self.lines),
            }
        }
    }

    /// Closes the input; the detections and the rest of stderr.
    fn finish(mut self) -> (String, Vec<String>) {
        drop(self.stdin.take());
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert!(self.child.wait().unwrap().success());
        self.lines.extend(self.stderr.iter());
        (out, self.lines)
    }
}

fn event(id: u32, ty: &str, t: u32) -> String {
    format!(r#"{{"id": {id}, "type": "{ty}", "time": {t}}}"#)
}

/// Rewrites `path`, making sure its modification time moves on.
fn rewrite(path: &Path, text: &str) {
    let before = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    loop {
        std::fs::write(path, text).unwrap();
        let after = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if after != before {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn reloads(stderr: &[String]) -> u64 {
    let stats = stderr
        .iter()
        .find(|l| l.contains("\"reloads\""))
        .unwrap_or_else(|| panic!("no --stats summary in {stderr:?}"));
    let v: serde_json::Value = serde_json::from_str(stats).unwrap();
    v["reloads"].as_u64().unwrap()
}

/// A run of `V1` (with `--watch` if `watch`) from a scratch directory, which has
/// taken a first event of type `kind` by the time it returns (before any edit).
fn started(watch: bool, kind: &str) -> (tempfile::TempDir, std::path::PathBuf, Run) {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.ron");
    std::fs::write(&net, V1).unwrap();
    let mut run = Run::start(&net, watch);
    run.send(&event(1, kind, 0));
    // Let the reader and detector take the line before the edit.
    std::thread::sleep(Duration::from_millis(700));
    (dir, net, run)
}

#[test]
fn watch_picks_up_an_edit_and_keeps_the_waiting_tokens() {
    let (_dir, net, mut run) = started(true, "A");
    rewrite(&net, V2);
    let said = run.wait_for("net reloaded");
    assert!(said.contains("added 1 (ba)"), "{said}");
    run.send(&event(2, "B", 10));
    run.send(&event(3, "A", 20));
    let (out, stderr) = run.finish();
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ab", "ba"], "{out}");
    assert_eq!(reloads(&stderr), 1);
}

#[test]
fn a_broken_edit_is_refused_and_the_net_goes_on() {
    let (_dir, net, mut run) = started(true, "A");
    rewrite(
        &net,
        &V1.replace("\"b\" }", "\"nope\" }")
            .replace("[\"a\", \"b\"]", "[\"a\", \"nope\"]"),
    );
    let said = run.wait_for("reload refused");
    assert!(said.contains("net.ron"), "{said}");
    run.wait_for("nope");
    run.send(&event(2, "B", 10));
    let (out, stderr) = run.finish();
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("\"ab\""));
    assert_eq!(reloads(&stderr), 0);
}

#[cfg(unix)]
#[test]
fn sighup_reloads_on_demand() {
    let (_dir, net, mut run) = started(false, "B");
    // Without --watch the edit is not looked at until SIGHUP.
    rewrite(&net, V2);
    std::thread::sleep(Duration::from_millis(700));
    let pid = run.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap()
        .success());
    run.wait_for("net reloaded");
    run.send(&event(2, "A", 10));
    let (out, stderr) = run.finish();
    // The B seen before the reload is not one the new `ba` saw.
    assert_eq!(out.lines().count(), 0, "{out}");
    assert_eq!(reloads(&stderr), 1);
}

/// The lines of a run of `V1` reloaded to `V2` after line 2, taken one by one.
const STREAM: [(u32, &str, u32); 6] = [
    (1, "A", 0),
    (2, "B", 10),
    (3, "B", 20),
    (4, "A", 30),
    (5, "B", 40),
    (6, "A", 50),
];

/// Detections by `seq`, complete lines only.
fn by_seq(out: &str, into: &mut std::collections::BTreeMap<u64, String>) {
    for line in out.lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
            into.insert(v["seq"].as_u64().unwrap(), line.to_owned());
        }
    }
}

#[cfg(unix)]
#[test]
fn a_run_killed_after_a_reload_resumes_from_its_checkpoint_with_the_reloaded_net() {
    // Uninterrupted: V1 for lines 1-2, then V2.
    let (_dir, net, mut run) = started(true, "A");
    run.send(&event(STREAM[1].0, STREAM[1].1, STREAM[1].2));
    std::thread::sleep(Duration::from_millis(700));
    rewrite(&net, V2);
    run.wait_for("net reloaded");
    for &(id, ty, t) in &STREAM[2..] {
        run.send(&event(id, ty, t));
    }
    let (expected, _) = run.finish();
    let mut want = std::collections::BTreeMap::new();
    by_seq(&expected, &mut want);
    assert!(expected.contains("\"ba\""), "{expected}");

    // The same, checkpointing every line, killed once line 4's detection is out.
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.ron");
    let ckpt = dir.path().join("run.ckpt");
    std::fs::write(&net, V1).unwrap();
    let ckpt_arg = ckpt.to_str().unwrap();
    let args = ["--checkpoint", ckpt_arg, "--checkpoint-every", "1"];
    let mut run = Run::start_with(&net, true, &args);
    run.send(&event(STREAM[0].0, STREAM[0].1, STREAM[0].2));
    run.send(&event(STREAM[1].0, STREAM[1].1, STREAM[1].2));
    std::thread::sleep(Duration::from_millis(700));
    rewrite(&net, V2);
    run.wait_for("net reloaded");
    for &(id, ty, t) in &STREAM[2..4] {
        run.send(&event(id, ty, t));
    }
    // Line 4 makes the first `ba`; its checkpoint mark (line 3's) was written before.
    let mut stdout = BufReader::new(run.child.stdout.take().unwrap());
    let mut killed_out = String::new();
    while !killed_out.contains("\"ba\"") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{killed_out}");
        killed_out.push_str(&line);
    }
    run.child.kill().unwrap();
    run.child.wait().unwrap();

    // Resumed on the whole input, with the net file as edited.
    let events = dir.path().join("events.jsonl");
    let all: Vec<String> = STREAM.iter().map(|&(i, ty, t)| event(i, ty, t)).collect();
    std::fs::write(&events, all.join("\n") + "\n").unwrap();
    let resumed = Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
        .arg(&net)
        .arg(&events)
        .args(["--resume", ckpt_arg])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    let consumed: u64 = err
        .split("lines 1 to ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        consumed >= 3,
        "the checkpoint is from before the reload: {err}"
    );
    assert!(!err.contains("as if it had been reloaded"), "{err}");
    let mut got = std::collections::BTreeMap::new();
    by_seq(&killed_out, &mut got);
    by_seq(&String::from_utf8_lossy(&resumed.stdout), &mut got);
    assert_eq!(got, want);
}
