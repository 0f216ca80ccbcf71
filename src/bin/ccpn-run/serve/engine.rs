//! The detector thread: takes batches of events from the ingest (HTTP, MQTT) through
//! one bounded channel, reorders them by time within `--max-delay` exactly as the
//! batch run's reader does, pushes them through the [`Detector`], and hands each
//! detection, written as the batch run writes it, to the hub and the sinks. It also
//! keeps the counters of `/stats` and `/metrics`, the events consumed per source and
//! the objects the map shows, and with `--checkpoint` writes the checkpoints
//! (`checkpoint.rs`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use tokio::sync::{mpsc, oneshot};

use ccpn::io::reorder::Reorder;
use ccpn::io::write::JsonLines;
use ccpn::{Detection, Detector, DetectorOptions, Event, Net, NetSource, Timestamp};

use super::args::ServeArgs;
use super::checkpoint::{backlog, Restored, Schedule};
use super::error::ServeError;
use super::hub::{Hub, Item};
use super::objects::{self, Objects};
use super::redelivery::{MessageKey, Unacked};

/// Batches waiting for the detector, at most: the ingest waits beyond.
const DEPTH: usize = 16;

/// What the ingest sends the detector thread.
pub(crate) enum ToEngine {
    /// Events with their line (or message) numbers, and what of their source they
    /// consume; the answer (once they are through the detector) lists the late ones.
    Batch {
        events: Vec<(u64, Event)>,
        from: From,
        reply: Option<oneshot::Sender<Vec<Late>>>,
    },
    /// Write a checkpoint if anything changed since the last one (`true` without
    /// `--checkpoint`); the answer says whether the state is in one now.
    Checkpoint(oneshot::Sender<bool>),
    /// Time has passed: write a checkpoint if one is due.
    Tick,
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

/// What a batch consumes of its source.
pub(crate) struct From {
    /// The source's name (`?source=`, `mqtt`, `events`).
    pub(crate) source: Arc<str>,
    /// Lines (or MQTT messages) consumed with this batch, rejected ones included.
    pub(crate) consumed: u64,
    /// The MQTT messages it holds, for recognising them if the broker sends them again.
    pub(crate) messages: Vec<MessageKey>,
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
    /// The seq after the last detection delivered (they are delivered in seq order).
    pub(crate) next: AtomicU64,
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
    pub(crate) checkpoints: AtomicU64,
    pub(crate) checkpoint_failures: AtomicU64,
    /// MQTT messages the broker sent again that had been consumed: acknowledged,
    /// not consumed again.
    pub(crate) mqtt_redelivered: AtomicU64,
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
    /// Events consumed per source.
    consumed: Mutex<BTreeMap<String, u64>>,
    /// The same, as of the last checkpoint written (`None`: none yet).
    checkpointed: Mutex<Option<BTreeMap<String, u64>>>,
    /// MQTT messages consumed whose acknowledgement may not have reached the
    /// broker, for MQTT in to recognise them when the broker sends them again after
    /// a reconnect; a checkpoint keeps them, for the resumed server.
    unacked: Mutex<Unacked>,
    /// Those of a resumed server's checkpoint, for MQTT in.
    pub(crate) consumed_before: Mutex<Vec<MessageKey>>,
    /// The MQTT batches consumed when the last checkpoint was written: MQTT in
    /// acknowledges their messages.
    pub(crate) mqtt_checkpointed: AtomicU64,
}

/// Locks `m`, whatever a panic left in it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
        lock(&self.objects)
    }

    /// Events consumed per source.
    pub(crate) fn consumed(&self) -> MutexGuard<'_, BTreeMap<String, u64>> {
        lock(&self.consumed)
    }

    /// Events consumed per source as of the last checkpoint written.
    pub(crate) fn checkpointed(&self) -> MutexGuard<'_, Option<BTreeMap<String, u64>>> {
        lock(&self.checkpointed)
    }

    /// MQTT messages consumed and not acknowledged yet.
    pub(crate) fn unacked(&self) -> MutexGuard<'_, Unacked> {
        lock(&self.unacked)
    }
}

/// The running detector thread; it returns its state when its input is closed and
/// it has taken all of it, for the last checkpoint.
pub(crate) struct Engine {
    pub(crate) shared: Arc<Shared>,
    pub(crate) thread: JoinHandle<Box<Loop>>,
}

