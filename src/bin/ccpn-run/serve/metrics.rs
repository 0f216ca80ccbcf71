//! `GET /metrics`: the server's counters in the Prometheus text format (0.0.4).

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::engine::SinkCounters;
use super::http::{lag, App};

/// The unlabelled metrics: name, type, help.
const SCALARS: [(&str, &str, &str); 13] = [
    (
        "events_read_total",
        "counter",
        "Input lines (or messages) received, blank lines and headers aside.",
    ),
    (
        "events_processed_total",
        "counter",
        "Events pushed through the detector.",
    ),
    (
        "events_rejected_total",
        "counter",
        "Lines that are not valid events.",
    ),
    (
        "events_late_total",
        "counter",
        "Events older than --max-delay allows, not processed.",
    ),
    ("events_held", "gauge", "Events held for reordering."),
    ("live_tokens", "gauge", "Tokens waiting in the net."),
    (
        "evicted_tokens_total",
        "counter",
        "Tokens evicted at --max-tokens.",
    ),
    (
        "queued_batches",
        "gauge",
        "Batches of events waiting for the detector.",
    ),
    (
        "stream_clients",
        "gauge",
        "SSE and WebSocket clients connected.",
    ),
    (
        "requests_refused_total",
        "counter",
        "Requests answered with a 4xx or 5xx.",
    ),
    ("checkpoints_total", "counter", "Checkpoints written."),
    (
        "checkpoint_failures_total",
        "counter",
        "Checkpoints that could not be written.",
    ),
    (
        "mqtt_redelivered_total",
        "counter",
        "MQTT messages sent again by the broker that had been consumed: acknowledged, not consumed again.",
    ),
];

/// The per-sink metrics: name, help, and which counter.
type SinkMetric = (&'static str, &'static str, fn(&SinkCounters) -> u64);
const SINKS: [SinkMetric; 3] = [
    (
        "sink_delivered_total",
        "Detections a sink delivered.",
        |k| k.delivered.load(Relaxed),
    ),
    (
        "sink_dropped_total",
        "Detections a sink dropped, its queue full.",
        |k| k.dropped.load(Relaxed),
    ),
    (
        "sink_failures_total",
        "Failed deliveries (each retried).",
        |k| k.failures.load(Relaxed),
    ),
];

/// One metric: its header and its rows (labels, value).
fn metric(out: &mut String, name: &str, kind: &str, help: &str, rows: &[(String, f64)]) {
    let _ = writeln!(out, "# HELP ccpn_{name} {help}\n# TYPE ccpn_{name} {kind}");
    for (labels, v) in rows {
        let _ = writeln!(out, "ccpn_{name}{labels} {v}");
    }
}

/// A label value, escaped.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `GET /metrics`.
pub(crate) async fn metrics(State(app): State<Arc<App>>) -> Response {
    let s = &app.shared;
    let c = &s.counters;
    let values = [
        c.read.load(Relaxed),
        c.processed.load(Relaxed),
        c.rejected.load(Relaxed),
        c.late.load(Relaxed),
        c.held.load(Relaxed) as u64,
        c.live_tokens.load(Relaxed) as u64,
        c.evicted.load(Relaxed),
        s.queued() as u64,
        s.hub.clients() as u64,
        c.refused_requests.load(Relaxed),
        c.checkpoints.load(Relaxed),
        c.checkpoint_failures.load(Relaxed),
        c.mqtt_redelivered.load(Relaxed),
    ];
    let mut out = String::with_capacity(4096);
    for ((name, kind, help), v) in SCALARS.iter().zip(values) {
        metric(&mut out, name, kind, help, &[(String::new(), v as f64)]);
    }
    let per: Vec<(String, f64)> = s
        .outputs
        .iter()
        .zip(&c.per_output)
        .map(|(o, n)| {
            (
                format!("{{output=\"{}\"}}", escape(o)),
                n.load(Relaxed) as f64,
            )
        })
        .collect();
    metric(
        &mut out,
        "detections_total",
        "counter",
        "Detections per output of the net.",
        &per,
    );
    if let Some(lag) = lag(s) {
        let help = "Wall clock less the detector's event time.";
        metric(
            &mut out,
            "lag_seconds",
            "gauge",
            help,
            &[(String::new(), lag)],
        );
    }
    for (name, help, counter) in SINKS {
        let rows: Vec<(String, f64)> = s
            .sinks
            .iter()
            .map(|(sink, k)| (format!("{{sink=\"{}\"}}", escape(sink)), counter(k) as f64))
            .collect();
        metric(&mut out, name, "counter", help, &rows);
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        out,
    )
        .into_response()
}
