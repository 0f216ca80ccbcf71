//! A load generator for `ccpn-run serve` (docs/performance.md, "Serving"): plain
//! HTTP/1.1 over one keep-alive connection, and MQTT through a broker
//! (publishers that pipeline, with rumqttc's packet types).
//!
//! ```text
//! echo 'Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])' > /tmp/every_a.ron
//! ccpn-run serve /tmp/every_a.ron --listen 127.0.0.1:8080 &
//! cargo run --release --example serve_load -- ingest  127.0.0.1:8080 [EVENTS] [BATCH]
//! cargo run --release --example serve_load -- latency 127.0.0.1:8080 [RATE/s] [SECONDS]
//! cargo run --release --example serve_load -- stalled 127.0.0.1:8080 [EVENTS] [PID]
//! ccpn-run serve /tmp/every_a.ron --listen 127.0.0.1:8080 --mqtt-in mqtt://127.0.0.1:1883/ccpn/in/# &
//! cargo run --release --example serve_load -- mqtt    127.0.0.1:8080 [MESSAGES] [BROKER PORT]
//! ```
//!
//! - `ingest`: POSTs EVENTS events (default 2,000,000) of type `A` in bodies of BATCH
//!   lines (default 10,000), prepared beforehand, and prints events per second.
//! - `latency`: posts RATE events a second (default 10,000, in bodies of RATE/1000)
//!   for SECONDS (default 10), each event's `id` its send time in microseconds, reads
//!   them back from `GET /detections` (SSE) and prints the latency's percentiles.
//! - `stalled`: opens an SSE client that never reads, ingests EVENTS events and
//!   prints the server's resident memory (from /proc/PID/status) as it goes.
//! - `mqtt`: publishes MESSAGES messages (default 500,000), one event each, QoS 1, to
//!   `ccpn/in/load` on the broker at 127.0.0.1:PORT (default 1883), over two
//!   connections that pipeline (up to 20,000 not acknowledged each), and prints
//!   messages per second from the first publish until the server's `/stats` says it
//!   has processed them all.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    let Some(addr) = args.get(1).cloned() else {
        eprintln!("usage: serve_load ingest|latency|stalled|mqtt ADDR [N] [M]");
        std::process::exit(2);
    };
    match args.first().map(String::as_str) {
        Some("ingest") => ingest(&addr, arg(2, 2_000_000), arg(3, 10_000)),
        Some("latency") => latency(&addr, arg(2, 10_000), arg(3, 10)),
        Some("stalled") => stalled(&addr, arg(2, 2_000_000), arg(3, 0)),
        Some("mqtt") => mqtt(&addr, arg(2, 500_000), arg(3, 1883)),
        _ => {
            eprintln!("usage: serve_load ingest|latency|stalled|mqtt ADDR [N] [M]");
            std::process::exit(2);
        }
    }
}

/// A keep-alive HTTP/1.1 connection.
struct Conn {
    reader: BufReader<TcpStream>,
    addr: String,
}

impl Conn {
    fn open(addr: &str) -> Conn {
        let tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_nodelay(true).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Conn {
            reader: BufReader::new(tcp),
            addr: addr.to_owned(),
        }
    }

    /// POSTs a JSON Lines body to /events; returns the answer's body.
    fn post(&mut self, body: &[u8]) -> String {
        let tcp = self.reader.get_mut();
        write!(
            tcp,
            "POST /events HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-ndjson\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        )
        .unwrap();
        tcp.write_all(body).unwrap();
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let mut answer = vec![0; length];
        self.reader.read_exact(&mut answer).unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }
}

/// `n` JSON Lines events from `first`, id = time = their number.
fn events(first: u64, n: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n as usize * 64);
    for i in first..first + n {
        writeln!(
            out,
            "{{\"id\":{i},\"type\":\"A\",\"time\":{i},\"x\":1.5,\"y\":2.5}}"
        )
        .unwrap();
    }
    out
}

fn ingest(addr: &str, total: u64, batch: u64) {
    let bodies: Vec<Vec<u8>> = (0..total.div_ceil(batch))
        .map(|b| events(b * batch + 1, batch.min(total - b * batch)))
        .collect();
    let bytes: usize = bodies.iter().map(Vec::len).sum();
    let mut conn = Conn::open(addr);
    let start = Instant::now();
    for body in &bodies {
        let answer = conn.post(body);
        assert!(answer.contains("\"rejected\":0"), "{answer}");
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "ingest: {total} events in {s:.2} s = {:.0} events/s ({:.0} MB/s, bodies of {batch})",
        total as f64 / s,
        bytes as f64 / s / 1e6
    );
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// An SSE connection to /detections: its reader, the head read.
fn sse(addr: &str) -> BufReader<TcpStream> {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(tcp, "GET /detections HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut reader = BufReader::new(tcp);
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            return reader;
        }
    }
}

