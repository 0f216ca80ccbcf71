//! `ccpn-run serve --mqtt-in … --mqtt-out …` against a real broker: Debian's
//! mosquitto, started on a free loopback port with a generated configuration
//! (`mqtt_util`). Skipped, saying so, only where mosquitto is not installed
//! (`.ci/run` installs it). The connection to the broker breaks, through a proxy,
//! while messages are in flight: each is consumed once.

mod mqtt_util;
mod serve_util;

use std::path::Path;
use std::time::Duration;

use rumqttc::QoS;

use mqtt_util::*;
use serve_util::*;

#[test]
fn events_in_and_detections_out_through_mosquitto() {
    let Some(broker) = mosquitto() else { return };
    let net = repo("nets/harbour.ron");
    let events = repo("examples/harbour.jsonl");
    let expected = batch_run(&net, &events);
    let (_watcher, detections) = client(broker.port, "test-watcher", Some("ccpn/detections"));
    let server = Server::start(
        &net,
        &[
            "--mqtt-in",
            &format!("mqtt://127.0.0.1:{}/ccpn/in/#", broker.port),
            "--mqtt-out",
            &format!("mqtt://127.0.0.1:{}/ccpn/detections", broker.port),
        ],
    );
    // The server subscribes once connected: wait until it shows as a client.
    wait_for("the server's subscription", || {
        server.stderr_text().contains("serve:")
    });
    std::thread::sleep(Duration::from_millis(500));
    let (publisher, _) = client(broker.port, "test-publisher", None);
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // One event per message, and the last 1000 as one JSON Lines message; a bad one.
    for line in &lines[..5000] {
        publisher
            .publish(
                "ccpn/in/radar",
                QoS::AtLeastOnce,
                false,
                line.as_bytes().to_vec(),
            )
            .unwrap();
    }
    publisher
        .publish(
            "ccpn/in/radar",
            QoS::AtLeastOnce,
            false,
            b"{not json".to_vec(),
        )
        .unwrap();
    publisher
        .publish(
            "ccpn/in/bulk",
            QoS::AtLeastOnce,
            false,
            lines[5000..].join("\n").into_bytes(),
        )
        .unwrap();
    let stats = server.wait_stats("the events through MQTT", |s| s["processed"] == 6000);
    assert_eq!(stats["rejected"], 1);
    let mut got = Vec::new();
    while got.len() < expected.len() {
        let payload = detections
            .recv_timeout(WAIT)
            .expect("a detection over MQTT");
        got.push(String::from_utf8(payload).unwrap());
    }
    assert_eq!(got, expected, "as the batch run writes them, in order");
    server.wait_stats("the acknowledgements", |s| {
        s["sinks"][0]["delivered"].as_u64() == Some(expected.len() as u64)
    });
    assert!(
        server.stderr_text().contains("rejected message"),
        "{}",
        server.stderr_text()
    );
}

#[test]
fn a_broker_that_goes_away_and_comes_back() {
    let Some(broker) = mosquitto() else { return };
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let port = broker.port;
    let server = Server::start(
        &net,
        &["--mqtt-out", &format!("mqtt://127.0.0.1:{port}/out")],
    );
    let (_before, seen) = client(port, "test-before", Some("out"));
    assert_eq!(server.post_events(&a_events(1, 3))["processed"], 3);
    for _ in 0..3 {
        seen.recv_timeout(WAIT)
            .expect("a detection before the broker goes");
    }
    drop(broker);
    // Detection goes on while the broker is away.
    assert_eq!(server.post_events(&a_events(4, 10))["processed"], 10);
    wait_for("the warning", || {
        server.stderr_text().contains("retrying every second")
    });
    let broker = mosquitto_on(port).expect("mosquitto again");
    let (_after, seen) = client(broker.port, "test-after", Some("out"));
    wait_for("reconnecting", || {
        server.stderr_text().contains("connected again")
    });
    assert_eq!(server.post_events(&a_events(14, 5))["processed"], 5);
    let mut ids = Vec::new();
    while !ids.contains(&18) {
        let payload = seen
            .recv_timeout(WAIT)
            .expect("detections after the broker is back");
        let d: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        ids.push(d["ids"][0].as_u64().unwrap());
    }
    eprintln!("delivered after the broker came back: {ids:?}");
    assert!(ids.ends_with(&[14, 15, 16, 17, 18]), "{ids:?}");
}

