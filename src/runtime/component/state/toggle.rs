//! `State(on, off)` and `Inside(of, zones, margin)`: states made true and false by
//! occurrences. The state place holds, per key value, the time the state became
//! true; the start transition has an inhibitor arc from it (a start while true
//! changes nothing), the end transition consumes it.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::keyed::Keyed;
use super::{
    by_key, first_by_ids, give_room, key_ref, key_value, since, take_room, transition, warm,
};
use crate::model::StateKey;
use crate::runtime::component::Cx;
use crate::runtime::token::{Since, Term, Token};
use crate::spatial::Zone;

use super::near::NearZones;

/// What makes the state true or false.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Decide {
    /// `State`: input arc 0 is `on`, 1 is `off`.
    OnOff,
    /// `Inside`: each located occurrence on arc 0 is inside by the margin (on),
    /// outside by it (off), or near the boundary (neither). The zones are where they
    /// are now (moving zones move).
    #[serde(skip)]
    Inside(NearZones),
}

/// The component of `State` or `Inside`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Toggle {
    #[serde(skip)]
    decide: Option<Decide>,
    #[serde(skip, default = "whole")]
    key: StateKey,
    /// The state place: the time each key value's state became true.
    holds: Keyed<Since>,
}

fn whole() -> StateKey {
    StateKey::Whole
}

impl Toggle {
    pub(crate) fn new(decide: Decide, key: StateKey) -> Toggle {
        Toggle {
            decide: Some(decide),
            key,
            holds: Keyed::default(),
        }
    }

    /// Takes the marking of `saved`, the same component in a snapshot.
    pub(crate) fn load(&mut self, saved: Toggle) {
        self.holds = saved.holds;
    }

    pub(crate) fn live(&self) -> usize {
        self.holds.len()
    }

    /// The zone `z`, if this component reads it.
    pub(crate) fn zone(&self, z: usize) -> Option<&Zone> {
        match &self.decide {
            Some(Decide::Inside(zones)) => zones.zone(z),
            _ => None,
        }
    }

    /// Zone `z` is now `zone` (a moving zone moved).
    pub(crate) fn update_zone(&mut self, z: usize, zone: &Zone) {
        if let Some(Decide::Inside(zones)) = &mut self.decide {
            zones.update(z, zone);
        }
    }

    /// Brings the entry of `term`'s key value into cache, before a step it reaches.
    pub(crate) fn warm(&self, term: &Term) {
        warm(&self.key, term, &self.holds);
    }

    /// Does occurrence `tok` (on input arc `role`) make the state true (`Some(true)`),
    /// false (`Some(false)`), or neither?
    fn verdict(&self, role: usize, tok: &Token) -> Option<bool> {
        match &self.decide {
            Some(Decide::OnOff) | None => Some(role == 0),
            Some(Decide::Inside(zones)) => zones.verdict(tok.term.location?),
        }
    }

    /// One step's occurrences.
    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        if let [(role, tok)] = inbox {
            self.fire(*role, tok, cx);
            return;
        }
        // While the state holds for no key value, a step none of whose occurrences
        // makes it true changes nothing: it ends before any key value is read (an
        // `Inside` whose zones are all far from the step's reports, as most are in a
        // net of many). Otherwise the verdicts are taken by key value below.
        if self.holds.len() == 0 && !inbox.iter().any(|(r, t)| self.verdict(*r, t) == Some(true)) {
            return;
        }
        let key = &self.key;
        let groups = by_key(inbox.iter().map(|&(r, t)| (r, t)), |t| key_value(key, t));
        for (k, toks) in groups {
            let mut ons: SmallVec<[&Token; 2]> = SmallVec::new();
            let mut offs: SmallVec<[&Token; 2]> = SmallVec::new();
            for (role, tok) in toks {
                match self.verdict(role, tok) {
                    Some(true) => ons.push(tok),
                    Some(false) => offs.push(tok),
                    None => {}
                }
            }
            // An on and an off in one step: no change.
            match (ons.is_empty(), offs.is_empty()) {
                (false, true) => {
                    if self.holds.find(&k).is_some() {
                        continue;
                    }
                    if let Some(cause) = first_by_ids(ons) {
                        if take_room(cx.budget) {
                            let s = since(cause, cx.now);
                            self.holds.insert(k.clone(), s.clone());
                            cx.emit(transition(cause, cx.now, true, s, k));
                        }
                    }
                }
                (true, false) => {
                    let Some(i) = self.holds.find(&k) else {
                        continue;
                    };
                    if let Some(cause) = first_by_ids(offs) {
                        let (_, s) = self.holds.remove(i);
                        give_room(cx.budget, 1);
                        cx.emit(transition(cause, cx.now, false, s, k));
                    }
                }
                _ => {}
            }
        }
    }

    /// A step of one occurrence (most steps): as [`Toggle::fire_step`], without
    /// grouping by key value.
    pub(crate) fn fire(&mut self, role: usize, tok: &Token, cx: &mut Cx<'_>) {
        let Some(on) = self.verdict(role, tok) else {
            return;
        };
        if !on && self.holds.len() == 0 {
            return;
        }
        let Some(k) = key_ref(&self.key, tok) else {
            return;
        };
        match (on, self.holds.find_ref(k)) {
            (true, None) if take_room(cx.budget) => {
                let s = since(tok, cx.now);
                self.holds.insert(k.to_owned(), s.clone());
                cx.emit(transition(tok, cx.now, true, s, k.to_owned()));
            }
            (false, Some(i)) => {
                let (k, s) = self.holds.remove(i);
                give_room(cx.budget, 1);
                cx.emit(transition(tok, cx.now, false, s, k));
            }
            _ => {}
        }
    }
}
