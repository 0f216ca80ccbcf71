//! The [`Detector`]: pushes atomic events through a compiled net, in event time,
//! and returns the detections each one causes. `step.rs` fires components and fans
//! their tokens out, `saved.rs` snapshots and restores, `zones.rs` moves zones,
//! `outline.rs` draws the zones as GeoJSON, and `limits.rs` holds the options,
//! counters and errors.

mod limits;
mod names;
mod outline;
mod reload;
mod saved;
mod step;
mod zones;

pub use limits::{DetectorOptions, PushError, Stats};
pub use reload::{ReloadError, ReloadReport};

use std::sync::Arc;

use super::component::{Component, CountShared, Guard};
use super::detection::Detection;
use super::dirty::Dirty;
use super::place::TokenBudget;
use super::program::Program;
use super::timer::Timers;
use super::token::{KeyVal, Term, Token};
use crate::event::{Event, Space, Timestamp};
use smallvec::SmallVec;

/// How many event types' names a detector knows by their address
/// ([`Detector::type_of`]).
const KINDS: usize = 8;

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
    components: Vec<Component>,
    timers: Timers,
    budget: TokenBudget,
    now: Timestamp,
    /// Steps taken (events and timer ticks); the next step's number.
    steps: u64,
    serial: u64,
    seq: u64,
    processed: u64,
    /// Per component: the tokens that arrived this step, as their input arc and
    /// their place in `held`.
    inbox: Vec<Vec<(u32, u32)>>,
    /// The tokens of the current step that components read, each kept once however
    /// many components read it (an inbox names it), and dropped when the step ends.
    held: Vec<Token>,
    /// Units with a non-empty inbox, taken in topological order.
    dirty: Dirty,
    produced: Vec<Token>,
    routed: Vec<(usize, Token)>,
    /// The counting indexes.
    counts: Vec<CountShared>,
    /// Where the current step's detections go: the caller's vector, taken for the
    /// step (see [`Detector::emitting`]) so that each detection is written once, in
    /// place; empty between steps.
    emitted: Vec<Detection>,
    /// The current step is an observed event's: it makes no detections.
    quiet: bool,
    /// Tokens the states let go of in the steps since the last event (see
    /// [`Detector::push_into_spent`]).
    released: Vec<Token>,
    /// The names of recent events' types, as they carried them, each with its place
    /// in the program's `types` (`None`: a type no atomic component reads): see
    /// [`Detector::type_of`].
    kinds: [(Option<Arc<str>>, Option<usize>); KINDS],
    /// For each key attribute of the net, the name as the last event that had it
    /// carried it: see [`Detector::key_values`].
    key_names: Vec<Option<Arc<str>>>,
    /// The output names detections carry, the detector's own copies.
    names: names::OutputNames,
}

