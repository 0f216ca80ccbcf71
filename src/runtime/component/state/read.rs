//! The operators that turn states into occurrences: `Starts` and `Ends` (the
//! state's start or end output place), and `During`, a guard with a read arc on the
//! state place (a mirror of it, kept from the state's transitions, which reach it
//! before the occurrences of the same step).

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::model::Attr;
use crate::runtime::component::Cx;
use crate::runtime::token::{Extra, KeyVal, StateKeyVal, Token};

/// `Starts` (`start: true`) or `Ends`.
#[derive(Clone, Debug)]
pub(crate) struct PhaseOf {
    pub(crate) start: bool,
}

impl PhaseOf {
    pub(crate) fn fire(&mut self, tok: &Token, cx: &mut Cx<'_>) {
        if tok.transition().is_some_and(|t| t.start == self.start) {
            let mut t = tok.clone();
            t.extra = Extra::None;
            cx.emit(t);
        }
    }
}

/// `During(of, state, holds)`: input arc 0 is the state's transitions, 1 the
/// occurrences.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct During {
    #[serde(skip)]
    key: Option<Attr>,
    holds: bool,
    /// The key values whose state holds.
    marked: FxHashSet<StateKeyVal>,
}

impl During {
    pub(crate) fn new(key: Option<Attr>, holds: bool) -> During {
        During {
            key,
            holds,
            marked: FxHashSet::default(),
        }
    }

    pub(crate) fn load(&mut self, saved: During) {
        self.marked = saved.marked;
    }

    pub(crate) fn fire(&mut self, role: usize, tok: &Token, cx: &mut Cx<'_>) {
        if role == 0 {
            if let Some(t) = tok.transition() {
                if t.start {
                    self.marked.insert(t.key.clone());
                } else {
                    self.marked.remove(&t.key);
                }
            }
            return;
        }
        let key = match &self.key {
            None => StateKeyVal::Whole,
            Some(a) => match tok.key(a) {
                Some(k) => StateKeyVal::One(KeyVal::clone(k)),
                None => return,
            },
        };
        if self.marked.contains(&key) == self.holds {
            cx.emit(tok.clone());
        }
    }
}
