//! Checkpoint and resume, end to end: `ccpn-run` killed with SIGKILL at random
//! points of a long stream and resumed from its last checkpoint each time produces,
//! once detections are deduplicated by `seq`, exactly the detections and counts of an
//! uninterrupted run. Also: what `--resume` refuses, and how it says so.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[path = "../examples/common/targets.rs"]
mod targets;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("checkpoint-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The threat scenario's reports, a little out of order (for `--max-delay`), with a
/// bad line and a late line now and then: everything a checkpoint must carry.
fn stream(path: &Path, seed: u64, objects: usize, seconds: f64) -> usize {
    let mut scenario = targets::Scenario::new(seed, objects, seconds, targets::Mix::Uniform);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut lines = Vec::new();
    while let Some(r) = scenario.next_report() {
        lines.push(r.json());
    }
    // Swap neighbours (at most a few seconds apart): reordered by --max-delay 5.
    for i in 1..lines.len() {
        if rng.random_bool(0.05) {
            lines.swap(i - 1, i);
        }
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        if i % 997 == 500 {
            out.push_str("{\"id\": 1, \"type\": \"track\", \"time\": \"soon\"}\n");
        }
        if i % 1499 == 700 {
            // Far older than anything still held: late.
            out.push_str("{\"id\": 2, \"type\": \"track\", \"time\": 1600000000.0, \"lon\": 121.9, \"lat\": 25.3}\n");
        }
        if i % 2003 == 1000 {
            out.push('\n');
        }
    }
    fs::write(path, out).expect("write stream");
    lines.len()
}

/// The run's options, shared by the uninterrupted and the killed runs.
fn base_args(events: &Path) -> Vec<String> {
    vec![
        root().join("nets/threat.ron").display().to_string(),
        events.display().to_string(),
        "--max-delay".into(),
        "5".into(),
        "--stats".into(),
    ]
}

/// Detections by `seq`, keeping only complete lines (a killed run may leave its last
/// line half written), checking that copies of one `seq` agree.
fn by_seq(outputs: &[String], into: &mut BTreeMap<u64, String>) {
    for out in outputs {
        let complete = match out.rfind('\n') {
            Some(end) => &out[..=end],
            None => "",
        };
        for line in complete.lines() {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("detection line {line:?}: {e}"));
            let seq = v["seq"].as_u64().expect("every detection has a seq");
            if let Some(seen) = into.insert(seq, line.to_owned()) {
                assert_eq!(seen, line, "two different detections with seq {seq}");
            }
        }
    }
}

fn stats_of(stderr: &[u8]) -> serde_json::Value {
    let err = String::from_utf8_lossy(stderr);
    let last = err.lines().last().expect("a stats line");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("stats line {last:?}: {e}"))
}

