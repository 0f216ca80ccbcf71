#![allow(missing_docs)]

//! A cluster that strangers cannot break: while a two-process cluster starts on
//! 127.0.0.1, something else connects to process 0 — a stranger sending 10,000
//! random bytes, a port scan that connects and closes, a silent connection, a
//! replay of a real process's recorded handshake, another version of the
//! handshake, a process of another cluster —
//! and the cluster still starts and gives the detections of a single-process run,
//! with one warning line for each connection it dropped. A peer with another
//! secret, and a fake process 0 replaying a real one, are refused with a message
//! and exit status 6; a cluster across machines without a secret does not start
//! (exit status 2).

mod cluster_util;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use cluster_util::{ccpn_run, diff, free_port, parse, spawn, wait, KillOnDrop};

const NET: &str = r#"Net(
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "ab": Seq(of: ["a", "b"], within: 20.0, key: "ship"),
        "twice": Times(k: 2, of: "b", within: 10.0, key: "ship"),
    },
    outputs: ["ab", "twice"],
)"#;

/// The secret of the tests' clusters (given through the environment, so that a
/// `ccpn-run` without secrets runs these tests as well).
const SECRET: &str = "the tests' cluster secret, forty bytes..";

/// A net, a stream and a host file of two free ports.
struct Setup {
    dir: tempfile::TempDir,
    net: PathBuf,
    events: PathBuf,
    hosts: PathBuf,
    ports: [u16; 2],
}

fn setup(seed: u64) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.ron");
    std::fs::write(&net, NET).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut text = String::new();
    for i in 0..3_000 {
        let kind = if rng.random_bool(0.5) { "A" } else { "B" };
        let ship = rng.random_range(0..20);
        text.push_str(&format!(
            "{{\"id\":{i},\"type\":\"{kind}\",\"time\":{},\"x\":0,\"y\":0,\"ship\":\"s{ship}\"}}\n",
            i / 4
        ));
    }
    let events = dir.path().join("events.jsonl");
    std::fs::write(&events, text).unwrap();
    let ports = [free_port(), free_port()];
    let hosts = dir.path().join("hosts.txt");
    write_hosts(&hosts, &ports);
    Setup {
        dir,
        net,
        events,
        hosts,
        ports,
    }
}

