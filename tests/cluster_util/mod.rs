//! What the cluster tests share: starting `ccpn-run` processes with bounded waits,
//! reading their detections and `--stats` counts, and free ports on 127.0.0.1.

#![allow(dead_code)]

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longest a run may take before its processes are killed and the test fails.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) fn ccpn_run() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
}

/// Waits for `child` while reading its output, killing it (and failing) after
/// [`TIMEOUT`].
pub(crate) fn wait(mut child: Child, what: &str) -> Output {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait().unwrap() {
            Some(status) => break status,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let err = stderr.join().unwrap();
                panic!(
                    "{what} did not finish in {TIMEOUT:?}; stderr:\n{}",
                    String::from_utf8_lossy(&err)
                );
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// A child killed if the test fails before waiting for it.
pub(crate) struct KillOnDrop(pub(crate) Option<Child>);

impl KillOnDrop {
    pub(crate) fn take(mut self) -> Child {
        self.0.take().expect("taken once")
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub(crate) fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A run's detections without their `seq` (sorted), and its `--stats` line counts.
pub(crate) struct Run {
    pub(crate) detections: Vec<String>,
    pub(crate) counts: [u64; 4],
}

pub(crate) fn parse(out: &Output, what: &str) -> Run {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let mut last_time = f64::MIN;
    let mut detections = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        // Gathered output is numbered from 0 and in time order.
        assert_eq!(v["seq"], i as u64, "{what}: line {i}: {line}");
        let time = v["time"].as_f64().unwrap();
        assert!(time >= last_time, "{what}: line {i} goes back in time");
        last_time = time;
        v.as_object_mut().unwrap().remove("seq");
        detections.push(v.to_string());
    }
    detections.sort();
    Run {
        detections,
        counts: counts(&out.stderr),
    }
}

/// `read`, `processed`, `rejected`, `late` from the last stderr line.
pub(crate) fn counts(stderr: &[u8]) -> [u64; 4] {
    let text = String::from_utf8_lossy(stderr);
    let stats: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let n = |k: &str| {
        stats[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k} in {stats}"))
    };
    [n("read"), n("processed"), n("rejected"), n("late")]
}

/// A port free on 127.0.0.1 (as far as anyone can tell before using it).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first differences between two sorted lists.
pub(crate) fn diff(want: &[String], got: &[String]) -> String {
    let missing: Vec<_> = want
        .iter()
        .filter(|w| got.binary_search(w).is_err())
        .take(3)
        .collect();
    let extra: Vec<_> = got
        .iter()
        .filter(|g| want.binary_search(g).is_err())
        .take(3)
        .collect();
    format!(
        "{} detections, want {}; missing {missing:?}; extra {extra:?}",
        got.len(),
        want.len()
    )
}