/// Starts the detector thread for `net`, or for the server `restored` from a
/// checkpoint: its detector, counters, ring and sinks' backlogs as they were.
pub(crate) fn start(
    net: &Net,
    args: &ServeArgs,
    sinks: Vec<Sink>,
    restored: Option<Restored>,
) -> Result<Engine, ServeError> {
    let outputs: Vec<String> = net.outputs().map(str::to_owned).collect();
    let options = DetectorOptions {
        max_tokens: args.max_tokens,
        max_sets: args.max_sets,
        zone_index: true,
    };
    let (detector, saved) = match restored {
        Some(r) => (r.detector, Some(r.saved)),
        None => (Detector::with_options(net, options), None),
    };
    let (tx, rx) = mpsc::channel(DEPTH);
    let key = args.object.clone().unwrap_or_else(|| objects::key(net));
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
        objects: Mutex::new(Objects::new(key, args.trail, args.max_objects)),
        started: Instant::now(),
        consumed: Mutex::default(),
        checkpointed: Mutex::default(),
        unacked: Mutex::default(),
        consumed_before: Mutex::default(),
        mqtt_checkpointed: AtomicU64::new(0),
    });
    let mut engine = Box::new(Loop {
        detector,
        reorder: Reorder::new(args.max_delay),
        held: FxHashMap::default(),
        max_delay: args.max_delay,
        serial: 0,
        writer: JsonLines::new(net.space()),
        shared: shared.clone(),
        sinks,
        found: Vec::new(),
        quiet: true,
        source: net.source().clone(),
        schedule: Schedule::new(args),
        mqtt_batches: 0,
    });
    if let Some(saved) = saved {
        engine.restore(saved);
    }
    // Nothing to checkpoint yet: the state is the one resumed from, or the empty one.
    let now = engine.sink_positions();
    if let Some(s) = &mut engine.schedule {
        s.written(now);
    }
    let thread = std::thread::Builder::new()
        .name("detector".into())
        .spawn(move || {
            engine.run(rx);
            engine
        })
        .map_err(ServeError::Thread)?;
    Ok(Engine { shared, thread })
}

/// Sends the detector thread `what()` every `every` until it stops: the
/// heartbeat (`ToEngine::Heartbeat`), the checkpoints' clock (`ToEngine::Tick`).
pub(crate) fn start_clock(shared: Arc<Shared>, every: Duration, what: fn() -> ToEngine) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(every);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let Some(tx) = shared.sender() else { return };
            if tx.send(what()).await.is_err() {
                return;
            }
        }
    });
}

/// The detector thread's state.
pub(crate) struct Loop {
    pub(super) detector: Detector,
    /// The reorder buffer, of the events' serial numbers; the events it holds are
    /// in `held`, so that a checkpoint can keep them.
    pub(super) reorder: Reorder<()>,
    pub(super) held: FxHashMap<u64, Event>,
    max_delay: i64,
    /// Events offered so far: the reorder's tie-breaking line numbers.
    pub(super) serial: u64,
    writer: JsonLines,
    pub(super) shared: Arc<Shared>,
    sinks: Vec<Sink>,
    found: Vec<Detection>,
    /// No batch since the last heartbeat.
    quiet: bool,
    /// What the net in force was loaded from.
    pub(super) source: NetSource,
    /// `--checkpoint`'s schedule.
    pub(super) schedule: Option<Schedule>,
    /// MQTT batches consumed so far.
    pub(super) mqtt_batches: u64,
}

impl Loop {
    fn run(&mut self, mut rx: mpsc::Receiver<ToEngine>) {
        while let Some(msg) = rx.blocking_recv() {
            match msg {
                ToEngine::Batch {
                    events,
                    from,
                    reply,
                } => {
                    self.quiet = false;
                    let late = self.batch(events);
                    let due = self.consumed(from);
                    if let Some(reply) = reply {
                        let _ = reply.send(late);
                    }
                    if due {
                        self.checkpoint();
                    }
                }
                ToEngine::Checkpoint(reply) => {
                    let now = self.sink_positions();
                    let ok = match &self.schedule {
                        Some(s) if s.dirty(&now) => self.checkpoint(),
                        _ => true,
                    };
                    // MQTT in acknowledges what it has consumed once this answer is yes.
                    let _ = reply.send(ok);
                }
                ToEngine::Tick => {
                    let now = self.sink_positions();
                    if self.schedule.as_ref().is_some_and(|s| s.due(&now)) {
                        self.checkpoint();
                    }
                }
                ToEngine::Heartbeat => {
                    if std::mem::replace(&mut self.quiet, true) {
                        self.heartbeat();
                        if let Some(s) = &mut self.schedule {
                            s.changed = true;
                        }
                    }
                }
                ToEngine::Zones(reply) => {
                    let _ = reply.send(self.detector.zones_geojson());
                }
                ToEngine::Reload { net, reply } => {
                    let result = self.detector.reload(&net).map_err(|e| e.to_string());
                    if let Ok(report) = &result {
                        eprintln!("ccpn-run: note: net reloaded: {report}");
                        self.source = net.source().clone();
                        if let Some(s) = &mut self.schedule {
                            s.changed = true;
                        }
                    }
                    let _ = reply.send(result);
                }
            }
        }
        if self.schedule.is_none() {
            // The end: what is held is released, and the detector finishes. With
            // checkpoints, both wait for the resumed server instead.
            while let Some((_, serial, ())) = self.reorder.pop_any() {
                self.push_held(serial);
            }
            let last = self.detector.finish();
            self.found.extend(last);
            self.publish();
        }
        // The sinks' queues close: they deliver what they hold, and end.
        self.sinks.clear();
    }

