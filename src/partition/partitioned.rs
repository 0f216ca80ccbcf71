//! Many partitions' detectors in one thread: the reference for a distributed run,
//! and a way to measure how many copies space partitioning makes.

use std::sync::Arc;

use super::Partitioner;
use crate::event::{Event, Timestamp};
use crate::net::Net;
use crate::runtime::{Detection, Detector, DetectorOptions, PushError};

/// One [`Detector`] per partition, fed as a distributed run would feed them: each
/// event goes to the partitions of [`Partitioner::targets`], each partition keeps
/// the detections it [`reports`](Partitioner::reports), and time advances in all.
/// Its detections are those of one detector over the same events, in another order
/// when several come at one time.
///
/// ```
/// use ccpn::partition::Partitioned;
/// use ccpn::{DetectorOptions, Event, Net, Timestamp};
///
/// let net = Net::from_ron("n.ron", r#"Net(
///     events: { "a": Atomic(type: "A"), "near": Dist(a: "a", b: "a", max: 2.0, within: 60.0) },
///     outputs: ["near"],
/// )"#)?;
/// let mut p = Partitioned::new(&net, 8, DetectorOptions::default());
/// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
/// assert!(p.push(Event::new(1, "A", t(0.0)).at(7.9, 0.0))?.is_empty());
/// let found = p.push(Event::new(2, "A", t(1.0)).at(8.1, 0.0))?;
/// assert_eq!(found.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Partitioned {
    partitioner: Partitioner,
    net: Arc<Net>,
    options: DetectorOptions,
    /// Created on a partition's first event.
    detectors: Vec<Option<Detector>>,
    now: Timestamp,
    seq: u64,
    events: u64,
    copies: u64,
    targets: Vec<u32>,
}

impl Partitioned {
    /// `partitions` detectors for `net` (one for a net that cannot be split), each
    /// with its share of `options`' limits.
    pub fn new(net: &Net, partitions: u32, options: DetectorOptions) -> Partitioned {
        let partitioner = Partitioner::new(net, partitions);
        let options = partitioner.partition_options(options);
        Partitioned {
            detectors: (0..partitioner.partitions()).map(|_| None).collect(),
            partitioner,
            net: Arc::new(net.clone()),
            options,
            now: Timestamp::MIN,
            seq: 0,
            events: 0,
            copies: 0,
            targets: Vec::new(),
        }
    }

    /// The partitioner in use.
    pub fn partitioner(&self) -> &Partitioner {
        &self.partitioner
    }

    /// Processes one event in every partition that must see it, after the ticks due
    /// strictly before its time in all partitions.
    ///
    /// # Errors
    ///
    /// [`PushError::Late`] if the event is older than the latest time seen.
    pub fn push(&mut self, event: Event) -> Result<Vec<Detection>, PushError> {
        if event.time < self.now {
            return Err(PushError::Late {
                time: event.time,
                now: self.now,
            });
        }
        self.now = event.time;
        let mut out = self.each(|d| d.advance_to(event.time));
        self.events += 1;
        self.partitioner.targets(&event, &mut self.targets);
        self.copies += self.targets.len() as u64 - 1;
        for &q in &self.targets {
            let d = self.detectors[q as usize]
                .get_or_insert_with(|| Detector::with_shared_net(self.net.clone(), self.options));
            self.partitioner.feed(q, d, event.clone(), &mut out)?;
        }
        Ok(self.numbered(out))
    }

    /// Moves every partition's time to `time`, firing the ticks due strictly before it.
    pub fn advance_to(&mut self, time: Timestamp) -> Vec<Detection> {
        self.now = self.now.max(time);
        let out = self.each(|d| d.advance_to(time));
        self.numbered(out)
    }

    /// Ends the stream in every partition at the latest time seen.
    pub fn finish(&mut self) -> Vec<Detection> {
        let now = self.now;
        let out = self.each(|d| {
            let mut out = d.advance_to(now);
            out.extend(d.finish());
            out
        });
        self.numbered(out)
    }

    /// Copies made per event: how many more partitions than one each event went to.
    pub fn copy_factor(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            (self.events + self.copies) as f64 / self.events as f64
        }
    }

    /// Runs `f` on each partition's detector; keeps what each reports, in time order.
    fn each(&mut self, mut f: impl FnMut(&mut Detector) -> Vec<Detection>) -> Vec<Detection> {
        let mut out = Vec::new();
        for (q, d) in self.detectors.iter_mut().enumerate() {
            if let Some(d) = d {
                let q = q as u32;
                out.extend(f(d).into_iter().filter(|d| self.partitioner.reports(q, d)));
            }
        }
        out.sort_by_key(|d| d.time);
        out
    }

    fn numbered(&mut self, mut found: Vec<Detection>) -> Vec<Detection> {
        for d in &mut found {
            d.seq = self.seq;
            self.seq += 1;
        }
        found
    }
}
