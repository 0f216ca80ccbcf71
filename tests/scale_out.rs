#![allow(missing_docs)]

//! `ccpn-run` on Timely Dataflow workers: the same nets and streams run
//! single-threaded, on 2 and 3 workers, with per-worker output files, and as a
//! 2-process cluster on 127.0.0.1 give the same detections (as multisets) and the
//! same line counts, for a keyed net, a counting net, a Dist net (WGS84, across
//! the antimeridian) and a net that cannot be split.

mod cluster_util;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cluster_util::{ccpn_run, diff, free_port, parse, spawn, wait, KillOnDrop, Run};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEYED: &str = r#"Net(
    zones: { "radar": Circle(center: (0.0, 0.0), radius: 30.0, anchor: "own") },
    events: {
        "own": Atomic(type: "S"),
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C", when: "speed > 5"),
        "ab": Seq(of: ["a", "b"], within: 20.0, key: "ship", context: Chronicle),
        "quiet": Not(start: "a", absent: "c", end: "b", within: 20.0, key: "ship"),
        "twice": Times(k: 2, of: "c", within: 10.0, key: "ship"),
        "tick": P(start: "a", period: 3.0, end: "b", within: 12.0, key: "ship"),
        "all_c": AStar(start: "a", e: "c", end: "b", within: 30.0, key: "ship"),
        "two": Any(m: 2, of: ["a", "b", "c"], within: 8.0, key: "ship"),
        "c_in": Within(of: "c", zones: ["radar"]),
        "late_in": Seq(of: ["ab", "c_in"], within: 30.0, key: "ship"),
    },
    outputs: ["ab", "quiet", "twice", "tick", "all_c", "two", "c_in", "late_in"],
)"#;

const COUNTING: &str = r#"Net(
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "trio": Count(of: "a", n: 3, distance: 15.0, window: 30.0),
        "four_ships": Count(of: "b", n: 4, distance: 25.0, window: 60.0, distinct: "ship"),
    },
    outputs: ["trio", "four_ships"],
)"#;

const DIST: &str = r#"Net(
    space: Wgs84,
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
        "near": Dist(a: "a", b: "b", max: 3000.0, within: 30.0),
        "near_c": Dist(a: "near", b: "c", max: 2000.0, within: 30.0, context: Unrestricted),
    },
    outputs: ["near", "near_c"],
)"#;

const GLOBAL: &str = r#"Net(
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
        "abc": Seq(of: ["a", "b", "c"], within: 10.0),
        "no_c": Not(start: "a", absent: "c", end: "b", within: 10.0),
    },
    outputs: ["abc", "no_c"],
)"#;

