//! Detections: occurrences of the net's output events, as the detector reports them.

use std::sync::Arc;

use super::token::{Extra, Member, Members, StateKeyVal, Term, Token};
use crate::event::{Event, Id, Point, Timestamp, Value};
use crate::spatial::Zone;

/// What an operator adds to a detection beyond time, place and constituents.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Detail {
    /// Nothing more.
    #[default]
    None,
    /// `Within`: the name of the first zone (in name order) that contains the occurrence.
    Zone(Arc<str>),
    /// `Dist`: the distance between the pair (planar components, or metres on WGS84).
    Distance(f64),
    /// `PStar`: the number of ticks inside the interval.
    Ticks(u64),
    /// A state's transition (the detection's `start` is when the state became true).
    Transition {
        /// A start (false → true) or an end.
        phase: Phase,
        /// The key value whose state changed: none for a state without `key`, one
        /// value, or the two values of a `Close` pair (in a fixed order).
        key: Vec<Value>,
        /// The detection's `start` as RFC 3339 text, when the state's start was
        /// reported with a time in that form.
        start_text: Option<Arc<str>>,
    },
}

/// Which transition of a state a detection reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The state became true.
    Start,
    /// The state became false.
    End,
}

/// One occurrence of an output event.
#[derive(Clone, Debug)]
pub struct Detection {
    /// The output's name, as in the net.
    pub event: Arc<str>,
    /// The detection's number in the run, from 0.
    pub seq: u64,
    /// The occurrence's time: its latest constituent's (a tick's time for `P`).
    pub time: Timestamp,
    /// `time` as RFC 3339 text, when the terminator's time was given that way.
    pub time_text: Option<Arc<str>>,
    /// The earliest constituent's time.
    pub start: Timestamp,
    /// The terminator's location.
    pub location: Option<Point>,
    /// The atomic events that make up the occurrence, ordered by time then input order.
    members: Arc<[Member]>,
    /// Operator-specific facts.
    pub detail: Detail,
}

impl Detection {
    pub(crate) fn from_token(event: Arc<str>, seq: u64, tok: &Token, zones: &[Zone]) -> Detection {
        Detection {
            event,
            seq,
            time: tok.end,
            time_text: time_text(&tok.term, tok.end),
            start: start_of(tok.start, &tok.extra),
            location: tok.term.location,
            members: tok.members_list(),
            detail: detail(&tok.extra, zones),
        }
    }

    /// As [`Detection::from_token`], taking the token's constituents rather than
    /// sharing them (for a token that goes nowhere else).
    pub(crate) fn from_last_token(
        event: Arc<str>,
        seq: u64,
        tok: Token,
        zones: &[Zone],
    ) -> Detection {
        let Token {
            start,
            end,
            term,
            members,
            extra,
            ..
        } = tok;
        let time_text = time_text(&term, end);
        let location = term.location;
        let members = match members {
            Members::One(seq) => Arc::new([Member { seq, event: term }]),
            Members::Many(ms) => ms,
        };
        Detection {
            event,
            seq,
            time: end,
            time_text,
            start: start_of(start, &extra),
            location,
            members,
            detail: detail(&extra, zones),
        }
    }

    /// The atomic events that make up the occurrence, ordered by time then input order.
    pub fn members(&self) -> impl ExactSizeIterator<Item = &Event> {
        self.members.iter().map(|m| &**m.event)
    }

    /// The ids of the constituents, ordered by time then input order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = &Id> {
        self.members.iter().map(|m| &m.event.id)
    }
}

/// The text of time `end` of an occurrence terminated by `term`: as the terminator
/// gave it, if it gave it as text.
#[inline]
pub(crate) fn time_text(term: &Term, end: Timestamp) -> Option<Arc<str>> {
    match &term.time_text {
        Some(text) if end == term.time => Some(text.clone()),
        Some(_) => Some(end.to_rfc3339().into()),
        None => None,
    }
}

#[inline]
fn detail(extra: &Extra, zones: &[Zone]) -> Detail {
    match extra {
        Extra::None => Detail::None,
        Extra::Zone(z) => Detail::Zone(zones[*z as usize].name.clone()),
        Extra::Distance(d) => Detail::Distance(*d),
        Extra::Ticks(n) => Detail::Ticks(*n),
        Extra::Transition(t) => Detail::Transition {
            phase: if t.start { Phase::Start } else { Phase::End },
            start_text: t.since.text.clone(),
            key: match &t.key {
                StateKeyVal::Whole => Vec::new(),
                StateKeyVal::One(k) => vec![k.value()],
                StateKeyVal::Pair(a, b) => vec![a.value(), b.value()],
            },
        },
    }
}

/// The start of a detection: its earliest constituent's time, or for a state's
/// transition, the time the state became true.
#[inline]
fn start_of(tok_start: Timestamp, extra: &Extra) -> Timestamp {
    match extra {
        Extra::Transition(t) => t.since.at,
        _ => tok_start,
    }
}
