//! States made true by a timed transition: `Stationary` (anchor time + T),
//! `Silent` (latest occurrence + T) and `Lasting` (the operand's start + min). Each
//! keeps, per key value, a place beside the state place (the anchor, the latest
//! occurrence, the operand's start) whose token arms a timed transition; re-arming
//! disarms the transition armed before. The transitions due at t happen in the
//! detector's step for t (its timers are shared with `P`), so a transition due at t
//! happens after every event at t and before any later one.
//!
//! The armed transitions wait in the component's own queue, in order of due time,
//! then arming: since every arming is for a fixed span after its token's time, they
//! mostly come in that order and are appended (those that do not go to a heap
//! beside it). A re-armed key value leaves its earlier transition in the queue, to be
//! passed over when it comes out (its arming tag is no longer the key value's), and
//! the queue is rid of such transitions whenever they outnumber the key values. The
//! component keeps one timer in the detector's queue, at its earliest transition
//! that is still armed (or earlier, when that one was disarmed after the timer was
//! set): so re-arming costs no timer at all, and a key value reporting every second
//! to a `Silent` of an hour keeps one entry in the queue, not 3,600.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::keyed::Keyed;
use super::{
    by_key, first_by_ids, give_room, key_ref, key_value, since, take_room, transition, warm, Graves,
};
use crate::event::{Point, Timestamp};
use crate::model::StateKey;
use crate::runtime::component::Cx;
use crate::runtime::token::{Since, StateKeyRef, StateKeyVal, Term, Token};
use crate::spatial::distance;

/// One key value's armed token: what its transition will carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Armed {
    /// The anchor (`Stationary`), the latest occurrence (`Silent`), the operand's
    /// start (`Lasting`).
    tok: Token,
    /// The token's location (read at every report by `Stationary`, without going to
    /// the token's event).
    at: Option<Point>,
    /// When the state became true, while it holds.
    since: Option<Since>,
}

/// An armed transition: when it is due, its tag (the order of arming, which orders
/// the transitions due at one instant) and the number of its key value's entry.
type Due = (Timestamp, u64, u32);

/// No arming's tag: the tag of a free entry number.
const NONE: u64 = u64::MAX;

/// The per-key places and the queue of armed transitions every timed state keeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Timed {
    armed: Keyed<Armed>,
    /// The tag each entry number is armed with (`NONE`: a free number). A queued
    /// transition whose tag is not its entry's was disarmed.
    tags: Vec<u64>,
    /// Armed transitions in order of (due, tag).
    queue: VecDeque<Due>,
    /// Armed transitions due before the last of `queue` when they were armed.
    late: BinaryHeap<Reverse<Due>>,
    /// The instants of this component's timers in the detector's queue, earliest
    /// first; the first is never later than the earliest armed transition.
    wakes: SmallVec<[Timestamp; 2]>,
    next_tag: u64,
    /// Tokens replaced by newer ones, dropped a few arming later.
    #[serde(skip)]
    graves: Graves,
}

impl Timed {
    /// Arms key value `k` (whose entry is numbered `found`, if it has one) with
    /// `tok`, its transition due at `at`; if its state holds, it ends first, caused by
    /// `end` (when given). A new key value takes room in the budget: `None` when there
    /// is none, else the number of `k`'s entry.
    fn rearm(
        &mut self,
        found: Option<u32>,
        k: StateKeyRef<'_>,
        tok: Token,
        at: Timestamp,
        end: Option<&Token>,
        cx: &mut Cx<'_>,
    ) -> Option<u32> {
        let tag = self.next_tag;
        self.next_tag += 1;
        let loc = tok.term.location;
        let i = match found {
            Some(i) => {
                let a = self.armed.get_mut(i);
                if let (Some(cause), Some(s)) = (end, a.since.take()) {
                    cx.emit(transition(cause, cx.now, false, s, k.to_owned()));
                }
                let old = std::mem::replace(&mut a.tok, tok);
                a.at = loc;
                self.graves.bury(old, cx.released);
                i
            }
            None => {
                if !take_room(cx.budget) {
                    return None;
                }
                let armed = Armed {
                    tok,
                    at: loc,
                    since: None,
                };
                let i = self.armed.insert(k.to_owned(), armed);
                if self.tags.len() <= i as usize {
                    self.tags.resize(i as usize + 1, NONE);
                }
                i
            }
        };
        self.tags[i as usize] = tag;
        self.push((at, tag, i), cx);
        Some(i)
    }