#[test]
fn killed_and_resumed_runs_detect_exactly_what_an_uninterrupted_run_does() {
    let dir = scratch("kill");
    let events = dir.join("events.jsonl");
    let reports = stream(&events, 7, 300, 1500.0);
    assert!(reports > 50_000, "{reports} reports");

    let started = Instant::now();
    let straight = bin()
        .args(base_args(&events))
        .output()
        .expect("run ccpn-run");
    // Kills come at random within an eighth of a whole run after a checkpoint, so
    // that most runs are killed, in a debug build or a release one.
    let reach_ms = (started.elapsed().as_millis() as u64 / 8).max(2);
    assert!(straight.status.success());
    let expected_stats = stats_of(&straight.stderr);
    let mut expected = BTreeMap::new();
    by_seq(
        &[String::from_utf8(straight.stdout).expect("utf-8")],
        &mut expected,
    );
    assert!(
        expected.len() > 100,
        "only {} detections: too few to test with",
        expected.len()
    );
    assert_eq!(
        expected.keys().copied().collect::<Vec<_>>(),
        (0..expected.len() as u64).collect::<Vec<_>>(),
        "seq runs from 0 without gaps"
    );

    let checkpoint = dir.join("run.ckpt");
    let late_file = dir.join("late.jsonl");
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let mut outputs = Vec::new();
    // What each run said on stderr, killed or not.
    let mut said = Vec::new();
    let mut kills = 0;
    let last_stats = loop {
        let out_path = dir.join(format!("out{}.jsonl", outputs.len()));
        let mut args = base_args(&events);
        args.extend(
            [
                "--checkpoint",
                checkpoint.to_str().expect("utf-8 path"),
                "--checkpoint-every",
                "1000",
                "--resume",
                checkpoint.to_str().expect("utf-8 path"),
                "--late",
                late_file.to_str().expect("utf-8 path"),
            ]
            .map(String::from),
        );
        let mut child = bin()
            .args(&args)
            .stdout(fs::File::create(&out_path).expect("output file"))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ccpn-run");
        if kills < 4 {
            // Kill at a random point once this run has written a checkpoint of its own.
            let before = fs::metadata(&checkpoint).and_then(|m| m.modified()).ok();
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut finished = None;
            while finished.is_none() {
                let now = fs::metadata(&checkpoint).and_then(|m| m.modified()).ok();
                if now.is_some() && now != before {
                    break;
                }
                assert!(Instant::now() < deadline, "no checkpoint written in time");
                std::thread::sleep(Duration::from_millis(5));
                finished = child.try_wait().expect("try_wait");
            }
            if finished.is_none() {
                std::thread::sleep(Duration::from_millis(rng.random_range(0..reach_ms)));
                // SIGKILL on Unix: no chance to flush or clean up.
                let _ = child.kill();
                let status = child.wait().expect("wait");
                outputs.push(fs::read_to_string(&out_path).expect("read output"));
                let mut err = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut pipe, &mut err);
                }
                said.push(err);
                if !status.success() {
                    kills += 1;
                    continue;
                }
            }
        }
        let done = child.wait_with_output().expect("wait");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        outputs.push(fs::read_to_string(&out_path).expect("read output"));
        said.push(String::from_utf8_lossy(&done.stderr).into_owned());
        break stats_of(&done.stderr);
    };
    assert!(kills >= 2, "only {kills} runs were killed before finishing");

    let mut got = BTreeMap::new();
    by_seq(&outputs, &mut got);
    assert_eq!(got.len(), expected.len(), "detections after dedup by seq");
    for (seq, line) in &expected {
        assert_eq!(got.get(seq), Some(line), "detection {seq}");
    }
    for key in [
        "read",
        "processed",
        "rejected",
        "late",
        "detections",
        "by_output",
    ] {
        assert_eq!(last_stats[key], expected_stats[key], "--stats {key}");
    }
    assert!(expected_stats["rejected"].as_u64() > Some(10));
    assert!(expected_stats["late"].as_u64() > Some(10));

    // No report lost: a checkpoint covers a line only once its report is out and its
    // --late copy written, so every bad or late line is reported by some run (the
    // lines between a killed run's last checkpoint and its death, by two). A run
    // shows 20 lines a reason and counts the rest on its last line.
    let mut reported = 0;
    for err in &said {
        for l in err.lines() {
            if l.contains(": rejected: ") || l.contains(" is before ") {
                reported += 1;
            } else if let Some(rest) = l.strip_prefix("ccpn-run: warning: ") {
                if let Some((n, _)) = rest.split_once(" more lines ") {
                    reported += n.parse::<u64>().unwrap_or(0);
                }
            }
        }
    }
    let bad =
        expected_stats["rejected"].as_u64().unwrap() + expected_stats["late"].as_u64().unwrap();
    assert!(
        reported >= bad,
        "{reported} reports for {bad} bad and late lines:\n{said:#?}"
    );
    let copies = fs::read_to_string(&late_file).expect("the --late file");
    let copies = copies.lines().filter(|l| l.ends_with('}')).count() as u64;
    assert!(
        copies >= expected_stats["late"].as_u64().unwrap(),
        "{copies} lines in --late for {} late",
        expected_stats["late"]
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A small run that leaves a checkpoint; returns (dir, events, checkpoint).
fn checkpointed(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    let events = dir.join("events.jsonl");
    stream(&events, 3, 20, 120.0);
    let ckpt = dir.join("run.ckpt");
    let out = bin()
        .args(base_args(&events))
        .args(["--checkpoint", ckpt.to_str().expect("utf-8")])
        .args(["--checkpoint-every", "100"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(ckpt.exists());
    (dir, events, ckpt)
}

fn resume(net: &Path, events: &Path, ckpt: &Path) -> std::process::Output {
    bin()
        .arg(net)
        .arg(events)
        .args([
            "--max-delay",
            "5",
            "--resume",
            ckpt.to_str().expect("utf-8"),
        ])
        .output()
        .expect("run")
}

#[test]
fn resume_with_another_net_goes_on_with_it_as_after_a_reload() {
    let (dir, events, ckpt) = checkpointed("other-net");
    let other = dir.join("other.ron");
    let text = fs::read_to_string(root().join("nets/threat.ron")).expect("threat.ron");
    // The same net but one window: another net, whose other operators keep their state.
    fs::write(
        &other,
        text.replacen("within: \"10m\"", "within: \"11m\"", 1),
    )
    .expect("write");
    let out = resume(&other, &events, &ckpt);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("as if it had been reloaded"), "{err}");
    assert!(err.contains("net reloaded: kept"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// A square zone in a GeoJSON file, from (0, 0) to (`side`, `side`).
fn square(side: f64) -> String {
    format!(
        r#"{{"type": "Polygon", "coordinates": [[[0, 0], [{side}, 0], [{side}, {side}], [0, {side}], [0, 0]]]}}"#
    )
}

#[test]
fn resume_keeps_the_net_it_ran_though_its_geojson_has_changed() {
    let dir = scratch("geojson-edited");
    let net = dir.join("net.ron");
    fs::write(
        &net,
        r#"Net(
            zones: { "z": GeoJson(path: "z.geojson") },
            events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
                      "ab": Seq(of: ["a", "b"], within: 600.0),
                      "in": Within(of: "a", zones: ["z"]) },
            outputs: ["ab", "in"],
        )"#,
    )
    .expect("net");
    fs::write(dir.join("z.geojson"), square(10.0)).expect("zone");
    let events = dir.join("events.jsonl");
    fs::write(
        &events,
        "{\"id\": 1, \"type\": \"A\", \"time\": 0, \"x\": 5, \"y\": 5}\n\
         {\"id\": 2, \"type\": \"B\", \"time\": 10, \"x\": 5, \"y\": 5}\n\
         {\"id\": 3, \"type\": \"A\", \"time\": 20, \"x\": 5, \"y\": 5}\n",
    )
    .expect("events");
    let ckpt = dir.join("run.ckpt");
    let first = bin()
        .arg(&net)
        .arg(&events)
        .args(["--checkpoint", ckpt.to_str().expect("utf-8")])
        .args(["--checkpoint-every", "1"])
        .output()
        .expect("run");
    assert!(first.status.success());
    // The zone shrinks away from the events; the input goes on.
    fs::write(dir.join("z.geojson"), square(1.0)).expect("zone");
    fs::write(
        &events,
        fs::read_to_string(&events).expect("events")
            + "{\"id\": 4, \"type\": \"B\", \"time\": 30, \"x\": 5, \"y\": 5}\n\
               {\"id\": 5, \"type\": \"A\", \"time\": 40, \"x\": 5, \"y\": 5}\n",
    )
    .expect("events");
    let out = bin()
        .arg(&net)
        .arg(&events)
        .args(["--resume", ckpt.to_str().expect("utf-8")])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("as if it had been reloaded"), "{err}");
    // `ab` kept its waiting A (line 3's), which line 4's B completes; `in` reads the
    // edited zone, so it started again, and line 5's A is outside it now.
    assert!(err.contains("reset 1 (in)"), "{err}");
    let found: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["event"], "ab");
    assert_eq!(found[0]["ids"], serde_json::json!([3, 4]));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn resume_refuses_a_damaged_or_foreign_checkpoint() {
    let (dir, events, ckpt) = checkpointed("damaged");
    let net = root().join("nets/threat.ron");
    let good = fs::read(&ckpt).expect("read");

    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    fs::write(&ckpt, &flipped).expect("write");
    let err = String::from_utf8_lossy(&resume(&net, &events, &ckpt).stderr).into_owned();
    assert!(err.contains("checksum does not match"), "{err}");

    fs::write(&ckpt, &good[..good.len() / 2]).expect("write");
    let out = resume(&net, &events, &ckpt);
    assert_eq!(out.status.code(), Some(2));

    let mut version = good.clone();
    version[8] = 99;
    fs::write(&ckpt, &version).expect("write");
    let err = String::from_utf8_lossy(&resume(&net, &events, &ckpt).stderr).into_owned();
    assert!(err.contains("format version 99"), "{err}");

    fs::write(&ckpt, b"{\"not\": \"a checkpoint\"}").expect("write");
    let err = String::from_utf8_lossy(&resume(&net, &events, &ckpt).stderr).into_owned();
    assert!(err.contains("not a ccpn-run checkpoint"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn resume_on_a_shorter_input_is_an_error() {
    let (dir, events, ckpt) = checkpointed("shorter");
    let text = fs::read_to_string(&events).expect("read");
    let short = dir.join("short.jsonl");
    fs::write(&short, text.lines().take(50).collect::<Vec<_>>().join("\n")).expect("write");
    let out = resume(&root().join("nets/threat.ron"), &short, &ckpt);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the one checkpointed"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn resume_without_a_checkpoint_starts_afresh() {
    let dir = scratch("fresh");
    let events = dir.join("events.jsonl");
    stream(&events, 3, 20, 120.0);
    let net = root().join("nets/threat.ron");
    let straight = bin()
        .arg(&net)
        .arg(&events)
        .args(["--max-delay", "5"])
        .output()
        .expect("run");
    let out = resume(&net, &events, &dir.join("absent.ckpt"));
    assert!(out.status.success());
    assert_eq!(out.stdout, straight.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("starting from the first line"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn checkpoint_needs_json_lines_output() {
    let out = bin()
        .arg(root().join("nets/threat.ron"))
        .args(["--checkpoint", "x.ckpt", "--output", "geojson"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs JSON Lines output"));
}

#[test]
fn resume_keeps_the_checkpointed_limits_and_says_so() {
    let (dir, events, ckpt) = checkpointed("limits");
    let out = bin()
        .arg(root().join("nets/threat.ron"))
        .arg(&events)
        .args(["--max-delay", "5", "--max-tokens", "5000"])
        .args(["--resume", ckpt.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resuming with the checkpointed run's limits (--max-tokens 1000000"),
        "{err}"
    );
    let _ = fs::remove_dir_all(&dir);
}
