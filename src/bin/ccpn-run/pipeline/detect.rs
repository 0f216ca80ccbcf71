//! The detector's loop, on the main thread: events in from the reader, detections
//! out to the writer, a checkpoint when the reader marks one.

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use ccpn::{Detection, Detector, NetSource};

use super::progress::Feedback;
use super::reader::ToDetector;
use super::spare::{Fresh, Spares};
use super::writer::ToWriter;
use crate::checkpoint::{Checkpoint, Position};

/// The most detections (beyond one event's) the detector gathers before handing them
/// to the writer: with the channel's depth, what is in flight between the two.
pub(super) const FLUSH_DETECTIONS: usize = 4096;

/// What the detector's loop counts besides the detector's own statistics.
pub(super) struct Tally {
    /// Detections per output, in the net's order of outputs.
    pub(super) per_output: Vec<u64>,
    /// Events the detector refused as late.
    pub(super) late: u64,
    /// Each output's place in `per_output`, filled as detections come.
    pub(super) index: OutputIndex,
    /// Nets reloaded.
    pub(super) reloads: u64,
    /// What the net in force was loaded from, for checkpoints.
    pub(super) source: NetSource,
}

impl Tally {
    /// Counts `batch` under its outputs.
    fn count(&mut self, outputs: &[String], batch: &[Detection]) {
        for d in batch {
            if let Some(i) = self.index.place(outputs, &d.event) {
                self.per_output[i] += 1;
            }
        }
    }
}

/// Each output's place in the net's list of outputs, filled as detections come. The
/// last one found is tried first, by address and then by text (its address kept
/// when the text matches): a batch's detections are mostly of one output, and a hash
/// of its name cost about a hundred instructions a detection.
#[derive(Default)]
pub(super) struct OutputIndex {
    places: FxHashMap<Arc<str>, usize>,
    last: Option<(Arc<str>, usize)>,
}

impl OutputIndex {
    /// Forgets every place (the net's outputs have changed).
    pub(super) fn clear(&mut self) {
        self.places.clear();
        self.last = None;
    }

    /// The place of output `name` among `outputs`, if it is one.
    fn place(&mut self, outputs: &[String], name: &Arc<str>) -> Option<usize> {
        if let Some((last, i)) = &mut self.last {
            if Arc::ptr_eq(last, name) {
                return Some(*i);
            }
            if **last == **name {
                // A fresh copy of the same name (the detector renews its copies now
                // and then): known by its address from now on.
                *last = Arc::clone(name);
                return Some(*i);
            }
        }
        let i = match self.places.get(name) {
            Some(&i) => i,
            None => {
                let i = outputs.iter().position(|o| **o == **name)?;
                self.places.insert(Arc::clone(name), i);
                i
            }
        };
        self.last = Some((Arc::clone(name), i));
        Some(i)
    }
}

/// How many events ahead of its push an event's memory is fetched
/// ([`Detector::prefetch`]).
const AHEAD: usize = 4;