fn latency(addr: &str, rate: u64, seconds: u64) {
    let mut reader = sse(addr);
    let total = rate * seconds;
    let per_ms = (rate / 1000).max(1);
    let poster = {
        let addr = addr.to_owned();
        std::thread::spawn(move || {
            let mut conn = Conn::open(&addr);
            let start = Instant::now();
            let mut sent = 0;
            while sent < total {
                let due = Duration::from_micros(sent * 1_000_000 / rate);
                if let Some(wait) = due.checked_sub(start.elapsed()) {
                    std::thread::sleep(wait);
                }
                let mut body = Vec::new();
                for _ in 0..per_ms.min(total - sent) {
                    // Its send time, as its id and as its event time.
                    let id = now_us();
                    let time = format!("{}.{:06}", id / 1_000_000, id % 1_000_000);
                    writeln!(
                        body,
                        "{{\"id\":{id},\"type\":\"A\",\"time\":{time},\"x\":1.5,\"y\":2.5}}"
                    )
                    .unwrap();
                    sent += 1;
                }
                conn.post(&body);
            }
        })
    };
    let mut lat = Vec::with_capacity(total as usize);
    let mut line = String::new();
    while (lat.len() as u64) < total {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(at) = line.find("\"ids\":[") {
            let rest = &line[at + 7..];
            let id: u64 = rest[..rest.find(']').unwrap_or(0)].parse().unwrap_or(0);
            lat.push(now_us().saturating_sub(id));
        }
    }
    poster.join().unwrap();
    lat.sort_unstable();
    let p = |q: f64| lat[((lat.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
    println!(
        "latency POST -> SSE at {rate} events/s for {seconds} s ({} events): p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
        lat.len(),
        p(0.5),
        p(0.99),
        p(0.999),
        p(1.0)
    );
}

fn rss_kib(pid: u64) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn stalled(addr: &str, total: u64, pid: u64) {
    let _never_read = sse(addr);
    let batch = 10_000;
    let mut conn = Conn::open(addr);
    let start = Instant::now();
    for b in 0..total.div_ceil(batch) {
        conn.post(&events(b * batch + 1, batch.min(total - b * batch)));
        if pid > 0 && (b + 1) % 20 == 0 {
            println!(
                "stalled client: {} events, server RSS {} MiB",
                (b + 1) * batch,
                rss_kib(pid) / 1024
            );
        }
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "stalled client: {total} events in {s:.2} s = {:.0} events/s",
        total as f64 / s
    );
}

/// The server's `processed` count, from `GET /stats`.
fn processed(addr: &str) -> u64 {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    write!(
        tcp,
        "GET /stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    let _ = tcp.read_to_string(&mut text);
    let at = text.find("\"processed\":").map_or(0, |i| i + 12);
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

fn mqtt(addr: &str, total: u64, port: u64) {
    /// Publishing clients, each on its own connection and thread.
    const PUBLISHERS: u64 = 2;
    let port = u16::try_from(port).expect("a port");
    // One event time for the whole run (the wall clock's second): events from
    // different publishers interleave, and equal times are never late.
    let time = now_us() / 1_000_000;
    let before = processed(addr);
    let start = Instant::now();
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            std::thread::spawn(move || {
                let lines = (p + 1..=total).step_by(PUBLISHERS as usize).map(|i| {
                    format!("{{\"id\":{i},\"type\":\"A\",\"time\":{time},\"x\":1.5,\"y\":2.5}}")
                });
                publish(
                    port,
                    &format!("ccpn-load-{}-{p}", std::process::id()),
                    lines,
                );
            })
        })
        .collect();
    for p in publishers {
        p.join().unwrap();
    }
    let published = start.elapsed().as_secs_f64();
    while processed(addr) < before + total {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the server did not get them all"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "mqtt: {total} messages through the broker in {s:.2} s = {:.0} messages/s ({PUBLISHERS} publishers, done publishing in {published:.2} s)",
        total as f64 / s
    );
}

/// Publishes each of `lines` at QoS 1 to `ccpn/in/load` on the broker at
/// 127.0.0.1:`port`, as a client that pipelines: publishes are encoded (by
/// rumqttc's packet types) into one buffer of up to `CHUNK` and written at once,
/// with at most `WINDOW` not acknowledged yet; returns once all are acknowledged.
/// (rumqttc's own client writes, and so sends, one packet at a time: as a load
/// generator on the broker's machine it cost more CPU than the broker.)
fn publish(port: u16, id: &str, lines: impl Iterator<Item = String>) {
    use bytes::BytesMut;
    use rumqttc::mqttbytes::v4::{Connect, Packet, Publish};
    use rumqttc::QoS;
    const CHUNK: usize = 1_000;
    const WINDOW: usize = 20_000;
    const MAX: usize = 1 << 20;
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect to the broker");
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut out = BytesMut::new();
    let mut connect = Connect::new(id);
    connect.keep_alive = 0;
    connect.write(&mut out).unwrap();
    tcp.write_all(&out).unwrap();
    out.clear();
    let mut input = BytesMut::with_capacity(64 * 1024);
    // Reads what has come and counts the acknowledgements in it; the first packet
    // is the CONNACK.
    let read = |tcp: &mut TcpStream, input: &mut BytesMut| -> usize {
        let mut buf = [0u8; 64 * 1024];
        let n = tcp.read(&mut buf).expect("read from the broker");
        assert!(n > 0, "the broker closed the connection");
        input.extend_from_slice(&buf[..n]);
        let mut acks = 0;
        loop {
            match Packet::read(input, MAX) {
                Ok(Packet::PubAck(_)) => acks += 1,
                Ok(Packet::ConnAck(_)) => {}
                Ok(other) => panic!("unexpected {other:?}"),
                Err(rumqttc::mqttbytes::Error::InsufficientBytes(_)) => return acks,
                Err(e) => panic!("bad packet from the broker: {e}"),
            }
        }
    };
    read(&mut tcp, &mut input);
    let (mut pkid, mut unacked, mut lines) = (0u16, 0usize, lines.peekable());
    while lines.peek().is_some() || unacked > 0 {
        for line in lines.by_ref().take(CHUNK.min(WINDOW - unacked)) {
            pkid = pkid.checked_add(1).unwrap_or(1);
            let mut message = Publish::new("ccpn/in/load", QoS::AtLeastOnce, line);
            message.pkid = pkid;
            message.write(&mut out).unwrap();
            unacked += 1;
        }
        if !out.is_empty() {
            tcp.write_all(&out).unwrap();
            out.clear();
        }
        if unacked + CHUNK > WINDOW || lines.peek().is_none() {
            unacked -= read(&mut tcp, &mut input);
        }
    }
}
