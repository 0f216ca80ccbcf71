//! Tokens: the colour the net carries — interval, terminator, constituents, key.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub(crate) use super::detection::Detail as Extra;
use crate::event::{Event, Timestamp, Value};

/// One atomic constituent of an occurrence: the input event and its processing number
/// (which orders constituents by time, then input order).
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) seq: u64,
    pub(crate) event: Arc<Event>,
}

/// A token: one occurrence of an event of the net, coloured with its interval,
/// its terminator (whose location, attributes and time form it carries), and its
/// atomic constituents.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    /// Earliest constituent time.
    pub(crate) start: Timestamp,
    /// Latest constituent time (a tick's time for periodic occurrences).
    pub(crate) end: Timestamp,
    /// The step (input event or timer) that produced the token. Two tokens of the
    /// same step never pair with each other.
    pub(crate) cause: u64,
    /// Global creation order: larger is more recent.
    pub(crate) serial: u64,
    /// The terminator: the latest constituent (the start, for a tick).
    pub(crate) term: Arc<Event>,
    /// Constituents, sorted by `seq`, without repeats.
    pub(crate) members: Arc<[Member]>,
    pub(crate) extra: Extra,
}

impl Token {
    /// The token of an atomic event processed as step `seq`.
    pub(crate) fn atomic(seq: u64, event: Arc<Event>) -> Token {
        let member = Member {
            seq,
            event: event.clone(),
        };
        Token {
            start: event.time,
            end: event.time,
            cause: seq,
            serial: 0,
            term: event,
            members: Arc::new([member]),
            extra: Extra::None,
        }
    }

    /// The value of `attr` on the terminator, as a hashable key.
    pub(crate) fn key(&self, attr: &str) -> Option<KeyVal> {
        self.term.attr(attr).map(KeyVal::from)
    }

    /// Does the occurrence span at most `window` microseconds?
    pub(crate) fn fits(&self, window: Option<i64>) -> bool {
        window.is_none_or(|w| self.end.since(self.start) <= w)
    }

    /// The occurrence made of `xs` and the terminator `y`, located at `y`.
    pub(crate) fn merge(xs: &[&Token], y: &Token) -> Token {
        let start = xs.iter().map(|x| x.start).fold(y.start, Timestamp::min);
        let members = match xs {
            [] => y.members.clone(),
            _ => SCRATCH.with_borrow_mut(|scratch| {
                scratch.clear();
                scratch.extend(y.members.iter().cloned());
                for x in xs {
                    scratch.extend(x.members.iter().cloned());
                }
                scratch.sort_by_key(|m| m.seq);
                scratch.dedup_by_key(|m| m.seq);
                let members = Arc::from(&scratch[..]);
                scratch.clear();
                members
            }),
        };
        Token {
            start,
            end: y.end,
            cause: y.cause,
            serial: 0,
            term: y.term.clone(),
            members,
            extra: Extra::None,
        }
    }
}

thread_local! {
    /// Reused buffer for merging constituents: one allocation per merged token.
    static SCRATCH: std::cell::RefCell<Vec<Member>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An attribute value usable as a hash key (for `key:` and `distinct:`).
#[derive(Clone, Debug)]
pub(crate) enum KeyVal {
    Num(f64),
    Str(Arc<str>),
    Bool(bool),
}

impl From<&Value> for KeyVal {
    fn from(v: &Value) -> KeyVal {
        match v {
            // -0.0 and 0.0 are one key.
            Value::Num(n) => KeyVal::Num(if *n == 0.0 { 0.0 } else { *n }),
            Value::Str(s) => KeyVal::Str(s.clone()),
            Value::Bool(b) => KeyVal::Bool(*b),
        }
    }
}

impl PartialEq for KeyVal {
    fn eq(&self, other: &KeyVal) -> bool {
        match (self, other) {
            (KeyVal::Num(a), KeyVal::Num(b)) => a.to_bits() == b.to_bits(),
            (KeyVal::Str(a), KeyVal::Str(b)) => a == b,
            (KeyVal::Bool(a), KeyVal::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for KeyVal {}

impl Hash for KeyVal {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            KeyVal::Num(n) => n.to_bits().hash(h),
            KeyVal::Str(s) => s.hash(h),
            KeyVal::Bool(b) => b.hash(h),
        }
    }
}