/// Pushes what the reader sends through `detector` until the reader is done (or the
/// writer has gone: then `stop` is set), then finishes the detector. Closes both
/// channels on return.
pub(super) fn detect(
    detector: &mut Detector,
    tally: &mut Tally,
    outputs: &mut Vec<String>,
    (events, spares): (Receiver<ToDetector>, &Spares<ccpn::Event>),
    (detections, fresh): (Sender<ToWriter>, &Fresh<Detection>),
    stop: &AtomicBool,
    feedback: &mut Feedback<'_>,
) {
    let max_tokens = detector.options().max_tokens;
    let mut warned_evictions = false;
    let mut finish = true;
    // Kept from batch to batch until it is sent, so a batch without detections
    // allocates nothing.
    let mut found = fresh.take();
    // The events of a batch the detector kept no part of, handed back with the
    // batch's buffer for the reader to drop; the drained batch becomes the next one.
    let mut spent = Vec::new();
    for msg in events.iter() {
        if stop.load(Ordering::Relaxed) {
            // The writer has gone (a closed stdout): nothing more is wanted.
            break;
        }
        let sent = match msg {
            ToDetector::Events(mut batch) => {
                let mut sent = true;
                let mut queue = batch.drain(..);
                while let Some(ev) = queue.next() {
                    // The zone index's cells of the events to come are fetched while
                    // this one is pushed.
                    if let Some(next) = queue.as_slice().get(AHEAD - 1) {
                        detector.prefetch(next);
                    }
                    if detector
                        .push_into_spent(ev, &mut found, &mut spent)
                        .is_err()
                    {
                        tally.late += 1;
                    }
                    // A batch of events can make millions of detections: hand them to
                    // the writer as they come, so that the bounded channel holds the
                    // detector back (not a whole batch's worth in memory per message).
                    if found.len() >= FLUSH_DETECTIONS {
                        tally.count(outputs, &found);
                        let batch = std::mem::replace(&mut found, fresh.take());
                        sent = detections.send(ToWriter::Detections(batch)).is_ok();
                        if !sent {
                            break;
                        }
                    }
                }
                drop(queue);
                spares.give_full(std::mem::replace(&mut spent, batch));
                if !warned_evictions && detector.stats().evicted > 0 {
                    warned_evictions = true;
                    crate::say::warning(format_args!("--max-tokens {max_tokens} reached: the oldest waiting tokens are being evicted, and new key values of states turned away"));
                }
                tally.count(outputs, &found);
                feedback.after_batch(detector, tally);
                sent && (found.is_empty() || {
                    let batch = std::mem::replace(&mut found, fresh.take());
                    detections.send(ToWriter::Detections(batch)).is_ok()
                })
            }
            ToDetector::Advance(to) => {
                let found = detector.advance_to(to);
                tally.count(outputs, &found);
                found.is_empty() || detections.send(ToWriter::Detections(found)).is_ok()
            }
            ToDetector::Mark(position) => checkpoint(detector, tally, position, &detections),
            ToDetector::Final(position) => {
                finish = false;
                finished(detector, tally, outputs, &detections);
                checkpoint(detector, tally, position, &detections)
            }
            ToDetector::Stopped => {
                finish = false;
                true
            }
            ToDetector::Reload(net) => {
                super::reload::apply(detector, tally, outputs, &net);
                true
            }
        };
        if !sent {
            stop.store(true, Ordering::Relaxed);
            break;
        }
    }
    drop(events);
    if finish {
        finished(detector, tally, outputs, &detections);
    }
    feedback.done();
}

/// Finishes the detector: sends what is due at the last time.
fn finished(
    detector: &mut Detector,
    tally: &mut Tally,
    outputs: &[String],
    detections: &Sender<ToWriter>,
) {
    let last = detector.finish();
    tally.count(outputs, &last);
    if !last.is_empty() {
        let _ = detections.send(ToWriter::Detections(last));
    }
}

/// Sends the writer a checkpoint of the run at `position`; `false` if it has gone.
fn checkpoint(
    detector: &Detector,
    tally: &Tally,
    position: Position,
    detections: &Sender<ToWriter>,
) -> bool {
    let checkpoint = Checkpoint {
        position,
        per_output: tally.per_output.clone(),
        late_in_detector: tally.late,
        detector: detector.snapshot(),
        net: tally.source.clone(),
    };
    detections
        .send(ToWriter::Checkpoint(checkpoint.encode()))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs() -> Vec<String> {
        vec!["near".to_owned(), "three".to_owned()]
    }

    #[test]
    fn an_output_is_found_by_its_name_whatever_the_copy() {
        let outputs = outputs();
        let mut index = OutputIndex::default();
        let three: Arc<str> = Arc::from("three");
        assert_eq!(index.place(&outputs, &three), Some(1));
        assert_eq!(index.place(&outputs, &three), Some(1));
        // A fresh copy of the same name: found by its text, then kept by address.
        let again: Arc<str> = Arc::from("three");
        assert_eq!(index.place(&outputs, &again), Some(1));
        assert!(index
            .last
            .as_ref()
            .is_some_and(|(l, _)| Arc::ptr_eq(l, &again)));
        assert_eq!(index.place(&outputs, &Arc::from("near")), Some(0));
        assert_eq!(index.place(&outputs, &three), Some(1));
        // A name the net does not output has no place, and leaves the last one.
        assert_eq!(index.place(&outputs, &Arc::from("thre")), None);
        assert_eq!(index.place(&outputs, &again), Some(1));
        index.clear();
        assert!(index.last.is_none() && index.places.is_empty());
        assert_eq!(index.place(&["three".to_owned()], &again), Some(0));
    }
}
