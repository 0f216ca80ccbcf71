//! Component nets at run time: one file per operator, each holding its places and
//! firing its transitions when a token arrives on one of its input arcs.

mod any;
mod count;
mod guard;
mod interval;
mod not;
mod pair;
mod stab;
mod times;

pub(crate) use any::Any;
pub(crate) use count::{Count, CountShared};
pub(crate) use guard::Guard;
pub(crate) use interval::Interval;
pub(crate) use not::Not;
pub(crate) use pair::Pair;
pub(crate) use stab::Stab;
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
    /// The index of the unit firing (for its timers).
    pub(crate) unit: usize,
    /// Tokens put in the unit's output place.
    pub(crate) out: &'a mut Vec<Token>,
    /// Tokens put in the output place of another component (a shared index serving
    /// several components routes their tokens): (component, token).
    pub(crate) routed: &'a mut Vec<(usize, Token)>,
    /// The counting indexes, shared by the `Count` components that read one input.
    pub(crate) counts: &'a mut [CountShared],
    /// The tokens this unit makes now would be dropped unread (an observed event's
    /// step, and nothing reads the unit's output place): a unit may skip making them.
    pub(crate) discard: bool,
}

impl Cx<'_> {
    pub(crate) fn emit(&mut self, tok: Token) {
        self.out.push(tok);
    }
}

/// One component net's run-time state.
#[derive(Clone, Debug)]
pub(crate) enum Unit {
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
}

impl Unit {
    /// A token arrives on input arc `role` (the operand's position in the operator).
    pub(crate) fn fire(&mut self, role: usize, tok: &Token, cx: &mut Cx<'_>) {
        match self {
            Unit::Guard(u) => u.fire(tok, cx),
            Unit::Pair(u) => u.fire(role, tok, cx),
            Unit::Not(u) => u.fire(role, tok, cx),
            Unit::Any(u) => u.fire(role, tok, cx),
            Unit::Times(u) => u.fire(tok, cx),
            Unit::Interval(u) => u.fire(role, tok, cx),
            Unit::Count(u) => u.fire(tok, cx),
            Unit::Stab(u) => u.fire(tok, cx),
            Unit::Served => {}
        }
    }

    /// A timer set by this unit is due.
    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        if let Unit::Interval(u) = self {
            u.tick(at, tag, cx);
        }
    }

    /// The unit's places, for statistics and drawing.
    pub(crate) fn places(&self) -> Vec<&Place> {
        match self {
            Unit::Guard(_) | Unit::Interval(_) | Unit::Count(_) | Unit::Stab(_) | Unit::Served => {
                vec![]
            }
            Unit::Pair(u) => u.places(),
            Unit::Not(u) => vec![u.places()],
            Unit::Any(u) => u.places(),
            Unit::Times(u) => vec![u.places()],
        }
    }

    /// Tokens held, including those not kept in a [`Place`].
    pub(crate) fn live(&self) -> usize {
        match self {
            Unit::Interval(u) => u.live(),
            _ => self.places().iter().map(|p| p.len()).sum(),
        }
    }
}

/// What a snapshot keeps of a unit: the state of the units that hold any (the whole
/// unit, borrowed when written), nothing for the others (a restored detector builds
/// them from its net). The zones of `Stab` units that move are kept by the detector.
#[derive(Serialize, Deserialize)]
pub(crate) enum UnitState<'a> {
    Stateless,
    Pair(Cow<'a, Pair>),
    Not(Cow<'a, Not>),
    Any(Cow<'a, Any>),
    Times(Cow<'a, Times>),
    Interval(Cow<'a, Interval>),
}

impl Unit {
    /// The unit's state, for a snapshot.
    pub(crate) fn save(&self) -> UnitState<'_> {
        match self {
            Unit::Pair(u) => UnitState::Pair(Cow::Borrowed(u)),
            Unit::Not(u) => UnitState::Not(Cow::Borrowed(u)),
            Unit::Any(u) => UnitState::Any(Cow::Borrowed(u)),
            Unit::Times(u) => UnitState::Times(Cow::Borrowed(u)),
            Unit::Interval(u) => UnitState::Interval(Cow::Borrowed(u)),
            Unit::Guard(_) | Unit::Count(_) | Unit::Stab(_) | Unit::Served => UnitState::Stateless,
        }
    }

    /// Takes the state `s` saved from the same unit of the same net; `false` if it
    /// is of another kind of unit.
    pub(crate) fn load(&mut self, s: UnitState<'_>) -> bool {
        match (self, s) {
            (Unit::Pair(u), UnitState::Pair(s)) => *u = s.into_owned(),
            (Unit::Not(u), UnitState::Not(s)) => *u = s.into_owned(),
            (Unit::Any(u), UnitState::Any(s)) => *u = s.into_owned(),
            (Unit::Times(u), UnitState::Times(s)) => *u = s.into_owned(),
            (Unit::Interval(u), UnitState::Interval(s)) => *u = s.into_owned(),
            (
                Unit::Guard(_) | Unit::Count(_) | Unit::Stab(_) | Unit::Served,
                UnitState::Stateless,
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
