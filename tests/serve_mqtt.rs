//! `ccpn-run serve --mqtt-in … --mqtt-out …` against a real broker: Debian's
//! mosquitto, started on a free loopback port with a generated configuration.
//! Skipped, saying so, only where mosquitto is not installed (`.ci/run` installs it).

mod serve_util;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

use serve_util::*;

/// A broker on 127.0.0.1; killed when dropped.
struct Mosquitto {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mosquitto_binary() -> Option<PathBuf> {
    [
        "/usr/sbin/mosquitto",
        "/usr/bin/mosquitto",
        "/usr/local/sbin/mosquitto",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Starts mosquitto on a free port; `None` (with a message) if it is not installed.
fn mosquitto() -> Option<Mosquitto> {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    mosquitto_on(port)
}

/// Starts mosquitto on `port`.
fn mosquitto_on(port: u16) -> Option<Mosquitto> {
    let Some(bin) = mosquitto_binary() else {
        // CI installs it: there a missing broker is a failure, not a skip.
        assert!(
            std::env::var("CI").is_err(),
            "mosquitto is not installed (.ci/run installs it)"
        );
        eprintln!(
            "SKIPPED: mosquitto is not installed (apt-get install mosquitto); .ci/run installs it"
        );
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("mosquitto.conf");
    std::fs::write(
        &conf,
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\n"),
    )
    .unwrap();
    let child = Command::new(bin)
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < WAIT, "mosquitto did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Mosquitto {
        child,
        port,
        _dir: dir,
    })
}

/// A test client of the broker, its connection polled on a thread; returns the
/// client and the messages it receives.
fn client(
    port: u16,
    id: &str,
    subscribe: Option<&str>,
) -> (Client, std::sync::mpsc::Receiver<Vec<u8>>) {
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_keep_alive(Duration::from_secs(30));
    o.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut connection) = Client::new(o, 1024);
    let (tx, rx) = std::sync::mpsc::channel();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let sub = subscribe.map(str::to_owned);
    let c = client.clone();
    std::thread::spawn(move || {
        for ev in connection.iter() {
            match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    if let Some(topic) = &sub {
                        c.subscribe(topic.clone(), QoS::AtLeastOnce).unwrap();
                    } else {
                        let _ = ready_tx.send(());
                    }
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    let _ = ready_tx.send(());
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    if tx.send(p.payload.to_vec()).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    ready.recv_timeout(WAIT).expect("connected to the broker");
    (client, rx)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "waited for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

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
