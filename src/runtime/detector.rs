//! The [`Detector`]: pushes atomic events through a compiled net, in event time,
//! and returns the detections each one causes.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::detection::Detection;
use super::dirty::Dirty;
use super::place::TokenBudget;
use super::program::Program;
use super::snapshot::{self, RestoreError};
use super::timer::Timers;
use super::token::{Term, Token};
use super::unit::{CountShared, Cx, Unit, UnitState};
use crate::event::{Event, Timestamp};
use crate::spatial::{Shape, Zone};

/// Limits that keep a detector's memory bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectorOptions {
    /// The most tokens the net's places may hold at once. When reached, each new
    /// token evicts the oldest token of its place with the same key (or, having none,
    /// is turned away), and [`Stats::evicted`] counts them.
    pub max_tokens: usize,
    /// The most partial sets each counting index may hold at once (levels 2 to n−1).
    /// When reached, new sets are not kept, [`Stats::refused_sets`] counts them, and
    /// matches that would have grown from them are missed.
    pub max_sets: usize,
    /// Find the zones containing an occurrence through the zone R*-tree (`true`, the
    /// default) or by testing every zone of the `Within` operators that read it
    /// (`false`: for comparison, as a rule engine without a spatial index would).
    pub zone_index: bool,
}

impl Default for DetectorOptions {
    fn default() -> Self {
        DetectorOptions {
            max_tokens: 1_000_000,
            max_sets: 1_000_000,
            zone_index: true,
        }
    }
}

/// An event could not be processed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The event is older than the detector's current time.
    #[error("event time {time} is before the detector's time {now}")]
    Late {
        /// The event's time.
        time: Timestamp,
        /// The detector's time.
        now: Timestamp,
    },
}

/// Counters of a detector's work so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Events pushed and processed.
    pub processed: u64,
    /// Detections returned.
    pub detections: u64,
    /// Tokens waiting in places now, with open intervals and the live events of
    /// counting indexes (what [`DetectorOptions::max_tokens`] caps).
    pub live_tokens: usize,
    /// The most tokens ever waiting at once.
    pub peak_live_tokens: usize,
    /// Tokens evicted because [`DetectorOptions::max_tokens`] was reached.
    pub evicted: u64,
    /// Timers (periodic ticks) pending.
    pub timers: usize,
    /// Live partial sets per level (level 2 first) of the counting indexes, summed.
    pub live_sets: Vec<usize>,
    /// Partial sets not kept because [`DetectorOptions::max_sets`] was reached.
    pub refused_sets: u64,
    /// Firings not made because one occurrence completed more than 100,000 sets of an
    /// `Any` in the `Unrestricted` or `Continuous` context.
    pub truncated_firings: u64,
}

