//! `POST /events`: a body of JSON Lines or CSV, read as it streams in, its lines
//! split with a bound on their length and the body's, parsed with the library's
//! [`StreamParser`] (the batch run's rules), and sent to the detector thread in
//! batches. The answer counts what was read, processed, rejected and late, and lists
//! the first rejected and late lines with their reasons. `?source=NAME` names the
//! sender whose lines the server counts as consumed (docs/serve.md, *Checkpoints*).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};

use ccpn::io::read::{Format, LineError, Record, StreamParser};
use ccpn::{Event, Net, Timestamp};

use super::engine::{From, Late, Shared, ToEngine};
use super::error::Refused;
use super::http::App;

/// Events per message to the detector thread.
const BATCH: usize = 1024;
/// Batches sent and not answered yet, per request, before the request waits.
const IN_FLIGHT: usize = 8;
/// Sources counted, at most: a request naming one more is refused.
const MAX_SOURCES: usize = 10_000;
/// The source of `POST /events` without `?source=`.
const HTTP: &str = "http";

/// `?format=`, `?source=`.
#[derive(Deserialize)]
pub(crate) struct IngestQuery {
    format: Option<String>,
    source: Option<String>,
}

/// One line refused, in the answer.
#[derive(serde::Serialize)]
struct ErrorLine {
    line: u64,
    kind: &'static str,
    reason: String,
}

/// The answer to `POST /events`.
#[derive(Default, serde::Serialize)]
pub(crate) struct Answer {
    /// Lines holding an event or meant to (blank lines and a CSV header aside).
    pub(crate) read: u64,
    /// Events handed to the detector (held for reordering up to `--max-delay`).
    pub(crate) processed: u64,
    pub(crate) rejected: u64,
    pub(crate) late: u64,
    /// The first rejected and late lines (up to `--max-errors-listed`).
    errors: Vec<ErrorLine>,
    /// Whether more were refused than are listed.
    errors_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Parses lines from one source (a request body, an MQTT subscription) and sends
/// their events to the detector thread in batches.
pub(crate) struct Ingest {
    parser: StreamParser,
    shared: Arc<Shared>,
    tx: mpsc::Sender<ToEngine>,
    batch: Vec<(u64, Event)>,
    pending: std::collections::VecDeque<oneshot::Receiver<Vec<Late>>>,
    answer: Answer,
    max_listed: usize,
    /// What of `answer.read` and `answer.rejected` the server's counters have.
    counted: (u64, u64),
    /// The source the lines are consumed from.
    source: Arc<str>,
    /// What of `answer.read` was sent to the detector thread as consumed.
    sent: u64,
    /// Lines still to skip: consumed by the server this one resumed.
    skip: u64,
}

impl Ingest {
    /// An ingest for a net's events in `format` (`None`: learnt from the first line).
    pub(crate) fn new(
        net_space: ccpn::Space,
        names: &[String],
        format: Option<Format>,
        source: &str,
        shared: Arc<Shared>,
        max_listed: usize,
    ) -> Result<Ingest, Refused> {
        let tx = shared.sender().ok_or(Refused::Stopped)?;
        let mut parser =
            StreamParser::new(net_space).with_known_names(names.iter().map(String::as_str));
        if let Some(f) = format {
            parser = parser.with_format(f);
        }
        Ok(Ingest {
            parser,
            shared,
            tx,
            batch: Vec::with_capacity(BATCH),
            pending: std::collections::VecDeque::new(),
            answer: Answer::default(),
            max_listed,
            counted: (0, 0),
            source: source.into(),
            sent: 0,
            skip: 0,
        })
    }

    /// This ingest skipping the first `n` lines holding events (or meant to): those
    /// a resumed server had consumed.
    pub(crate) fn skipping(mut self, n: u64) -> Ingest {
        self.skip = n;
        self
    }

    /// Takes line `no`, `line` (without its newline); the event's time, if it is one.
    pub(crate) async fn line(
        &mut self,
        no: u64,
        line: &[u8],
    ) -> Result<Option<Timestamp>, Refused> {
        let skip = self.skip > 0;
        let event = match self.parser.record(no, line) {
            Record::Blank(_) | Record::Header(_) => return Ok(None),
            _ if skip => {
                self.skip -= 1;
                return Ok(None);
            }
            Record::Bad(bad) => Err(bad),
            Record::Event(line) => line.parse(),
        };
        self.answer.read += 1;
        match event {
            Ok(ev) => {
                let time = ev.time;
                self.batch.push((no, ev));
                if self.batch.len() >= BATCH {
                    self.flush().await?;
                }
                Ok(Some(time))
            }
            Err(bad) => {
                self.refused(bad.line, "rejected", bad.error.to_string());
                Ok(None)
            }
        }
    }

