//! The tests' MQTT: Debian's mosquitto on a free loopback port with a generated
//! configuration (skipped, saying so, only where it is not installed: `.ci/run`
//! installs it), a test client of it, and a TCP proxy between `ccpn-run serve` and
//! the broker whose connections a test can cut, or whose traffic to the broker it
//! can swallow.

#![allow(dead_code)]

mod proxy;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

pub(crate) use proxy::Proxy;

use crate::serve_util::WAIT;

/// The broker's in-flight window: QoS 1 messages it sends a client before it has
/// their acknowledgements (mosquitto's default).
pub(crate) const INFLIGHT: u64 = 20;

/// A broker on 127.0.0.1; killed when dropped.
pub(crate) struct Mosquitto {
    child: Child,
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn mosquitto_binary() -> Option<PathBuf> {
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
pub(crate) fn mosquitto() -> Option<Mosquitto> {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    mosquitto_on(port)
}

/// Starts mosquitto on `port`.
pub(crate) fn mosquitto_on(port: u16) -> Option<Mosquitto> {
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
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\nmax_inflight_messages {INFLIGHT}\n"),
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
pub(crate) fn client(
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

pub(crate) fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "waited for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