#[test]
fn a_killed_server_resumed_loses_no_acknowledged_message() {
    let Some(broker) = mosquitto() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("serve.ckpt");
    let ckpt = ckpt.to_str().unwrap();
    let net = repo("nets/harbour.ron");
    let events = repo("examples/harbour.jsonl");
    let expected = batch_run(&net, &events);
    let (url, bodies, _) = receiver(0);
    let mqtt_in = format!("mqtt://127.0.0.1:{}/ccpn/in", broker.port);
    let args = [
        "--mqtt-in",
        &mqtt_in,
        "--mqtt-client-id",
        "ccpn-test-resume",
        "--checkpoint",
        ckpt,
        "--resume",
        ckpt,
        "--post",
        &url,
    ];
    let first = Server::start(&net, &args);
    wait_for("the server's subscription", || {
        first.stderr_text().contains("serve:")
    });
    std::thread::sleep(Duration::from_millis(500));
    let (publisher, _) = client(broker.port, "test-publisher", None);
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let total = lines.len() as u64;
    let sending = std::thread::spawn(move || {
        for line in lines {
            publisher
                .publish("ccpn/in", QoS::AtLeastOnce, false, line.into_bytes())
                .unwrap();
        }
        publisher
    });
    // Killed mid-stream, messages detected and not yet in a checkpoint among them.
    first.wait_stats("a third of the messages", |s| {
        s["sources"]["mqtt"].as_u64() >= Some(total / 3)
    });
    first.kill();
    let second = Server::start(&net, &args);
    let resumed_at = second.stats()["sources"]["mqtt"].as_u64().unwrap_or(0);
    eprintln!("resumed at {resumed_at} of {total} messages");
    second.wait_stats("every message", |s| {
        s["sources"]["mqtt"].as_u64() >= Some(total)
    });
    second.wait_stats("the webhook's deliveries", |s| {
        s["sinks"][0]["next"].as_u64() == Some(expected.len() as u64)
    });
    let _publisher = sending.join().unwrap();
    let stats = second.stats();
    assert_eq!(
        stats["sources"]["mqtt"], total,
        "each message consumed once: {stats}"
    );
    assert_eq!(stats["processed"], total);
    let mut got = std::collections::BTreeMap::new();
    for body in bodies.lock().unwrap().iter() {
        for line in body.lines() {
            let d: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(before) = got.insert(d["seq"].as_u64().unwrap(), line.to_owned()) {
                assert_eq!(before, line, "one seq, two detections");
            }
        }
    }
    let got: Vec<String> = got.into_values().collect();
    assert_eq!(got, expected, "no acknowledged message's detections lost");
}

#[test]
fn a_broker_that_forgot_the_session_is_subscribed_to_again() {
    let Some(broker) = mosquitto() else { return };
    let port = broker.port;
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let mqtt_in = format!("mqtt://127.0.0.1:{port}/in");
    let server = Server::start(
        &net,
        &[
            "--mqtt-in",
            &mqtt_in,
            "--mqtt-client-id",
            "ccpn-test-forgot",
        ],
    );
    wait_for("the server's subscription", || {
        server.stderr_text().contains("serve:")
    });
    std::thread::sleep(Duration::from_millis(500));
    let (publisher, _) = client(port, "test-publisher-before", None);
    publish(&publisher, 1, 1);
    server.wait_stats("the first message", |s| {
        s["sources"]["mqtt"].as_u64() >= Some(1)
    });
    drop(publisher);
    // A broker without persistence, restarted: the server's session, with its
    // subscription, is gone.
    drop(broker);
    wait_for("the warning", || {
        server.stderr_text().contains("retrying every second")
    });
    let broker = mosquitto_on(port).expect("mosquitto again");
    wait_for("reconnecting", || {
        server.stderr_text().contains("connected again")
    });
    std::thread::sleep(Duration::from_millis(500));
    // The same message again, at once: to this broker a new one, sent with the
    // same packet id, topic and payload but not marked `dup`, so consumed, not
    // taken for one sent again.
    let (publisher, _) = client(broker.port, "test-publisher-after", None);
    publish(&publisher, 1, 1);
    publish(&publisher, 2, 4);
    let stats = server.wait_stats("the messages after the restart", |s| {
        s["sources"]["mqtt"].as_u64() >= Some(6)
    });
    std::thread::sleep(Duration::from_millis(500));
    let stats = server.wait_stats("nothing more", |s| s["processed"] == stats["processed"]);
    assert_eq!(stats["sources"]["mqtt"], 6, "{stats}");
    assert_eq!(stats["processed"], 6, "{stats}");
    assert_eq!(stats["mqtt_redelivered"], 0, "{stats}");
}

