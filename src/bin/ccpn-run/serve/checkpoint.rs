//! `serve --checkpoint FILE` and `--resume FILE`: the server's state in one file,
//! written atomically (`crate::checkpoint`'s layout and writing, under the magic
//! `CCPNSERV`) every `--checkpoint-every` events consumed, `--checkpoint-interval`
//! after the first event consumed since the last one, when MQTT in waits to
//! acknowledge, and at shutdown; and the server resumed from it.
//!
//! A checkpoint holds the detector's snapshot and the net it is of, the reorder
//! buffer (its watermarks and the events it holds), the counters, the events
//! consumed per source, the retained detections (the ring), how far each sink
//! delivered, and the MQTT messages consumed but perhaps not acknowledged yet
//! (`redelivery.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use ccpn::{Detector, Event, Net, NetSource, Timestamp};

use super::args::ServeArgs;
use super::engine::Loop;
use super::error::ServeError;
use super::hub::Item;
use super::redelivery::MessageKey;
use crate::checkpoint::{read_sealed, seal, write_atomically, SERVE_MAGIC};

/// Bumped whenever the layout of [`Saved`] changes.
const VERSION: u32 = 1;

/// What a server checkpoint holds.
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The net in force (the last one put, if any), which the snapshot is of.
    pub(crate) net: NetSource,
    /// [`Detector::snapshot`].
    pub(crate) detector: Vec<u8>,
    /// The reorder buffer: the newest time seen, the last released, the events
    /// offered so far (the tie-breaking numbers), and the events held with theirs.
    pub(crate) newest: Option<Timestamp>,
    pub(crate) released: Option<Timestamp>,
    pub(crate) serial: u64,
    pub(crate) held: Vec<(u64, Event)>,
    pub(crate) read: u64,
    pub(crate) rejected: u64,
    pub(crate) late: u64,
    pub(crate) per_output: Vec<u64>,
    /// Events consumed per source (`?source=` of `POST /events`, `mqtt`, `events`).
    pub(crate) sources: BTreeMap<String, u64>,
    /// Per sink, the seq after the last detection it delivered.
    pub(crate) sinks: BTreeMap<String, u64>,
    /// The retained detections, oldest first.
    pub(crate) detections: Vec<(u64, String)>,
    /// MQTT messages consumed whose acknowledgement may not have reached the broker.
    pub(crate) unacked: Vec<MessageKey>,
}

/// A server restored from a checkpoint, for `engine::start`.
pub(crate) struct Restored {
    pub(crate) detector: Detector,
    pub(crate) saved: Saved,
}

/// When to write checkpoints, and how far the last one got.
pub(crate) struct Schedule {
    pub(crate) path: PathBuf,
    every: u64,
    interval: Duration,
    /// Events consumed since the last checkpoint.
    pub(crate) since: u64,
    /// Something else changed since (a heartbeat, a reload, a sink delivered).
    pub(crate) changed: bool,
    first_since: Option<Instant>,
    /// The sinks' positions in the last checkpoint.
    sinks_at: Vec<u64>,
    /// The last checkpoint could not be written.
    failed: bool,
}

impl Schedule {
    /// `--checkpoint`'s schedule, if asked for.
    pub(crate) fn new(args: &ServeArgs) -> Option<Schedule> {
        Some(Schedule {
            path: args.checkpoint.clone()?,
            every: args.checkpoint_every.max(1),
            interval: args.checkpoint_interval(),
            since: 0,
            changed: false,
            first_since: None,
            sinks_at: Vec::new(),
            failed: false,
        })
    }

    /// Notes `n` events consumed; whether a checkpoint is due for the count.
    pub(crate) fn consumed(&mut self, n: u64) -> bool {
        if n > 0 {
            self.since += n;
            self.first_since.get_or_insert_with(Instant::now);
        }
        self.since >= self.every
    }

    /// Whether a checkpoint is due for the time (at a tick).
    pub(crate) fn due(&self, sinks_now: &[u64]) -> bool {
        let waited = self
            .first_since
            .is_some_and(|t| t.elapsed() >= self.interval);
        waited || (self.since == 0 && self.dirty(sinks_now))
    }

    /// Whether anything changed since the last checkpoint written.
    pub(crate) fn dirty(&self, sinks_now: &[u64]) -> bool {
        self.since > 0 || self.changed || self.failed || sinks_now != self.sinks_at
    }

    /// Notes a checkpoint written with the sinks at `sinks_now`.
    pub(crate) fn written(&mut self, sinks_now: Vec<u64>) {
        self.failed = false;
        self.since = 0;
        self.changed = false;
        self.first_since = None;
        self.sinks_at = sinks_now;
    }
}