    /// Adds what was read and rejected since the last time to the server's counters.
    fn count(&mut self) {
        let c = &self.shared.counters;
        c.read.fetch_add(self.answer.read - self.counted.0, Relaxed);
        c.rejected
            .fetch_add(self.answer.rejected - self.counted.1, Relaxed);
        self.counted = (self.answer.read, self.answer.rejected);
    }

    /// A line too long to take.
    pub(crate) fn too_long(&mut self, no: u64, max: usize) {
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        self.answer.read += 1;
        self.refused(no, "rejected", LineError::TooLong { max }.to_string());
    }

    fn refused(&mut self, line: u64, kind: &'static str, reason: String) {
        match kind {
            "late" => self.answer.late += 1,
            _ => self.answer.rejected += 1,
        }
        if self.answer.errors.len() < self.max_listed {
            self.answer.errors.push(ErrorLine { line, kind, reason });
        } else {
            self.answer.errors_truncated = true;
        }
    }

    /// Sends the events read so far to the detector thread.
    pub(crate) async fn flush(&mut self) -> Result<(), Refused> {
        self.count();
        let consumed = self.answer.read - self.sent;
        if self.batch.is_empty() && consumed == 0 {
            return Ok(());
        }
        let events = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(ToEngine::Batch {
                events,
                from: From {
                    source: self.source.clone(),
                    consumed,
                    messages: Vec::new(),
                },
                reply: Some(reply),
            })
            .await
            .map_err(|_| Refused::Stopped)?;
        self.sent += consumed;
        self.pending.push_back(answer);
        while self.pending.len() > IN_FLIGHT {
            self.settle_one().await;
        }
        Ok(())
    }

    /// Waits for the oldest unanswered batch.
    async fn settle_one(&mut self) {
        if let Some(answer) = self.pending.pop_front() {
            for late in answer.await.unwrap_or_default() {
                self.refused(late.line, "late", late.reason);
            }
        }
    }

    /// Sends what is left, waits until the detector thread has taken it all, and
    /// returns the answer (its counts also added to the server's).
    pub(crate) async fn finish(mut self) -> Answer {
        let flushed = self.flush().await;
        while !self.pending.is_empty() {
            self.settle_one().await;
        }
        self.count();
        let mut answer = self.answer;
        answer.processed = answer.read.saturating_sub(answer.rejected + answer.late);
        if let Err(e) = flushed {
            answer.error = Some(e.to_string());
        }
        answer
    }
}

/// The format a request asks for, from `?format=` or its content type.
fn format_of(query: &IngestQuery, headers: &HeaderMap) -> Result<Option<Format>, Refused> {
    if let Some(f) = &query.format {
        return match f.as_str() {
            "jsonl" | "ndjson" | "json" => Ok(Some(Format::JsonLines)),
            "csv" => Ok(Some(Format::Csv)),
            "auto" => Ok(None),
            other => Err(Refused::BadRequest(format!(
                "format={other:?}: expected jsonl, csv or auto"
            ))),
        };
    }
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return Ok(None);
    };
    let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
    let mime = ct.split(';').next().unwrap_or("").trim();
    match mime {
        "text/csv" | "application/csv" => Ok(Some(Format::Csv)),
        "application/x-ndjson"
        | "application/jsonl"
        | "application/json-lines"
        | "application/json"
        | "application/x-jsonlines" => Ok(Some(Format::JsonLines)),
        // curl's `--data-binary` says form-urlencoded: the body is taken as it is.
        "" | "text/plain" | "application/octet-stream" | "application/x-www-form-urlencoded" => {
            Ok(None)
        }
        _ => Err(Refused::ContentType(mime.to_owned())),
    }
}

