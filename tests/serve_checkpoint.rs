//! `ccpn-run serve --checkpoint … --resume …`, end to end: a server killed with
//! SIGKILL after a checkpoint comes back with its detector, `seq` going on, the
//! ring for `?since=`, the events consumed per source (what a client resends) and
//! each webhook's backlog; one stopped by SIGTERM keeps the events it held for
//! reordering; a checkpoint that cannot be written is an error said, and a file
//! that is not a server's checkpoint is refused. MQTT in is in `serve_mqtt.rs`.

mod serve_util;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use serve_util::*;

/// The harbour sample's lines.
fn harbour_lines() -> Vec<String> {
    std::fs::read_to_string(repo("examples/harbour.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Posts `lines` in bodies of `per` lines as source `source`; the lines consumed.
fn post_lines(server: &Server, source: &str, lines: &[String], per: usize) -> u64 {
    let mut read = 0;
    for chunk in lines.chunks(per) {
        let body = chunk.join("\n") + "\n";
        let (status, text) = server.post(
            &format!("/events?source={source}"),
            "application/x-ndjson",
            body.as_bytes(),
        );
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        read += answer["read"].as_u64().unwrap();
    }
    read
}

/// The seq of a detection line.
fn seq_of(line: &str) -> u64 {
    serde_json::from_str::<Value>(line).unwrap()["seq"]
        .as_u64()
        .expect("a seq")
}

/// Every line the receiver accepted, by seq; fails if one seq came with two texts.
fn by_seq(bodies: &Shared<Vec<String>>) -> BTreeMap<u64, String> {
    let mut out = BTreeMap::new();
    for body in bodies.lock().unwrap().iter() {
        for line in body.lines() {
            if let Some(before) = out.insert(seq_of(line), line.to_owned()) {
                assert_eq!(before, line, "one seq, two detections");
            }
        }
    }
    out
}

#[test]
fn a_killed_server_resumes_from_its_checkpoint_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("serve.ckpt");
    let ckpt_arg = ckpt.to_str().unwrap();
    let net = repo("nets/harbour.ron");
    let expected = batch_run(&net, &repo("examples/harbour.jsonl"));
    assert!(expected.len() > 20, "a sample with detections");
    let lines = harbour_lines();
    let (url, bodies, _) = receiver(0);
    let args = [
        "--checkpoint",
        ckpt_arg,
        "--checkpoint-every",
        "1000",
        // Only the count and the end take checkpoints here.
        "--checkpoint-interval",
        "1h",
        "--post",
        &url,
        "--post-batch",
        "7",
        "--resume",
        ckpt_arg,
    ];
    let first = Server::start(&net, &args);
    assert!(
        first.stderr_text().contains("no checkpoint at"),
        "{}",
        first.stderr_text()
    );
    assert_eq!(post_lines(&first, "radar", &lines[..3000], 500), 3000);
    let stats = first.wait_stats("the checkpoint of 3000 lines", |s| {
        s["checkpoint"]["sources"]["radar"] == 3000
    });
    assert_eq!(stats["checkpoint"]["written"], 3);
    let at_checkpoint = stats["detections"].as_u64().unwrap();
    // More, which no checkpoint holds: the kill loses them, and the client resends.
    assert_eq!(post_lines(&first, "radar", &lines[3000..3700], 350), 700);
    let before_kill = first.stats()["detections"].as_u64().unwrap();
    first.kill();

    let second = Server::start(&net, &args);
    let stats = second.stats();
    assert_eq!(stats["sources"]["radar"], 3000, "{stats}");
    assert_eq!(
        stats["detections"], at_checkpoint,
        "seq goes on from the checkpoint"
    );
    assert_eq!(stats["read"], 3000);
    assert!(
        second.stderr_text().contains("resuming from checkpoint"),
        "{}",
        second.stderr_text()
    );
    // What a client reconnecting with `since` gets across the restart: the ring.
    let since = at_checkpoint.saturating_sub(10);
    let mut again = SseClient::open(&second, &format!("/detections?since={since}"));
    let replayed = again.detections((at_checkpoint - since) as usize);
    assert_eq!(replayed, expected[since as usize..at_checkpoint as usize]);
    // The client resends from what the server says it consumed.
    let consumed = stats["sources"]["radar"].as_u64().unwrap() as usize;
    assert_eq!(
        post_lines(&second, "radar", &lines[consumed..], 500),
        (lines.len() - consumed) as u64
    );
    let rest = again.detections(expected.len() - at_checkpoint as usize);
    assert_eq!(rest, expected[at_checkpoint as usize..], "seq went on");
    assert!(second.stats()["detections"].as_u64().unwrap() >= before_kill);
    second.wait_stats("the webhook's deliveries", |s| {
        s["sinks"][0]["next"].as_u64() == Some(expected.len() as u64)
    });
    assert_eq!(second.stop(), Some(0));
    let got: Vec<String> = by_seq(&bodies).into_values().collect();
    assert_eq!(
        got, expected,
        "every detection delivered at least once across the kill, as the uninterrupted run"
    );
}

#[test]
fn a_stopped_server_keeps_what_it_held_for_reordering() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let ckpt = dir.path().join("serve.ckpt");
    let ckpt_arg = ckpt.to_str().unwrap();
    // Events up to 4 s out of order, one a second: 20 of them, and 20 more.
    let order = |first: u64| -> Vec<u8> {
        let mut times: Vec<u64> = (first..first + 20).collect();
        for pair in times.chunks_mut(4) {
            pair.reverse();
        }
        times
            .iter()
            .map(|t| format!("{{\"id\":{t},\"type\":\"A\",\"time\":{t},\"x\":1,\"y\":2}}\n"))
            .collect::<String>()
            .into_bytes()
    };
    let events = dir.path().join("events.jsonl");
    let mut all = order(1);
    all.extend(order(21));
    std::fs::write(&events, &all).unwrap();
    let batch = Command::new(bin())
        .arg(&net)
        .arg(&events)
        .args(["--max-delay", "5s"])
        .output()
        .unwrap();
    let expected: Vec<String> = String::from_utf8(batch.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(expected.len(), 40);
    let args = [
        "--max-delay",
        "5s",
        "--checkpoint",
        ckpt_arg,
        "--resume",
        ckpt_arg,
    ];
    let first = Server::start(&net, &args);
    assert_eq!(first.post_events(&order(1))["processed"], 20);
    let held = first.stats()["held"].as_u64().unwrap();
    assert!(held > 0, "events are held for reordering");
    assert_eq!(first.stop(), Some(0));

    let second = Server::start(&net, &args);
    let stats = second.stats();
    assert_eq!(stats["held"], held, "{stats}");
    assert_eq!(stats["detections"].as_u64().unwrap() + held, 20);
    assert_eq!(second.post_events(&order(21))["processed"], 20);
    let stats = second.stats();
    let n = stats["detections"].as_u64().unwrap();
    let mut all = SseClient::open(&second, "/detections?since=0");
    assert_eq!(
        all.detections(n as usize),
        expected[..n as usize],
        "as the batch run, across the restart"
    );
    assert_eq!(n + stats["held"].as_u64().unwrap(), 40);
}

#[test]
fn a_checkpoint_that_cannot_be_written_is_an_error_said() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let nowhere = dir.path().join("no such directory").join("serve.ckpt");
    let server = Server::start(
        &net,
        &[
            "--checkpoint",
            nowhere.to_str().unwrap(),
            "--checkpoint-every",
            "5",
        ],
    );
    assert_eq!(server.post_events(&a_events(1, 10))["processed"], 10);
    let stats = server.wait_stats("the failure", |s| {
        s["checkpoint"]["failures"].as_u64() > Some(0)
    });
    assert_eq!(stats["checkpoint"]["written"], 0);
    assert_eq!(stats["detections"], 10, "serving goes on");
    let (_, metrics) = server.get("/metrics");
    assert!(
        metrics.contains("ccpn_checkpoint_failures_total "),
        "{metrics}"
    );
    let stderr = || server.stderr_text();
    assert!(stderr().contains("cannot write checkpoint"), "{}", stderr());
    assert_eq!(server.stop(), Some(5), "the exit status says so");
}

/// Runs `ccpn-run serve NET ARGS…` expecting it to refuse to start; its stderr.
fn refused(net: &Path, args: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("serve")
        .arg(net)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_file_that_is_not_a_servers_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let events = dir.path().join("events.jsonl");
    std::fs::write(&events, a_events(1, 10)).unwrap();
    let batch_ckpt = dir.path().join("batch.ckpt");
    let status = Command::new(bin())
        .arg(&net)
        .arg(&events)
        .arg("--checkpoint")
        .arg(&batch_ckpt)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let err = refused(&net, &["--resume", batch_ckpt.to_str().unwrap()]);
    assert!(err.contains("the checkpoint of a run over a file"), "{err}");
    let damaged = dir.path().join("damaged.ckpt");
    std::fs::write(&damaged, b"CCPNSERV\x01\x00\x00\x00 and then not much").unwrap();
    let err = refused(&net, &["--resume", damaged.to_str().unwrap()]);
    assert!(err.contains("damaged"), "{err}");
}

#[test]
fn a_recorded_stream_resumed_goes_on_after_what_was_consumed() {
    let dir = tempfile::tempdir().unwrap();
    let net = repo("nets/harbour.ron");
    let events = repo("examples/harbour.jsonl");
    let expected = batch_run(&net, &events);
    let ckpt = dir.path().join("serve.ckpt");
    let args = [
        "--events",
        events.to_str().unwrap(),
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--resume",
        ckpt.to_str().unwrap(),
    ];
    let first = Server::start(&net, &args);
    first.wait_stats("the whole file in a checkpoint", |s| {
        s["checkpoint"]["sources"]["events"] == 6000
    });
    first.kill();
    let second = Server::start(&net, &args);
    let stats = second.wait_stats("the replay's end", |_| {
        second.stderr_text().contains("lines read")
    });
    assert_eq!(stats["sources"]["events"], 6000, "{stats}");
    assert_eq!(stats["detections"], expected.len());
    let stderr = second.stderr_text();
    assert!(stderr.contains("0 lines read"), "{stderr}");
    // A source name that is not one is refused.
    let (status, text) = second.post("/events?source=two%20words", "application/x-ndjson", b"");
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("source="), "{text}");
}
