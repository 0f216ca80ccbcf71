//! MQTT (3.1.1, QoS 1) with rumqttc: `--mqtt-in mqtt://HOST:PORT/TOPIC` subscribes
//! and sends each message's events (one JSON event, or JSON Lines) to the detector
//! thread; `--mqtt-out mqtt://HOST:PORT/TOPIC` publishes each detection as one JSON
//! message, from a bounded queue whose drops are counted. Both reconnect on their
//! own after the broker goes away. A message the broker sends MQTT in again (after
//! a reconnect, or a restart from a checkpoint) that it had consumed is only
//! acknowledged, on the connection it came over (`redelivery.rs`).

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, EventLoop, MqttOptions, Outgoing, Packet, Publish, QoS};
use rustc_hash::FxHashMap;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use xxhash_rust::xxh3::Xxh3;

use ccpn::io::read::{Format, Record, StreamParser};
use ccpn::Net;

use super::args::ServeArgs;
use super::engine::{From, Late, Shared, Sink, SinkCounters, ToEngine};
use super::error::ServeError;
use super::hub::Item;
use super::redelivery::MessageKey;

/// Events per message to the detector thread.
const BATCH: usize = 1024;
/// Batches sent and not answered yet before the reader waits for the oldest.
const IN_FLIGHT: usize = 8;
/// The source MQTT in consumes from (counted in messages).
const MQTT: &str = "mqtt";
/// Bad messages reported on stderr, at most (all are counted).
const REPORTED: u64 = 20;

/// An MQTT address: broker and topic.
struct Broker {
    host: String,
    port: u16,
    topic: String,
}

/// Parses `mqtt://HOST[:PORT]/TOPIC` (the topic may hold `+` and `#`).
fn parse(flag: &'static str, url: &str) -> Result<Broker, ServeError> {
    let bad = |why: &str| ServeError::Url {
        flag,
        url: url.to_owned(),
        why: why.to_owned(),
    };
    let rest = url
        .strip_prefix("mqtt://")
        .ok_or_else(|| bad("expected mqtt://HOST:PORT/TOPIC"))?;
    let (hostport, topic) = rest
        .split_once('/')
        .ok_or_else(|| bad("no topic: expected mqtt://HOST:PORT/TOPIC"))?;
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().map_err(|_| bad("bad port"))?),
        None => (hostport, 1883),
    };
    if host.is_empty() || topic.is_empty() {
        return Err(bad("empty host or topic"));
    }
    Ok(Broker {
        host: host.to_owned(),
        port,
        topic: topic.to_owned(),
    })
}

/// The client's options: messages of up to `max_message` bytes.
fn options(broker: &Broker, role: &str, max_message: usize) -> MqttOptions {
    let id = format!("ccpn-{role}-{}", std::process::id());
    let mut o = MqttOptions::new(id, broker.host.clone(), broker.port);
    o.set_keep_alive(Duration::from_secs(30));
    o.set_max_packet_size(max_message, max_message);
    o
}

/// The largest MQTT message taken or sent: `--max-body-bytes`, within 1 to 256 MiB.
fn max_message(args: &ServeArgs) -> usize {
    usize::try_from(args.max_body_bytes.clamp(1 << 20, 256 << 20)).unwrap_or(1 << 20)
}