fn write_hosts(path: &PathBuf, ports: &[u16]) {
    let lines: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

impl Setup {
    /// Process `i` of the cluster with the host file `hosts` and the secret in the
    /// environment.
    fn process(&self, i: u32, hosts: &PathBuf) -> Command {
        self.process_of(i, 2, hosts, 30)
    }

    /// Process `i` of `n` waiting `timeout` seconds for the others.
    fn process_of(&self, i: u32, n: u32, hosts: &PathBuf, timeout: u32) -> Command {
        let mut cmd = ccpn_run();
        cmd.arg(&self.net);
        if i == 0 {
            cmd.arg(&self.events);
        }
        cmd.args(["--stats", "-n", &n.to_string(), "-p", &i.to_string()])
            .arg("--hostfile")
            .arg(hosts)
            .args(["--connect-timeout", &timeout.to_string()])
            .env("CCPN_CLUSTER_SECRET", SECRET);
        cmd
    }

    /// The detections of a single-process run.
    fn single(&self) -> Vec<String> {
        let mut cmd = ccpn_run();
        cmd.arg(&self.net).arg(&self.events).arg("--stats");
        let one = parse(&wait(spawn(&mut cmd), "a single-process run"), "single");
        assert!(!one.detections.is_empty(), "the stream makes detections");
        one.detections
    }

    fn address(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.ports[i])
    }

    /// Starts process 0, lets `stranger` at it once it listens, then starts process
    /// 1: both must succeed with the detections of a single-process run. Returns
    /// process 0's stderr. A stranger that process 0 drops at once waits for that
    /// (so that its warning is there whatever the order of the handshakes); one
    /// that lingers returns its thread.
    fn starts_despite(&self, stranger: impl FnOnce(&str) -> Option<JoinHandle<()>>) -> String {
        let p0 = KillOnDrop(Some(spawn(&mut self.process(0, &self.hosts))));
        let lingering = stranger(&self.address(0));
        let p1 = KillOnDrop(Some(spawn(&mut self.process(1, &self.hosts))));
        let out0 = wait(p0.take(), "process 0");
        let out1 = wait(p1.take(), "process 1");
        assert!(out1.status.success(), "process 1: {}", text(&out1));
        let cluster = parse(&out0, "the cluster");
        let want = self.single();
        assert_eq!(
            cluster.detections,
            want,
            "{}",
            diff(&want, &cluster.detections)
        );
        if let Some(h) = lingering {
            h.join().unwrap();
        }
        text(&out0)
    }
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A connection to `address` as soon as something listens there.
fn connect(address: &str) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match TcpStream::connect(address) {
            Ok(s) => return s,
            Err(e) if Instant::now() > deadline => panic!("{address}: {e}"),
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The warning lines about dropped connections in `stderr`.
fn dropped(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("warning: dropped a connection from 127.0.0.1:"))
        .collect()
}

/// Sends `bytes` on `s`, then keeps the connection open until the other end
/// closes it (or 20 s pass), on a thread of its own.
fn send_and_linger(mut s: TcpStream, bytes: Vec<u8>) -> JoinHandle<()> {
    thread::spawn(move || {
        let _ = s.write_all(&bytes);
        until_dropped(&mut s);
    })
}

/// The one warning of a cluster that started although a stranger sent `bytes` to
/// process 0 (and waited for process 0 to drop it).
fn dropped_for(s: &Setup, bytes: Vec<u8>) -> String {
    let err = s.starts_despite(|address| {
        send_and_linger(connect(address), bytes).join().unwrap();
        None
    });
    let lines = dropped(&err);
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_owned()
}

/// Waits until the other end closes `s` (20 s at most).
fn until_dropped(s: &mut TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
    let mut sink = [0u8; 256];
    while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
}

#[test]
fn ten_thousand_random_bytes_do_not_stop_the_cluster() {
    let s = setup(1);
    let mut rng = StdRng::seed_from_u64(7);
    let garbage: Vec<u8> = (0..10_000).map(|_| rng.random()).collect();
    let line = dropped_for(&s, garbage);
    assert!(line.contains("not a ccpn process"), "{line}");
}

#[test]
fn another_version_of_the_handshake_is_dropped() {
    let s = setup(9);
    let mut hello = b"CCPN\x07".to_vec();
    hello.resize(69, 0);
    let line = dropped_for(&s, hello);
    assert!(line.contains("handshake version 7"), "{line}");
}

#[test]
fn a_port_scan_does_not_stop_the_cluster() {
    let s = setup(2);
    let err = s.starts_despite(|address| {
        for _ in 0..3 {
            let mut c = connect(address);
            c.shutdown(Shutdown::Write).unwrap();
            until_dropped(&mut c);
        }
        None
    });
    let lines = dropped(&err);
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines.iter().all(|l| l.contains("closed")), "{err}");
}

#[test]
fn a_silent_stranger_does_not_hold_the_door() {
    let s = setup(3);
    let started = Instant::now();
    s.starts_despite(|address| {
        // One says nothing, one the first bytes of a greeting; both stay connected.
        let silent = send_and_linger(connect(address), Vec::new());
        let halting = send_and_linger(connect(address), b"CCP".to_vec());
        Some(thread::spawn(move || {
            silent.join().unwrap();
            halting.join().unwrap();
        }))
    });
    // The strangers linger 20 s at most; the cluster did not wait for them.
    assert!(started.elapsed() < Duration::from_secs(25));
}

/// Records what each side of a connection sends through a proxy on `listen` to
/// `to`: (what the connecting side sent, what the other answered).
type Recording = Arc<Mutex<(Vec<u8>, Vec<u8>)>>;

fn proxy(listen: TcpListener, to: String) -> (Recording, JoinHandle<()>) {
    let record: Recording = Arc::default();
    let r = record.clone();
    let handle = thread::spawn(move || {
        let (client, _) = listen.accept().unwrap();
        let server = connect(&to);
        let pipe = |mut from: TcpStream, mut into: TcpStream, upstream: bool| {
            let r = r.clone();
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 || into.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    let mut rec = r.lock().unwrap();
                    let side = if upstream { &mut rec.0 } else { &mut rec.1 };
                    side.extend_from_slice(&buf[..n]);
                }
                let _ = into.shutdown(Shutdown::Write);
            })
        };
        let up = pipe(
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            true,
        );
        let down = pipe(server, client, false);
        up.join().unwrap();
        down.join().unwrap();
    });
    (record, handle)
}