/// A seeded stream: `n` events of types A, B, C (and S, the own ship) over a few
/// minutes, with reordering up to 2 s, a few bad lines and a few late ones. `wgs84`
/// places them on both sides of the antimeridian.
fn stream(seed: u64, n: usize, wgs84: bool) -> String {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = String::new();
    let mut t = 1_700_000_000.0f64;
    for i in 0..n {
        t += rng.random_range(0.0..0.25);
        let kind = ["A", "B", "C", "S"][rng.random_range(0..4usize)];
        let jitter = rng.random_range(0.0..2.0);
        let (x, y) = (
            rng.random_range(-100.0..100.0),
            rng.random_range(-100.0..100.0),
        );
        let at = if wgs84 {
            let lon: f64 = 180.0 + x / 1000.0;
            let lon = if lon > 180.0 { lon - 360.0 } else { lon };
            format!(r#""lon":{lon},"lat":{}"#, y / 1000.0)
        } else {
            format!(r#""x":{x},"y":{y}"#)
        };
        out.push_str(&format!(
            r#"{{"id":{i},"type":"{kind}","time":{},{at},"ship":"s{}","speed":{}}}"#,
            t - jitter,
            rng.random_range(0..12),
            rng.random_range(0..10)
        ));
        out.push('\n');
        match i % 997 {
            13 => out.push_str("{\"id\": broken\n"),
            500 => out.push_str(&format!(
                "{{\"id\":\"late{i}\",\"type\":\"A\",\"time\":{},\"x\":0,\"y\":0}}\n",
                t - 60.0
            )),
            _ => {}
        }
    }
    out
}

struct Case {
    dir: tempfile::TempDir,
    net: PathBuf,
    events: PathBuf,
}

fn case(net: &str, wgs84: bool, seed: u64) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let net_path = dir.path().join("net.ron");
    std::fs::write(&net_path, net).unwrap();
    let events = dir.path().join("events.jsonl");
    std::fs::write(&events, stream(seed, 6_000, wgs84)).unwrap();
    Case {
        dir,
        net: net_path,
        events,
    }
}

fn run(c: &Case, extra: &[&str]) -> Run {
    let mut cmd = ccpn_run();
    cmd.arg(&c.net)
        .arg(&c.events)
        .args(["--max-delay", "2s", "--stats"])
        .args(extra);
    parse(
        &wait(spawn(&mut cmd), &format!("ccpn-run {extra:?}")),
        &format!("{extra:?}"),
    )
}

/// Runs `c` as a cluster of two processes on 127.0.0.1, each with `workers`.
fn cluster(c: &Case, workers: u32) -> Run {
    let hosts = c.dir.path().join("hosts.txt");
    let mut f = std::fs::File::create(&hosts).unwrap();
    writeln!(f, "127.0.0.1:{}\n127.0.0.1:{}", free_port(), free_port()).unwrap();
    let process = |i: u32| {
        let mut cmd = ccpn_run();
        cmd.arg(&c.net);
        if i == 0 {
            cmd.arg(&c.events);
        }
        cmd.args([
            "--max-delay",
            "2s",
            "--stats",
            "-n",
            "2",
            "-p",
            &i.to_string(),
            "--hostfile",
        ])
        .arg(&hosts)
        .args(["-w", &workers.to_string(), "--connect-timeout", "60"]);
        spawn(&mut cmd)
    };
    let p1 = KillOnDrop(Some(process(1)));
    let p0 = process(0);
    let out0 = wait(p0, "cluster process 0");
    let out1 = wait(p1.take(), "cluster process 1");
    assert!(
        out1.status.success(),
        "process 1 failed: {}",
        String::from_utf8_lossy(&out1.stderr)
    );
    assert!(out1.stdout.is_empty(), "process 1 writes nothing on stdout");
    parse(&out0, "cluster")
}

/// Runs with `--output-dir` on `workers`: the files' lines together, sorted.
fn per_worker_files(c: &Case, workers: u32) -> Vec<String> {
    let dir = c.dir.path().join("out");
    let mut cmd = ccpn_run();
    cmd.arg(&c.net)
        .arg(&c.events)
        .args([
            "--max-delay",
            "2s",
            "-w",
            &workers.to_string(),
            "--output-dir",
        ])
        .arg(&dir);
    let out = wait(spawn(&mut cmd), "--output-dir");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let mut all = Vec::new();
    for w in 0..workers {
        let text = std::fs::read_to_string(dir.join(format!("worker-{w}.jsonl"))).unwrap();
        for line in text.lines() {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            v.as_object_mut().unwrap().remove("seq");
            all.push(v.to_string());
        }
    }
    all.sort();
    all
}

fn check(net: &str, wgs84: bool, seed: u64, plan: &str) {
    let c = case(net, wgs84, seed);
    let check = ccpn_run().arg(&c.net).arg("--check").output().unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.contains(&format!("partitioning: {plan}")),
        "{report}"
    );

    let one = run(&c, &[]);
    assert!(!one.detections.is_empty(), "the stream makes detections");
    let [read, processed, rejected, late] = one.counts;
    assert_eq!(read, processed + rejected + late);
    assert!(
        rejected > 0 && late > 0,
        "the stream has bad and late lines: {:?}",
        one.counts
    );
    for extra in [
        &["--workers", "2"][..],
        &["--workers", "3", "--partitions", "7"][..],
    ] {
        let many = run(&c, extra);
        assert_eq!(many.counts, one.counts, "{extra:?}: line counts");
        assert!(
            many.detections == one.detections,
            "{extra:?}: {}",
            diff(&one.detections, &many.detections)
        );
    }
    let files = per_worker_files(&c, 2);
    assert!(
        files == one.detections,
        "--output-dir: {}",
        diff(&one.detections, &files)
    );
    let two = cluster(&c, 2);
    assert_eq!(two.counts, one.counts, "cluster: line counts");
    assert!(
        two.detections == one.detections,
        "cluster: {}",
        diff(&one.detections, &two.detections)
    );
}

