//! The detecting operator: one [`Detector`] per partition this worker holds, fed
//! in input order, its time driven by the frontier.

use std::collections::BTreeMap;
use std::sync::Arc;

use ccpn::io::write::JsonLines;
use ccpn::partition::Partitioner;
use ccpn::{Detection, Detector, DetectorOptions, Net, Stats};

use super::wire::{time_of, timestamp_of, Found, Routed, Time};

/// What a worker's detectors did, for `--stats` and warnings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub(crate) partitions: usize,
    pub(crate) live_tokens: usize,
    pub(crate) peak_live_tokens: usize,
    pub(crate) evicted: u64,
    pub(crate) refused_sets: u64,
    pub(crate) truncated_firings: u64,
    /// Events a detector refused as older than its time (none when the input
    /// arrives in order, as it should).
    pub(crate) late: u64,
}

impl From<&Stats> for Tally {
    /// One partition's counters.
    fn from(s: &Stats) -> Tally {
        Tally {
            partitions: 1,
            live_tokens: s.live_tokens,
            peak_live_tokens: s.peak_live_tokens,
            evicted: s.evicted,
            refused_sets: s.refused_sets,
            truncated_firings: s.truncated_firings,
            late: 0,
        }
    }
}

impl Tally {
    /// Adds another partition's or worker's tally.
    pub(crate) fn merge(&mut self, o: &Tally) {
        self.partitions += o.partitions;
        self.live_tokens += o.live_tokens;
        self.peak_live_tokens += o.peak_live_tokens;
        self.evicted += o.evicted;
        self.refused_sets += o.refused_sets;
        self.truncated_firings += o.truncated_firings;
        self.late += o.late;
    }
}

/// A worker's partitions.
pub(crate) struct Detect {
    net: Arc<Net>,
    partitioner: Partitioner,
    options: DetectorOptions,
    lines: JsonLines,
    outputs: Vec<String>,
    detectors: BTreeMap<u32, Detector>,
    /// Per partition: detections reported so far.
    reported: BTreeMap<u32, u64>,
    late: u64,
    warned: bool,
    scratch: Vec<Detection>,
}

impl Detect {
    pub(crate) fn new(net: Arc<Net>, partitioner: Partitioner, options: DetectorOptions) -> Detect {
        let space = net.space();
        Detect {
            outputs: net.outputs().map(str::to_owned).collect(),
            partitioner,
            options,
            lines: JsonLines::new(space),
            net,
            detectors: BTreeMap::new(),
            reported: BTreeMap::new(),
            late: 0,
            warned: false,
            scratch: Vec::new(),
        }
    }

    /// Pushes `events` (sorted here into input order) into their partitions'
    /// detectors; appends what each partition reports to `out`, with its timely time.
    pub(crate) fn push(&mut self, events: &mut Vec<Routed>, out: &mut Vec<(Time, Found)>) {
        events.sort_by_key(|r| (r.event_time(), r.order));
        for r in events.drain(..) {
            let partition = r.partition;
            let detector = self
                .detectors
                .entry(partition)
                .or_insert_with(|| Detector::with_shared_net(self.net.clone(), self.options));
            let mut found = std::mem::take(&mut self.scratch);
            if self
                .partitioner
                .feed(partition, detector, r.event, &mut found)
                .is_err()
            {
                self.late += 1;
            }
            self.report(partition, &mut found, out);
            self.scratch = found;
        }
        if !self.warned && self.detectors.values().any(|d| d.stats().evicted > 0) {
            self.warned = true;
            crate::say::warning(format_args!(
                "a partition's share of --max-tokens ({}) is reached: its oldest waiting tokens are being evicted, and new key values of states turned away",
                self.options.max_tokens
            ));
        }
    }

    /// Moves every partition's time to `frontier`: fires the ticks due strictly
    /// before it.
    pub(crate) fn advance(&mut self, frontier: Time, out: &mut Vec<(Time, Found)>) {
        let to = timestamp_of(frontier);
        let partitions: Vec<u32> = self.detectors.keys().copied().collect();
        for p in partitions {
            let mut found = match self.detectors.get_mut(&p) {
                Some(d) => d.advance_to(to),
                None => continue,
            };
            found.retain(|d| self.partitioner.reports(p, d));
            self.report(p, &mut found, out);
        }
    }

    /// Turns the detections partition `p` reports into lines to write.
    fn report(&mut self, p: u32, found: &mut Vec<Detection>, out: &mut Vec<(Time, Found)>) {
        for d in found.drain(..) {
            let order = self.reported.entry(p).or_insert(0);
            let output = self
                .outputs
                .iter()
                .position(|o| **o == *d.event)
                .unwrap_or(0);
            out.push((
                time_of(d.time),
                Found {
                    time: d.time.micros(),
                    partition: p,
                    order: *order,
                    output: output as u32,
                    line: self.lines.unnumbered(&d),
                },
            ));
            *order += 1;
        }
    }

    /// This worker's counters.
    pub(crate) fn tally(&self) -> Tally {
        let mut t = Tally {
            late: self.late,
            ..Tally::default()
        };
        for d in self.detectors.values() {
            t.merge(&Tally::from(&d.stats()));
        }
        t
    }
}

impl Routed {
    fn event_time(&self) -> Time {
        time_of(self.event.time)
    }
}