/// Polls `events` once; on a connection error, calls `broken`, says so once and
/// waits before the next try (rumqttc reconnects on the next poll).
async fn poll(
    events: &mut EventLoop,
    name: &str,
    down: &mut bool,
    broken: impl FnOnce(),
) -> Option<Event> {
    match events.poll().await {
        Ok(e) => {
            if std::mem::replace(down, false) {
                eprintln!("ccpn-run serve: {name}: connected again");
            }
            Some(e)
        }
        Err(e) => {
            broken();
            if !std::mem::replace(down, true) {
                eprintln!("ccpn-run serve: warning: {name}: {e}; retrying every second");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            None
        }
    }
}

/// Starts `--mqtt-in`: one task polls the broker's connection (and only that, so
/// that no poll is ever cut short), another parses the messages, hands their events
/// to the detector thread in batches and acknowledges each message once its events
/// are through the detector, and with `--checkpoint` once a checkpoint holds them.
pub(crate) fn start_in(
    url: &str,
    args: &ServeArgs,
    net: &Net,
    shared: Arc<Shared>,
) -> Result<(), ServeError> {
    let broker = parse("--mqtt-in", url)?;
    let mut o = options(&broker, "in", max_message(args));
    if let Some(id) = &args.mqtt_client_id {
        o.set_client_id(id.clone());
        o.set_clean_session(false);
    }
    o.set_manual_acks(true);
    let (client, events) = AsyncClient::new(o, 1024);
    let parser = StreamParser::new(net.space())
        .with_known_names(net.names_read())
        .with_format(Format::JsonLines);
    let name = format!("--mqtt-in {url}");
    let (tx, rx) = mpsc::channel::<(u64, Publish)>(BATCH);
    let (up, conn) = watch::channel(None);
    let connection = Connection {
        events,
        subscriber: client.clone(),
        topic: broker.topic,
        name: name.clone(),
        shared: shared.clone(),
        up,
    };
    tokio::spawn(connection.run(tx));
    // Acknowledgements go through a task of their own: the reader never waits for
    // the connection's task, which may be waiting for the reader.
    let (acks, to_ack) = mpsc::unbounded_channel::<Vec<ToAck>>();
    tokio::spawn(acknowledge(client, to_ack, conn, shared.clone()));
    let again = std::mem::take(
        &mut *shared
            .consumed_before
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let reader = Messages {
        parser,
        durable: args.checkpoint.is_some(),
        shared,
        acks,
        name,
        max_line: args.max_line_bytes,
        no: 0,
        bad: 0,
        batch: Vec::with_capacity(BATCH),
        taken: Vec::new(),
        keys: Vec::new(),
        in_flight: VecDeque::new(),
        handed: 0,
        detected: VecDeque::new(),
        unsettled: FxHashMap::default(),
        again: again.into_iter().collect(),
    };
    tokio::spawn(reader.run(rx));
    Ok(())
}

/// MQTT in's connection to the broker, polled by a task of its own.
struct Connection {
    events: EventLoop,
    subscriber: AsyncClient,
    topic: String,
    name: String,
    shared: Arc<Shared>,
    /// While it is up, the connection's number (from 1, one more at each
    /// reconnect) and whether the broker had kept the session.
    up: watch::Sender<Option<(u64, bool)>>,
}

/// A message to acknowledge: on which connection, its key, and the message.
type ToAck = (u64, MessageKey, Publish);

impl Connection {
    /// Polls the connection, and hands each message, with the number of the
    /// connection it came over, to the reader.
    async fn run(mut self, tx: mpsc::Sender<(u64, Publish)>) {
        let mut down = false;
        let mut number = 0;
        loop {
            let broken = || {
                // At once, not after the pause: an acknowledgement queued now
                // would go out on the next connection (`acknowledge`).
                self.up.send_replace(None);
                self.shared.unacked().broken();
            };
            match poll(&mut self.events, &self.name, &mut down, broken).await {
                Some(Event::Outgoing(Outgoing::PubAck(pkid))) => {
                    self.shared.unacked().acked(pkid);
                }
                Some(Event::Incoming(Packet::ConnAck(c))) => {
                    number += 1;
                    self.connected(number, c.session_present);
                }
                Some(Event::Incoming(Packet::Publish(p))) => {
                    let sent = tx.send((number, p)).await;
                    if sent.is_err() {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Connection `number` is up, in the session as it was or not: subscribes
    /// (again).
    fn connected(&self, number: u64, kept: bool) {
        self.shared.unacked().reconnected();
        self.up.send_replace(Some((number, kept)));
        let subscribed = self
            .subscriber
            .try_subscribe(self.topic.clone(), QoS::AtLeastOnce);
        if let Err(e) = subscribed {
            eprintln!(
                "ccpn-run serve: warning: {}: cannot subscribe: {e}",
                self.name
            );
        }
    }
}

/// Acknowledges messages, each on the connection it came over (or last came
/// over again): waits while the connection is down, and does not acknowledge on a
/// new connection a message of one gone — in a session the broker kept, it sends
/// the message again, and that one is acknowledged; in one it did not, the message
/// is forgotten.
async fn acknowledge(
    client: AsyncClient,
    mut to_ack: mpsc::UnboundedReceiver<Vec<ToAck>>,
    mut conn: watch::Receiver<Option<(u64, bool)>>,
    shared: Arc<Shared>,
) {
    while let Some(messages) = to_ack.recv().await {
        for (number, key, p) in &messages {
            let Ok(Some((now, kept))) = conn.wait_for(Option::is_some).await.map(|n| *n) else {
                return;
            };
            if now == *number {
                // Gone only with the connection's task: nothing left to acknowledge to.
                if client.ack(p).await.is_err() {
                    return;
                }
            } else if !kept {
                shared.unacked().forget(*key);
            }
        }
    }
}

/// The messages' parser, the batch it fills, and the messages waiting to be
/// acknowledged.
struct Messages {
    parser: StreamParser,
    shared: Arc<Shared>,
    /// To the task that acknowledges messages, with the connection to do it on.
    acks: mpsc::UnboundedSender<Vec<ToAck>>,
    name: String,
    max_line: usize,
    /// Lines (events) read so far: their numbers in messages.
    no: u64,
    bad: u64,
    batch: Vec<(u64, ccpn::Event)>,
    /// The messages of `batch` (without their payloads), and their keys.
    taken: Vec<Publish>,
    keys: Vec<MessageKey>,
    /// Batches sent to the detector thread, not answered yet, with their messages.
    in_flight: VecDeque<(oneshot::Receiver<Vec<Late>>, Vec<Publish>)>,
    /// With `--checkpoint`: messages through the detector, waiting for a checkpoint,
    /// with the number of their batch (`handed` counts them).
    durable: bool,
    handed: u64,
    detected: VecDeque<(u64, Vec<Publish>)>,
    /// The messages taken and not acknowledged yet, by packet id (so at most one an
    /// id): their hash, and the connection they came over last (the broker may
    /// have sent them again).
    unsettled: FxHashMap<u16, (u64, u64)>,
    /// Messages a resumed server had consumed, by packet id, which the broker may
    /// send again (marked `dup`).
    again: FxHashMap<u16, u64>,
}

impl Messages {
    /// Takes what comes; hands it over whenever nothing more is waiting, then
    /// acknowledges what has gone through.
    async fn run(mut self, mut rx: mpsc::Receiver<(u64, Publish)>) {
        while let Some((conn, first)) = rx.recv().await {
            self.message(conn, first);
            while let Ok((conn, p)) = rx.try_recv() {
                self.message(conn, p);
                if self.batch.len() >= BATCH && !self.hand_over().await {
                    return;
                }
                self.ack_checkpointed();
            }
            if !self.hand_over().await {
                return;
            }
            // Nothing more is waiting: what was handed over is acknowledged once
            // detected (and with checkpoints, once in one).
            while !self.in_flight.is_empty() {
                self.settle_one().await;
            }
            if !self.checkpointed().await {
                return;
            }
        }
    }

    /// Hands the batch to the detector thread; `false` once it has stopped.
    async fn hand_over(&mut self) -> bool {
        if self.taken.is_empty() {
            return true;
        }
        let Some(tx) = self.shared.sender() else {
            return false;
        };
        let events = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let messages = std::mem::take(&mut self.taken);
        let (reply, answer) = oneshot::channel();
        let from = From {
            source: MQTT.into(),
            consumed: messages.len() as u64,
            messages: std::mem::take(&mut self.keys),
        };
        let sent = tx
            .send(ToEngine::Batch {
                events,
                from,
                reply: Some(reply),
            })
            .await;
        if sent.is_err() {
            return false;
        }
        self.handed += 1;
        self.in_flight.push_back((answer, messages));
        while self.in_flight.len() > IN_FLIGHT {
            self.settle_one().await;
        }
        true
    }

    /// Waits for the oldest batch in flight to be detected; acknowledges its
    /// messages, or with checkpoints keeps them for the next.
    async fn settle_one(&mut self) {
        let Some((answer, messages)) = self.in_flight.pop_front() else {
            return;
        };
        // Late events are counted by the detector thread; a batch it dropped at
        // shutdown is not acknowledged.
        if answer.await.is_err() {
            return;
        }
        if self.durable {
            self.detected
                .push_back((self.handed - self.in_flight.len() as u64, messages));
        } else {
            self.ack(messages);
        }
    }

    /// Acknowledges the messages that a checkpoint written holds.
    fn ack_checkpointed(&mut self) {
        let through = self.shared.mqtt_checkpointed.load(Relaxed);
        while self.detected.front().is_some_and(|(n, _)| *n <= through) {
            if let Some((_, messages)) = self.detected.pop_front() {
                self.ack(messages);
            }
        }
    }

    /// With checkpoints, asks for one if the messages detected are not all in one,
    /// and acknowledges them; while checkpoints fail, tries again every second.
    /// `false` once the detector has stopped.
    async fn checkpointed(&mut self) -> bool {
        self.ack_checkpointed();
        while !self.detected.is_empty() {
            let Some(tx) = self.shared.sender() else {
                return false;
            };
            let (reply, answer) = oneshot::channel();
            if tx.send(ToEngine::Checkpoint(reply)).await.is_err() {
                return false;
            }
            match answer.await {
                Ok(true) => self.ack_checkpointed(),
                Ok(false) => tokio::time::sleep(Duration::from_secs(1)).await,
                Err(_) => return false,
            }
        }
        true
    }

    /// Acknowledges `messages` (QoS 1) to the broker, each on the connection it
    /// came over last.
    fn ack(&mut self, messages: Vec<Publish>) {
        // At QoS 0 (published so), a message is not acknowledged.
        let on = messages
            .into_iter()
            .filter(|p| p.qos != QoS::AtMostOnce)
            .map(|p| {
                let (hash, conn) = self.unsettled.remove(&p.pkid).unwrap_or_default();
                (conn, (p.pkid, hash), p)
            })
            .collect();
        // Gone only with the connection's task: nothing left to acknowledge to.
        let _ = self.acks.send(on);
    }

    /// One message: one JSON event, or JSON Lines, which came over connection
    /// `conn`. One the broker sends again that was consumed already is only
    /// acknowledged, and counted.
    fn message(&mut self, conn: u64, mut p: Publish) {
        let mut hash = Xxh3::new();
        hash.update(p.topic.as_bytes());
        hash.update(&[0]);
        hash.update(&p.payload);
        let key = (p.pkid, hash.digest());
        let payload = std::mem::take(&mut p.payload);
        if p.dup && self.redelivered(conn, key, &p) {
            self.shared.counters.mqtt_redelivered.fetch_add(1, Relaxed);
            return;
        }
        if let Some(before) = self.again.remove(&p.pkid) {
            // Another message under that packet id: the one consumed before was
            // acknowledged, and the broker has reused its id.
            self.shared.unacked().forget((p.pkid, before));
        }
        self.events_of(&p.topic, &payload);
        if p.qos != QoS::AtMostOnce {
            // An id the broker reuses while its message is taken (that of a session
            // it forgot at the reconnect) is the new message's from now on.
            self.unsettled.insert(p.pkid, (key.1, conn));
        }
        // Every message's key, QoS 0 ones too (packet id 0, never sent again): the
        // detector thread counts the MQTT batches by them.
        self.taken.push(p);
        self.keys.push(key);
    }

    /// Whether message `p` (`key`), sent again over connection `conn`, was
    /// consumed already: one taken and not acknowledged yet is acknowledged with
    /// its first delivery, once that is through, on `conn`; one whose
    /// acknowledgement went (and may have been lost) is acknowledged now.
    fn redelivered(&mut self, conn: u64, key: MessageKey, p: &Publish) -> bool {
        if let Some((hash, on)) = self.unsettled.get_mut(&key.0) {
            if *hash == key.1 {
                *on = conn;
                return true;
            }
            return false;
        }
        let resumed = self.again.get(&key.0) == Some(&key.1);
        if !resumed && !self.shared.unacked().knows(key) {
            return false;
        }
        self.again.remove(&key.0);
        let _ = self.acks.send(vec![(conn, key, p.clone())]);
        true
    }

    /// The events of a message on `topic`, into the batch.
    fn events_of(&mut self, topic: &str, payload: &[u8]) {
        for line in payload.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let no = self.no + 1;
            let parsed = if line.len() > self.max_line {
                Err(format!(
                    "message line {no}: longer than {} bytes",
                    self.max_line
                ))
            } else {
                match self.parser.record(no, line) {
                    Record::Blank(_) | Record::Header(_) => continue,
                    Record::Bad(b) => Err(format!("message {b}")),
                    Record::Event(l) => l.parse().map_err(|b| format!("message {b}")),
                }
            };
            self.no = no;
            self.shared.counters.read.fetch_add(1, Relaxed);
            match parsed {
                Ok(ev) => self.batch.push((no, ev)),
                Err(why) => {
                    self.shared.counters.rejected.fetch_add(1, Relaxed);
                    self.bad += 1;
                    if self.bad <= REPORTED {
                        eprintln!(
                            "ccpn-run serve: {}: rejected {why} (topic {topic})",
                            self.name
                        );
                    }
                }
            }
        }
    }
}

/// Starts `--mqtt-out`: its sink for the detector thread, and its task.
pub(crate) fn start_out(url: &str, args: &ServeArgs) -> Result<(Sink, JoinHandle<()>), ServeError> {
    let broker = parse("--mqtt-out", url)?;
    if broker.topic.contains(['+', '#']) {
        return Err(ServeError::Url {
            flag: "--mqtt-out",
            url: url.to_owned(),
            why: "a topic to publish to cannot hold wildcards".into(),
        });
    }
    let (client, mut events) = AsyncClient::new(options(&broker, "out", max_message(args)), 256);
    let (tx, mut rx) =
        mpsc::channel::<Arc<Item>>(usize::try_from(args.sink_queue).unwrap_or(usize::MAX));
    let counters = Arc::new(SinkCounters::default());
    let name = format!("mqtt://{}:{}/{}", broker.host, broker.port, broker.topic);
    let acks = counters.clone();
    let loop_name = name.clone();
    // The seqs published and not acknowledged yet: a broker acknowledges in the
    // order it received them (MQTT 3.1.1, 4.6).
    let unacked = Arc::new(std::sync::Mutex::new(VecDeque::<u64>::new()));
    let published = unacked.clone();
    let driver = tokio::spawn(async move {
        let mut down = false;
        loop {
            let failed = || {
                acks.failures.fetch_add(1, Relaxed);
            };
            let event = poll(&mut events, &loop_name, &mut down, failed).await;
            if let Some(Event::Incoming(Packet::PubAck(_))) = event {
                acks.delivered.fetch_add(1, Relaxed);
                let seq = unacked
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .pop_front();
                if let Some(seq) = seq {
                    acks.next.store(seq + 1, Relaxed);
                }
            }
        }
    });
    let topic = broker.topic.clone();
    let task = tokio::spawn(async move {
        while let Some(item) = rx.recv().await {
            published
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push_back(item.seq);
            if client
                .publish(
                    topic.clone(),
                    QoS::AtLeastOnce,
                    false,
                    item.json.as_bytes().to_vec(),
                )
                .await
                .is_err()
            {
                break;
            }
        }
        // Give the event loop a moment to send what is queued and take the acks.
        tokio::time::sleep(Duration::from_millis(500)).await;
        driver.abort();
    });
    Ok((Sink { name, tx, counters }, task))
}