/// The source a request names with `?source=`, checked: 1 to 64 letters, digits
/// and `-_.:`, and at most [`MAX_SOURCES`] different ones.
fn source_of<'q>(query: &'q IngestQuery, shared: &Shared) -> Result<&'q str, Refused> {
    let Some(s) = query.source.as_deref() else {
        return Ok(HTTP);
    };
    let fine = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
    if s.is_empty() || s.len() > 64 || !s.chars().all(fine) {
        return Err(Refused::BadRequest(format!(
            "source={s:?}: expected 1 to 64 letters, digits and -_.:"
        )));
    }
    let known = shared.consumed();
    if known.len() >= MAX_SOURCES && !known.contains_key(s) {
        return Err(Refused::BadRequest(format!(
            "source={s:?}: already {MAX_SOURCES} sources are counted"
        )));
    }
    Ok(s)
}

/// `POST /events`.
pub(crate) async fn post_events(
    State(app): State<Arc<App>>,
    query: Result<Query<IngestQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let counters = &app.shared.counters;
    counters.requests.fetch_add(1, Relaxed);
    let refuse = |r: Refused| {
        counters.refused_requests.fetch_add(1, Relaxed);
        r.into_response()
    };
    let query = match query {
        Ok(Query(q)) => q,
        Err(e) => return refuse(Refused::BadRequest(e.body_text())),
    };
    let format = match format_of(&query, &headers) {
        Ok(f) => f,
        Err(r) => return refuse(r),
    };
    let source = match source_of(&query, &app.shared) {
        Ok(s) => s,
        Err(r) => return refuse(r),
    };
    let ingest = match Ingest::new(
        app.space,
        &app.names,
        format,
        source,
        app.shared.clone(),
        app.max_errors_listed,
    ) {
        Ok(i) => i,
        Err(r) => return refuse(r),
    };
    let (answer, status) = read_body(ingest, body, app.max_body_bytes, app.max_line_bytes).await;
    if status != StatusCode::OK {
        counters.refused_requests.fetch_add(1, Relaxed);
    }
    (status, axum::Json(answer)).into_response()
}

/// Reads the body line by line into `ingest`; the answer and its status.
async fn read_body(
    mut ingest: Ingest,
    body: Body,
    max_body: u64,
    max_line: usize,
) -> (Answer, StatusCode) {
    let mut stream = body.into_data_stream();
    let mut line: Vec<u8> = Vec::new();
    let mut skipping = false;
    let mut no = 0u64;
    let mut total = 0u64;
    let mut failed: Option<Refused> = None;
    loop {
        let next = match stream.next().now_or_never() {
            Some(next) => next,
            None => {
                // Nothing more yet: what is read is detected before waiting.
                if let Err(e) = ingest.flush().await {
                    failed = Some(e);
                    break;
                }
                stream.next().await
            }
        };
        let chunk = match next {
            None => break,
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => {
                failed = Some(Refused::Body(e.to_string()));
                break;
            }
        };
        total += chunk.len() as u64;
        if total > max_body {
            failed = Some(Refused::TooLarge(max_body));
            break;
        }
        let mut rest = &chunk[..];
        while !rest.is_empty() {
            let (piece, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], Some(i + 1)),
                None => (rest, None),
            };
            if !skipping {
                if line.len() + piece.len() > max_line {
                    no += 1;
                    ingest.too_long(no, max_line);
                    line.clear();
                    skipping = true;
                } else {
                    line.extend_from_slice(piece);
                }
            }
            match ended {
                Some(i) => {
                    if skipping {
                        skipping = false;
                    } else {
                        no += 1;
                        let r = ingest.line(no, &line).await;
                        line.clear();
                        if let Err(e) = r {
                            failed = Some(e);
                            break;
                        }
                    }
                    rest = &rest[i..];
                }
                None => rest = &[],
            }
        }
        if failed.is_some() {
            break;
        }
    }
    if failed.is_none() && !skipping && !line.is_empty() {
        no += 1;
        if let Err(e) = ingest.line(no, &line).await {
            failed = Some(e);
        }
    }
    let mut answer = ingest.finish().await;
    match failed {
        None => (answer, StatusCode::OK),
        Some(e) => {
            let status = e.status();
            answer.error = Some(e.to_string());
            (answer, status)
        }
    }
}

/// The attribute names a net reads, for the parser to share.
pub(crate) fn names(net: &Net) -> Vec<String> {
    net.names_read().into_iter().map(str::to_owned).collect()
}