    /// Counts what a batch consumed of its source; whether a checkpoint is due.
    fn consumed(&mut self, from: From) -> bool {
        if from.consumed > 0 {
            let mut consumed = self.shared.consumed();
            match consumed.get_mut(&*from.source) {
                Some(n) => *n += from.consumed,
                None => {
                    consumed.insert(from.source.to_string(), from.consumed);
                }
            }
        }
        let mqtt = !from.messages.is_empty();
        if mqtt {
            self.shared.unacked().consumed(from.messages);
        }
        let Some(schedule) = &mut self.schedule else {
            return false;
        };
        if mqtt {
            self.mqtt_batches += 1;
        }
        schedule.consumed(from.consumed)
    }

    /// Puts the state of a checkpointed server back (before the thread starts).
    fn restore(&mut self, mut saved: super::checkpoint::Saved) {
        self.reorder = Reorder::resumed(self.max_delay, saved.newest, saved.released);
        for (serial, ev) in std::mem::take(&mut saved.held) {
            // Held once, it is not late now (the watermarks are as they were).
            if self.reorder.push(ev.time, serial, ()).is_ok() {
                self.held.insert(serial, ev);
            }
        }
        self.serial = saved.serial;
        let c = &self.shared.counters;
        c.read.store(saved.read, Relaxed);
        c.rejected.store(saved.rejected, Relaxed);
        c.late.store(saved.late, Relaxed);
        for (n, v) in c.per_output.iter().zip(&saved.per_output) {
            n.store(*v, Relaxed);
        }
        c.detections
            .store(self.detector.stats().detections, Relaxed);
        *self.shared.consumed() = saved.sources.clone();
        let items: Vec<Arc<Item>> = saved
            .detections
            .iter()
            .map(|(seq, json)| {
                Arc::new(Item {
                    seq: *seq,
                    json: json.clone(),
                })
            })
            .collect();
        self.shared.hub.restore(&items);
        for sink in &self.sinks {
            let (next, items) = backlog(&saved, &sink.name);
            sink.counters.next.store(next, Relaxed);
            for item in items {
                if sink.tx.try_send(item).is_err() {
                    sink.counters.dropped.fetch_add(1, Relaxed);
                }
            }
        }
        self.shared.unacked().resumed(&saved.unacked);
        *lock(&self.shared.consumed_before) = saved.unacked;
        self.publish();
        *self.shared.checkpointed() = Some(saved.sources);
    }

    /// Offers a batch to the reorder, pushes what it releases; returns the late events.
    fn batch(&mut self, events: Vec<(u64, Event)>) -> Vec<Late> {
        let mut late = Vec::new();
        let shared = self.shared.clone();
        let mut objects = shared.objects();
        for (line, ev) in events {
            self.serial += 1;
            objects.saw(&ev);
            match self.reorder.offer(ev.time, self.serial, ()) {
                Ok(Some(_)) => self.push(ev),
                Ok(None) => {
                    self.held.insert(self.serial, ev);
                    while let Some((_, serial, ())) = self.reorder.pop_ready() {
                        self.push_held(serial);
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

    /// Pushes the held event `serial` through the detector.
    fn push_held(&mut self, serial: u64) {
        if let Some(ev) = self.held.remove(&serial) {
            self.push(ev);
        }
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
        while let Some((_, serial, ())) = self.reorder.pop_ready() {
            self.push_held(serial);
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

/// The wall clock as an event time.
fn wall_clock() -> Option<Timestamp> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Timestamp::from_micros(i64::try_from(since.as_micros()).ok()?)
}
