//! States made true by a timed transition: `Stationary` (anchor time + T),
//! `Silent` (latest occurrence + T) and `Lasting` (the operand's start + min). Each
//! keeps, per key value, a place beside the state place (the anchor, the latest
//! occurrence, the operand's start) whose token arms a timer; a timer whose tag is no
//! longer that token's was disarmed. The timers are the detector's, shared with `P`,
//! so a transition due at t happens after every event at t and before any later one.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::{by_key, first_by_ids, give_room, key_value, since, take_room, transition};
use crate::event::Timestamp;
use crate::model::StateKey;
use crate::runtime::component::Cx;
use crate::runtime::token::{Since, StateKeyVal, Token};
use crate::spatial::distance;

/// One key value's armed token: what the timer's transition will carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Armed {
    /// The anchor (`Stationary`), the latest occurrence (`Silent`), the operand's
    /// start (`Lasting`).
    tok: Token,
    /// When its transition is due.
    due: Timestamp,
    /// The tag its transition has in the queue: the order of arming, which orders
    /// the transitions due at one instant.
    tag: u64,
    /// The key value's timer in the queue (when it is due, its tag), if any.
    queued: Option<(Timestamp, u64)>,
    /// When the state became true, while it holds.
    since: Option<Since>,
}

/// The per-key places and timers every timed state keeps.
///
/// A key value has at most one timer in the detector's queue (or more only when
/// re-armed at the very instant it was armed for): re-arming it later leaves the
/// timer in place, and when that timer is due it is queued again for the armed
/// time. So a tracker reporting every second to a `Silent` of an hour keeps one
/// timer, not 3,600, and a key value's timer outlives the key value's entry only
/// until it is due.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Timed {
    armed: FxHashMap<StateKeyVal, Armed>,
    /// The timers still queued of key values forgotten since (`Lasting`).
    orphans: FxHashMap<StateKeyVal, (Timestamp, u64)>,
    /// The key value of each queued timer.
    tags: FxHashMap<u64, StateKeyVal>,
    next_tag: u64,
}

impl Timed {
    /// Arms key value `k` with `tok`, its transition due at `at`; if its state holds,
    /// it ends first, caused by `end` (when given). A new key value takes room in the
    /// budget: `false` when there is none.
    fn rearm(
        &mut self,
        k: StateKeyVal,
        tok: Token,
        at: Timestamp,
        end: Option<&Token>,
        cx: &mut Cx<'_>,
    ) -> bool {
        let tag = self.next_tag;
        self.next_tag += 1;
        if let Some(a) = self.armed.get_mut(&k) {
            if let (Some(cause), Some(s)) = (end, a.since.take()) {
                cx.emit(transition(cause, cx.now, false, s, k.clone()));
            }
            a.tok = tok;
            a.due = at;
            a.tag = tag;
            let queued = a.queued;
            if !matches!(queued, Some((t, _)) if t < at) {
                a.queued = Some((at, tag));
                self.queue(k, at, tag, queued, cx);
            }
            return true;
        }
        if !take_room(cx.budget) {
            return false;
        }
        let mut queued = if self.orphans.is_empty() {
            None
        } else {
            self.orphans.remove(&k)
        };
        if !matches!(queued, Some((t, _)) if t < at) {
            self.queue(k.clone(), at, tag, queued, cx);
            queued = Some((at, tag));
        }
        self.armed.insert(
            k,
            Armed {
                tok,
                due: at,
                tag,
                queued,
                since: None,
            },
        );
        true
    }

    /// Queues key value `k`'s timer at `at` with `tag`; its timer `old` (at the same
    /// instant, or later) is left to fire as nothing.
    fn queue(
        &mut self,
        k: StateKeyVal,
        at: Timestamp,
        tag: u64,
        old: Option<(Timestamp, u64)>,
        cx: &mut Cx<'_>,
    ) {
        if let Some((_, old)) = old {
            self.tags.remove(&old);
        }
        self.tags.insert(tag, k);
        cx.timers.set(at, cx.component, tag);
    }

    /// The timer `tag` is due at `at`: the state of its key value becomes true, with
    /// the armed token's location and `ids`; or, re-armed since for later, the timer
    /// is queued again.
    fn due(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        let Some(k) = self.tags.remove(&tag) else {
            return;
        };
        let Some(armed) = self.armed.get_mut(&k) else {
            self.orphans.remove(&k);
            return;
        };
        armed.queued = None;
        if armed.since.is_some() {
            return;
        }
        if armed.due > at {
            let (due, tag) = (armed.due, armed.tag);
            armed.queued = Some((due, tag));
            self.queue(k, due, tag, None, cx);
            return;
        }
        let s = since(&armed.tok, at);
        armed.since = Some(s.clone());
        cx.emit(transition(&armed.tok, at, true, s, k));
    }

