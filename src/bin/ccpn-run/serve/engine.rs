//! The detector thread: takes batches of events from the ingest (HTTP, MQTT) through
//! one bounded channel, reorders them by time within `--max-delay` exactly as the
//! batch run's reader does, pushes them through the [`Detector`], and hands each
//! detection, written as the batch run writes it, to the hub and the sinks. It also
//! keeps the counters of `/stats` and `/metrics` and the objects the map shows.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use ccpn::io::reorder::Reorder;
use ccpn::io::write::JsonLines;
use ccpn::{Detection, Detector, DetectorOptions, Event, Net, Timestamp, Value};

use super::args::ServeArgs;
use super::error::ServeError;
use super::hub::{Hub, Item};

/// Batches waiting for the detector, at most: the ingest waits beyond.
const DEPTH: usize = 16;

/// What the ingest sends the detector thread.
pub(crate) enum ToEngine {
    /// Events with their line (or message) numbers; the answer lists the late ones.
    Batch {
        events: Vec<(u64, Event)>,
        reply: Option<oneshot::Sender<Vec<Late>>>,
    },
    /// The input has been quiet: move event time to the wall clock less `--max-delay`.
    Heartbeat,
    /// The net's zones as GeoJSON, moving zones where they are now.
    Zones(oneshot::Sender<serde_json::Value>),
    /// Go on with this net, keeping the state of what did not change
    /// ([`Detector::reload`]); the answer is the report, or why the net was refused.
    Reload {
        net: Box<Net>,
        reply: oneshot::Sender<Result<ccpn::ReloadReport, String>>,
    },
}

/// An event refused as late: its line and why.
pub(crate) struct Late {
    pub(crate) line: u64,
    pub(crate) reason: String,
}

/// A sink's queue and counters, as the detector thread sees it.
pub(crate) struct Sink {
    pub(crate) name: String,
    pub(crate) tx: mpsc::Sender<Arc<Item>>,
    pub(crate) counters: Arc<SinkCounters>,
}

/// A sink's counters.
#[derive(Default)]
pub(crate) struct SinkCounters {
    pub(crate) delivered: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) failures: AtomicU64,
}

/// The counters of `/stats` and `/metrics`.
#[derive(Default)]
pub(crate) struct Counters {
    /// Lines (or messages) received, blank lines and headers aside.
    pub(crate) read: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) late: AtomicU64,
    pub(crate) processed: AtomicU64,
    pub(crate) detections: AtomicU64,
    pub(crate) per_output: Vec<AtomicU64>,
    pub(crate) live_tokens: AtomicUsize,
    pub(crate) evicted: AtomicU64,
    /// Events held for reordering.
    pub(crate) held: AtomicUsize,
    /// The detector's event time (µs since the epoch), `i64::MIN` before any event.
    pub(crate) now_micros: AtomicI64,
    pub(crate) requests: AtomicU64,
    pub(crate) refused_requests: AtomicU64,
}

/// Where each tracked object was last seen, and its trail.
pub(crate) struct Objects {
    pub(crate) key: String,
    trail: usize,
    max: usize,
    pub(crate) seen: HashMap<String, Track>,
    tick: u64,
}

/// One object on the map.
pub(crate) struct Track {
    pub(crate) kind: Arc<str>,
    pub(crate) time: f64,
    pub(crate) trail: VecDeque<[f64; 2]>,
    last_seen: u64,
}

/// What the handlers share.
pub(crate) struct Shared {
    pub(crate) to_engine: Mutex<Option<mpsc::Sender<ToEngine>>>,
    pub(crate) hub: Hub,
    pub(crate) counters: Counters,
    pub(crate) outputs: Vec<String>,
    pub(crate) sinks: Vec<(String, Arc<SinkCounters>)>,
    pub(crate) objects: Mutex<Objects>,
    pub(crate) started: Instant,
}

