//! `ccpn-run serve`, end to end: the binary on 127.0.0.1 and a free port, each
//! endpoint, detections as the batch run writes them, reconnecting with `since`,
//! WebSocket, the bearer token, malformed requests, a client that stops reading, and
//! webhooks that fail and recover. MQTT is in `serve_mqtt.rs`.

mod serve_util;

use std::time::{Duration, Instant};

use serve_util::*;

/// The harbour sample, posted in batches of `lines` lines.
fn post_harbour(server: &Server, lines: usize) -> u64 {
    let text = std::fs::read_to_string(repo("examples/harbour.jsonl")).unwrap();
    let all: Vec<&str> = text.lines().collect();
    let mut processed = 0;
    for chunk in all.chunks(lines) {
        let body = chunk.join("\n") + "\n";
        let answer = server.post_events(body.as_bytes());
        assert_eq!(answer["rejected"], 0, "{answer}");
        processed += answer["processed"].as_u64().unwrap();
    }
    processed
}

#[test]
fn detections_stream_exactly_as_the_batch_run_writes_them() {
    let net = repo("nets/harbour.ron");
    let expected = batch_run(&net, &repo("examples/harbour.jsonl"));
    assert!(expected.len() > 10);
    let server = Server::start(&net, &[]);
    let mut sse = SseClient::open(&server, "/detections");
    assert_eq!(post_harbour(&server, 1000), 6000);
    let got = sse.detections(expected.len());
    // The detector's end (at shutdown) may add more; none for this net and input.
    assert_eq!(server.stop(), Some(0));
    assert_eq!(got, expected);
    assert_eq!(sse.next(), None, "the stream ends at shutdown");
}

#[test]
fn each_endpoint_answers() {
    let server = Server::start(&repo("nets/harbour.ron"), &[]);
    assert_eq!(server.get("/healthz"), (200, "ok\n".into()));
    post_harbour(&server, 6000);
    let stats = server.wait_stats("the detections", |s| s["detections"] == 59);
    assert_eq!(stats["read"], 6000);
    assert_eq!(stats["processed"], 6000);
    assert_eq!(stats["per_output"]["entry"], 8);
    assert!(stats["live_tokens"].as_u64().unwrap() > 0);

    let (status, metrics) = server.get("/metrics");
    assert_eq!(status, 200);
    for line in [
        "ccpn_events_processed_total 6000",
        "ccpn_events_late_total 0",
        "ccpn_events_rejected_total 0",
        "ccpn_detections_total{output=\"entry\"} 8",
        "# TYPE ccpn_live_tokens gauge",
        "# TYPE ccpn_lag_seconds gauge",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }

    let (status, zones) = server.get("/zones");
    assert_eq!(status, 200);
    let zones: serde_json::Value = serde_json::from_str(&zones).unwrap();
    assert_eq!(zones["type"], "FeatureCollection");
    let mut names: Vec<&str> = zones["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["properties"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["basin", "channel", "east", "inner", "north", "south", "west"]
    );

    let (status, objects) = server.get("/objects");
    assert_eq!(status, 200);
    let objects: serde_json::Value = serde_json::from_str(&objects).unwrap();
    assert_eq!(objects["key"], "track");
    assert!(!objects["objects"].as_array().unwrap().is_empty());

    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("leaflet/leaflet.js"), "{page}");
    let (status, leaflet) = server.get("/leaflet/leaflet.js");
    assert_eq!(status, 200);
    assert!(leaflet.contains("Leaflet 1.9.4"));
    assert_eq!(server.get("/nothing-here").0, 404);
    assert_eq!(server.get("/events").0, 405);
}

