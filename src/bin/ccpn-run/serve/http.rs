//! The router: the bearer token on every route but `/healthz`, `/stats`,
//! `/metrics` (`metrics.rs`), `/zones` (GeoJSON), `/objects` (the map's tracks),
//! `/config` (the map's settings) and the live map's files, built into the binary.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::json;
use tokio::sync::oneshot;

use ccpn::{Net, Space};

use super::args::ServeArgs;
use super::engine::{Shared, ToEngine};
use super::error::Refused;
use super::{ingest, stream};

/// What the handlers read: the shared state and the settings of requests.
pub(crate) struct App {
    pub(crate) shared: Arc<Shared>,
    pub(crate) token: Option<String>,
    pub(crate) space: Space,
    pub(crate) names: Vec<String>,
    pub(crate) net_name: String,
    pub(crate) tiles: Option<String>,
    pub(crate) max_body_bytes: u64,
    pub(crate) max_line_bytes: usize,
    pub(crate) max_errors_listed: usize,
}

/// The live map's files (`assets/`; Leaflet is a pinned release, see its LICENSE).
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "/map.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/map.js"),
    ),
    (
        "/map.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/map.css"),
    ),
    (
        "/leaflet/leaflet.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/leaflet/leaflet.js"),
    ),
    (
        "/leaflet/leaflet.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/leaflet/leaflet.css"),
    ),
    (
        "/leaflet/LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("assets/leaflet/LICENSE"),
    ),
];

/// The server's routes.
pub(crate) fn router(shared: Arc<Shared>, args: &ServeArgs, net: &Net) -> Router {
    let app = Arc::new(App {
        shared,
        token: args.token.clone(),
        space: net.space(),
        names: ingest::names(net),
        net_name: args.net.display().to_string(),
        tiles: args.tiles.clone(),
        max_body_bytes: args.max_body_bytes,
        max_line_bytes: args.max_line_bytes,
        max_errors_listed: args.max_errors_listed,
    });
    let mut guarded = Router::new()
        .route("/events", post(ingest::post_events))
        .route("/detections", get(stream::detections))
        .route("/stats", get(stats))
        .route("/metrics", get(super::metrics::metrics))
        .route("/zones", get(zones))
        .route("/objects", get(objects))
        .route("/config", get(config))
        // A net's text is small (its polygons may be in GeoJSON files): 16 MiB at most.
        .route(
            "/net",
            put(put_net).layer(DefaultBodyLimit::max(MAX_NET_BYTES)),
        );
    for &(path, mime, bytes) in ASSETS {
        guarded = guarded.route(
            path,
            get(move || async move { ([(header::CONTENT_TYPE, mime)], bytes) }),
        );
    }
    guarded = guarded.route("/", get(index));
    let guarded = guarded.layer(middleware::from_fn_with_state(app.clone(), authorize));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(guarded)
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(json!({"error": "no such endpoint: see docs/serve.md"})),
            )
        })
        .layer(DefaultBodyLimit::disable())
        .with_state(app)
}

/// `GET /`: the map's page, its files' addresses carrying the request's
/// `access_token` (a browser sends no header for a script or a style sheet).
async fn index(req: Request) -> Response {
    let token = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("access_token="))
    });
    // Percent-encoded as it came, less anything that could leave the attribute.
    let q = token
        .filter(|t| {
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"%-._~+".contains(&b))
        })
        .map(|t| format!("?access_token={t}"))
        .unwrap_or_default();
    let page = include_str!("assets/index.html").replace("{{q}}", &q);
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

/// Refuses a request without the bearer token, when there is one.
async fn authorize(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let Some(token) = &app.token else {
        return next.run(req).await;
    };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let query = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("access_token="))
    });
    let given = bearer.or(query);
    if given.is_some_and(|g| same(g.as_bytes(), token.as_bytes())) {
        next.run(req).await
    } else {
        app.shared.counters.refused_requests.fetch_add(1, Relaxed);
        Refused::Unauthorized.into_response()
    }
}

/// Compares in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The detector's event time, in seconds since the epoch (`None` before any event).
pub(crate) fn event_time(shared: &Shared) -> Option<f64> {
    let now = shared.counters.now_micros.load(Relaxed);
    (now != i64::MIN).then(|| now as f64 / 1e6)
}

/// How far event time is behind the wall clock, in seconds.
pub(crate) fn lag(shared: &Shared) -> Option<f64> {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    event_time(shared).map(|t| wall - t)
}