    /// Queues the armed transition `d`, with a timer for it unless one comes first.
    fn push(&mut self, d: Due, cx: &mut Cx<'_>) {
        match self.queue.back() {
            Some(&(t, g, _)) if (d.0, d.1) < (t, g) => self.late.push(Reverse(d)),
            _ => self.queue.push_back(d),
        }
        self.wake(d.0, cx);
        if self.queue.len() + self.late.len() > 2 * self.armed.len() + 32 {
            let tags = &self.tags;
            let live = |d: &Due| tags.get(d.2 as usize) == Some(&d.1);
            self.queue.retain(live);
            self.late.retain(|Reverse(d)| live(d));
        }
    }

    /// Makes sure a timer of this component is due no later than `at`.
    fn wake(&mut self, at: Timestamp, cx: &mut Cx<'_>) {
        if self.wakes.first().is_none_or(|&t| t > at) {
            self.wakes.insert(0, at);
            cx.timers.set(at, cx.component, 0);
        }
    }

    /// The earliest queued transition, disarmed or not.
    fn peek(&self) -> Option<Due> {
        let q = self.queue.front().copied();
        let l = self.late.peek().map(|Reverse(d)| *d);
        match (q, l) {
            (Some(q), Some(l)) => Some(if (l.0, l.1) < (q.0, q.1) { l } else { q }),
            (q, l) => q.or(l),
        }
    }

    /// Takes out the earliest queued transition.
    fn pop(&mut self) -> Option<Due> {
        let d = self.peek()?;
        if self.queue.front() == Some(&d) {
            self.queue.pop_front();
        } else {
            self.late.pop();
        }
        Some(d)
    }

    fn armed(&self, d: &Due) -> bool {
        self.tags.get(d.2 as usize) == Some(&d.1)
    }

    /// A timer of this component is due at `at`: the state of every key value whose
    /// transition is due then becomes true, in the order of arming, with the armed
    /// token's location and `ids`; then a timer is set for the next armed transition.
    fn due(&mut self, at: Timestamp, cx: &mut Cx<'_>) {
        if let Some(w) = self.wakes.iter().position(|&t| t == at) {
            self.wakes.remove(w);
        }
        while let Some(d) = self.peek() {
            if d.0 > at {
                break;
            }
            self.pop();
            if !self.armed(&d) {
                continue;
            }
            // (A timer is always set no later than an armed transition: none is
            // overdue.)
            debug_assert_eq!(d.0, at, "an armed transition overdue");
            let Some((k, armed)) = self.armed.slot_mut(d.2) else {
                continue;
            };
            if armed.since.is_some() {
                continue;
            }
            let s = since(&armed.tok, at);
            armed.since = Some(s.clone());
            cx.emit(transition(&armed.tok, at, true, s, k.clone()));
        }
        while let Some(d) = self.peek() {
            if self.armed(&d) {
                self.wake(d.0, cx);
                break;
            }
            self.pop();
        }
    }