#[test]
fn a_recorded_stream_is_taken_at_start_with_events() {
    let net = repo("nets/harbour.ron");
    let events = repo("examples/harbour.jsonl");
    let expected = batch_run(&net, &events);
    let server = Server::start(&net, &["--events", events.to_str().unwrap(), "--pace", "0"]);
    server.wait_stats("the replay", |s| {
        s["processed"] == 6000 && s["detections"] == 59
    });
    let mut sse = SseClient::open(&server, "/detections?since=0");
    assert_eq!(sse.detections(expected.len()), expected);
    let start = Instant::now();
    while !server
        .stderr_text()
        .contains("6000 lines read, 6000 processed, 0 rejected, 0 late")
    {
        assert!(start.elapsed() < WAIT, "{}", server.stderr_text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_quiet_live_input_moves_on_with_the_heartbeat() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(
        dir.path(),
        r#"Net(
            events: {
                "a": Atomic(type: "A"),
                "c": Atomic(type: "C"),
                "tick": P(start: "a", period: 1.0, end: "c", within: 60.0),
            },
            outputs: ["tick"],
        )"#,
    );
    // Event time follows the wall clock, less --max-delay: an event stamped now is on time.
    let server = Server::start(&net, &["--heartbeat", "100ms", "--max-delay", "2s"]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let event = format!("{{\"id\":1,\"type\":\"A\",\"time\":{now:.3}}}\n");
    assert_eq!(server.post_events(event.as_bytes())["processed"], 1);
    // No more events: the ticks come as the wall clock passes them.
    let mut sse = SseClient::open(&server, "/detections?since=0");
    let ticks = sse.detections(2);
    let first: serde_json::Value = serde_json::from_str(&ticks[0]).unwrap();
    assert_eq!(first["event"], "tick");
    assert!(
        (first["time"].as_f64().unwrap() - (now + 1.0)).abs() < 0.01,
        "{first}"
    );
}

#[test]
fn moving_zones_are_where_their_anchor_put_them() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(
        dir.path(),
        r#"Net(
            zones: {"radar": Circle(center: (0.0, 0.0), radius: 10.0, anchor: "own")},
            events: {
                "own": Atomic(type: "own"),
                "contact": Atomic(type: "contact"),
                "near": Within(of: "contact", zones: ["radar"]),
            },
            outputs: ["near"],
        )"#,
    );
    let server = Server::start(&net, &[]);
    server.post_events(b"{\"id\":1,\"type\":\"own\",\"time\":1,\"x\":100.0,\"y\":50.0}\n");
    let (_, zones) = server.get("/zones");
    let zones: serde_json::Value = serde_json::from_str(&zones).unwrap();
    let radar = &zones["features"][0];
    assert_eq!(radar["properties"]["moving"], true);
    let ring = radar["geometry"]["coordinates"][0].as_array().unwrap();
    // Every vertex 10 from the new centre.
    for p in ring {
        let (x, y) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
        assert!(((x - 100.0).hypot(y - 50.0) - 10.0).abs() < 1e-9, "{p}");
    }
}

#[test]
fn a_client_that_reconnects_with_since_misses_nothing_retained() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let server = Server::start(&net, &["--ring", "50"]);
    server.post_events(&a_events(1, 30));
    let mut first = SseClient::open(&server, "/detections?since=0");
    let seen = first.detections(10);
    drop(first);
    let last: serde_json::Value = serde_json::from_str(&seen[9]).unwrap();
    let next = last["seq"].as_u64().unwrap() + 1;
    server.post_events(&a_events(31, 10));
    let mut again = SseClient::open(&server, &format!("/detections?since={next}"));
    let rest = again.detections(30);
    let seqs: Vec<u64> = rest
        .iter()
        .map(|d| {
            serde_json::from_str::<serde_json::Value>(d).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (10..40).collect::<Vec<_>>());

    // Beyond the ring: told what was missed, then the retained ones.
    server.post_events(&a_events(41, 60));
    let mut late = SseClient::open(&server, "/detections?since=5");
    let gap = late.next().unwrap();
    assert_eq!(gap.event, "gap");
    let gap: serde_json::Value = serde_json::from_str(&gap.data).unwrap();
    assert_eq!(gap["from"], 5);
    assert_eq!(gap["missed"], 45);
    let first_retained = late.next().unwrap();
    assert_eq!(first_retained.id.as_deref(), Some("50"));
}

#[test]
fn detections_also_come_over_a_websocket() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let server = Server::start(&net, &[]);
    server.post_events(&a_events(1, 5));
    let tcp = std::net::TcpStream::connect(server.addr).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let url = format!("ws://{}/detections?since=2", server.addr);
    let (mut ws, _) = tungstenite::client(url.as_str(), tcp).expect("a WebSocket");
    let mut seqs = Vec::new();
    while seqs.len() < 3 {
        let msg = ws.read().expect("a message");
        let d: serde_json::Value = serde_json::from_str(msg.to_text().unwrap()).unwrap();
        seqs.push(d["seq"].as_u64().unwrap());
    }
    assert_eq!(seqs, [2, 3, 4]);
    server.post_events(&a_events(6, 1));
    let msg = ws.read().expect("a live message");
    assert!(msg.to_text().unwrap().contains("\"ids\":[6]"), "{msg}");
    let _ = ws.close(None);
}

