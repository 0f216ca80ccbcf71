//! Tokens: the colour the net carries — interval, terminator, constituents, key.

use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::event::{Event, Timestamp, Value};
use crate::model::Attr;

/// What an operator adds to its occurrences beyond the colour every token has
/// (reported with detections as a [`super::Detail`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) enum Extra {
    #[default]
    None,
    /// `Within`: the first zone (in name order) containing the occurrence.
    Zone(u32),
    /// `Dist`: the distance between the pair.
    Distance(f64),
    /// `PStar`: the number of ticks inside the interval.
    Ticks(u64),
    /// A state's transition: which, since when, for which key value.
    Transition(Arc<Transition>),
}

/// A state's transition, as its occurrence carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Transition {
    /// A start (false → true), or an end.
    pub(crate) start: bool,
    /// When the state became true: the transition's time for a start.
    pub(crate) since: Since,
    /// The key value whose state changed.
    pub(crate) key: StateKeyVal,
}

/// When a state became true, and that time's text when its start was reported
/// with one (its cause's time was given in RFC 3339).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Since {
    pub(crate) at: Timestamp,
    pub(crate) text: Option<Arc<str>>,
}

/// The key value of one state: none (one state for the stream), one attribute value,
/// or an unordered pair of different values (kept in order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum StateKeyVal {
    Whole,
    One(KeyVal),
    Pair(KeyVal, KeyVal),
}

/// The variant, then the values: as [`StateKeyRef`] hashes the same key value.
impl Hash for StateKeyVal {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            StateKeyVal::Whole => h.write_u8(0),
            StateKeyVal::One(k) => {
                h.write_u8(1);
                k.hash(h);
            }
            StateKeyVal::Pair(a, b) => {
                h.write_u8(2);
                a.hash(h);
                b.hash(h);
            }
        }
    }
}

/// A state's key value borrowed from the token that names it: a look-up by it
/// finds what one by the owned [`StateKeyVal`] finds, without making one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StateKeyRef<'a> {
    /// A key value as a state keeps it (`Whole`, or a transition's pair).
    Val(&'a StateKeyVal),
    /// One attribute value: `StateKeyVal::One` of it.
    One(&'a KeyVal),
}

impl StateKeyRef<'_> {
    /// The owned key value.
    pub(crate) fn to_owned(self) -> StateKeyVal {
        match self {
            StateKeyRef::Val(k) => k.clone(),
            StateKeyRef::One(k) => StateKeyVal::One(k.clone()),
        }
    }

    /// Is this the key value `k`?
    pub(crate) fn is(self, k: &StateKeyVal) -> bool {
        match (self, k) {
            (StateKeyRef::Val(a), b) => a == b,
            (StateKeyRef::One(a), StateKeyVal::One(b)) => a == b,
            (StateKeyRef::One(_), _) => false,
        }
    }
}

/// As the owned key value hashes.
impl Hash for StateKeyRef<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            StateKeyRef::Val(k) => k.hash(h),
            StateKeyRef::One(k) => {
                h.write_u8(1);
                k.hash(h);
            }
        }
    }
}

/// An input event as tokens carry it: the event, and its values of the attributes
/// the net matches on (`key:`, `distinct:`), computed once when it enters the net.
#[derive(Debug)]
pub(crate) struct Term {
    event: Event,
    /// One value inline (160 bytes of `Term` rather than 192 with two: every live
    /// event is one, so this is what a window of them weighs in cache); a net matching
    /// on two attributes or more allocates its events' values apart.
    keys: SmallVec<[Option<KeyVal>; 1]>,
}

impl Term {
    /// Wraps `event`, reading its values of `key_attrs`.
    pub(crate) fn new(event: Event, key_attrs: &[Arc<str>]) -> Term {
        let keys = if key_attrs.is_empty() {
            SmallVec::new()
        } else {
            key_attrs
                .iter()
                .map(|a| event.attr(a).map(KeyVal::from))
                .collect()
        };
        Term { event, keys }
    }

    /// Wraps `event`, with `keys`, its values of the net's key attributes (as
    /// [`Term::new`] reads them).
    pub(crate) fn with_keys(event: Event, keys: SmallVec<[Option<KeyVal>; 1]>) -> Term {
        Term { event, keys }
    }

    /// The event, its keys dropped.
    pub(crate) fn into_event(self) -> Event {
        self.event
    }

    /// The event's value of `attr`, as a hashable key.
    pub(crate) fn key(&self, attr: &Attr) -> Option<&KeyVal> {
        self.keys.get(attr.slot).and_then(Option::as_ref)
    }
}