impl Shared {
    /// The sender to the detector thread; `None` once shutting down.
    pub(crate) fn sender(&self) -> Option<mpsc::Sender<ToEngine>> {
        self.to_engine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Takes no more events: the detector thread finishes once the last sender goes.
    pub(crate) fn close_input(&self) {
        self.to_engine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }

    /// Batches waiting for the detector.
    pub(crate) fn queued(&self) -> usize {
        self.sender().map_or(0, |tx| DEPTH - tx.capacity())
    }

    pub(crate) fn objects(&self) -> MutexGuard<'_, Objects> {
        self.objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The running detector thread.
pub(crate) struct Engine {
    pub(crate) shared: Arc<Shared>,
    pub(crate) thread: JoinHandle<()>,
}

/// Starts the detector thread for `net`.
pub(crate) fn start(net: &Net, args: &ServeArgs, sinks: Vec<Sink>) -> Result<Engine, ServeError> {
    let outputs: Vec<String> = net.outputs().map(str::to_owned).collect();
    let options = DetectorOptions {
        max_tokens: args.max_tokens,
        max_sets: args.max_sets,
        zone_index: true,
    };
    let detector = Detector::with_options(net, options);
    let (tx, rx) = mpsc::channel(DEPTH);
    let key = args.object.clone().unwrap_or_else(|| object_key(net));
    let shared = Arc::new(Shared {
        to_engine: Mutex::new(Some(tx)),
        hub: Hub::new(
            usize::try_from(args.ring).unwrap_or(usize::MAX),
            usize::try_from(args.client_buffer).unwrap_or(usize::MAX),
        ),
        counters: Counters {
            per_output: outputs.iter().map(|_| AtomicU64::new(0)).collect(),
            now_micros: AtomicI64::new(i64::MIN),
            ..Counters::default()
        },
        sinks: sinks
            .iter()
            .map(|s| (s.name.clone(), s.counters.clone()))
            .collect(),
        outputs,
        objects: Mutex::new(Objects {
            key,
            trail: args.trail.max(1),
            max: args.max_objects.max(1),
            seen: HashMap::new(),
            tick: 0,
        }),
        started: Instant::now(),
    });
    let mut engine = Loop {
        detector,
        reorder: Reorder::new(args.max_delay),
        max_delay: args.max_delay,
        serial: 0,
        writer: JsonLines::new(net.space()),
        shared: shared.clone(),
        sinks,
        found: Vec::new(),
        quiet: true,
    };
    let thread = std::thread::Builder::new()
        .name("detector".into())
        .spawn(move || engine.run(rx))
        .map_err(ServeError::Thread)?;
    Ok(Engine { shared, thread })
}

/// Sends a heartbeat to the detector thread every `beat`.
pub(crate) fn start_heartbeat(shared: Arc<Shared>, beat: Duration) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(beat);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let Some(tx) = shared.sender() else { return };
            if tx.send(ToEngine::Heartbeat).await.is_err() {
                return;
            }
        }
    });
}

/// The attribute naming objects on the map, when `--object` does not say.
fn object_key(net: &Net) -> String {
    let read = net.attribute_names();
    [
        "track", "mmsi", "object", "vehicle", "icao24", "ship", "key",
    ]
    .into_iter()
    .find(|k| read.contains(k))
    .unwrap_or("type")
    .to_owned()
}

/// The detector thread's state.
struct Loop {
    detector: Detector,
    reorder: Reorder<Event>,
    max_delay: i64,
    /// Events offered so far: the reorder's tie-breaking line numbers.
    serial: u64,
    writer: JsonLines,
    shared: Arc<Shared>,
    sinks: Vec<Sink>,
    found: Vec<Detection>,
    /// No batch since the last heartbeat.
    quiet: bool,
}

impl Loop {
    fn run(&mut self, mut rx: mpsc::Receiver<ToEngine>) {
        while let Some(msg) = rx.blocking_recv() {
            match msg {
                ToEngine::Batch { events, reply } => {
                    self.quiet = false;
                    let late = self.batch(events);
                    if let Some(reply) = reply {
                        let _ = reply.send(late);
                    }
                }
                ToEngine::Heartbeat => {
                    if std::mem::replace(&mut self.quiet, true) {
                        self.heartbeat();
                    }
                }
                ToEngine::Zones(reply) => {
                    let _ = reply.send(self.detector.zones_geojson());
                }
                ToEngine::Reload { net, reply } => {
                    let result = self.detector.reload(&net).map_err(|e| e.to_string());
                    if let Ok(report) = &result {
                        eprintln!("ccpn-run: note: net reloaded: {report}");
                    }
                    let _ = reply.send(result);
                }
            }
        }
        // The end: what is held is released, and the detector finishes.
        while let Some((_, _, ev)) = self.reorder.pop_any() {
            self.push(ev);
        }
        let last = self.detector.finish();
        self.found.extend(last);
        self.publish();
    }