/// `GET /stats`.
async fn stats(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    let s = &app.shared;
    let c = &s.counters;
    let per_output: serde_json::Map<String, serde_json::Value> = s
        .outputs
        .iter()
        .zip(&c.per_output)
        .map(|(o, n)| (o.clone(), json!(n.load(Relaxed))))
        .collect();
    let sinks: Vec<_> = s
        .sinks
        .iter()
        .map(|(name, k)| {
            json!({
                "sink": name,
                "delivered": k.delivered.load(Relaxed),
                "dropped": k.dropped.load(Relaxed),
                "failures": k.failures.load(Relaxed),
                "next": k.next.load(Relaxed),
            })
        })
        .collect();
    Json(json!({
        "net": app.net_name,
        "read": c.read.load(Relaxed),
        "processed": c.processed.load(Relaxed),
        "rejected": c.rejected.load(Relaxed),
        "late": c.late.load(Relaxed),
        "held": c.held.load(Relaxed),
        "detections": c.detections.load(Relaxed),
        "per_output": per_output,
        "live_tokens": c.live_tokens.load(Relaxed),
        "evicted": c.evicted.load(Relaxed),
        "event_time": event_time(s),
        "lag_s": lag(s),
        "queued_batches": s.queued(),
        "retained": s.hub.retained(),
        "clients": s.hub.clients(),
        "requests": c.requests.load(Relaxed),
        "refused_requests": c.refused_requests.load(Relaxed),
        "sinks": sinks,
        "sources": *s.consumed(),
        "mqtt_redelivered": c.mqtt_redelivered.load(Relaxed),
        "checkpoint": {
            "written": c.checkpoints.load(Relaxed),
            "failures": c.checkpoint_failures.load(Relaxed),
            "sources": *s.checkpointed(),
        },
        "uptime_s": s.started.elapsed().as_secs_f64(),
    }))
}

/// `GET /zones`: asks the detector thread where the zones are now.
async fn zones(State(app): State<Arc<App>>) -> Response {
    let Some(tx) = app.shared.sender() else {
        return Refused::Stopped.into_response();
    };
    let (reply, answer) = oneshot::channel();
    if tx.send(ToEngine::Zones(reply)).await.is_err() {
        return Refused::Stopped.into_response();
    }
    match answer.await {
        Ok(zones) => (
            [(header::CONTENT_TYPE, "application/geo+json")],
            Json(zones),
        )
            .into_response(),
        Err(_) => Refused::Stopped.into_response(),
    }
}

/// The largest net `PUT /net` takes, in bytes.
const MAX_NET_BYTES: usize = 16 << 20;

/// `PUT /net`: the body, a net in RON as in a net file (GeoJSON paths relative to the
/// running net's file), replaces the running net between two events, keeping the
/// state of every component whose definition did not change. 200 with the reload's
/// report; 422 with the net's problems, or 409 when it cannot replace this one (another
/// space): the running net goes on unchanged.
async fn put_net(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Response {
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "the net is not UTF-8"})),
        )
            .into_response();
    };
    let file = app.net_name.clone();
    let loaded = tokio::task::spawn_blocking(move || Net::from_ron(&file, &text)).await;
    let net = match loaded {
        Ok(Ok(net)) => net,
        Ok(Err(e)) => {
            let body =
                json!({"error": format!("the net does not load; the running net goes on:\n{e}")});
            return (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response();
        }
        Err(_) => return Refused::Stopped.into_response(),
    };
    let Some(tx) = app.shared.sender() else {
        return Refused::Stopped.into_response();
    };
    let (reply, answer) = oneshot::channel();
    let msg = ToEngine::Reload {
        net: Box::new(net),
        reply,
    };
    if tx.send(msg).await.is_err() {
        return Refused::Stopped.into_response();
    }
    match answer.await {
        Ok(Ok(r)) => Json(json!({
            "kept": r.kept, "reset": r.reset, "added": r.added, "removed": r.removed,
            "unchanged": r.unchanged, "restarted": r.restarted,
        }))
        .into_response(),
        Ok(Err(why)) => (StatusCode::CONFLICT, Json(json!({"error": why}))).into_response(),
        Err(_) => Refused::Stopped.into_response(),
    }
}

/// `GET /objects`: each tracked object's latest position and trail, for the map.
async fn objects(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    let objects = app.shared.objects();
    let list: Vec<_> = objects
        .seen
        .iter()
        .map(
            |(name, t)| json!({"object": name, "type": &*t.kind, "time": t.time, "trail": t.trail}),
        )
        .collect();
    Json(json!({"key": objects.key, "objects": list}))
}

/// `GET /config`: what the map needs to know.
async fn config(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    Json(json!({
        "net": app.net_name,
        "space": match app.space { Space::Wgs84 => "wgs84", _ => "planar" },
        "tiles": app.tiles,
        "outputs": app.shared.outputs,
    }))
}