#[test]
fn a_websocket_client_that_falls_behind_is_told_and_closed() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let server = Server::start(&net, &["--client-buffer", "16"]);
    let tcp = std::net::TcpStream::connect(server.addr).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let url = format!("ws://{}/detections", server.addr);
    let (mut ws, _) = tungstenite::client(url.as_str(), tcp).expect("a WebSocket");
    // It does not read while 100,000 detections are made; detection goes on.
    for first in (1..=100_000).step_by(10_000) {
        assert_eq!(
            server.post_events(&a_events(first, 10_000))["processed"],
            10_000
        );
    }
    let mut seen = 0u64;
    let notice = loop {
        let msg = ws.read().expect("messages, then the notice");
        let v: serde_json::Value = serde_json::from_str(msg.to_text().unwrap()).unwrap();
        if v.get("notice").is_some() {
            break v;
        }
        assert_eq!(v["seq"], seen);
        seen += 1;
    };
    assert_eq!(notice["notice"], "lagged");
    assert_eq!(notice["since"], seen);
    match ws.read() {
        Ok(tungstenite::Message::Close(Some(frame))) => assert_eq!(u16::from(frame.code), 4000),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

#[test]
fn a_token_guards_all_but_healthz_and_other_addresses_need_one() {
    let net = repo("nets/harbour.ron");
    let mut server = Server::start(&net, &["--token", "s3cret"]);
    server.token = None;
    assert_eq!(server.get("/healthz").0, 200);
    for path in ["/stats", "/metrics", "/zones", "/", "/detections"] {
        let (status, body) = server.get(path);
        assert_eq!(status, 401, "{path}: {body}");
        assert!(body.contains("bearer token"), "{body}");
    }
    assert_eq!(server.post("/events", "application/x-ndjson", b"").0, 401);
    server.token = Some("wrong".into());
    assert_eq!(server.get("/stats").0, 401);
    server.token = Some("s3cret".into());
    assert_eq!(server.get("/stats").0, 200);
    server.token = None;
    assert_eq!(server.get("/stats?access_token=s3cret").0, 200);

    // Not on loopback without a token: refused before listening.
    let out = std::process::Command::new(bin())
        .arg("serve")
        .arg(&net)
        .args(["--listen", "0.0.0.0:0"])
        .env_remove("CCPN_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without --token"), "{err}");
}

#[test]
fn malformed_requests_get_a_4xx_with_a_reason() {
    let net = repo("nets/harbour.ron");
    let server = Server::start(
        &net,
        &[
            "--max-body-bytes",
            "4000",
            "--max-line-bytes",
            "200",
            "--max-delay",
            "5",
        ],
    );
    let (status, body) = server.post("/events", "multipart/form-data", b"x");
    assert_eq!(status, 415, "{body}");
    let (status, body) = server.post("/events?format=xml", "text/plain", b"x");
    assert_eq!(status, 400);
    assert!(body.contains("format"), "{body}");
    let (status, body) = server.get("/detections?since=soon");
    assert_eq!(status, 400);
    assert!(body.contains("since"), "{body}");
    let (status, body) = server.post("/events", "application/x-ndjson", &vec![b'\n'; 5000]);
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("--max-body-bytes"), "{body}");

    // Bad lines are counted and listed with their numbers; good ones processed.
    let mut lines = Vec::new();
    lines.extend_from_slice(b"{\"id\":1,\"type\":\"track\",\"time\":100,\"x\":0,\"y\":0}\n");
    lines.extend_from_slice(b"not json\n");
    lines.extend_from_slice(
        format!(
            "{{\"id\":3,\"time\":101,\"pad\":\"{}\"}}\n",
            "x".repeat(300)
        )
        .as_bytes(),
    );
    lines.extend_from_slice(b"\xff\xfe\n");
    lines.extend_from_slice(b"{\"id\":5,\"time\":120}\n");
    lines.extend_from_slice(b"{\"id\":6,\"time\":90}\n");
    lines.extend_from_slice(b"{\"id\":7,\"time\":118}\n");
    let answer = server.post_events(&lines);
    assert_eq!(answer["read"], 7, "{answer}");
    assert_eq!(answer["rejected"], 3, "{answer}");
    assert_eq!(answer["late"], 1, "{answer}");
    assert_eq!(answer["processed"], 3, "{answer}");
    let errors = answer["errors"].as_array().unwrap();
    let listed: Vec<(u64, &str)> = errors
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            (2, "rejected"),
            (3, "rejected"),
            (4, "rejected"),
            (6, "late")
        ]
    );
    assert!(errors[1]["reason"]
        .as_str()
        .unwrap()
        .contains("longer than 200"));

    // CSV, by content type, with its header.
    let (status, body) = server.post(
        "/events",
        "text/csv",
        b"id,time,type,x,y\n8,130,track,1,1\n9,oops,track,1,1\n",
    );
    assert_eq!(status, 200);
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (answer["processed"].as_u64(), answer["rejected"].as_u64()),
        (Some(1), Some(1)),
        "{answer}"
    );
    let stats = server.stats();
    assert_eq!(stats["rejected"], 4);
    assert_eq!(stats["late"], 1);
}

