//! A minimal HTTP/1.1 client for the webhooks: `http://` URLs only (TLS goes in a
//! proxy in front of the receiver, docs/serve.md), one request per connection.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest wait for a connection, or for the answer to a request.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of an answer read (its status line is all that counts).
const MAX_ANSWER: usize = 64 << 10;

/// Where to POST: `http://HOST[:PORT][/PATH]`.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) path: String,
    pub(crate) authorization: Option<String>,
}

/// Why a POST did not deliver.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PostError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, #[source] std::io::Error),
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("{0}: no answer within {1:?}")]
    Timeout(String, Duration),
    #[error("{0}: answered {1}")]
    Status(String, String),
}

impl Target {
    /// Parses `url`.
    pub(crate) fn parse(url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or("only http:// URLs (put a TLS proxy in front of an https receiver)")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() => {
                (h, p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?)
            }
            _ => (hostport, 80),
        };
        if host.is_empty() || host.contains(['\r', '\n', ' ']) || path.contains(['\r', '\n', ' ']) {
            return Err("bad host or path".into());
        }
        // A token given as `http://:TOKEN@host/…` is sent as a bearer token.
        let authorization = userinfo
            .map(|u| u.strip_prefix(':').unwrap_or(u))
            .filter(|t| !t.is_empty() && !t.contains(['\r', '\n']))
            .map(|t| format!("Bearer {t}"));
        Ok(Target {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            path: path.to_owned(),
            authorization,
        })
    }

    /// `host:port/path`, for messages.
    pub(crate) fn name(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.path)
    }

    /// POSTs `body` (JSON Lines); `Ok` on a 2xx answer.
    pub(crate) async fn post(&self, body: &[u8]) -> Result<(), PostError> {
        let name = self.name();
        let addr = (self.host.as_str(), self.port);
        let mut tcp = match tokio::time::timeout(TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(PostError::Connect(name, e)),
            Err(_) => return Err(PostError::Timeout(name, TIMEOUT)),
        };
        let auth = self
            .authorization
            .as_ref()
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/x-ndjson\r\nContent-Length: {}\r\n{auth}Connection: close\r\nUser-Agent: ccpn-run\r\n\r\n",
            self.path,
            self.host,
            self.port,
            body.len()
        );
        let exchange = async {
            tcp.write_all(head.as_bytes()).await?;
            tcp.write_all(body).await?;
            tcp.flush().await?;
            let mut answer = Vec::new();
            let mut buf = [0u8; 4096];
            while !answer.windows(2).any(|w| w == b"\r\n") && answer.len() < MAX_ANSWER {
                let n = tcp.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                answer.extend_from_slice(&buf[..n]);
            }
            Ok::<_, std::io::Error>(answer)
        };
        let answer = match tokio::time::timeout(TIMEOUT, exchange).await {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => return Err(PostError::Io(name, e)),
            Err(_) => return Err(PostError::Timeout(name, TIMEOUT)),
        };
        let status_line = answer
            .split(|&b| b == b'\n')
            .next()
            .map(|l| String::from_utf8_lossy(l).trim().to_owned())
            .unwrap_or_default();
        let code = status_line.split(' ').nth(1).unwrap_or("");
        if code.starts_with('2') && code.len() == 3 {
            Ok(())
        } else if status_line.is_empty() {
            Err(PostError::Status(name, "nothing".into()))
        } else {
            Err(PostError::Status(name, status_line))
        }
    }
}