impl Deref for Term {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.event
    }
}

/// One atomic constituent of an occurrence: the input event and its processing number
/// (which orders constituents by time, then input order).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Member {
    pub(crate) seq: u64,
    #[serde(with = "super::snapshot::term")]
    pub(crate) event: Arc<Term>,
}

/// A token's atomic constituents: the terminator alone (an atomic occurrence, or one
/// passed on unchanged) without an allocation, or a list shared by every token that
/// carries it.
#[derive(Clone, Debug)]
pub(crate) enum Members {
    /// Only the token's terminator, processed as step `seq`.
    One(u64),
    /// Sorted by `seq`, without repeats.
    Many(Arc<[Member]>),
}

/// A token: one occurrence of an event of the net, coloured with its interval,
/// its terminator (whose location, attributes and time form it carries), and its
/// atomic constituents.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Waiting in the place of an operator with `distinct`: the `serial` of the oldest
    /// token of the run of tokens up to this one that all share its value of the
    /// attribute (or all lack it), so that a search can pass over them at once; 0 if
    /// unknown. Not saved: a restored token starts no run.
    #[serde(skip)]
    pub(crate) run: u64,
    /// The terminator: the latest constituent (the start, for a tick).
    #[serde(with = "super::snapshot::term")]
    pub(crate) term: Arc<Term>,
    /// Constituents, sorted by `seq`, without repeats.
    #[serde(with = "super::snapshot::constituents")]
    pub(crate) members: Members,
    pub(crate) extra: Extra,
}

impl Token {
    /// The token of an atomic event processed as step `seq`.
    pub(crate) fn atomic(seq: u64, event: Arc<Term>) -> Token {
        Token {
            start: event.time,
            end: event.time,
            cause: seq,
            serial: 0,
            run: 0,
            term: event,
            members: Members::One(seq),
            extra: Extra::None,
        }
    }

    /// The state transition this token is, if it is one.
    pub(crate) fn transition(&self) -> Option<&Transition> {
        match &self.extra {
            Extra::Transition(t) => Some(t),
            _ => None,
        }
    }

    /// The processing numbers of the constituents, in order: the order of their ids
    /// (an id's event time, then its input line).
    pub(crate) fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        let (one, many) = match &self.members {
            Members::One(seq) => (Some(*seq), &[][..]),
            Members::Many(ms) => (None, &ms[..]),
        };
        one.into_iter().chain(many.iter().map(|m| m.seq))
    }

    /// Does this token's `ids` list come before `other`'s, compared id by id in input
    /// order, a list that is a prefix of another coming first?
    pub(crate) fn ids_before(&self, other: &Token) -> bool {
        self.seqs().cmp(other.seqs()) == std::cmp::Ordering::Less
    }

    /// The processing number of the only constituent, if there is one.
    pub(crate) fn sole_seq(&self) -> Option<u64> {
        match &self.members {
            Members::One(seq) => Some(*seq),
            Members::Many(ms) => match &**ms {
                [m] => Some(m.seq),
                _ => None,
            },
        }
    }

    /// The only constituent, if there is one.
    pub(crate) fn sole_member(&self) -> Option<Member> {
        match &self.members {
            Members::One(seq) => Some(Member {
                seq: *seq,
                event: self.term.clone(),
            }),
            Members::Many(ms) => match &**ms {
                [m] => Some(m.clone()),
                _ => None,
            },
        }
    }

    /// Appends the constituents to `out`, in order.
    pub(crate) fn extend_members(&self, out: &mut Vec<Member>) {
        match &self.members {
            Members::One(seq) => out.push(Member {
                seq: *seq,
                event: self.term.clone(),
            }),
            Members::Many(ms) => out.extend(ms.iter().cloned()),
        }
    }

    /// The constituents as a shared list (made for a token of one constituent).
    pub(crate) fn members_list(&self) -> Arc<[Member]> {
        match &self.members {
            Members::One(seq) => Arc::new([Member {
                seq: *seq,
                event: self.term.clone(),
            }]),
            Members::Many(ms) => ms.clone(),
        }
    }

    /// The terminator's value of `attr`, as a hashable key.
    pub(crate) fn key(&self, attr: &Attr) -> Option<&KeyVal> {
        self.term.key(attr)
    }

    /// Does the occurrence span at most `window` microseconds?
    pub(crate) fn fits(&self, window: Option<i64>) -> bool {
        window.is_none_or(|w| self.end.since(self.start) <= w)
    }

    /// The occurrence made of `xs` and the terminator `y`, located at `y`.
    pub(crate) fn merge(xs: &[&Token], y: &Token) -> Token {
        let mut start = y.start;
        let members = SCRATCH.with_borrow_mut(|scratch| {
            scratch.clear();
            for x in xs {
                start = start.min(x.start);
                x.extend_members(scratch);
            }
            if scratch.is_empty() {
                return y.members.clone();
            }
            y.extend_members(scratch);
            // Often already in order (operands in processing order, disjoint): then
            // there is nothing to sort or remove. Equal `seq`s are one atomic event.
            if !scratch.is_sorted_by(|a, b| a.seq < b.seq) {
                scratch.sort_by_key(|m| m.seq);
                scratch.dedup_by_key(|m| m.seq);
            }
            Members::Many(scratch.drain(..).collect::<Arc<[Member]>>())
        });
        Token {
            start,
            end: y.end,
            cause: y.cause,
            serial: 0,
            run: 0,
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

/// An attribute value usable as a hash key (for `key:` and `distinct:`), with its
/// hash computed once (and again when a snapshot is read).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "KeyInner", into = "KeyInner")]
pub(crate) struct KeyVal {
    hash: u64,
    value: KeyInner,
}

#[derive(Clone, Debug, Eq, Serialize, Deserialize)]
enum KeyInner {
    /// The bits of the number (-0.0 and 0.0 are one key).
    Num(u64),
    Str(Arc<str>),
    Bool(bool),
}

impl PartialEq for KeyInner {
    fn eq(&self, other: &KeyInner) -> bool {
        match (self, other) {
            // Values read by one thread share one copy: equal by address, usually.
            (KeyInner::Str(a), KeyInner::Str(b)) => Arc::ptr_eq(a, b) || a == b,
            (KeyInner::Num(a), KeyInner::Num(b)) => a == b,
            (KeyInner::Bool(a), KeyInner::Bool(b)) => a == b,
            _ => false,
        }
    }
}

/// As derived: the variant, then its value (a string by its text).
impl Hash for KeyInner {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            KeyInner::Num(n) => n.hash(h),
            KeyInner::Str(s) => s.hash(h),
            KeyInner::Bool(b) => b.hash(h),
        }
    }
}

