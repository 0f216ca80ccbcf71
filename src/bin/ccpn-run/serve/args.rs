//! The flags of `ccpn-run serve`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

use super::error::ServeError;

/// Serves a net on the network: events in by HTTP (and MQTT), detections out as
/// Server-Sent Events, WebSocket, webhooks and MQTT, and a live map at `/`.
#[derive(Debug, Parser)]
#[command(name = "ccpn-run serve", bin_name = "ccpn-run serve", version)]
pub(crate) struct ServeArgs {
    /// The net (a RON file).
    pub(crate) net: PathBuf,

    /// Address to listen on. Anything but a loopback address needs `--token`.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,

    /// Bearer token required on every request but `GET /healthz`
    /// (`Authorization: Bearer TOKEN`, or `?access_token=TOKEN` for browsers). When
    /// absent, the environment variable CCPN_TOKEN, if set (kept out of `ps`).
    #[arg(long, value_name = "TOKEN")]
    pub(crate) token: Option<String>,

    /// Events to take at start (JSON Lines or CSV), as if posted: a demonstration on a
    /// recorded stream.
    #[arg(long, value_name = "FILE")]
    pub(crate) events: Option<PathBuf>,

    /// With `--events`: replay at this many times the speed of event time (10: ten
    /// seconds of events a second); 0, as fast as possible.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    pub(crate) pace: f64,

    /// Reorder events arriving up to this late (seconds, or "500ms", "2s", "1m").
    #[arg(long, value_name = "D", value_parser = ccpn::parse_duration, default_value = "0")]
    pub(crate) max_delay: i64,

    /// When no event has come for D, event time moves on to the wall clock less
    /// `--max-delay` (for streams whose times follow the wall clock).
    #[arg(long, value_name = "D", value_parser = ccpn::parse_duration)]
    pub(crate) heartbeat: Option<i64>,

    /// Detections kept for `GET /detections?since=SEQ`.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub(crate) ring: u64,

    /// Detections a streaming client may fall behind before it is told `lagged` and
    /// disconnected (it reconnects with `?since=`).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub(crate) client_buffer: u64,

    /// Largest accepted request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    pub(crate) max_body_bytes: u64,

    /// Longest accepted input line, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = ccpn::io::read::DEFAULT_MAX_LINE_BYTES)]
    pub(crate) max_line_bytes: usize,

    /// Rejected and late lines listed in a `POST /events` answer (all are counted).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) max_errors_listed: usize,

    /// Most tokens the net may hold at once; beyond it the oldest are evicted.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub(crate) max_tokens: usize,

    /// Most partial sets each counting index may hold; beyond it new ones are refused.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub(crate) max_sets: usize,

    /// POST detections to this URL (http://), batched as JSON Lines; repeatable.
    #[arg(long, value_name = "URL")]
    pub(crate) post: Vec<String>,

    /// Detections a sink (webhook, MQTT out) may hold undelivered; beyond it new ones
    /// are dropped, counted and warned about.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub(crate) sink_queue: u64,

    /// Detections per webhook POST, at most.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) post_batch: u64,

    /// Longest wait between two tries of a failed webhook POST (seconds); the wait
    /// doubles from 100 ms up to it.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) max_backoff: u64,

    /// Read events from MQTT: `mqtt://HOST:PORT/TOPIC` (wildcards allowed), JSON
    /// payloads (one event, or JSON Lines), QoS 1.
    #[arg(long, value_name = "URL")]
    pub(crate) mqtt_in: Option<String>,

    /// Publish detections to MQTT: `mqtt://HOST:PORT/TOPIC`, one JSON detection per
    /// message, QoS 1.
    #[arg(long, value_name = "URL")]
    pub(crate) mqtt_out: Option<String>,

    /// Base-map tiles for the live map (`https://tiles.example/{z}/{x}/{y}.png`);
    /// without, a plain background with the zones and a scale.
    #[arg(long, value_name = "URL")]
    pub(crate) tiles: Option<String>,

    /// The attribute naming a tracked object on the map (default: the first of
    /// track, mmsi, object, vehicle, icao24, ship, key that the net reads, else the type).
    #[arg(long, value_name = "ATTR")]
    pub(crate) object: Option<String>,

    /// Positions kept per object for the map's trails.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) trail: usize,

    /// Objects kept for the map; beyond it the least recently seen is forgotten.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) max_objects: usize,

    /// Threads of the HTTP server (the detector has its own).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub(crate) threads: usize,

    /// Save the server's state to FILE (atomically) every `--checkpoint-every` events
    /// or `--checkpoint-interval`, and at shutdown: the detector, the events held for
    /// reordering, the events consumed per source, the retained detections and how far
    /// each sink delivered (docs/serve.md, *Checkpoints*).
    #[arg(long, value_name = "FILE")]
    pub(crate) checkpoint: Option<PathBuf>,

    /// Events (lines and MQTT messages) consumed between checkpoints, at most.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) checkpoint_every: u64,

    /// Longest time a consumed event waits for a checkpoint (seconds, or "500ms", "2s").
    #[arg(long, value_name = "D", value_parser = ccpn::parse_duration, default_value = "1s")]
    pub(crate) checkpoint_interval: i64,

    /// Continue from the checkpoint in FILE (made by `serve --checkpoint`): the detector,
    /// `seq`, the retained detections and the sinks' backlog as they were. Without such
    /// a file, start afresh.
    #[arg(long, value_name = "FILE")]
    pub(crate) resume: Option<PathBuf>,

    /// The MQTT client id of `--mqtt-in`, with a persistent session (clean session
    /// off): the broker keeps the subscription and the messages not acknowledged yet
    /// while the server is away. Without it, a clean session per process.
    #[arg(long, value_name = "ID")]
    pub(crate) mqtt_client_id: Option<String>,

    /// Seconds given to the sinks to deliver what they hold at shutdown.
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub(crate) shutdown_grace: u64,
}

impl ServeArgs {
    /// Refuses an address other than loopback without a token, and an empty token.
    pub(crate) fn check_security(&mut self) -> Result<(), ServeError> {
        if self.token.is_none() {
            self.token = std::env::var("CCPN_TOKEN").ok();
        }
        if !(self.pace.is_finite() && self.pace >= 0.0) {
            return Err(ServeError::Args(format!(
                "--pace {}: expected a speed-up of 0 or more",
                self.pace
            )));
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err(ServeError::Args("--token is empty".into()));
        }
        if !self.listen.ip().is_loopback() && self.token.is_none() {
            return Err(ServeError::Args(format!(
                "refusing to listen on {} without --token: anyone who can reach it could post events \
                 and read detections (listen on 127.0.0.1, or give --token and put TLS in front, docs/serve.md)",
                self.listen
            )));
        }
        if self.mqtt_client_id.as_deref().is_some_and(str::is_empty) {
            return Err(ServeError::Args("--mqtt-client-id is empty".into()));
        }
        Ok(())
    }

    /// `--checkpoint-interval`, as a duration (at least a millisecond).
    pub(crate) fn checkpoint_interval(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.checkpoint_interval.max(1_000).unsigned_abs())
    }

    /// `--heartbeat`, as a duration (at least a millisecond).
    pub(crate) fn heartbeat(&self) -> Option<std::time::Duration> {
        self.heartbeat
            .map(|us| std::time::Duration::from_micros(us.max(1_000).unsigned_abs()))
    }
}