#[test]
fn keyed_net_gives_the_same_detections_on_workers_and_a_cluster() {
    check(KEYED, false, 1, "by key");
}

#[test]
fn counting_net_gives_the_same_detections_on_workers_and_a_cluster() {
    check(COUNTING, false, 2, "by space");
}

#[test]
fn dist_net_gives_the_same_detections_on_workers_and_a_cluster() {
    check(DIST, true, 3, "by space");
}

#[test]
fn global_net_gives_the_same_detections_on_workers_and_a_cluster() {
    check(GLOBAL, false, 4, "global");
}

#[test]
fn a_dead_process_fails_the_run_loudly() {
    let c = case(KEYED, false, 5);
    let hosts = c.dir.path().join("hosts.txt");
    std::fs::write(
        &hosts,
        format!("127.0.0.1:{}\n127.0.0.1:{}\n", free_port(), free_port()),
    )
    .unwrap();
    let p1 = KillOnDrop(Some(
        ccpn_run()
            .arg(&c.net)
            .args(["-n", "2", "-p", "1", "--hostfile"])
            .arg(&hosts)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    // Process 0 reads a live stream that stays open, so the run cannot end
    // before process 1 is gone.
    let mut p0 = KillOnDrop(Some(
        ccpn_run()
            .arg(&c.net)
            .args(["--max-delay", "2s", "-n", "2", "-p", "0", "--hostfile"])
            .arg(&hosts)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let mut stdin = p0.0.as_mut().and_then(|c| c.stdin.take()).unwrap();
    stdin
        .write_all(std::fs::read(&c.events).unwrap().as_slice())
        .unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut dead = p1.take();
    dead.kill().unwrap();
    dead.wait().unwrap();
    // Keep the input open while process 0 notices.
    let out = wait(p0.take(), "process 0 after process 1 died");
    drop(stdin);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a process has probably died"), "{err}");
    assert!(
        err.lines().count() < 10,
        "one message, not a panic's backtrace: {err}"
    );
}

#[test]
fn checkpoints_geojson_and_watch_need_the_single_threaded_run() {
    let c = case(GLOBAL, false, 6);
    for extra in [
        &["--checkpoint", "x.ckpt"][..],
        &["--resume", "x.ckpt"][..],
        &["--output", "geojson"][..],
        &["--watch"][..],
    ] {
        let out = ccpn_run()
            .arg(&c.net)
            .arg(&c.events)
            .args(["--workers", "2"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("single-threaded run"));
    }
}

#[test]
fn a_cluster_without_its_peer_gives_up_after_the_connect_timeout() {
    let c = case(GLOBAL, false, 7);
    let hosts = c.dir.path().join("hosts.txt");
    std::fs::write(
        &hosts,
        format!("127.0.0.1:{}\n127.0.0.1:{}\n", free_port(), free_port()),
    )
    .unwrap();
    let started = Instant::now();
    let out = wait(
        spawn(
            ccpn_run()
                .arg(&c.net)
                .args(["-n", "2", "-p", "1", "--hostfile"])
                .arg(&hosts)
                .args(["--connect-timeout", "1"]),
        ),
        "a lone process 1",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach process 0"));
}

/// Starts `cmd` reading a pipe we write to; its stdout lines come on the receiver.
fn live(
    cmd: &mut Command,
) -> (
    Child,
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<String>,
) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}

/// A live stream: a detection comes out while the input is still open, both
/// single-threaded and on workers (the reader hands over what it has before it
/// waits for more, and the frontier moves with it).
#[test]
fn a_live_stream_is_detected_as_it_comes() {
    let c = case(GLOBAL, false, 8);
    let atomic = c.dir.path().join("atomic.ron");
    std::fs::write(
        &atomic,
        r#"Net(events: { "a": Atomic(type: "A") }, outputs: ["a"])"#,
    )
    .unwrap();
    for extra in [&[][..], &["--workers", "2"][..]] {
        let (child, mut stdin, rx) = live(ccpn_run().arg(&atomic).args(extra));
        writeln!(stdin, r#"{{"id":1,"type":"A","time":10,"x":0,"y":0}}"#).unwrap();
        stdin.flush().unwrap();
        let first = rx.recv_timeout(Duration::from_secs(20));
        drop(stdin);
        let _ = wait(child, "a live run");
        let first =
            first.unwrap_or_else(|_| panic!("{extra:?}: no detection while the input was open"));
        assert!(first.starts_with(r#"{"event":"a","time":10.0"#), "{first}");
    }
}

/// With `--heartbeat`, a quiet live input still moves event time with the wall
/// clock: a periodic operator ticks while no event comes.
#[test]
fn a_quiet_live_stream_ticks_with_a_heartbeat() {
    let c = case(GLOBAL, false, 9);
    let tick = c.dir.path().join("tick.ron");
    std::fs::write(
        &tick,
        r#"Net(events: { "s": Atomic(type: "S"), "e": Atomic(type: "E"),
            "tick": P(start: "s", period: 0.5, end: "e", within: 60.0) }, outputs: ["tick"])"#,
    )
    .unwrap();
    for extra in [&[][..], &["--workers", "2"][..]] {
        let (child, mut stdin, rx) = live(
            ccpn_run()
                .arg(&tick)
                .args(["--heartbeat", "100ms"])
                .args(extra),
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        writeln!(stdin, r#"{{"id":1,"type":"S","time":{now},"x":0,"y":0}}"#).unwrap();
        stdin.flush().unwrap();
        let ticks: Vec<String> = (0..2)
            .map_while(|_| rx.recv_timeout(Duration::from_secs(20)).ok())
            .collect();
        drop(stdin);
        let _ = wait(child, "a quiet live run");
        assert_eq!(
            ticks.len(),
            2,
            "{extra:?}: ticks while the input was quiet: {ticks:?}"
        );
        for (k, line) in ticks.iter().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let t = v["time"].as_f64().unwrap();
            assert!(
                (t - (now + 0.5 * (k + 1) as f64)).abs() < 1e-3,
                "{extra:?}: tick {k} at {t}, start {now}"
            );
        }
    }
}

/// Processes that would split the net differently refuse each other at the start.
#[test]
fn processes_must_agree_on_the_net_and_its_partitions() {
    let c = case(KEYED, false, 10);
    let other = c.dir.path().join("other.ron");
    std::fs::write(&other, GLOBAL).unwrap();
    for (net1, extra1, says) in [
        (&other, &[][..], "runs another net"),
        (&c.net, &["--partitions", "9"][..], "splits the net into"),
    ] {
        let hosts = c.dir.path().join("hosts.txt");
        std::fs::write(
            &hosts,
            format!("127.0.0.1:{}\n127.0.0.1:{}\n", free_port(), free_port()),
        )
        .unwrap();
        let p1 = KillOnDrop(Some(spawn(
            ccpn_run()
                .arg(net1)
                .args(["-n", "2", "-p", "1", "--hostfile"])
                .arg(&hosts)
                .args(extra1)
                .args(["--connect-timeout", "30"]),
        )));
        let p0 = spawn(
            ccpn_run()
                .arg(&c.net)
                .arg(&c.events)
                .args(["-n", "2", "-p", "0", "--hostfile"])
                .arg(&hosts)
                .args(["--connect-timeout", "30"]),
        );
        let out0 = wait(p0, "process 0");
        let out1 = wait(p1.take(), "process 1");
        for out in [&out0, &out1] {
            assert_eq!(out.status.code(), Some(1));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(says), "{err}");
        }
        assert!(out0.stdout.is_empty());
    }
}

#[test]
fn a_connect_timeout_names_the_process_that_did_not_come() {
    let c = case(GLOBAL, false, 7);
    let hosts = c.dir.path().join("hosts.txt");
    let (p0, p1) = (free_port(), free_port());
    std::fs::write(&hosts, format!("127.0.0.1:{p0}\n127.0.0.1:{p1}\n")).unwrap();
    let out = wait(
        spawn(
            ccpn_run()
                .arg(&c.net)
                .args(["-n", "2", "-p", "0", "--hostfile"])
                .arg(&hosts)
                .args(["--connect-timeout", "1"]),
        ),
        "a lone process 0",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "process 1 (127.0.0.1:{p1}) did not connect to process 0 at 127.0.0.1:{p0} within 1s"
        )),
        "{err}"
    );
}