/// Reads `--resume`'s checkpoint and restores the detector: `None` without the flag
/// or the file (said on stderr). With a net changed since, the net file's is put in
/// force as `PUT /net` would.
pub(crate) fn resume(args: &ServeArgs, net: &Net) -> Result<Option<Restored>, ServeError> {
    let Some(path) = &args.resume else {
        return Ok(None);
    };
    let bad = |why: String| ServeError::Checkpoint {
        path: path.clone(),
        why,
    };
    let Some(saved) =
        read_sealed::<Saved>(path, SERVE_MAGIC, VERSION).map_err(ServeError::Resume)?
    else {
        eprintln!(
            "ccpn-run serve: note: no checkpoint at {}: starting afresh",
            path.display()
        );
        return Ok(None);
    };
    let recorded = Net::from_source(&saved.net).map_err(|e| bad(format!("its net: {e}")))?;
    let (mut detector, with) = match Detector::restore(&recorded, &saved.detector) {
        Ok(d) => (d, recorded),
        Err(e) => match Detector::restore(net, &saved.detector) {
            Ok(d) => (d, net.clone()),
            Err(_) => return Err(bad(e.to_string())),
        },
    };
    if saved.per_output.len() != with.outputs().count() {
        return Err(bad("its outputs are not its net's".into()));
    }
    if with.fingerprint() != net.fingerprint() {
        let report = detector.reload(net).map_err(|e| {
            bad(format!(
                "its net cannot be changed to {}: {e}",
                args.net.display()
            ))
        })?;
        eprintln!(
            "ccpn-run serve: note: the checkpoint's net is not {} as it is now: going on with it, as if put: {report}",
            args.net.display()
        );
    }
    let consumed: Vec<String> = saved
        .sources
        .iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect();
    eprintln!(
        "ccpn-run serve: resuming from checkpoint {}: events consumed per source: {}; the next detection is seq {}",
        path.display(),
        if consumed.is_empty() {
            "none".to_owned()
        } else {
            consumed.join(", ")
        },
        detector.stats().detections
    );
    Ok(Some(Restored { detector, saved }))
}

impl Loop {
    /// Writes a checkpoint now; `false` if it could not be written (said on stderr,
    /// counted, and the server's exit status will say so).
    pub(crate) fn checkpoint(&mut self) -> bool {
        let Some(path) = self.schedule.as_ref().map(|s| s.path.clone()) else {
            return true;
        };
        let sinks_now = self.sink_positions();
        let c = &self.shared.counters;
        let saved = Saved {
            net: self.source.clone(),
            detector: self.detector.snapshot(),
            newest: self.reorder.newest_seen(),
            released: self.reorder.released_up_to(),
            serial: self.serial,
            held: self.held.iter().map(|(n, e)| (*n, e.clone())).collect(),
            read: c.read.load(Relaxed),
            rejected: c.rejected.load(Relaxed),
            late: c.late.load(Relaxed),
            per_output: c.per_output.iter().map(|n| n.load(Relaxed)).collect(),
            sources: self.shared.consumed().clone(),
            sinks: self
                .shared
                .sinks
                .iter()
                .map(|(name, _)| name.clone())
                .zip(sinks_now.iter().copied())
                .collect(),
            detections: self
                .shared
                .hub
                .retained_items()
                .iter()
                .map(|i| (i.seq, i.json.clone()))
                .collect(),
            unacked: self.shared.unacked().kept(),
        };
        let bytes = seal(SERVE_MAGIC, VERSION, &saved);
        match write_atomically(&path, &bytes) {
            Ok(()) => {
                c.checkpoints.fetch_add(1, Relaxed);
                self.shared
                    .mqtt_checkpointed
                    .store(self.mqtt_batches, Relaxed);
                *self.shared.checkpointed() = Some(saved.sources);
                if let Some(s) = &mut self.schedule {
                    s.written(sinks_now);
                }
                true
            }
            Err(e) => {
                if let Some(s) = &mut self.schedule {
                    s.failed = true;
                }
                let failed = crate::checkpoint::FAILED.fetch_add(1, Relaxed);
                c.checkpoint_failures.fetch_add(1, Relaxed);
                if failed == 0 || (failed + 1).is_power_of_two() {
                    eprintln!(
                        "ccpn-run serve: error: cannot write checkpoint {}: {e}; serving goes on \
                         (the last checkpoint written, if any, stays; MQTT messages wait to be \
                         acknowledged) and the server will exit with status 5 ({} failure(s) so far)",
                        path.display(),
                        failed + 1
                    );
                }
                false
            }
        }
    }

    /// Each sink's position: the seq after the last detection it delivered.
    pub(crate) fn sink_positions(&self) -> Vec<u64> {
        self.shared
            .sinks
            .iter()
            .map(|(_, k)| k.next.load(Relaxed))
            .collect()
    }
}

/// The detections a sink named `name` had not delivered at the checkpoint, and the
/// position to start it from.
pub(crate) fn backlog(saved: &Saved, name: &str) -> (u64, Vec<Arc<Item>>) {
    let Some(&next) = saved.sinks.get(name) else {
        // A sink the checkpointed server did not have: from now on.
        let next = saved.detections.last().map_or(0, |(s, _)| s + 1);
        return (next, Vec::new());
    };
    let items = saved
        .detections
        .iter()
        .filter(|(seq, _)| *seq >= next)
        .map(|(seq, json)| {
            Arc::new(Item {
                seq: *seq,
                json: json.clone(),
            })
        })
        .collect();
    (next, items)
}
