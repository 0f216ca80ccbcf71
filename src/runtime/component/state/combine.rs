//! `AllOf`, `AnyOf` and `Unless`: states computed from other states' transitions.
//! Per key value, the component keeps which operands hold (its place of operand
//! markings) and its own state place; after a step's operand transitions it
//! recomputes, and a change is caused by the first operand in the list that changed.

use serde::{Deserialize, Serialize};
use smallvec::{smallvec, SmallVec};

use super::keyed::Keyed;
use super::{give_room, since, take_room, transition};
use crate::model::Combine as How;
use crate::runtime::component::Cx;
use crate::runtime::token::{Since, StateKeyVal, Token};

/// One key value's marking: which operands hold, and since when the combined state
/// holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Marking {
    operands: SmallVec<[bool; 8]>,
    since: Option<Since>,
}

/// The component of `AllOf`, `AnyOf` or `Unless`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Combine {
    #[serde(skip, default = "unset")]
    how: How,
    arity: usize,
    marks: Keyed<Marking>,
}

fn unset() -> How {
    How::All
}

impl Combine {
    pub(crate) fn new(how: How, arity: usize) -> Combine {
        Combine {
            how,
            arity,
            marks: Keyed::default(),
        }
    }

    pub(crate) fn load(&mut self, saved: Combine) {
        self.marks = saved.marks;
    }

    pub(crate) fn live(&self) -> usize {
        self.marks.len()
    }

    /// One step's operand transitions, sorted by input arc (operand position).
    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        // Per key value, in the order keys first appear: the transitions, by operand.
        type Changes<'t> = SmallVec<[(usize, &'t Token); 2]>;
        let mut keys: SmallVec<[(&StateKeyVal, Changes<'_>); 1]> = SmallVec::new();
        for &(role, tok) in inbox {
            let Some(t) = tok.transition() else { continue };
            match keys.iter_mut().find(|(k, _)| **k == t.key) {
                Some((_, v)) => v.push((role, tok)),
                None => keys.push((&t.key, smallvec![(role, tok)])),
            }
        }
        for (k, changes) in keys {
            let found = self.marks.find(k);
            let i = match found {
                Some(i) => i,
                None => {
                    if !take_room(cx.budget) {
                        continue;
                    }
                    let m = Marking {
                        operands: smallvec![false; self.arity],
                        since: None,
                    };
                    self.marks.insert(k.clone(), m)
                }
            };
            let how = self.how;
            let m = self.marks.get_mut(i);
            let before = m.since.is_some();
            let mut first: Option<&Token> = None;
            for (role, tok) in &changes {
                let start = tok.transition().is_some_and(|t| t.start);
                if m.operands[*role] != start {
                    m.operands[*role] = start;
                    first.get_or_insert(tok);
                }
            }
            let after = value(how, &m.operands);
            if let (Some(cause), true) = (first, before != after) {
                if after {
                    let s = since(cause, cx.now);
                    m.since = Some(s.clone());
                    cx.emit(transition(cause, cx.now, true, s, k.clone()));
                } else if let Some(s) = m.since.take() {
                    cx.emit(transition(cause, cx.now, false, s, k.clone()));
                }
            }
            if !m.operands.iter().any(|&b| b) && m.since.is_none() {
                self.marks.remove(i);
                give_room(cx.budget, 1);
            }
        }
    }
}

/// The combined state's value when the operands hold as `ops` say.
fn value(how: How, ops: &[bool]) -> bool {
    match how {
        How::All => ops.iter().all(|&b| b),
        How::Any => ops.iter().any(|&b| b),
        How::Unless => ops[0] && !ops[1],
    }
}
