//! Component nets at run time: one file per operator, each holding its places and
//! firing its transitions when a token arrives on one of its input arcs.

mod any;
mod count;
mod guard;
mod interval;
mod moved;
mod not;
mod pair;
mod stab;
mod state;
mod times;

pub(crate) use any::Any;
pub(crate) use count::{Count, CountShared};
pub(crate) use guard::Guard;
pub(crate) use interval::Interval;
pub(crate) use not::Not;
pub(crate) use pair::Pair;
pub(crate) use stab::Stab;
pub(crate) use state::{
    Close, Combine, Decide, During, Lasting, NearZones, PhaseOf, Silent, Stationary, Toggle,
};
pub(crate) use times::Times;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::place::{Place, TokenBudget};
use super::timer::Timers;
use super::token::Token;
use crate::event::{Space, Timestamp};
use crate::model::PairOpts;

/// What a firing may read and change beyond its own places.
pub(crate) struct Cx<'a> {
    /// Event time of the step.
    pub(crate) now: Timestamp,
    /// The step's number: tokens it makes carry it as their cause.
    pub(crate) cause: u64,
    pub(crate) space: Space,
    pub(crate) budget: &'a mut TokenBudget,
    pub(crate) timers: &'a mut Timers,
    /// The index of the component firing (for its timers).
    pub(crate) component: usize,
    /// Tokens put in the component's output place.
    pub(crate) out: &'a mut Vec<Token>,
    /// Tokens put in the output place of another component (a shared index serving
    /// several components routes their tokens): (component, token).
    pub(crate) routed: &'a mut Vec<(usize, Token)>,
    /// The counting indexes, shared by the `Count` components that read one input.
    pub(crate) counts: &'a mut [CountShared],
    /// The tokens this component makes now would be dropped unread (an observed event's
    /// step, and nothing reads the component's output place): a component may skip making them.
    pub(crate) discard: bool,
    /// Tokens a state has let go of (see `state::Graves`): the detector hands their
    /// events, when nothing else holds them, to its caller to free.
    pub(crate) released: &'a mut Vec<Token>,
}

impl Cx<'_> {
    pub(crate) fn emit(&mut self, tok: Token) {
        self.out.push(tok);
    }
}

/// One component net's run-time state.
#[derive(Clone, Debug)]
pub(crate) enum Component {
    /// Atomic, Within, Direction(box), Or: a transition with a guard and no memory.
    Guard(Guard),
    Pair(Pair),
    Not(Not),
    Any(Any),
    Times(Times),
    Interval(Interval),
    Count(Count),
    /// The shared zone R*-tree of a group of `Within` components.
    Stab(Stab),
    /// A component whose firing a shared index does (a `Within` of a stab group).
    Served,
    /// `State`, `Inside`.
    Toggle(Toggle),
    Stationary(Stationary),
    Silent(Silent),
    Lasting(Lasting),
    Close(Close),
    /// `AllOf`, `AnyOf`, `Unless`.
    Combine(Combine),
    /// `Starts`, `Ends`.
    Phase(PhaseOf),
    During(During),
}

impl Component {
    /// A token arrives on input arc `role` (the operand's position in the operator).
    pub(crate) fn fire(&mut self, role: usize, tok: &Token, cx: &mut Cx<'_>) {
        match self {
            Component::Guard(u) => u.fire(tok, cx),
            Component::Pair(u) => u.fire(role, tok, cx),
            Component::Not(u) => u.fire(role, tok, cx),
            Component::Any(u) => u.fire(role, tok, cx),
            Component::Times(u) => u.fire(tok, cx),
            Component::Interval(u) => u.fire(role, tok, cx),
            Component::Count(u) => u.fire(tok, cx),
            Component::Stab(u) => u.fire(tok, cx),
            Component::Phase(u) => u.fire(tok, cx),
            Component::During(u) => u.fire(role, tok, cx),
            Component::Served => {}
            Component::Toggle(u) => u.fire(role, tok, cx),
            Component::Stationary(u) => u.fire(tok, cx),
            Component::Silent(u) => u.fire(tok, cx),
            Component::Lasting(_) | Component::Close(_) | Component::Combine(_) => {
                self.fire_step(&[(role, tok)], cx)
            }
        }
    }

    /// Does the component fire once per step, with all of the step's tokens
    /// ([`Component::fire_step`]), rather than once per token?
    pub(crate) fn fires_per_step(&self) -> bool {
        matches!(
            self,
            Component::Toggle(_)
                | Component::Stationary(_)
                | Component::Silent(_)
                | Component::Lasting(_)
                | Component::Close(_)
                | Component::Combine(_)
        )
    }