#[test]
fn a_client_that_stops_reading_holds_up_neither_detection_nor_memory() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let server = Server::start(&net, &["--client-buffer", "4096", "--ring", "100000"]);
    let mut stalled = SseClient::open(&server, "/detections");
    let total: u64 = 200_000;
    // A client that reads all the time, and reconnects with since= if it lags.
    let reader = {
        let mut sse = SseClient::open(&server, "/detections?since=0");
        let (addr, token) = (server.addr, server.token.clone());
        std::thread::spawn(move || {
            let (mut next, mut reconnects) = (0u64, 0);
            while next < total {
                match sse.next() {
                    Some(ev) if ev.event == "detection" => {
                        let d: serde_json::Value = serde_json::from_str(&ev.data).unwrap();
                        assert_eq!(d["seq"], next, "no gap, no repeat");
                        next += 1;
                    }
                    Some(ev) if ev.event == "lagged" => {
                        reconnects += 1;
                        sse = SseClient::open_at(
                            addr,
                            token.as_deref(),
                            &format!("/detections?since={next}"),
                        );
                    }
                    other => panic!("unexpected {other:?} at {next}"),
                }
            }
            reconnects
        })
    };
    let rss_start = server.rss_kib();
    let mut rss_mid = 0;
    let started = Instant::now();
    for (i, first) in (1..=total).step_by(2_000).enumerate() {
        server.post_events(&a_events(first, 2_000));
        if i == 49 {
            rss_mid = server.rss_kib();
        }
    }
    let reconnects = reader
        .join()
        .expect("the reading client saw every detection");
    eprintln!("the reading client reconnected {reconnects} time(s)");
    let stats = server.stats();
    assert_eq!(stats["processed"], total);
    assert_eq!(stats["detections"], total);
    assert!(started.elapsed() < WAIT);
    let rss_end = server.rss_kib();
    eprintln!("RSS KiB: start {rss_start}, after 100k {rss_mid}, after 200k {rss_end}");
    // Flat: the second 100k detections add (next to) nothing.
    assert!(rss_end < rss_mid + 16 * 1024, "{rss_mid} -> {rss_end}");
    // The stalled client, reading again, is told it lagged and where to resume.
    let mut n = 0;
    let lagged = loop {
        let ev = stalled.next().expect("the lagged notice before the end");
        if ev.event == "lagged" {
            break ev;
        }
        n += 1;
        assert!(n < total, "no lagged notice");
    };
    let notice: serde_json::Value = serde_json::from_str(&lagged.data).unwrap();
    assert!(notice["missed"].as_u64().unwrap() > 0);
    assert_eq!(notice["since"], n);
    assert_eq!(stalled.next(), None, "disconnected after the notice");
}