/// A server with an EVERY_A net taking MQTT in (topic `in`) through `proxy` in a
/// persistent session `id`, its detections posted to a receiver; waits for its
/// subscription.
fn behind(proxy: &Proxy, dir: &Path, id: &str, more: &[&str]) -> (Server, Shared<Vec<String>>) {
    let net = net_file(dir, EVERY_A);
    let (url, bodies, _) = receiver(0);
    let mqtt_in = format!("mqtt://127.0.0.1:{}/in", proxy.port);
    let mut args = vec![
        "--mqtt-in",
        &mqtt_in,
        "--mqtt-client-id",
        id,
        "--post",
        &url,
    ];
    args.extend(more);
    let server = Server::start(&net, &args);
    wait_for("the server's connection", || proxy.accepted() >= 1);
    std::thread::sleep(Duration::from_millis(500));
    (server, bodies)
}

/// Publishes events `first..first + n`, one a message, on topic `in`.
fn publish(publisher: &rumqttc::Client, first: u64, n: u64) {
    for i in first..first + n {
        publisher
            .publish("in", QoS::AtLeastOnce, false, a_events(i, 1))
            .unwrap();
    }
}

/// Waits for the server to connect again through `proxy` after a cut.
fn reconnected(server: &Server, proxy: &Proxy) {
    wait_for("the reconnect", || {
        proxy.accepted() >= 2 && server.stderr_text().contains("connected again")
    });
    // The broker sends again what it has no acknowledgement of.
    std::thread::sleep(Duration::from_millis(500));
}

/// Checks that events 1 to `n` were each consumed once and detected once; the
/// server's `/stats`.
fn consumed_once(server: &Server, bodies: &Shared<Vec<String>>, n: u64) -> serde_json::Value {
    server.wait_stats("every message", |s| {
        s["sources"]["mqtt"].as_u64() >= Some(n)
    });
    // A message consumed twice would come within this.
    std::thread::sleep(Duration::from_millis(500));
    let stats = server.wait_stats("the webhook's deliveries", |s| {
        s["sinks"][0]["next"].as_u64() >= Some(n)
    });
    assert_eq!(
        stats["sources"]["mqtt"], n,
        "each message consumed once: {stats}"
    );
    assert_eq!(stats["processed"], n, "{stats}");
    assert_eq!(stats["detections"], n, "{stats}");
    let mut ids = Vec::new();
    for body in bodies.lock().unwrap().iter() {
        for line in body.lines() {
            let d: serde_json::Value = serde_json::from_str(line).unwrap();
            ids.extend(d["ids"].as_array().unwrap().iter().map(|i| i.as_u64()));
        }
    }
    ids.sort_unstable();
    let once: Vec<Option<u64>> = (1..=n).map(Some).collect();
    assert_eq!(ids, once, "each event in one detection");
    stats
}

