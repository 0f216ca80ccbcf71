//! `GET /detections`: the detections as Server-Sent Events, or over a WebSocket when
//! the request asks for an upgrade. `?since=SEQ` (or SSE's `Last-Event-ID`) first
//! replays the retained detections from that seq on. A client that falls more than
//! `--client-buffer` detections behind is told `lagged` (with the seq to reconnect
//! from) and disconnected, so a slow client never holds up detection or memory.

use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use tokio::sync::broadcast::error::RecvError;

use super::error::Refused;
use super::http::App;
use super::hub::{Item, Subscription};

/// Longest wait for a WebSocket client to take one message before it is dropped.
const WS_SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// What a client is sent, in order.
enum Next {
    Detection(Arc<Item>),
    /// Detections asked for that the ring no longer holds.
    Gap {
        missed: u64,
        from: u64,
    },
    /// The client fell behind: reconnect from `since`.
    Lagged {
        missed: u64,
        since: u64,
    },
}

/// A client's position: its replay, then the live stream.
struct Cursor {
    sub: Subscription,
    replay: std::vec::IntoIter<Arc<Item>>,
    gap: Option<(u64, u64)>,
    /// The next seq this client expects.
    next: u64,
    done: bool,
}

impl Cursor {
    fn new(mut sub: Subscription, since: Option<u64>) -> Cursor {
        let replay = std::mem::take(&mut sub.replay).into_iter();
        let gap = (sub.missed > 0).then(|| (sub.missed, since.unwrap_or(0)));
        let next = since.unwrap_or(sub.next);
        Cursor {
            sub,
            replay,
            gap,
            next,
            done: false,
        }
    }

    /// What to send next; `None` when the stream is over.
    async fn next(&mut self) -> Option<Next> {
        if self.done {
            return None;
        }
        if let Some((missed, from)) = self.gap.take() {
            self.next = self.next.max(from.saturating_add(missed));
            return Some(Next::Gap { missed, from });
        }
        if let Some(item) = self.replay.next() {
            self.next = item.seq + 1;
            return Some(Next::Detection(item));
        }
        loop {
            match self.sub.live.recv().await {
                // Already replayed.
                Ok(item) if item.seq < self.next => continue,
                Ok(item) => {
                    self.next = item.seq + 1;
                    return Some(Next::Detection(item));
                }
                Err(RecvError::Lagged(missed)) => {
                    self.done = true;
                    return Some(Next::Lagged {
                        missed,
                        since: self.next,
                    });
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// `since` from the query, or SSE's `Last-Event-ID` (the last seq seen).
fn since_of(req: &Request) -> Result<Option<u64>, Refused> {
    if let Some(q) = req.uri().query() {
        for pair in q.split('&') {
            if let Some(v) = pair.strip_prefix("since=") {
                return v.parse().map(Some).map_err(|_| {
                    Refused::BadRequest(format!(
                        "since={v:?}: expected the seq of the first detection wanted (0, 1, …)"
                    ))
                });
            }
        }
    }
    Ok(req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|last| last.saturating_add(1)))
}

/// `GET /detections`.
pub(crate) async fn detections(State(app): State<Arc<App>>, req: Request) -> Response {
    let since = match since_of(&req) {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    let upgrade = req
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let next_seq = app.shared.counters.detections.load(Relaxed);
    if upgrade {
        let (mut parts, _) = req.into_parts();
        let ws = match WebSocketUpgrade::from_request_parts(&mut parts, &app).await {
            Ok(ws) => ws,
            Err(e) => return e.into_response(),
        };
        let sub = app.shared.hub.subscribe(since, next_seq);
        return ws.on_upgrade(move |socket| websocket(socket, Cursor::new(sub, since)));
    }
    let sub = app.shared.hub.subscribe(since, next_seq);
    Sse::new(sse(Cursor::new(sub, since)))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The SSE stream: `detection` events (`id:` their seq), `gap` and `lagged` notices.
fn sse(cursor: Cursor) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    stream::unfold(cursor, |mut cursor| async move {
        let event = match cursor.next().await? {
            Next::Detection(item) => SseEvent::default()
                .event("detection")
                .id(item.seq.to_string())
                .data(&item.json),
            Next::Gap { missed, from } => SseEvent::default()
                .event("gap")
                .data(format!("{{\"missed\":{missed},\"from\":{from}}}")),
            Next::Lagged { missed, since } => SseEvent::default()
                .event("lagged")
                .data(format!(
                    "{{\"missed\":{missed},\"since\":{since},\"reconnect\":\"/detections?since={since}\"}}"
                )),
        };
        Some((Ok(event), cursor))
    })
}

/// The WebSocket: one text message per detection, notices as
/// `{"notice":"gap"|"lagged",…}`; a lagged client's socket is closed (code 4000).
async fn websocket(mut socket: WebSocket, mut cursor: Cursor) {
    loop {
        let next = tokio::select! {
            next = cursor.next() => next,
            incoming = socket.recv() => match incoming {
                // The client closed, or went away.
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => continue,
            },
        };
        let Some(next) = next else { break };
        let (text, last) = match next {
            Next::Detection(item) => (item.json.clone(), false),
            Next::Gap { missed, from } => (
                format!("{{\"notice\":\"gap\",\"missed\":{missed},\"from\":{from}}}"),
                false,
            ),
            Next::Lagged { missed, since } => (
                format!("{{\"notice\":\"lagged\",\"missed\":{missed},\"since\":{since}}}"),
                true,
            ),
        };
        let sent = tokio::time::timeout(WS_SEND_TIMEOUT, socket.send(Message::Text(text.into())));
        if !matches!(sent.await, Ok(Ok(()))) {
            return;
        }
        if last {
            let close = CloseFrame {
                code: 4000,
                reason: "lagged: reconnect with ?since=".into(),
            };
            let _ = tokio::time::timeout(WS_SEND_TIMEOUT, socket.send(Message::Close(Some(close))))
                .await;
            return;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}