impl From<&Value> for KeyVal {
    fn from(v: &Value) -> KeyVal {
        let value = match v {
            Value::Num(n) => KeyInner::Num(if *n == 0.0 { 0u64 } else { n.to_bits() }),
            Value::Str(s) => KeyInner::Str(s.clone()),
            Value::Bool(b) => KeyInner::Bool(*b),
        };
        KeyVal::from(value)
    }
}

impl KeyVal {
    /// Thirty-two bits of the value's hash: equal values have equal tags.
    pub(crate) fn tag(&self) -> u32 {
        (self.hash >> 32) as u32
    }

    /// The attribute value this key was made from.
    pub(crate) fn value(&self) -> Value {
        match &self.value {
            KeyInner::Num(bits) => Value::Num(f64::from_bits(*bits)),
            KeyInner::Str(s) => Value::Str(s.clone()),
            KeyInner::Bool(b) => Value::Bool(*b),
        }
    }
}

impl PartialOrd for KeyVal {
    fn partial_cmp(&self, other: &KeyVal) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// An order of key values, to keep a pair's two values in one order: by kind, then
/// by value (numbers by their bits).
impl Ord for KeyVal {
    fn cmp(&self, other: &KeyVal) -> std::cmp::Ordering {
        fn rank(k: &KeyInner) -> u8 {
            match k {
                KeyInner::Num(_) => 0,
                KeyInner::Str(_) => 1,
                KeyInner::Bool(_) => 2,
            }
        }
        match (&self.value, &other.value) {
            (KeyInner::Num(a), KeyInner::Num(b)) => a.cmp(b),
            (KeyInner::Str(a), KeyInner::Str(b)) => a.cmp(b),
            (KeyInner::Bool(a), KeyInner::Bool(b)) => a.cmp(b),
            (a, b) => rank(a).cmp(&rank(b)),
        }
    }
}

impl From<KeyInner> for KeyVal {
    fn from(value: KeyInner) -> KeyVal {
        KeyVal {
            hash: rustc_hash::FxBuildHasher.hash_one(&value),
            value,
        }
    }
}

impl From<KeyVal> for KeyInner {
    fn from(k: KeyVal) -> KeyInner {
        k.value
    }
}

impl PartialEq for KeyVal {
    fn eq(&self, other: &KeyVal) -> bool {
        self.hash == other.hash && self.value == other.value
    }
}

impl Eq for KeyVal {}

impl Hash for KeyVal {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}
