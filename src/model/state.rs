//! States in the model: situations that hold over time, per key value, and the
//! operators that read them. A node is either an *occurrence* (a stream of
//! occurrences, as every operator of the first chapters gives) or a *state*; the
//! validator keeps each operand of the kind its operator reads.

use super::{Attr, NodeId, ZoneId};

/// What a state is kept per.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StateKey {
    /// One state for the whole stream.
    Whole,
    /// One state per value of the attribute.
    Attr(Attr),
    /// One state per unordered pair of different values of the attribute (`Close`).
    Pair(Attr),
}

impl StateKey {
    /// The key as `key:` names it, for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            StateKey::Whole => "no key".to_owned(),
            StateKey::Attr(a) => format!("key `{a}`"),
            StateKey::Pair(a) => format!("pairs of `{a}`"),
        }
    }
}

/// How `AllOf` and `AnyOf` combine their operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Combine {
    /// True while every operand holds.
    All,
    /// True while at least one operand holds.
    Any,
    /// True while the first operand holds and the second does not (`Unless`).
    Unless,
}

/// A state operator, with its operands and parameters (durations in µs).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StateOp {
    /// `State(on, off)`: true from an `on` to the next `off`.
    Toggle { on: NodeId, off: NodeId },
    /// `Inside(of, zones, margin)`: the latest located occurrence is inside one of
    /// the zones, with hysteresis `margin`.
    Inside {
        of: NodeId,
        zones: Vec<ZoneId>,
        margin: f64,
    },
    /// `Stationary(of, radius, for)`: no move farther than `radius` from the anchor
    /// for `hold`.
    Stationary { of: NodeId, radius: f64, hold: i64 },
    /// `Silent(of, for)`: no occurrence for `hold`.
    Silent { of: NodeId, hold: i64 },
    /// `Close(of, max, within, distinct)`: two values' latest located occurrences
    /// within `max` and `within` of each other (`i64::MAX`: no limit in time).
    Close { of: NodeId, max: f64, within: i64 },
    /// `Lasting(of, min)`: the operand has held for longer than `min`.
    Lasting { of: NodeId, min: i64 },
    /// `AllOf`, `AnyOf`, `Unless`.
    Combine { how: Combine, of: Vec<NodeId> },
}

impl StateOp {
    /// The operands, in the order of the component's input arcs.
    pub(crate) fn operands(&self) -> Vec<NodeId> {
        match self {
            StateOp::Toggle { on, off } => vec![*on, *off],
            StateOp::Inside { of, .. }
            | StateOp::Stationary { of, .. }
            | StateOp::Silent { of, .. }
            | StateOp::Close { of, .. }
            | StateOp::Lasting { of, .. } => vec![*of],
            StateOp::Combine { of, .. } => of.clone(),
        }
    }

    /// The operator's name in a net file.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            StateOp::Toggle { .. } => "State",
            StateOp::Inside { .. } => "Inside",
            StateOp::Stationary { .. } => "Stationary",
            StateOp::Silent { .. } => "Silent",
            StateOp::Close { .. } => "Close",
            StateOp::Lasting { .. } => "Lasting",
            StateOp::Combine {
                how: Combine::All, ..
            } => "AllOf",
            StateOp::Combine {
                how: Combine::Any, ..
            } => "AnyOf",
            StateOp::Combine {
                how: Combine::Unless,
                ..
            } => "Unless",
        }
    }
}