#[test]
fn webhooks_retry_until_delivered_and_lose_nothing_within_the_queue() {
    let net = repo("nets/harbour.ron");
    let expected = batch_run(&net, &repo("examples/harbour.jsonl"));
    let (url, bodies, requests) = receiver(3);
    let server = Server::start(
        &net,
        &["--post", &url, "--post-batch", "10", "--max-backoff", "1"],
    );
    post_harbour(&server, 500);
    let stats = server.wait_stats("the webhook's deliveries", |s| {
        s["sinks"][0]["delivered"].as_u64() == Some(expected.len() as u64)
    });
    assert_eq!(stats["sinks"][0]["dropped"], 0);
    assert!(
        stats["sinks"][0]["failures"].as_u64().unwrap() >= 3,
        "{stats}"
    );
    assert!(*requests.lock().unwrap() > 3);
    let got: Vec<String> = bodies
        .lock()
        .unwrap()
        .iter()
        .flat_map(|b| b.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    assert_eq!(got, expected, "every detection, in order, once");
    assert!(
        server.stderr_text().contains("answered HTTP/1.1 500"),
        "{}",
        server.stderr_text()
    );
    let (_, metrics) = server.get("/metrics");
    assert!(
        metrics.contains(&format!(
            "ccpn_sink_delivered_total{{sink=\"{url}\"}} {}",
            expected.len()
        )),
        "{metrics}"
    );
}

#[test]
fn a_webhook_that_is_down_drops_beyond_its_queue_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let (url, _, _) = receiver(usize::MAX);
    let server = Server::start(
        &net,
        &["--post", &url, "--sink-queue", "5", "--post-batch", "2"],
    );
    let answer = server.post_events(&a_events(1, 100));
    assert_eq!(answer["processed"], 100, "detection goes on");
    let stats = server.wait_stats("drops", |s| s["sinks"][0]["dropped"].as_u64() >= Some(90));
    assert_eq!(stats["sinks"][0]["delivered"], 0);
    let (_, metrics) = server.get("/metrics");
    assert!(
        metrics.contains("ccpn_sink_dropped_total{sink="),
        "{metrics}"
    );
    let start = Instant::now();
    while !server.stderr_text().contains("dropped") {
        assert!(start.elapsed() < WAIT, "{}", server.stderr_text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `PUT /net` replaces the running net between two events: a `Seq` whose definition
/// did not change keeps the `a` it was waiting with, an edited entry starts empty, and
/// a net that does not load, or of another space, is refused with the running net
/// going on.
#[test]
fn put_net_reloads_keeping_what_did_not_change() {
    let dir = tempfile::tempdir().unwrap();
    let first = r#"Net(events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "ab": Seq(of: ["a", "b"], within: 100.0),
        "fast": Atomic(type: "B", when: "speed > 10"),
    }, outputs: ["ab", "fast"])"#;
    let net = net_file(dir.path(), first);
    let server = Server::start(&net, &[]);
    let mut sse = SseClient::open(&server, "/detections");
    server.post_events(b"{\"id\":1,\"type\":\"A\",\"time\":1}\n");

    // `fast` now needs more than 20: its component is reset; `ab` is kept.
    let second = first.replace("speed > 10", "speed > 20");
    let (status, body) = server.put("/net", second.as_bytes());
    assert_eq!(status, 200, "{body}");
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        report["kept"].as_array().unwrap().iter().any(|n| n == "ab"),
        "{report}"
    );
    assert_eq!(report["reset"], serde_json::json!(["fast"]), "{report}");
    assert!(
        report["unchanged"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "ab"),
        "{report}"
    );

    // The `a` from before the reload still pairs; 15 is not fast under the new net.
    server.post_events(b"{\"id\":2,\"type\":\"B\",\"time\":2,\"speed\":15}\n");
    let found = sse.detections(1);
    assert!(
        found[0].contains("\"event\":\"ab\"") && found[0].contains("\"ids\":[1,2]"),
        "{found:?}"
    );
    // As a run of the new net from the start gives them: `fast` (an atomic event)
    // first, then `ab`, which pairs every `b` with the waiting `a` (Unrestricted).
    server.post_events(b"{\"id\":3,\"type\":\"B\",\"time\":3,\"speed\":25}\n");
    let found = sse.detections(2);
    assert!(found[0].contains("\"event\":\"fast\""), "{found:?}");
    assert!(
        found[1].contains("\"event\":\"ab\"") && found[1].contains("\"ids\":[1,3]"),
        "{found:?}"
    );

    // Refused, and the net in force goes on.
    let (status, body) = server.put("/net", b"Net(events: { \"x\": Nope() }, outputs: [\"x\"])");
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("the running net goes on"), "{body}");
    let (status, body) = server.put(
        "/net",
        br#"Net(space: Wgs84, events: {"a": Atomic(type: "A")}, outputs: ["a"])"#,
    );
    assert_eq!(status, 409, "{body}");
    server.post_events(b"{\"id\":4,\"type\":\"B\",\"time\":4,\"speed\":30}\n");
    let found = sse.detections(2);
    assert!(
        found[0].contains("\"event\":\"fast\"") && found[0].contains("\"ids\":[4]"),
        "{found:?}"
    );
}
