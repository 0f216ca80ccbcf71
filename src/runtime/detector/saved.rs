//! A detector's whole state as a snapshot, and a detector restored from one.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::zones::{place_zone, MovedZone};
use super::{Detector, DetectorOptions};
use crate::event::Timestamp;
use crate::runtime::component::{Component, ComponentState, CountShared};
use crate::runtime::place::TokenBudget;
use crate::runtime::program::Program;
use crate::runtime::snapshot::{self, RestoreError};
use crate::runtime::timer::Timers;
use crate::spatial::Zone;

impl Detector {
    /// The detector's whole state as bytes: every token waiting in the net's places,
    /// the counting indexes, pending ticks, where moving zones are, the counters and
    /// the options. [`Detector::restore`] continues from it exactly: the detections
    /// (with their [`Detection::seq`](crate::Detection::seq)) are those the detector would have returned.
    ///
    /// The bytes start with a format version and the net's fingerprint (a hash of
    /// its text and of the GeoJSON files it reads), and carry a checksum.
    ///
    /// ```
    /// use ccpn::{Detector, Event, Net, Timestamp};
    ///
    /// let net = Net::from_ron("inline.ron", r#"Net(
    ///     events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
    ///               "ab": Seq(of: ["a", "b"], within: 60.0) },
    ///     outputs: ["ab"],
    /// )"#)?;
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let mut detector = Detector::new(&net);
    /// detector.push(Event::new(1, "A", t(0.0)))?;
    /// let saved = detector.snapshot();
    /// drop(detector);
    ///
    /// let mut detector = Detector::restore(&net, &saved)?;
    /// let found = detector.push(Event::new(2, "B", t(30.0)))?;
    /// assert_eq!(found.len(), 1);
    /// assert_eq!(found[0].seq, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn snapshot(&self) -> Vec<u8> {
        let model = &self.program.model;
        let moved = model
            .moving
            .iter()
            .map(|m| {
                let stab = self.program.zone_stabs[m.zone].first()?;
                MovedZone::of(&self.components[*stab].zone(m.zone)?.shape)
            })
            .collect();
        let state = State {
            options: self.options,
            components: self.components.iter().map(Component::save).collect(),
            moved,
            counts: &self.counts[..],
            timers: Cow::Borrowed(&self.timers),
            budget: Cow::Borrowed(&self.budget),
            now: self.now,
            steps: self.steps,
            serial: self.serial,
            seq: self.seq,
            processed: self.processed,
        };
        snapshot::encode(&model.fingerprint, &state)
    }

    /// A detector running `program` in the state [`Detector::snapshot`] saved.
    pub(crate) fn restore_program(
        program: &Arc<Program>,
        bytes: &[u8],
    ) -> Result<Detector, RestoreError> {
        let model = &program.model;
        let state: State<Vec<CountShared>> =
            snapshot::decode(&model.fingerprint, &model.key_attrs, bytes)?;
        let mut d = Detector::from_program(Arc::clone(program), state.options);
        let mismatch = |what: &str| RestoreError::Corrupt(format!("{what} do not match the net"));
        if state.components.len() != d.components.len()
            || state.counts.len() != d.counts.len()
            || state.moved.len() != model.moving.len()
        {
            return Err(mismatch("its components"));
        }
        for (component, saved) in d.components.iter_mut().zip(state.components) {
            if !component.load(saved) {
                return Err(mismatch("its components"));
            }
        }
        for (m, moved) in state.moved.iter().enumerate() {
            if let Some(moved) = moved {
                let zone = &model.zones[model.moving[m].zone];
                let shape = moved
                    .shape(&zone.shape)
                    .ok_or_else(|| mismatch("its moving zones"))?;
                let zone = Zone {
                    name: zone.name.clone(),
                    shape,
                };
                place_zone(program, &mut d.components, model.moving[m].zone, &zone);
            }
        }
        d.counts = state.counts;
        d.timers = state.timers.into_owned();
        d.budget = state.budget.into_owned();
        d.now = state.now;
        d.steps = state.steps;
        d.serial = state.serial;
        d.seq = state.seq;
        d.processed = state.processed;
        Ok(d)
    }
}

/// What a snapshot keeps of a detector (`C`: the counting indexes, borrowed when
/// written).
#[derive(Serialize, Deserialize)]
struct State<'a, C> {
    options: DetectorOptions,
    components: Vec<ComponentState<'a>>,
    /// Where each moving zone is now (`None`: its anchor has not been seen).
    moved: Vec<Option<MovedZone>>,
    counts: C,
    timers: Cow<'a, Timers>,
    budget: Cow<'a, TokenBudget>,
    now: Timestamp,
    steps: u64,
    serial: u64,
    seq: u64,
    processed: u64,
}
