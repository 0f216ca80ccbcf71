//! States at run time: component nets whose *state place* holds one token per key
//! value while the state holds, coloured with the key value, the time it became true
//! and its cause. Their transitions put occurrences (tokens carrying a
//! [`Transition`]) in the component's output place: a start when the state becomes
//! true, an end when it becomes false.
//!
//! A state component fires once per step, with every token that reached it in the
//! step (its inputs come from components earlier in topological order, so they are
//! all there): an `on` and an `off` of one key value in one step cancel, and when
//! several occurrences of one step could cause a transition, the one whose `ids`
//! come first causes it. Timed transitions (`Stationary`, `Silent`, `Lasting`) wait
//! in their component's queue, which keeps a timer in the detector's (the one `P`'s
//! ticks use) for the earliest.
//!
//! - `toggle.rs`: `State` and `Inside`, made and unmade by occurrences;
//! - `near.rs`: the zones of an `Inside`, indexed for its margin;
//! - `timed.rs`: `Stationary`, `Silent` and `Lasting`, made true by a timer;
//! - `keyed.rs`: the per-key-value places, a slab under a hash table of numbers;
//! - `close.rs`: `Close`, a state per pair of objects;
//! - `combine.rs`: `AllOf`, `AnyOf`, `Unless`;
//! - `read.rs`: `Starts`, `Ends` and `During`, which turn states into occurrences.

mod close;
mod combine;
mod keyed;
mod near;
mod read;
mod timed;
mod toggle;

pub(crate) use close::Close;
pub(crate) use combine::Combine;
pub(crate) use near::NearZones;
pub(crate) use read::{During, PhaseOf};
pub(crate) use timed::{Lasting, Silent, Stationary};
pub(crate) use toggle::{Decide, Toggle};

use std::collections::VecDeque;
use std::sync::Arc;

use smallvec::{smallvec, SmallVec};

use super::super::detection::time_text;
use super::super::place::TokenBudget;
use super::super::token::{Extra, Since, StateKeyRef, StateKeyVal, Term, Token, Transition};
use crate::event::Timestamp;
use crate::model::StateKey;

/// The key value of the state kept without `key`.
static WHOLE: StateKeyVal = StateKeyVal::Whole;

/// The key value of `tok` for a state kept per `key` (`None`: the token lacks the
/// key attribute, and changes nothing), borrowed from it.
pub(crate) fn key_ref<'t>(key: &StateKey, tok: &'t Token) -> Option<StateKeyRef<'t>> {
    match key {
        StateKey::Whole => Some(StateKeyRef::Val(&WHOLE)),
        StateKey::Attr(a) => tok.key(a).map(StateKeyRef::One),
        // A pair's key is the transition's own; an occurrence has one value only.
        StateKey::Pair(_) => tok.transition().map(|t| StateKeyRef::Val(&t.key)),
    }
}

/// The key value of `tok` for a state kept per `key`, as [`key_ref`] names it.
pub(crate) fn key_value(key: &StateKey, tok: &Token) -> Option<StateKeyVal> {
    key_ref(key, tok).map(StateKeyRef::to_owned)
}

/// Brings `keyed`'s entry for `term`'s key value into cache (a state kept per an
/// attribute). Called for every state an event will reach, before the step: their
/// entries are fetched together, where the states firing one after another would
/// wait for each in turn.
fn warm<V>(key: &StateKey, term: &Term, keyed: &keyed::Keyed<V>) {
    if let StateKey::Attr(a) = key {
        if let Some(k) = term.key(a) {
            keyed.prefetch_ref(StateKeyRef::One(k));
        }
    }
}

/// The occurrence of a transition at `at`, caused by `cause`: its location, `ids` and
/// attributes, and an interval from the cause's start to `at`.
pub(crate) fn transition(
    cause: &Token,
    at: Timestamp,
    start: bool,
    since: Since,
    key: StateKeyVal,
) -> Token {
    Token {
        start: cause.start.min(at),
        end: at,
        cause: cause.cause,
        serial: 0,
        run: 0,
        term: cause.term.clone(),
        members: cause.members.clone(),
        extra: Extra::Transition(Arc::new(Transition { start, since, key })),
    }
}

/// The start of a state at `at`, caused by `cause`: its time as the start's
/// detection reports it.
pub(crate) fn since(cause: &Token, at: Timestamp) -> Since {
    Since {
        at,
        text: time_text(&cause.term, at),
    }
}

/// Of `toks`, the one whose `ids` come first (the first of equals).
pub(crate) fn first_by_ids<'t>(toks: impl IntoIterator<Item = &'t Token>) -> Option<&'t Token> {
    toks.into_iter()
        .fold(None, |best: Option<&Token>, t| match best {
            Some(b) if !t.ids_before(b) => Some(b),
            _ => Some(t),
        })
}

/// Takes room for one more key value's entry; `false` (and counted as evicted) when
/// the net's token cap is reached.
pub(crate) fn take_room(budget: &mut TokenBudget) -> bool {
    if budget.live >= budget.cap {
        budget.evicted += 1;
        return false;
    }
    budget.add();
    true
}

/// Gives back the room of `n` entries.
pub(crate) fn give_room(budget: &mut TokenBudget, n: usize) {
    budget.live -= n;
}

/// One key value's tokens of a step, with their input arcs (one, mostly).
pub(crate) type KeyGroup<'t> = (StateKeyVal, SmallVec<[(usize, &'t Token); 2]>);

/// The step's tokens grouped by key value, in the order each key first appears; a
/// token lacking the key is left out. A step of one token (the common case)
/// allocates nothing.
pub(crate) fn by_key<'t>(
    toks: impl IntoIterator<Item = (usize, &'t Token)>,
    key: impl Fn(&Token) -> Option<StateKeyVal>,
) -> SmallVec<[KeyGroup<'t>; 1]> {
    let mut groups: SmallVec<[KeyGroup<'t>; 1]> = SmallVec::new();
    for (role, tok) in toks {
        let Some(k) = key(tok) else { continue };
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push((role, tok)),
            None => groups.push((k, smallvec![(role, tok)])),
        }
    }
    groups
}

/// Tokens put aside to be let go of a few replacements later: a state's replaced
/// token (an anchor, a latest report, seconds old and out of the caches) is mostly
/// its event's last holder, and letting go of it at once waits for memory, for the
/// event's reference count (and, where it is dropped, for its attributes). Put
/// aside, the first is fetched when the token arrives and the second two
/// replacements later, so that both are in cache when the token goes to
/// [`Cx::released`](super::Cx::released), where the detector hands its event to the caller to free or
/// drops it. At most [`Graves::DEPTH`] tokens wait; nothing else reads them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graves(VecDeque<Token>);

impl Graves {
    const DEPTH: usize = 4;

    pub(crate) fn bury(&mut self, tok: Token, released: &mut Vec<Token>) {
        crate::hint::prefetch(Arc::as_ptr(&tok.term));
        self.0.push_back(tok);
        if let Some(t) = self.0.get(Self::DEPTH / 2) {
            crate::hint::prefetch(t.term.attrs.as_ptr());
        }
        if self.0.len() > Self::DEPTH {
            released.extend(self.0.pop_front());
        }
    }
}