    /// Ends key value `k`'s state if it holds, caused by `cause`.
    fn end(&mut self, k: &StateKeyVal, cause: &Token, cx: &mut Cx<'_>) {
        if let Some(s) = self.armed.get_mut(k).and_then(|a| a.since.take()) {
            cx.emit(transition(cause, cx.now, false, s, k.clone()));
        }
    }

    /// Forgets key value `k` (its state ended or never held), giving back its room.
    /// Its timer, if queued, fires as nothing (or finds `k` armed again).
    fn forget(&mut self, k: &StateKeyVal, cx: &mut Cx<'_>) {
        if let Some(a) = self.armed.remove(k) {
            give_room(cx.budget, 1);
            if let Some(q) = a.queued {
                self.orphans.insert(k.clone(), q);
            }
        }
    }

    fn live(&self) -> usize {
        self.armed.len()
    }
}

/// `Stationary(of, radius, for: T)`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Stationary {
    #[serde(skip, default = "whole")]
    key: StateKey,
    radius: f64,
    hold: i64,
    timed: Timed,
}

fn whole() -> StateKey {
    StateKey::Whole
}

impl Stationary {
    pub(crate) fn new(key: StateKey, radius: f64, hold: i64) -> Stationary {
        Stationary {
            key,
            radius,
            hold,
            timed: Timed::default(),
        }
    }

    pub(crate) fn load(&mut self, saved: Stationary) {
        self.timed = saved.timed;
    }

    pub(crate) fn live(&self) -> usize {
        self.timed.live()
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, Token)], cx: &mut Cx<'_>) {
        let key = &self.key;
        let located = inbox.iter().filter(|(_, t)| t.term.location.is_some());
        for (k, toks) in by_key(located.map(|(r, t)| (*r, t)), |t| key_value(key, t)) {
            // In the order of their ids: the first to move off re-anchors.
            let mut toks: SmallVec<[&Token; 2]> = toks.into_iter().map(|(_, t)| t).collect();
            toks.sort_by(|a, b| a.seqs().cmp(b.seqs()));
            for y in toks {
                let Some(p) = y.term.location else { continue };
                let moved = self.timed.armed.get(&k).is_none_or(|a| {
                    a.tok
                        .term
                        .location
                        .is_none_or(|q| distance(cx.space, q, p) > self.radius)
                });
                let at = y.end.saturating_add(self.hold);
                if moved && !self.timed.rearm(k.clone(), y.clone(), at, Some(y), cx) {
                    break;
                }
            }
        }
    }

    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        self.timed.due(at, tag, cx);
    }
}

/// `Silent(of, for: T)`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Silent {
    #[serde(skip, default = "whole")]
    key: StateKey,
    hold: i64,
    timed: Timed,
}

impl Silent {
    pub(crate) fn new(key: StateKey, hold: i64) -> Silent {
        Silent {
            key,
            hold,
            timed: Timed::default(),
        }
    }

    pub(crate) fn load(&mut self, saved: Silent) {
        self.timed = saved.timed;
    }

    pub(crate) fn live(&self) -> usize {
        self.timed.live()
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, Token)], cx: &mut Cx<'_>) {
        let key = &self.key;
        for (k, toks) in by_key(inbox.iter().map(|(r, t)| (*r, t)), |t| key_value(key, t)) {
            let Some(y) = first_by_ids(toks.iter().map(|(_, t)| *t)) else {
                continue;
            };
            let at = y.end.saturating_add(self.hold);
            self.timed.rearm(k, y.clone(), at, Some(y), cx);
        }
    }

    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        self.timed.due(at, tag, cx);
    }
}

/// `Lasting(of: s, min: T)`: reads `s`'s transitions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Lasting {
    min: i64,
    timed: Timed,
}

impl Lasting {
    pub(crate) fn new(min: i64) -> Lasting {
        Lasting {
            min,
            timed: Timed::default(),
        }
    }

    pub(crate) fn load(&mut self, saved: Lasting) {
        self.timed = saved.timed;
    }

    pub(crate) fn live(&self) -> usize {
        self.timed.live()
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, Token)], cx: &mut Cx<'_>) {
        for (_, tok) in inbox {
            let Some(t) = tok.transition() else { continue };
            let k = t.key.clone();
            if t.start {
                let at = tok.end.saturating_add(self.min);
                self.timed.rearm(k, tok.clone(), at, None, cx);
            } else {
                self.timed.end(&k, tok, cx);
                self.timed.forget(&k, cx);
            }
        }
    }

    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        self.timed.due(at, tag, cx);
    }
}
