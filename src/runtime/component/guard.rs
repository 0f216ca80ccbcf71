//! Memoryless component nets: a transition whose guard passes or stops each token
//! (Atomic's `when`, Direction against a zone's box, Or).

use geo_types::Rect;

use super::super::token::{Extra, Token};
use super::Cx;
use crate::filter::Filter;
use crate::spatial::RelSet;

/// A guarded pass-through transition.
#[derive(Clone, Debug)]
pub(crate) enum Guard {
    /// Atomic events of one type, optionally filtered by `when`.
    Atomic(Option<Filter>),
    /// Occurrences whose location relative to the box satisfies a relation.
    DirBox(RelSet, Rect<f64>),
    /// Every occurrence of every operand.
    Or,
}

impl Guard {
    pub(crate) fn fire(&mut self, tok: &Token, cx: &mut Cx<'_>) {
        match self {
            Guard::Atomic(f) => {
                if f.as_ref().is_none_or(|f| f.matches(&tok.term)) {
                    cx.emit(tok.clone());
                }
            }
            Guard::DirBox(rels, rect) => {
                if tok.term.location.is_some_and(|p| rels.holds(p, *rect)) {
                    let mut t = tok.clone();
                    t.extra = Extra::None;
                    cx.emit(t);
                }
            }
            Guard::Or => {
                let mut t = tok.clone();
                t.extra = Extra::None;
                cx.emit(t);
            }
        }
    }
}