/// A real cluster run with process 1 connecting through a recording proxy.
fn record_a_real_handshake(s: &Setup) -> (Vec<u8>, Vec<u8>) {
    let listen = TcpListener::bind("127.0.0.1:0").unwrap();
    let through = s.dir.path().join("through-proxy.txt");
    write_hosts(&through, &[listen.local_addr().unwrap().port(), s.ports[1]]);
    let (record, proxying) = proxy(listen, s.address(0));
    let p0 = KillOnDrop(Some(spawn(&mut s.process(0, &s.hosts))));
    let p1 = KillOnDrop(Some(spawn(&mut s.process(1, &through))));
    let out0 = wait(p0.take(), "process 0");
    let out1 = wait(p1.take(), "process 1 through the proxy");
    assert!(out1.status.success(), "{}", text(&out1));
    assert_eq!(parse(&out0, "the proxied cluster").detections, s.single());
    proxying.join().unwrap();
    let rec = record.lock().unwrap();
    assert!(
        rec.0.len() >= 44 && rec.1.len() >= 20,
        "a handshake went by"
    );
    rec.clone()
}

#[test]
fn a_replayed_handshake_does_not_join_the_cluster() {
    let s = setup(4);
    let (sent, _) = record_a_real_handshake(&s);
    let line = dropped_for(&s, sent);
    assert!(line.contains("cluster secret"), "{line}");
}

#[test]
fn a_fake_process_0_replaying_a_real_one_is_detected() {
    let s = setup(5);
    let (_, answered) = record_a_real_handshake(&s);
    let fake = TcpListener::bind(s.address(0)).unwrap();
    let p1 = KillOnDrop(Some(spawn(&mut s.process(1, &s.hosts))));
    let (conn, _) = fake.accept().unwrap();
    let lingering = send_and_linger(conn, answered);
    let out1 = wait(p1.take(), "process 1 facing a fake process 0");
    let err = text(&out1);
    assert_eq!(out1.status.code(), Some(6), "{err}");
    assert!(
        err.contains("did not prove it knows the cluster secret"),
        "{err}"
    );
    drop(fake);
    lingering.join().unwrap();
}

#[test]
fn a_process_of_another_cluster_is_refused() {
    let s = setup(6);
    let three = s.dir.path().join("three.txt");
    write_hosts(&three, &[s.ports[0], free_port(), free_port()]);
    let err = s.starts_despite(|_| {
        let out = wait(
            spawn(&mut s.process_of(2, 3, &three, 30)),
            "process 2 of another cluster",
        );
        let err = text(&out);
        assert_eq!(out.status.code(), Some(6), "{err}");
        assert!(err.contains("does not expect"), "{err}");
        None
    });
    let lines = dropped(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("process 2 of 3"), "{err}");
}

#[test]
fn a_peer_with_another_secret_is_refused() {
    let s = setup(7);
    let (right, wrong) = (s.dir.path().join("right"), s.dir.path().join("wrong"));
    std::fs::write(&right, format!("{SECRET}\n")).unwrap();
    std::fs::write(&wrong, "another secret, also long enough\n").unwrap();
    let p0 = KillOnDrop(Some(spawn(
        s.process_of(0, 2, &s.hosts, 5)
            .arg("--cluster-secret-file")
            .arg(&right),
    )));
    // The file wins over the environment, whose secret is the right one.
    let out1 = wait(
        spawn(
            s.process(1, &s.hosts)
                .arg("--cluster-secret-file")
                .arg(&wrong),
        ),
        "process 1",
    );
    let err1 = text(&out1);
    assert_eq!(out1.status.code(), Some(6), "{err1}");
    assert!(err1.contains("another cluster secret"), "{err1}");
    let out0 = wait(p0.take(), "process 0");
    let err0 = text(&out0);
    assert_eq!(out0.status.code(), Some(1), "{err0}");
    let lines = dropped(&err0);
    assert_eq!(lines.len(), 1, "{err0}");
    assert!(lines[0].contains("cluster secret"), "{err0}");
    assert!(err0.contains("did not connect"), "{err0}");
    assert!(out0.stdout.is_empty());
}

#[test]
fn a_cluster_across_machines_needs_a_secret() {
    let s = setup(8);
    // Process 0 only listens: nothing is sent to the documentation address.
    let hosts = s.dir.path().join("across.txt");
    let here = s.address(0);
    std::fs::write(&hosts, format!("{here}\n192.0.2.1:2101\n")).unwrap();
    let out = wait(
        spawn(
            ccpn_run()
                .arg(&s.net)
                .args(["-n", "2", "-p", "0", "--hostfile"])
                .arg(&hosts)
                .env_remove("CCPN_CLUSTER_SECRET"),
        ),
        "process 0 without a secret",
    );
    let err = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("needs a cluster secret"), "{err}");
}