    /// Does the component hold an entry per key value that [`Component::warm`] can
    /// fetch ahead of a step?
    pub(crate) fn warms(&self) -> bool {
        matches!(
            self,
            Component::Toggle(_) | Component::Stationary(_) | Component::Silent(_)
        )
    }

    /// An event (`term`) will reach this component in the coming step: brings what
    /// its firing reads first into cache. A hint: no state changes.
    pub(crate) fn warm(&self, term: &super::token::Term) {
        match self {
            Component::Toggle(u) => u.warm(term),
            Component::Stationary(u) => u.warm(term),
            Component::Silent(u) => u.warm(term),
            _ => {}
        }
    }

    /// Does the component read, for each occurrence, memory found from the
    /// occurrence's location alone, that [`Component::fetch_ahead`] can bring into
    /// cache events before they come?
    pub(crate) fn looks_ahead(&self) -> bool {
        matches!(self, Component::Stab(u) if u.worth_fetching_ahead())
    }

    /// `event` will reach this component some events from now: brings what its firing
    /// reads first, found from the event alone, into cache. A hint: no state changes.
    pub(crate) fn fetch_ahead(&self, event: &crate::event::Event) {
        if let (Component::Stab(u), Some(p)) = (self, event.location) {
            u.prefetch(p);
        }
    }

    /// Every token of a step at once, by input arc then arrival (states: an on and an
    /// off of one step cancel, and the first cause by ids is chosen among them all).
    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        match self {
            Component::Toggle(u) => u.fire_step(inbox, cx),
            Component::Stationary(u) => u.fire_step(inbox, cx),
            Component::Silent(u) => u.fire_step(inbox, cx),
            Component::Lasting(u) => u.fire_step(inbox, cx),
            Component::Close(u) => u.fire_step(inbox, cx),
            Component::Combine(u) => u.fire_step(inbox, cx),
            other => {
                for (role, tok) in inbox {
                    other.fire(*role, tok, cx);
                }
            }
        }
    }

    /// The zone `z` as this component holds it now, if it holds it.
    pub(crate) fn zone(&self, z: usize) -> Option<&crate::spatial::Zone> {
        match self {
            Component::Stab(u) => u.zone(z),
            Component::Toggle(u) => u.zone(z),
            _ => None,
        }
    }

    /// Zone `z` moved: it is now `zone`.
    pub(crate) fn update_zone(&mut self, z: usize, zone: &crate::spatial::Zone) {
        match self {
            Component::Stab(u) => u.update(z, zone.clone()),
            Component::Toggle(u) => u.update_zone(z, zone),
            _ => {}
        }
    }

    /// A timer set by this component is due, in a run of timers up to `until` (the
    /// time the detector is moving to).
    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, until: Timestamp, cx: &mut Cx<'_>) {
        match self {
            Component::Interval(u) => u.tick(at, tag, until, cx),
            Component::Stationary(u) => u.tick(at, cx),
            Component::Silent(u) => u.tick(at, cx),
            Component::Lasting(u) => u.tick(at, cx),
            _ => {}
        }
    }

    /// The component's places, for statistics and drawing.
    pub(crate) fn places(&self) -> Vec<&Place> {
        match self {
            Component::Guard(_)
            | Component::Interval(_)
            | Component::Count(_)
            | Component::Stab(_)
            | Component::Served
            | Component::Toggle(_)
            | Component::Stationary(_)
            | Component::Silent(_)
            | Component::Lasting(_)
            | Component::Close(_)
            | Component::Combine(_)
            | Component::Phase(_)
            | Component::During(_) => {
                vec![]
            }
            Component::Pair(u) => u.places(),
            Component::Not(u) => vec![u.places()],
            Component::Any(u) => u.places(),
            Component::Times(u) => vec![u.places()],
        }
    }

    /// Tokens held, including those not kept in a [`Place`].
    pub(crate) fn live(&self) -> usize {
        match self {
            Component::Interval(u) => u.live(),
            Component::Toggle(u) => u.live(),
            Component::Stationary(u) => u.live(),
            Component::Silent(u) => u.live(),
            Component::Lasting(u) => u.live(),
            Component::Close(u) => u.live(),
            Component::Combine(u) => u.live(),
            _ => self.places().iter().map(|p| p.len()).sum(),
        }
    }
}

