//! Starting `ccpn-run serve` for the tests, on 127.0.0.1 and a port the system
//! picks, and talking to it: plain HTTP through ureq, Server-Sent Events over a raw
//! socket (so that a test can stop reading), a webhook receiver, all with bounded
//! waits.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest any one wait in these tests lasts.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// A running server; killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    /// Its stderr so far, line by line.
    pub(crate) stderr: Arc<Mutex<Vec<String>>>,
    pub(crate) token: Option<String>,
}

/// The path of a file in the repository.
pub(crate) fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The binary.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ccpn-run")
}

impl Server {
    /// Starts `ccpn-run serve NET --listen 127.0.0.1:0 ARGS…` and waits for the line
    /// that says where it listens.
    pub(crate) fn start(net: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(bin())
            .arg("serve")
            .arg(net)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ccpn-run serve");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Some(at) = line.find("on http://") {
                        let rest = &line[at + "on http://".len()..];
                        let addr = rest.split('/').next().unwrap_or("").to_owned();
                        let _ = tx.send(addr);
                    }
                    lines.lock().unwrap().push(line);
                }
            });
        }
        let addr = match rx.recv_timeout(WAIT) {
            Ok(a) => a.parse().expect("an address"),
            Err(_) => {
                let _ = child.kill();
                panic!("the server did not start: {:?}", lines.lock().unwrap());
            }
        };
        let token = args
            .iter()
            .position(|a| *a == "--token")
            .map(|i| args[i + 1].to_owned());
        Server {
            child,
            addr,
            stderr: lines,
            token,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(WAIT))
            .build()
            .into()
    }

    /// GET `path`: (status, body).
    pub(crate) fn get(&self, path: &str) -> (u16, String) {
        let mut req = Self::agent().get(self.url(path));
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let mut resp = req.call().expect("GET");
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap_or_default())
    }

    /// POST `body` to `path` with a content type: (status, body).
    pub(crate) fn post(&self, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
        let mut req = Self::agent()
            .post(self.url(path))
            .header("Content-Type", content_type);
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let mut resp = req.send(body).expect("POST");
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap_or_default())
    }

    /// PUT `body` to `path`: (status, body).
    pub(crate) fn put(&self, path: &str, body: &[u8]) -> (u16, String) {
        let mut req = Self::agent().put(self.url(path));
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let mut resp = req.send(body).expect("PUT");
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap_or_default())
    }

    /// POSTs JSON Lines; the answer as JSON.
    pub(crate) fn post_events(&self, body: &[u8]) -> serde_json::Value {
        let (status, text) = self.post("/events", "application/x-ndjson", body);
        assert_eq!(status, 200, "{text}");
        serde_json::from_str(&text).expect("a JSON answer")
    }

    /// `GET /stats` as JSON.
    pub(crate) fn stats(&self) -> serde_json::Value {
        let (status, text) = self.get("/stats");
        assert_eq!(status, 200, "{text}");
        serde_json::from_str(&text).expect("JSON stats")
    }

    /// Waits until `f(stats)` holds.
    pub(crate) fn wait_stats(
        &self,
        what: &str,
        f: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let start = Instant::now();
        loop {
            let s = self.stats();
            if f(&s) {
                return s;
            }
            assert!(start.elapsed() < WAIT, "waited for {what}: {s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM and waits for the exit; its status code.
    pub(crate) fn stop(mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(start.elapsed() < WAIT, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it with SIGKILL (no checkpoint, no goodbye) and waits for it.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its stderr so far.
    pub(crate) fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The server's resident memory, in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sse {
    pub(crate) event: String,
    pub(crate) id: Option<String>,
    pub(crate) data: String,
}

/// An SSE client on a raw socket: it reads only when asked.
pub(crate) struct SseClient {
    reader: BufReader<TcpStream>,
    /// Bytes left in the current chunk of the chunked body.
    left: usize,
    text: String,
}

impl SseClient {
    /// Opens `GET path` (with the token, if any) and reads the response head.
    pub(crate) fn open(server: &Server, path: &str) -> SseClient {
        SseClient::open_at(server.addr, server.token.as_deref(), path)
    }

    /// Opens `GET path` on the server at `addr`.
    pub(crate) fn open_at(addr: SocketAddr, token: Option<&str>, path: &str) -> SseClient {
        let mut tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_read_timeout(Some(WAIT)).unwrap();
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        write!(
            tcp,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{auth}\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(tcp);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 200 "), "{status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        SseClient {
            reader,
            left: 0,
            text: String::new(),
        }
    }

    /// Reads more of the chunked body into `text`; `false` at its end.
    fn fill(&mut self) -> bool {
        if self.left == 0 {
            let mut size = String::new();
            loop {
                size.clear();
                if self.reader.read_line(&mut size).unwrap_or(0) == 0 {
                    return false;
                }
                if !size.trim().is_empty() {
                    break;
                }
            }
            self.left = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if self.left == 0 {
                return false;
            }
        }
        let mut buf = vec![0; self.left.min(1 << 16)];
        let n = self.reader.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return false;
        }
        self.left -= n;
        self.text.push_str(&String::from_utf8_lossy(&buf[..n]));
        true
    }

    /// The next event (comments and keep-alives skipped); `None` at the end.
    pub(crate) fn next(&mut self) -> Option<Sse> {
        loop {
            while let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let mut ev = Sse {
                    event: "message".into(),
                    id: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        ev.event = v.trim().into();
                        any = true;
                    } else if let Some(v) = line.strip_prefix("id:") {
                        ev.id = Some(v.trim().into());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        ev.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        any = true;
                    }
                }
                if any {
                    return Some(ev);
                }
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// The data of the next `n` detection events.
    pub(crate) fn detections(&mut self, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        while out.len() < n {
            let ev = self.next().expect("more events");
            if ev.event == "detection" {
                out.push(ev.data);
            }
        }
        out
    }
}

/// The batch run's detections of `net` on `events`.
pub(crate) fn batch_run(net: &Path, events: &Path) -> Vec<String> {
    let out = Command::new(bin())
        .arg(net)
        .arg(events)
        .output()
        .expect("run ccpn-run");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A net file in a temporary directory.
pub(crate) fn net_file(dir: &Path, ron: &str) -> PathBuf {
    let p = dir.join("net.ron");
    std::fs::write(&p, ron).unwrap();
    p
}

/// A net whose every event of type A is a detection.
pub(crate) const EVERY_A: &str = r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#;

/// `n` events of type A from `first`, one a second, as JSON Lines.
pub(crate) fn a_events(first: u64, n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in first..first + n {
        writeln!(
            out,
            "{{\"id\":{i},\"type\":\"A\",\"time\":{i},\"x\":1.0,\"y\":2.0}}"
        )
        .unwrap();
    }
    out
}

/// What a receiver shares with its test: the bodies it accepted, or a count.
pub(crate) type Shared<T> = Arc<Mutex<T>>;

/// A webhook receiver: answers 500 to its first `fail` requests, then 200; its URL,
/// the bodies it accepted and the number of requests it had.
pub(crate) fn receiver(fail: usize) -> (String, Shared<Vec<String>>, Shared<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let requests = Arc::new(Mutex::new(0));
    let (b, r) = (bodies.clone(), requests.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let n = {
                let mut r = r.lock().unwrap();
                *r += 1;
                *r
            };
            let mut stream = reader.into_inner();
            if n <= fail {
                let _ = stream
                    .write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
            } else {
                b.lock().unwrap().push(String::from_utf8(body).unwrap());
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
        }
    });
    (url, bodies, requests)
}
