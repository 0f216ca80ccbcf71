//! `ccpn-run` reloading its net while it runs: `--watch` picks up an edit of the
//! net file, a broken edit is refused and the running net goes on, SIGHUP reloads
//! on demand, and `--stats` counts the reloads.

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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccpn-run"));
        cmd.arg(net).arg("-").arg("--stats");
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