/// What a snapshot keeps of a component: the state of the components that hold any (the whole
/// component, borrowed when written), nothing for the others (a restored detector builds
/// them from its net). The zones of `Stab` components that move are kept by the detector.
#[derive(Serialize, Deserialize)]
pub(crate) enum ComponentState<'a> {
    Stateless,
    Pair(Cow<'a, Pair>),
    Not(Cow<'a, Not>),
    Any(Cow<'a, Any>),
    Times(Cow<'a, Times>),
    Interval(Cow<'a, Interval>),
    Toggle(Cow<'a, Toggle>),
    Stationary(Cow<'a, Stationary>),
    Silent(Cow<'a, Silent>),
    Lasting(Cow<'a, Lasting>),
    Close(Cow<'a, Close>),
    Combine(Cow<'a, Combine>),
    During(Cow<'a, During>),
}

impl Component {
    /// The component's state, for a snapshot.
    pub(crate) fn save(&self) -> ComponentState<'_> {
        match self {
            Component::Pair(u) => ComponentState::Pair(Cow::Borrowed(u)),
            Component::Not(u) => ComponentState::Not(Cow::Borrowed(u)),
            Component::Any(u) => ComponentState::Any(Cow::Borrowed(u)),
            Component::Times(u) => ComponentState::Times(Cow::Borrowed(u)),
            Component::Interval(u) => ComponentState::Interval(Cow::Borrowed(u)),
            Component::Toggle(u) => ComponentState::Toggle(Cow::Borrowed(u)),
            Component::Stationary(u) => ComponentState::Stationary(Cow::Borrowed(u)),
            Component::Silent(u) => ComponentState::Silent(Cow::Borrowed(u)),
            Component::Lasting(u) => ComponentState::Lasting(Cow::Borrowed(u)),
            Component::Close(u) => ComponentState::Close(Cow::Borrowed(u)),
            Component::Combine(u) => ComponentState::Combine(Cow::Borrowed(u)),
            Component::During(u) => ComponentState::During(Cow::Borrowed(u)),
            Component::Guard(_)
            | Component::Count(_)
            | Component::Stab(_)
            | Component::Served
            | Component::Phase(_) => ComponentState::Stateless,
        }
    }

    /// Takes the state `s` saved from the same component of the same net; `false` if it
    /// is of another kind of component.
    pub(crate) fn load(&mut self, s: ComponentState<'_>) -> bool {
        match (self, s) {
            (Component::Pair(u), ComponentState::Pair(s)) => *u = s.into_owned(),
            (Component::Not(u), ComponentState::Not(s)) => *u = s.into_owned(),
            (Component::Any(u), ComponentState::Any(s)) => *u = s.into_owned(),
            (Component::Times(u), ComponentState::Times(s)) => *u = s.into_owned(),
            (Component::Interval(u), ComponentState::Interval(s)) => *u = s.into_owned(),
            (Component::Toggle(u), ComponentState::Toggle(s)) => u.load(s.into_owned()),
            (Component::Stationary(u), ComponentState::Stationary(s)) => u.load(s.into_owned()),
            (Component::Silent(u), ComponentState::Silent(s)) => u.load(s.into_owned()),
            (Component::Lasting(u), ComponentState::Lasting(s)) => u.load(s.into_owned()),
            (Component::Close(u), ComponentState::Close(s)) => u.load(s.into_owned()),
            (Component::Combine(u), ComponentState::Combine(s)) => u.load(s.into_owned()),
            (Component::During(u), ComponentState::During(s)) => u.load(s.into_owned()),
            (
                Component::Guard(_)
                | Component::Count(_)
                | Component::Stab(_)
                | Component::Served
                | Component::Phase(_),
                ComponentState::Stateless,
            ) => {}
            _ => return false,
        }
        true
    }
}

/// Is `x`, processed before `y`, eligible to pair with it under `opts`' window and
/// `distinct` (keys are matched by the place's buckets)?
pub(crate) fn eligible(opts: &PairOpts, x: &Token, y: &Token) -> bool {
    if x.cause >= y.cause {
        return false;
    }
    if let Some(w) = opts.window {
        if y.end.since(x.start.min(y.start)) > w {
            return false;
        }
    }
    distinct_ok(opts, x, y)
}

/// With `distinct: attr`, do `x` and `y` both have `attr`, with different values?
pub(crate) fn distinct_ok(opts: &PairOpts, x: &Token, y: &Token) -> bool {
    match &opts.distinct {
        None => true,
        Some(attr) => match (x.key(attr), y.key(attr)) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        },
    }
}