/// Detects the output events of a net in a stream of atomic events.
///
/// Events must be pushed in non-decreasing time. The detector is `Send`, does no
/// I/O, and depends only on event time, never on the wall clock.
///
/// ```
/// use ccpn::{Detector, Event, Net, Timestamp};
///
/// let net = Net::from_ron("inline.ron", r#"Net(
///     events: {
///         "a": Atomic(type: "A"),
///         "b": Atomic(type: "B"),
///         "ab": Seq(of: ["a", "b"], within: 60.0),
///     },
///     outputs: ["ab"],
/// )"#)?;
/// let mut detector = Detector::new(&net);
/// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
/// assert!(detector.push(Event::new(1, "A", t(0.0)))?.is_empty());
/// let found = detector.push(Event::new(2, "B", t(30.0)))?;
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].ids().cloned().collect::<Vec<_>>(), vec![1.into(), 2.into()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Detector {
    program: Arc<Program>,
    options: DetectorOptions,
    units: Vec<Unit>,
    timers: Timers,
    budget: TokenBudget,
    now: Timestamp,
    /// Steps taken (events and timer ticks); the next step's number.
    steps: u64,
    serial: u64,
    seq: u64,
    processed: u64,
    /// Per unit: tokens that arrived this step, with their input arc.
    inbox: Vec<Vec<(usize, Token)>>,
    /// Units with a non-empty inbox, taken in topological order.
    dirty: Dirty,
    produced: Vec<Token>,
    routed: Vec<(usize, Token)>,
    /// The counting indexes.
    counts: Vec<CountShared>,
    /// Detections of the current step.
    emitted: Vec<Detection>,
    /// The current step is an observed event's: it makes no detections.
    quiet: bool,
}

impl Detector {
    /// A detector running `program`, with the given limits.
    pub(crate) fn from_program(program: Arc<Program>, options: DetectorOptions) -> Detector {
        let mut units = program.units.clone();
        if !options.zone_index {
            for u in &mut units {
                if let Unit::Stab(stab) = u {
                    stab.scan_linearly();
                }
            }
        }
        let n = units.len();
        let space = program.model.space;
        let counts = program
            .counts
            .iter()
            .map(|g| CountShared::new(space, g.rules.clone(), g.distinct.clone(), options.max_sets))
            .collect();
        Detector {
            units,
            timers: Timers::default(),
            budget: TokenBudget::new(options.max_tokens),
            now: Timestamp::MIN,
            steps: 0,
            serial: 0,
            seq: 0,
            processed: 0,
            inbox: vec![Vec::new(); n],
            dirty: Dirty::new(n),
            produced: Vec::new(),
            routed: Vec::new(),
            counts,
            emitted: Vec::new(),
            quiet: false,
            program,
            options,
        }
    }

    /// The detector's whole state as bytes: every token waiting in the net's places,
    /// the counting indexes, pending ticks, where moving zones are, the counters and
    /// the options. [`Detector::restore`] continues from it exactly: the detections
    /// (with their [`Detection::seq`]) are those the detector would have returned.
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
                let Unit::Stab(stab) = &self.units[*stab] else {
                    return None;
                };
                MovedZone::of(&stab.zone(m.zone)?.shape)
            })
            .collect();
        let state = State {
            options: self.options,
            units: self.units.iter().map(Unit::save).collect(),
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
        if state.units.len() != d.units.len()
            || state.counts.len() != d.counts.len()
            || state.moved.len() != model.moving.len()
        {
            return Err(mismatch("its components"));
        }
        for (unit, saved) in d.units.iter_mut().zip(state.units) {
            if !unit.load(saved) {
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
                place_zone(program, &mut d.units, model.moving[m].zone, &zone);
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

    /// The limits the detector runs with (those of the snapshot, for one restored).
    pub fn options(&self) -> DetectorOptions {
        self.options
    }

    /// The detector's current event time.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Processes one event and returns the detections it causes (after those of any
    /// periodic ticks due strictly before its time).
    ///
    /// # Errors
    ///
    /// [`PushError::Late`] if the event is older than the detector's time; it is not processed.
    pub fn push(&mut self, event: Event) -> Result<Vec<Detection>, PushError> {
        let mut out = Vec::new();
        self.push_into(event, &mut out)?;
        Ok(out)
    }

    /// Like [`Detector::push_into`] for an event whose detections another detector
    /// reports: its state changes as with `push_into` (the event can take part in
    /// later detections), but the detections it terminates are not made, nor the
    /// work whose only use is making them. The ticks due before it are made, as by
    /// `push_into`. A partition uses it for the copies of events another partition
    /// owns (see [`crate::partition`]).
    ///
    /// ```
    /// use ccpn::{Detector, Event, Net, Timestamp};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(
    ///     events: { "a": Atomic(type: "A"), "pair": Dist(a: "a", b: "a", max: 5.0, within: 60.0) },
    ///     outputs: ["pair"],
    /// )"#)?;
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let mut d = Detector::new(&net);
    /// let mut out = Vec::new();
    /// d.observe_into(Event::new(1, "A", t(0.0)).at(0.0, 0.0), &mut out)?;
    /// d.observe_into(Event::new(2, "A", t(1.0)).at(1.0, 0.0), &mut out)?; // pairs with 1, unreported
    /// assert!(out.is_empty());
    /// d.push_into(Event::new(3, "A", t(2.0)).at(2.0, 0.0), &mut out)?; // pairs with 2
    /// assert_eq!(out[0].ids().cloned().collect::<Vec<_>>(), vec![2.into(), 3.into()]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`PushError::Late`] if the event is older than the detector's time.
    pub fn observe_into(
        &mut self,
        event: Event,
        out: &mut Vec<Detection>,
    ) -> Result<(), PushError> {
        if event.time < self.now {
            return Err(PushError::Late {
                time: event.time,
                now: self.now,
            });
        }
        self.run_timers(event.time, false, out);
        self.quiet = true;
        let mut none = Vec::new();
        let pushed = self.push_into(event, &mut none);
        self.quiet = false;
        debug_assert!(none.is_empty());
        pushed
    }

    /// Like [`Detector::push`], appending detections to `out`.
    ///
    /// # Errors
    ///
    /// [`PushError::Late`] if the event is older than the detector's time.
    pub fn push_into(&mut self, event: Event, out: &mut Vec<Detection>) -> Result<(), PushError> {
        if event.time < self.now {
            return Err(PushError::Late {
                time: event.time,
                now: self.now,
            });
        }
        self.run_timers(event.time, false, out);
        self.now = event.time;
        self.processed += 1;
        let step = self.next_step();
        let program = Arc::clone(&self.program);
        let Some(atomics) = program.by_type.get(&*event.kind) else {
            return Ok(());
        };
        let tok = Token::atomic(step, Arc::new(Term::new(event, &program.model.key_attrs)));
        // The atomic components read the type's source place first: fire them here
        // rather than through the step's inbox (their consumers all come later).
        atomics.each(&tok.term, |id| {
            self.fire(id, step, |u, cx| u.fire(0, &tok, cx))
        });
        self.run_step(step, out);
        Ok(())
    }

    /// Moves event time to `time` without an event, firing periodic ticks due strictly
    /// before it (an event at `time` itself may still come and pre-empt a tick then).
    /// Earlier times are ignored.
    pub fn advance_to(&mut self, time: Timestamp) -> Vec<Detection> {
        let mut out = Vec::new();
        if time > self.now {
            self.run_timers(time, false, &mut out);
            self.now = time;
        }
        out
    }

    /// Ends the stream: fires the ticks due at the current time. No event should be
    /// pushed at the current time afterwards.
    pub fn finish(&mut self) -> Vec<Detection> {
        let mut out = Vec::new();
        let now = self.now;
        self.run_timers(now, true, &mut out);
        out
    }

    /// Counters of the work so far.
    pub fn stats(&self) -> Stats {
        let live: usize = self.units.iter().map(Unit::live).sum::<usize>()
            + self.counts.iter().map(CountShared::live).sum::<usize>();
        let mut live_sets: Vec<usize> = Vec::new();
        let mut refused_sets = 0;
        for c in &self.counts {
            let (sets, refused) = c.stats();
            if live_sets.len() < sets.len() {
                live_sets.resize(sets.len(), 0);
            }
            for (total, n) in live_sets.iter_mut().zip(sets) {
                *total += n;
            }
            refused_sets += refused;
        }
        Stats {
            processed: self.processed,
            detections: self.seq,
            live_tokens: live,
            peak_live_tokens: self.budget.peak.max(live),
            evicted: self.budget.evicted,
            timers: self.timers.len(),
            live_sets,
            refused_sets,
            truncated_firings: self.budget.truncated,
        }
    }

    fn next_step(&mut self) -> u64 {
        self.steps += 1;
        self.steps
    }

    fn run_timers(&mut self, bound: Timestamp, inclusive: bool, out: &mut Vec<Detection>) {
        while let Some((at, unit, tag)) = self.timers.pop_due(bound, inclusive) {
            self.now = self.now.max(at);
            let step = self.next_step();
            self.fire(unit, step, |u, cx| u.tick(at, tag, cx));
            self.run_step(step, out);
        }
    }

    /// Runs `f` on unit `id` and fans its new tokens out along the connection transitions.
    fn fire(&mut self, id: usize, step: u64, f: impl FnOnce(&mut Unit, &mut Cx<'_>)) {
        let Detector {
            program,
            units,
            timers,
            budget,
            now,
            serial,
            seq,
            inbox,
            dirty,
            produced,
            routed,
            emitted,
            counts,
            quiet,
            ..
        } = self;
        let quiet = *quiet;
        let mut cx = Cx {
            discard: quiet && program.consumers[id].is_empty(),
            now: *now,
            cause: step,
            space: program.model.space,
            budget,
            timers,
            unit: id,
            out: produced,
            routed,
            counts,
        };
        f(&mut units[id], &mut cx);
        let program = &**program;
        let own = produced.drain(..).map(|tok| (id, tok));
        for (node, mut tok) in own.chain(routed.drain(..)) {
            *serial += 1;
            tok.serial = *serial;
            tok.cause = step;
            for &m in &program.anchors[node] {
                move_zone(&program.model, program, units, m, &tok);
            }
            let zones = &program.model.zones;
            let outputs = &program.outputs[node];
            if quiet {
                // Detections of an observed event are not made; the token goes on
                // to the components that read it.
                for &(c, role) in &program.consumers[node] {
                    deliver(inbox, dirty, c, role, tok.clone());
                }
                continue;
            }
            match program.consumers[node].split_last() {
                Some(((last, last_role), rest)) => {
                    for name in outputs {
                        emitted.push(Detection::from_token(name.clone(), *seq, &tok, zones));
                        *seq += 1;
                    }
                    for &(c, role) in rest {
                        deliver(inbox, dirty, c, role, tok.clone());
                    }
                    deliver(inbox, dirty, *last, *last_role, tok);
                }
                // Read by nothing else: the last detection takes the token's constituents.
                None => {
                    if let Some((last, rest)) = outputs.split_last() {
                        for name in rest {
                            emitted.push(Detection::from_token(name.clone(), *seq, &tok, zones));
                            *seq += 1;
                        }
                        emitted.push(Detection::from_last_token(last.clone(), *seq, tok, zones));
                        *seq += 1;
                    }
                }
            }
        }
    }

    /// Fires every unit that received tokens in this step, in topological order.
    fn run_step(&mut self, step: u64, out: &mut Vec<Detection>) {
        while let Some(id) = self.dirty.pop() {
            let mut inbox = std::mem::take(&mut self.inbox[id]);
            inbox.sort_by_key(|(role, _)| *role);
            for (role, tok) in inbox.drain(..) {
                self.fire(id, step, |u, cx| u.fire(role, &tok, cx));
            }
            // Keep the allocation for the next step.
            if self.inbox[id].is_empty() {
                self.inbox[id] = inbox;
            }
        }
        out.append(&mut self.emitted);
    }
}

/// Puts `tok` in the input place `role` of unit `unit`, marking the unit to fire.
fn deliver(
    inbox: &mut [Vec<(usize, Token)>],
    dirty: &mut Dirty,
    unit: usize,
    role: usize,
    tok: Token,
) {
    if inbox[unit].is_empty() {
        dirty.mark(unit);
    }
    inbox[unit].push((role, tok));
}

/// Re-centres moving zone `m` on the anchor's occurrence `tok` (and turns a sector by
/// its heading) in every R*-tree that holds it.
fn move_zone(
    model: &crate::model::Model,
    program: &Program,
    units: &mut [Unit],
    m: usize,
    tok: &Token,
) {
    let moving = &model.moving[m];
    let Some(center) = tok.term.location else {
        return;
    };
    let base = &model.zones[moving.zone];
    let heading = match &moving.heading {
        None => 0.0,
        Some(attr) => match tok.term.attr(attr) {
            Some(crate::event::Value::Num(h)) if h.is_finite() => *h,
            // Without a usable heading the sector keeps its bearings from north.
            _ => 0.0,
        },
    };
    let shape = match &base.shape {
        Shape::Circle { radius, .. } => Shape::Circle {
            center,
            radius: *radius,
        },
        Shape::Sector {
            radius,
            from_deg,
            to_deg,
            ..
        } => Shape::Sector {
            center,
            radius: *radius,
            from_deg: from_deg + heading,
            to_deg: to_deg + heading,
        },
        _ => return,
    };
    if model.space == crate::event::Space::Wgs84
        && (center.y.abs() > 90.0 || center.x.abs() > 180.0)
    {
        return;
    }
    let zone = Zone {
        name: base.name.clone(),
        shape,
    };
    place_zone(program, units, moving.zone, &zone);
}

/// Puts `zone` as zone `z` in every R*-tree that holds `z`.
fn place_zone(program: &Program, units: &mut [Unit], z: usize, zone: &Zone) {
    for &u in &program.zone_stabs[z] {
        if let Unit::Stab(stab) = &mut units[u] {
            stab.update(z, zone.clone());
        }
    }
}

/// What a snapshot keeps of a detector (`C`: the counting indexes, borrowed when
/// written).
#[derive(Serialize, Deserialize)]
struct State<'a, C> {
    options: DetectorOptions,
    units: Vec<UnitState<'a>>,
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

/// Where a moving zone is: its centre, and a sector's bearings.
#[derive(Serialize, Deserialize)]
struct MovedZone {
    center: (f64, f64),
    from_deg: f64,
    to_deg: f64,
}

impl MovedZone {
    fn of(shape: &Shape) -> Option<MovedZone> {
        match *shape {
            Shape::Circle { center, .. } => Some(MovedZone {
                center: (center.x, center.y),
                from_deg: 0.0,
                to_deg: 0.0,
            }),
            Shape::Sector {
                center,
                from_deg,
                to_deg,
                ..
            } => Some(MovedZone {
                center: (center.x, center.y),
                from_deg,
                to_deg,
            }),
            _ => None,
        }
    }

    /// The zone `base` moved here.
    fn shape(&self, base: &Shape) -> Option<Shape> {
        let center = crate::event::Point {
            x: self.center.0,
            y: self.center.1,
        };
        match *base {
            Shape::Circle { radius, .. } => Some(Shape::Circle { center, radius }),
            Shape::Sector { radius, .. } => Some(Shape::Sector {
                center,
                radius,
                from_deg: self.from_deg,
                to_deg: self.to_deg,
            }),
            _ => None,
        }
    }
}
