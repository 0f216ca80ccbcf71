//! Splitting a net's detecting between many [`Detector`]s — on many threads or
//! machines — so that together they report exactly the detections one detector
//! would, each once.
//!
//! A [`Partitioner`] reads the net's operators and picks a [`Plan`]:
//!
//! - **by key** when every stateful operator correlates on the same `key:`: an event
//!   goes to the partition of its key value's hash;
//! - **by space** when every stateful operator relates occurrences a bounded distance
//!   apart (`Dist`, `Count`): an event goes to the partition of its grid cell, and is
//!   copied to the partitions of the cells within the net's reach;
//! - **global** otherwise: one partition.
//!
//! Events that feed a moving zone's anchor go to every partition, so that each
//! knows where the zone is. Every event has one *owner* partition, a function of
//! the event alone; a partition keeps only the detections whose terminator (latest
//! constituent) it owns, and drops those a copy let it compute.
//!
//! ```
//! use ccpn::partition::{Partitioner, Plan};
//! use ccpn::{Event, Net, Timestamp};
//!
//! let net = Net::from_ron("n.ron", r#"Net(
//!     events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
//!               "ab": Seq(of: ["a", "b"], within: 60.0, key: "ship") },
//!     outputs: ["ab"],
//! )"#)?;
//! let p = Partitioner::new(&net, 16);
//! assert_eq!(p.plan(), &Plan::ByKey { attr: "ship".into() });
//! let t = Timestamp::from_secs_f64(1.0).unwrap();
//! let a = Event::new(1, "A", t).with("ship", "Calypso");
//! let b = Event::new(2, "B", t).with("ship", "Calypso");
//! assert_eq!(p.owner(&a), p.owner(&b));
//! # Ok::<(), ccpn::NetError>(())
//! ```

mod cells;
mod partitioned;
mod plan;

use std::hash::Hasher;
use std::sync::Arc;

use rustc_hash::FxHasher;

pub use partitioned::Partitioned;
pub use plan::Plan;

use crate::event::{Event, Id, Value};
use crate::net::Net;
use crate::runtime::{Detection, Detector, DetectorOptions, PushError};
use cells::{Cell, Cells, Grid, Halo};

/// Routes events to partitions and tells which partition reports a detection.
#[derive(Clone, Debug)]
pub struct Partitioner {
    plan: Plan,
    partitions: u32,
    grid: Option<Grid>,
    /// Types of the events that feed moving zones' anchors: sent everywhere.
    broadcast: Vec<Arc<str>>,
}

impl Partitioner {
    /// A partitioner of `net` over `partitions` partitions (at least one; a global
    /// plan uses only partition 0).
    pub fn new(net: &Net, partitions: u32) -> Partitioner {
        let plan = plan::plan(&net.model);
        let grid = match &plan {
            Plan::BySpace { reach } => Some(Grid::new(net.space(), *reach)),
            _ => None,
        };
        let partitions = match plan {
            Plan::Global { .. } => 1,
            _ => partitions.max(1),
        };
        Partitioner {
            plan,
            partitions,
            grid,
            broadcast: plan::anchor_types(&net.model),
        }
    }

    /// The plan chosen for the net.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How many partitions events are spread over (1 for a global plan).
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// The types of the events sent to every partition (those feeding moving zones).
    pub fn broadcast_types(&self) -> &[Arc<str>] {
        &self.broadcast
    }

    /// The partition that owns `event`: the one that reports the detections it
    /// terminates. A function of the event alone, the same in every process.
    pub fn owner(&self, event: &Event) -> u32 {
        if self.partitions == 1 {
            return 0;
        }
        let h = match (&self.plan, &self.grid, event.location) {
            (Plan::ByKey { attr }, _, _) => match event.attr(attr) {
                Some(v) => hash_value(v),
                None => hash_id(&event.id),
            },
            (Plan::BySpace { .. }, Some(grid), Some(p)) => hash_cell(grid.cell(p)),
            _ => hash_id(&event.id),
        };
        self.reduce(h)
    }