#[test]
fn messages_in_flight_at_a_reconnect_are_consumed_once() {
    let Some(broker) = mosquitto() else { return };
    let proxy = Proxy::start(broker.port);
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint can be written until `later` exists: until then the messages
    // consumed are not acknowledged, and MQTT in, waiting for a checkpoint, takes
    // no more.
    let later = dir.path().join("later");
    let ckpt = later.join("serve.ckpt");
    let checkpoint = ["--checkpoint", ckpt.to_str().unwrap()];
    let (server, bodies) = behind(&proxy, dir.path(), "ccpn-test-in-flight", &checkpoint);
    let (publisher, _) = client(broker.port, "test-publisher-in-flight", None);
    publish(&publisher, 1, 1);
    server.wait_stats("the first message", |s| s["sources"]["mqtt"] == 1);
    // The broker sends the server its window's worth, the first message's
    // acknowledgement not there.
    publish(&publisher, 2, 49);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        server.stats()["sources"]["mqtt"],
        1,
        "waiting for a checkpoint"
    );
    proxy.cut();
    reconnected(&server, &proxy);
    // Once a checkpoint is written, the first message is acknowledged (after it was
    // sent again: it is of the old connection), then the others are consumed, their
    // second copies taken for theirs, and they are acknowledged.
    std::fs::create_dir(&later).unwrap();
    let stats = consumed_once(&server, &bodies, 50);
    // The broker sends again the window it had sent (all of it, unless some was
    // still on its way through the proxy at the cut: not consumed, not counted).
    let again = stats["mqtt_redelivered"].as_u64().unwrap();
    eprintln!("sent again after the reconnect and recognised: {again}");
    assert!(again > 1 && again <= INFLIGHT, "{stats}");
}

#[test]
fn acknowledgements_lost_in_a_break_are_sent_again() {
    let Some(broker) = mosquitto() else { return };
    let proxy = Proxy::start(broker.port);
    let dir = tempfile::tempdir().unwrap();
    let (server, bodies) = behind(&proxy, dir.path(), "ccpn-test-lost-acks", &[]);
    let (publisher, _) = client(broker.port, "test-publisher-lost-acks", None);
    // The server's acknowledgements go nowhere, then the connection breaks.
    proxy.swallow(true);
    publish(&publisher, 1, 10);
    server.wait_stats("the messages", |s| s["sources"]["mqtt"] == 10);
    std::thread::sleep(Duration::from_millis(300));
    proxy.cut();
    proxy.swallow(false);
    reconnected(&server, &proxy);
    publish(&publisher, 11, 10);
    let stats = consumed_once(&server, &bodies, 20);
    assert_eq!(stats["mqtt_redelivered"], 10, "{stats}");
    let metrics = server.get("/metrics").1;
    assert!(
        metrics.contains("ccpn_mqtt_redelivered_total 10"),
        "{metrics}"
    );
}

#[test]
fn messages_at_qos_0_and_1_with_checkpoints() {
    let Some(broker) = mosquitto() else { return };
    let dir = tempfile::tempdir().unwrap();
    let net = net_file(dir.path(), EVERY_A);
    let ckpt = dir.path().join("serve.ckpt");
    let mqtt_in = format!("mqtt://127.0.0.1:{}/in", broker.port);
    let checkpoint = ckpt.to_str().unwrap();
    let server = Server::start(&net, &["--mqtt-in", &mqtt_in, "--checkpoint", checkpoint]);
    wait_for("the server's subscription", || {
        server.stderr_text().contains("serve:")
    });
    std::thread::sleep(Duration::from_millis(500));
    let (publisher, _) = client(broker.port, "test-publisher-qos", None);
    // A batch of QoS 0 messages alone (not acknowledged), then more than the
    // broker's window at QoS 1: each acknowledged once a checkpoint holds it.
    publisher
        .publish("in", QoS::AtMostOnce, false, a_events(1, 1))
        .unwrap();
    server.wait_stats("the QoS 0 message", |s| s["sources"]["mqtt"] == 1);
    publish(&publisher, 2, 2 * INFLIGHT);
    let n = 2 * INFLIGHT + 1;
    let stats = server.wait_stats("every message", |s| s["sources"]["mqtt"] == n);
    assert_eq!(stats["mqtt_redelivered"], 0, "{stats}");
}