    /// Offers a batch to the reorder, pushes what it releases; returns the late events.
    fn batch(&mut self, events: Vec<(u64, Event)>) -> Vec<Late> {
        let mut late = Vec::new();
        let shared = self.shared.clone();
        let mut objects = shared.objects();
        for (line, ev) in events {
            self.serial += 1;
            objects.saw(&ev);
            match self.reorder.offer(ev.time, self.serial, ev) {
                Ok(Some((_, _, ev))) => self.push(ev),
                Ok(None) => {
                    while let Some((_, _, ev)) = self.reorder.pop_ready() {
                        self.push(ev);
                    }
                }
                Err(e) => late.push(Late {
                    line,
                    reason: e.to_string(),
                }),
            }
        }
        drop(objects);
        self.shared
            .counters
            .late
            .fetch_add(late.len() as u64, Relaxed);
        self.publish();
        late
    }

    /// Pushes one event through the detector.
    fn push(&mut self, ev: Event) {
        if self.detector.push_into(ev, &mut self.found).is_err() {
            self.shared.counters.late.fetch_add(1, Relaxed);
        }
    }

    /// Moves event time to the wall clock less `--max-delay`.
    fn heartbeat(&mut self) {
        let Some(now) = wall_clock() else { return };
        let to = now.saturating_add(-self.max_delay);
        if self.reorder.released_up_to().is_some_and(|r| to <= r) {
            return;
        }
        self.reorder.advance(to);
        while let Some((_, _, ev)) = self.reorder.pop_ready() {
            self.push(ev);
        }
        let found = self.detector.advance_to(to);
        self.found.extend(found);
        self.publish();
    }

    /// Writes the detections found, hands them to the hub and the sinks, and updates
    /// the counters.
    fn publish(&mut self) {
        let c = &self.shared.counters;
        let stats = self.detector.stats();
        c.processed.store(stats.processed, Relaxed);
        c.live_tokens.store(stats.live_tokens, Relaxed);
        c.evicted.store(stats.evicted, Relaxed);
        c.held.store(self.reorder.len(), Relaxed);
        c.now_micros.store(self.detector.now().micros(), Relaxed);
        if self.found.is_empty() {
            return;
        }
        let mut items = Vec::with_capacity(self.found.len());
        let mut line = Vec::with_capacity(256);
        for d in self.found.drain(..) {
            line.clear();
            self.writer.append(&mut line, &d);
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if let Some(i) = self.shared.outputs.iter().position(|o| **o == *d.event) {
                c.per_output[i].fetch_add(1, Relaxed);
            }
            items.push(Arc::new(Item {
                seq: d.seq,
                json: String::from_utf8_lossy(&line).into_owned(),
            }));
        }
        c.detections.fetch_add(items.len() as u64, Relaxed);
        self.shared.hub.publish(&items);
        for sink in &self.sinks {
            for item in &items {
                if sink.tx.try_send(item.clone()).is_err() {
                    let n = sink.counters.dropped.fetch_add(1, Relaxed);
                    if n == 0 || (n + 1).is_power_of_two() {
                        eprintln!(
                            "ccpn-run serve: warning: sink {} is not keeping up: {} detection(s) dropped so far (--sink-queue)",
                            sink.name,
                            n + 1
                        );
                    }
                }
            }
        }
    }
}

impl Objects {
    /// Notes where `ev`'s object is.
    fn saw(&mut self, ev: &Event) {
        let Some(at) = ev.location else { return };
        let name = if self.key == "type" {
            ev.kind.to_string()
        } else {
            match ev.attr(&self.key) {
                Some(Value::Str(s)) => s.to_string(),
                Some(Value::Num(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => return,
            }
        };
        self.tick += 1;
        if !self.seen.contains_key(&name) && self.seen.len() >= self.max {
            if let Some(oldest) = self
                .seen
                .iter()
                .min_by_key(|(_, t)| t.last_seen)
                .map(|(k, _)| k.clone())
            {
                self.seen.remove(&oldest);
            }
        }
        let track = self.seen.entry(name).or_insert_with(|| Track {
            kind: ev.kind.clone(),
            time: 0.0,
            trail: VecDeque::new(),
            last_seen: 0,
        });
        track.kind = ev.kind.clone();
        track.time = ev.time.micros() as f64 / 1e6;
        track.last_seen = self.tick;
        if track.trail.len() == self.trail {
            track.trail.pop_front();
        }
        track.trail.push_back([at.x, at.y]);
    }
}

/// The wall clock as an event time.
fn wall_clock() -> Option<Timestamp> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Timestamp::from_micros(i64::try_from(since.as_micros()).ok()?)
}