    /// Puts in `out` every partition that must see `event`: its owner first, then
    /// those it is copied to.
    pub fn targets(&self, event: &Event, out: &mut Vec<u32>) {
        out.clear();
        out.push(self.owner(event));
        if self.partitions == 1 {
            return;
        }
        let everywhere = self.broadcast.iter().any(|t| **t == *event.kind)
            || match (&self.grid, event.location) {
                (Some(grid), Some(p)) => {
                    let mut cells = Cells::new();
                    match grid.halo(p, &mut cells) {
                        Halo::Everywhere => true,
                        Halo::Cells => {
                            for &c in &cells[1..] {
                                let q = self.reduce(hash_cell(c));
                                if !out.contains(&q) {
                                    out.push(q);
                                }
                            }
                            false
                        }
                    }
                }
                _ => false,
            };
        if everywhere {
            let owner = out[0];
            out.extend((0..self.partitions).filter(|&q| q != owner));
        }
    }

    /// Feeds `event` to the detector of `partition`: pushed if the partition owns it,
    /// observed otherwise (the detections it terminates are its owner's to report).
    /// Appends to `out` the detections the partition reports (those of ticks due
    /// before the event included).
    ///
    /// # Errors
    ///
    /// [`PushError::Late`] if the event is older than the detector's time.
    pub fn feed(
        &self,
        partition: u32,
        detector: &mut Detector,
        event: Event,
        out: &mut Vec<Detection>,
    ) -> Result<(), PushError> {
        let before = out.len();
        let fed = if self.owner(&event) == partition {
            detector.push_into(event, out)
        } else {
            detector.observe_into(event, out)
        };
        let mut i = 0;
        out.retain(|d| {
            i += 1;
            i <= before || self.reports(partition, d)
        });
        fed
    }

    /// Does `partition` report `detection`? Yes when it owns the detection's
    /// terminator, its latest constituent.
    pub fn reports(&self, partition: u32, detection: &Detection) -> bool {
        match detection.members().last() {
            Some(e) => self.owner(e) == partition,
            None => partition == 0,
        }
    }

    /// The limits for one partition's detector, from the whole run's: the token and
    /// set caps are shared out evenly (at least 1,000 each), so that all partitions
    /// together stay within about the same memory as one detector.
    pub fn partition_options(&self, whole: DetectorOptions) -> DetectorOptions {
        let share = |n: usize| (n / self.partitions as usize).max(1_000.min(n));
        DetectorOptions {
            max_tokens: share(whole.max_tokens),
            max_sets: share(whole.max_sets),
            ..whole
        }
    }

    fn reduce(&self, h: u64) -> u32 {
        (h % u64::from(self.partitions)) as u32
    }
}

fn hasher() -> FxHasher {
    FxHasher::default()
}

/// A stable hash of a key value; numbers equal as keys (0.0 and -0.0) hash alike.
fn hash_value(v: &Value) -> u64 {
    let mut h = hasher();
    match v {
        Value::Num(n) => {
            h.write_u8(0);
            h.write_u64(if *n == 0.0 { 0 } else { n.to_bits() });
        }
        Value::Str(s) => {
            h.write_u8(1);
            h.write(s.as_bytes());
        }
        Value::Bool(b) => {
            h.write_u8(2);
            h.write_u8(u8::from(*b));
        }
    }
    mix(h.finish())
}

fn hash_id(id: &Id) -> u64 {
    let mut h = hasher();
    match id {
        Id::Int(v) => {
            h.write_u8(0);
            h.write_u64(*v as u64);
        }
        Id::UInt(v) => {
            h.write_u8(1);
            h.write_u64(*v);
        }
        Id::Str(s) => {
            h.write_u8(2);
            h.write(s.as_bytes());
        }
    }
    mix(h.finish())
}

fn hash_cell((x, y): Cell) -> u64 {
    let mut h = hasher();
    h.write_u64(x as u64);
    h.write_u64(y as u64);
    mix(h.finish())
}

/// Spreads the hash's high bits into the low ones (FxHash leaves the low bits weak,
/// and partitions are chosen by remainder).
fn mix(mut z: u64) -> u64 {
    z ^= z >> 33;
    z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
    z ^ (z >> 33)
}

#[cfg(test)]
mod tests;