impl Detector {
    /// A detector running `program`, with the given limits.
    pub(crate) fn from_program(program: Arc<Program>, options: DetectorOptions) -> Detector {
        let mut components = program.components.clone();
        if !options.zone_index {
            for u in &mut components {
                if let Component::Stab(stab) = u {
                    stab.scan_linearly();
                }
            }
        }
        let n = components.len();
        let space = program.model.space;
        let counts = program
            .counts
            .iter()
            .map(|g| CountShared::new(space, g.rules.clone(), g.distinct.clone(), options.max_sets))
            .collect();
        Detector {
            components,
            timers: Timers::default(),
            budget: TokenBudget::new(options.max_tokens),
            now: Timestamp::MIN,
            steps: 0,
            serial: 0,
            seq: 0,
            processed: 0,
            inbox: vec![Vec::new(); n],
            held: Vec::new(),
            dirty: Dirty::new(n),
            produced: Vec::new(),
            routed: Vec::new(),
            counts,
            emitted: Vec::new(),
            quiet: false,
            released: Vec::new(),
            kinds: Default::default(),
            key_names: vec![None; program.model.key_attrs.len()],
            names: names::OutputNames::of(&program),
            program,
            options,
        }
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
    /// [`PushError::Late`] if the event is older than the detector's time;
    /// [`PushError::NotFinite`] if a coordinate of its location is NaN or infinite;
    /// [`PushError::OutOfRange`] if, on a `Wgs84` net, its longitude is beyond ±180°
    /// or its latitude beyond ±90°. An event refused is not processed.
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
    /// As [`Detector::push`].
    pub fn observe_into(
        &mut self,
        event: Event,
        out: &mut Vec<Detection>,
    ) -> Result<(), PushError> {
        self.admit(&event)?;
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
    /// As [`Detector::push`].
    pub fn push_into(&mut self, event: Event, out: &mut Vec<Detection>) -> Result<(), PushError> {
        let pushed = self.step_event(event, out).0;
        self.released.clear();
        pushed
    }

    /// Like [`Detector::push_into`], and appends the event to `spent` when the net
    /// kept no part of it (most events, in most nets) or refused it, and so too any
    /// earlier event the net has now let go of (a state's report replaced by a newer
    /// one), so that the caller chooses where they are dropped. `ccpn-run` hands
    /// `spent` back to the thread that reads the input, so that the detector's thread
    /// does not spend its time freeing events.
    ///
    /// ```
    /// use ccpn::{Detector, Event, Net, Timestamp};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(
    ///     events: { "a": Atomic(type: "A"), "ab": Seq(of: ["a", "b"], within: 60.0), "b": Atomic(type: "B") },
    ///     outputs: ["ab"],
    /// )"#)?;
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let (mut d, mut out, mut spent) = (Detector::new(&net), Vec::new(), Vec::new());
    /// d.push_into_spent(Event::new(1, "A", t(0.0)), &mut out, &mut spent)?; // waits for a B
    /// d.push_into_spent(Event::new(2, "C", t(1.0)), &mut out, &mut spent)?; // of no use
    /// d.push_into_spent(Event::new(3, "B", t(2.0)), &mut out, &mut spent)?; // ends "ab"
    /// assert_eq!(out.len(), 1); // which holds events 1 and 3
    /// assert_eq!(spent.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), vec![2.into()]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Detector::push`].
    pub fn push_into_spent(
        &mut self,
        event: Event,
        out: &mut Vec<Detection>,
        spent: &mut Vec<Event>,
    ) -> Result<(), PushError> {
        let (pushed, left) = self.step_event(event, out);
        match left {
            Left::Event(event) => spent.push(event),
            Left::Term(term) => {
                if let Some(term) = Arc::into_inner(term) {
                    spent.push(term.into_event());
                }
            }
        }
        for tok in self.released.drain(..) {
            if let Some(term) = Arc::into_inner(tok.term) {
                spent.push(term.into_event());
            }
        }
        pushed
    }

    /// A hint for a caller that holds the events to come: brings into cache what
    /// pushing `event` will read first where the event alone says what that is (the
    /// cell of the zone index of the `Within` rules its type reaches, when they watch
    /// thousands of zones). Called a few events before `event` is pushed, it lets the
    /// memory of a net of many zones be fetched for several events at once rather
    /// than for one after another, as `ccpn-run` does for each batch it reads.
    /// Nothing changes: what is detected is the same with or without it, and it
    /// costs nothing on a net without such rules.
    ///
    /// ```
    /// use ccpn::{Detector, Event, Net, Timestamp};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(
    ///     zones: { "pier": Circle(center: (0.0, 0.0), radius: 10.0) },
    ///     events: { "a": Atomic(type: "A"), "at_pier": Within(of: "a", zones: ["pier"]) },
    ///     outputs: ["at_pier"],
    /// )"#)?;
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let events: Vec<Event> = (0..4i32)
    ///     .map(|i| Event::new(i64::from(i), "A", t(f64::from(i))).at(f64::from(i) * 5.0, 0.0))
    ///     .collect();
    /// let (mut d, mut out) = (Detector::new(&net), Vec::new());
    /// for (i, ev) in events.iter().enumerate() {
    ///     if let Some(next) = events.get(i + 2) {
    ///         d.prefetch(next);
    ///     }
    ///     d.push_into(ev.clone(), &mut out)?;
    /// }
    /// assert_eq!(out.len(), 3); // at 0, 5 and 10 from the pier
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn prefetch(&self, event: &Event) {
        if !self.program.looks_ahead {
            return;
        }
        // A type not seen lately is not looked up: its name's text, which the
        // reading threads write beside, would be read twice.
        if let Some(Some(t)) = self.known_type(&event.kind) {
            for &c in self.program.types[t].ahead() {
                self.components[c].fetch_ahead(event);
            }
        }
    }

    /// Pushes `event`, giving back what is left of it: the event itself when it was
    /// refused or no atomic component reads its type, else its term (shared with the
    /// tokens that hold it, if any).
    fn step_event(
        &mut self,
        event: Event,
        out: &mut Vec<Detection>,
    ) -> (Result<(), PushError>, Left) {
        if let Err(e) = self.admit(&event) {
            return (Err(e), Left::Event(event));
        }
        self.run_timers(event.time, false, out);
        self.now = event.time;
        self.processed += 1;
        let step = self.next_step();
        let Some(t) = self.type_of(&event.kind) else {
            return (Ok(()), Left::Event(event));
        };
        let keys = self.key_values(&event);
        let program = Arc::clone(&self.program);
        debug_assert!(program
            .model
            .key_attrs
            .iter()
            .map(|a| event.attr(a).map(KeyVal::from))
            .eq(keys.iter().cloned()));
        let atomics = &program.types[t];
        let tok = Token::atomic(step, Arc::new(Term::with_keys(event, keys)));
        for &c in atomics.warm() {
            self.components[c].warm(&tok.term);
        }
        self.emitting(out, |d| {
            // The atomic components read the type's source place first: fire them
            // here rather than through the step's inbox (their consumers all come
            // later).
            atomics.each(&tok.term, |id| {
                // An atomic component passes the events its filter matches: tested
                // here, so that one that does not match costs no firing.
                if let Component::Guard(Guard::Atomic(filter)) = &d.components[id] {
                    if filter.as_ref().is_none_or(|f| f.matches(&tok.term)) {
                        d.pass(id, step, &tok);
                    }
                } else {
                    d.fire(id, step, |u, cx, _| u.fire(0, &tok, cx));
                }
            });
            d.run_step(step);
        });
        (Ok(()), Left::Term(tok.term))
    }

    /// The place in the program's `types` of the event type named `kind`. Events share
    /// one copy of each type's name, whose text the threads that read them keep
    /// writing beside (its reference count): a name seen lately is known by its
    /// address, without reading its text.
    fn type_of(&mut self, kind: &Arc<str>) -> Option<usize> {
        if let Some(t) = self.known_type(kind) {
            return t;
        }
        let t = self.program.by_type.get(&**kind).copied();
        self.kinds.rotate_right(1);
        self.kinds[0] = (Some(Arc::clone(kind)), t);
        t
    }

    /// [`Detector::type_of`] for a name seen lately (known by its address); `None`
    /// for another.
    #[inline]
    fn known_type(&self, kind: &Arc<str>) -> Option<Option<usize>> {
        self.kinds
            .iter()
            .find(|(seen, _)| seen.as_ref().is_some_and(|s| Arc::ptr_eq(s, kind)))
            .map(|&(_, t)| t)
    }

    /// `event`'s values of the net's key attributes, as [`Term::new`] reads them. An
    /// attribute whose name is the one the last event that had it carried is found
    /// by the name's address (as [`Detector::type_of`] finds a type), once no
    /// attribute before it has its name.
    fn key_values(&mut self, event: &Event) -> SmallVec<[Option<KeyVal>; 1]> {
        let Detector {
            program, key_names, ..
        } = self;
        program
            .model
            .key_attrs
            .iter()
            .zip(key_names.iter_mut())
            .map(|(a, seen)| {
                let attrs = &event.attrs;
                let by_address = seen
                    .as_ref()
                    .and_then(|s| attrs.iter().position(|(k, _)| Arc::ptr_eq(k, s)))
                    .filter(|&i| attrs[..i].iter().all(|(k, _)| **k != **a));
                let i = by_address.or_else(|| {
                    let i = attrs.iter().position(|(k, _)| **k == **a)?;
                    *seen = Some(Arc::clone(&attrs[i].0));
                    Some(i)
                });
                i.map(|i| KeyVal::from(&attrs[i].1))
            })
            .collect()
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
        self.released.clear();
        out
    }

    /// Whether `event` may be pushed: not late, and located (if at all) at finite
    /// coordinates, within ±180° and ±90° on a `Wgs84` net, as the readers of
    /// [`crate::io::read`] require. (A [`Timestamp`] is never NaN.)
    fn admit(&self, event: &Event) -> Result<(), PushError> {
        if event.time < self.now {
            return Err(PushError::Late {
                time: event.time,
                now: self.now,
            });
        }
        let Some(p) = event.location else {
            return Ok(());
        };
        if !p.x.is_finite() || !p.y.is_finite() {
            return Err(PushError::NotFinite { x: p.x, y: p.y });
        }
        if self.program.model.space == Space::Wgs84 && (p.x.abs() > 180.0 || p.y.abs() > 90.0) {
            return Err(PushError::OutOfRange { lon: p.x, lat: p.y });
        }
        Ok(())
    }

    /// Ends the stream: fires the ticks due at the current time. No event should be
    /// pushed at the current time afterwards.
    pub fn finish(&mut self) -> Vec<Detection> {
        let mut out = Vec::new();
        let now = self.now;
        self.run_timers(now, true, &mut out);
        self.released.clear();
        out
    }

    /// Counters of the work so far.
    pub fn stats(&self) -> Stats {
        let live: usize = self.components.iter().map(Component::live).sum::<usize>()
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

    /// Runs the timers due before `bound` (or at it, if `inclusive`). Every timer due
    /// at one instant fires in one step (a timed instant is one cause, as an input
    /// event is), the components in topological order, each after the tokens that
    /// reached it in that step.
    fn run_timers(&mut self, bound: Timestamp, inclusive: bool, out: &mut Vec<Detection>) {
        while let Some((at, component, tag)) = self.timers.pop_due(bound, inclusive) {
            self.now = self.now.max(at);
            let step = self.next_step();
            let mut due = vec![(component, tag)];
            while let Some(next) = self.timers.pop_at(at) {
                due.push(next);
            }
            let mut due = due.into_iter().peekable();
            self.emitting(out, |d| {
                loop {
                    match (d.dirty.peek(), due.peek().copied()) {
                        (Some(first), Some((c, _))) if first <= c => {
                            d.run_component(step);
                        }
                        (_, Some((c, tag))) => {
                            due.next();
                            d.fire(c, step, |u, cx, _| u.tick(at, tag, bound, cx));
                        }
                        (Some(_), None) => {
                            d.run_component(step);
                        }
                        (None, None) => break,
                    }
                }
                d.held.clear();
            });
        }
    }

    /// Runs `step` with the detections it makes appended to `out` as they are made:
    /// `out` is the step's `emitted` while it runs.
    #[inline]
    fn emitting(&mut self, out: &mut Vec<Detection>, step: impl FnOnce(&mut Self)) {
        debug_assert!(self.emitted.is_empty());
        std::mem::swap(&mut self.emitted, out);
        step(self);
        std::mem::swap(&mut self.emitted, out);
    }
}

/// What is left of an event after its step: see [`Detector::step_event`].
enum Left {
    Event(Event),
    Term(Arc<Term>),
}
