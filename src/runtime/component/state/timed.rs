//! States made true by a timed transition: `Stationary` (anchor time + T),
//! `Silent` (latest occurrence + T) and `Lasting` (the operand's start + min). Each
//! keeps, per key value, a place beside the state place (the anchor, the latest
//! occurrence, the operand's start) whose token arms a timer; a timer whose tag is no
//! longer that token's was disarmed. The timers are the detector's, shared with `P`,
//! so a transition due at t happens after every event at t and before any later one.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

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
    /// The tag of its timer.
    tag: u64,
    /// When the state became true, while it holds.
    since: Option<Since>,
}

/// The per-key places and timer tags every timed state keeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Timed {
    armed: FxHashMap<StateKeyVal, Armed>,
    /// The key value of each pending timer.
    tags: FxHashMap<u64, StateKeyVal>,
    next_tag: u64,
}

impl Timed {
    /// Arms key value `k` with `tok`, its transition due at `at`.
    fn arm(&mut self, k: StateKeyVal, tok: Token, at: Timestamp, cx: &mut Cx<'_>) {
        let tag = self.next_tag;
        self.next_tag += 1;
        let old = self.armed.insert(
            k.clone(),
            Armed {
                tok,
                tag,
                since: None,
            },
        );
        if let Some(old) = old {
            self.tags.remove(&old.tag);
        }
        self.tags.insert(tag, k);
        cx.timers.set(at, cx.component, tag);
    }

    /// The timer `tag` is due at `at`: the state of its key value becomes true, with
    /// the armed token's location and `ids`.
    fn due(&mut self, at: Timestamp, tag: u64, cx: &mut Cx<'_>) {
        let Some(k) = self.tags.remove(&tag) else {
            return;
        };
        let Some(armed) = self.armed.get_mut(&k) else {
            return;
        };
        if armed.tag != tag || armed.since.is_some() {
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
    fn forget(&mut self, k: &StateKeyVal, cx: &mut Cx<'_>) {
        if let Some(old) = self.armed.remove(k) {
            self.tags.remove(&old.tag);
            give_room(cx.budget, 1);
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
            let mut toks: Vec<&Token> = toks.into_iter().map(|(_, t)| t).collect();
            toks.sort_by(|a, b| a.seqs().cmp(b.seqs()));
            for y in toks {
                let Some(p) = y.term.location else { continue };
                let moved = match self.timed.armed.get(&k) {
                    None => {
                        if !take_room(cx.budget) {
                            break;
                        }
                        true
                    }
                    Some(a) => a
                        .tok
                        .term
                        .location
                        .is_none_or(|q| distance(cx.space, q, p) > self.radius),
                };
                if moved {
                    self.timed.end(&k, y, cx);
                    let at = y.end.saturating_add(self.hold);
                    self.timed.arm(k.clone(), y.clone(), at, cx);
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
            if !self.timed.armed.contains_key(&k) && !take_room(cx.budget) {
                continue;
            }
            self.timed.end(&k, y, cx);
            let at = y.end.saturating_add(self.hold);
            self.timed.arm(k, y.clone(), at, cx);
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
                if !self.timed.armed.contains_key(&k) && !take_room(cx.budget) {
                    continue;
                }
                let at = tok.end.saturating_add(self.min);
                self.timed.arm(k, tok.clone(), at, cx);
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