    /// Ends key value `k`'s state if it holds, caused by `cause`, and forgets `k`,
    /// giving back its room. Its queued transition, if any, is passed over.
    fn end_and_forget(&mut self, k: &StateKeyVal, cause: &Token, cx: &mut Cx<'_>) {
        let Some(i) = self.armed.find(k) else { return };
        let (k, a) = self.armed.remove(i);
        if let Some(s) = a.since {
            cx.emit(transition(cause, cx.now, false, s, k));
        }
        give_room(cx.budget, 1);
        self.tags[i as usize] = NONE;
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

    /// Brings the entry of `term`'s key value into cache, before a step it reaches.
    pub(crate) fn warm(&self, term: &Term) {
        warm(&self.key, term, &self.timed.armed);
    }

    /// A step of one report (most steps): as [`Stationary::fire_step`], without
    /// grouping by key value.
    pub(crate) fn fire(&mut self, y: &Token, cx: &mut Cx<'_>) {
        let Some(k) = key_ref(&self.key, y) else {
            return;
        };
        let found = self.timed.armed.find_ref(k);
        self.report(found, k, y, cx);
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        if let [(_, y)] = inbox {
            self.fire(y, cx);
            return;
        }
        let key = &self.key;
        let located = inbox.iter().filter(|(_, t)| t.term.location.is_some());
        for (k, toks) in by_key(located.map(|&(r, t)| (r, t)), |t| key_value(key, t)) {
            // In the order of their ids: the first to move off re-anchors.
            let mut toks: SmallVec<[&Token; 2]> = toks.into_iter().map(|(_, t)| t).collect();
            if toks.len() > 1 {
                toks.sort_by(|a, b| a.seqs().cmp(b.seqs()));
            }
            let mut found = self.timed.armed.find(&k);
            for y in toks {
                found = self.report(found, StateKeyRef::Val(&k), y, cx);
                if found.is_none() {
                    break;
                }
            }
        }
    }

    /// Report `y` of key value `k`, whose entry is numbered `found` if it has one: a
    /// report farther than the radius from the anchor (or the first) anchors anew.
    /// Returns the number of `k`'s entry, `None` when it has none (turned away).
    fn report(
        &mut self,
        found: Option<u32>,
        k: StateKeyRef<'_>,
        y: &Token,
        cx: &mut Cx<'_>,
    ) -> Option<u32> {
        let Some(p) = y.term.location else {
            return found;
        };
        let moved = found.is_none_or(|i| {
            self.timed
                .armed
                .get(i)
                .at
                .is_none_or(|q| distance(cx.space, q, p) > self.radius)
        });
        if !moved {
            return found;
        }
        let at = y.end.saturating_add(self.hold);
        self.timed.rearm(found, k, y.clone(), at, Some(y), cx)
    }

    pub(crate) fn tick(&mut self, at: Timestamp, cx: &mut Cx<'_>) {
        self.timed.due(at, cx);
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

    /// Brings the entry of `term`'s key value into cache, before a step it reaches.
    pub(crate) fn warm(&self, term: &Term) {
        warm(&self.key, term, &self.timed.armed);
    }

    /// A step of one report (most steps): as [`Silent::fire_step`], without
    /// grouping by key value.
    pub(crate) fn fire(&mut self, y: &Token, cx: &mut Cx<'_>) {
        if let Some(k) = key_ref(&self.key, y) {
            let found = self.timed.armed.find_ref(k);
            let at = y.end.saturating_add(self.hold);
            self.timed.rearm(found, k, y.clone(), at, Some(y), cx);
        }
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        if let [(_, y)] = inbox {
            self.fire(y, cx);
            return;
        }
        let key = &self.key;
        for (k, toks) in by_key(inbox.iter().map(|&(r, t)| (r, t)), |t| key_value(key, t)) {
            let Some(y) = first_by_ids(toks.iter().map(|(_, t)| *t)) else {
                continue;
            };
            let at = y.end.saturating_add(self.hold);
            let found = self.timed.armed.find(&k);
            self.timed
                .rearm(found, StateKeyRef::Val(&k), y.clone(), at, Some(y), cx);
        }
    }

    pub(crate) fn tick(&mut self, at: Timestamp, cx: &mut Cx<'_>) {
        self.timed.due(at, cx);
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

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        for &(_, tok) in inbox {
            let Some(t) = tok.transition() else { continue };
            if t.start {
                let at = tok.end.saturating_add(self.min);
                let found = self.timed.armed.find(&t.key);
                self.timed
                    .rearm(found, StateKeyRef::Val(&t.key), tok.clone(), at, None, cx);
            } else {
                self.timed.end_and_forget(&t.key, tok, cx);
            }
        }
    }

    pub(crate) fn tick(&mut self, at: Timestamp, cx: &mut Cx<'_>) {
        self.timed.due(at, cx);
    }
}
