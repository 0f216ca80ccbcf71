//! What the compiler may trust: a checked net with names bound, durations in
//! microseconds, zones built and common sub-expressions shared.
//!
//! [`Model::load`] reports every problem of a net at once, each with file, line
//! and column; the compiler never sees serde types.

mod duration;
mod error;
mod remap;
mod source;
mod state;
mod validate;
mod zones;

use std::sync::Arc;

pub use duration::parse_duration;
pub use error::{NetError, Problem};
pub(crate) use remap::Definitions;
pub use source::NetSource;
pub(crate) use state::{Combine, StateKey, StateOp};
pub(crate) use validate::NetText;

use crate::event::Space;
use crate::filter::Filter;
use crate::spatial::{RelSet, Zone};

/// Index of a node in [`Model::nodes`].
pub(crate) type NodeId = usize;
/// Index of a zone in [`Model::zones`].
pub(crate) type ZoneId = usize;

/// A checked net.
#[derive(Clone, Debug)]
pub(crate) struct Model {
    pub(crate) space: Space,
    pub(crate) zones: Vec<Zone>,
    /// Operators in topological order: every operand comes before its users.
    pub(crate) nodes: Vec<Node>,
    /// Output names and the node each detects.
    pub(crate) outputs: Vec<(Arc<str>, NodeId)>,
    /// Things that load but deserve a word (an unbounded operator, an unused event).
    pub(crate) warnings: Vec<Problem>,
    /// The attributes operators match on (`key:`, `distinct:`), by slot.
    pub(crate) key_attrs: Vec<Arc<str>>,
    /// Zones that move with a tracked object.
    pub(crate) moving: Vec<Moving>,
    /// XXH3-128 of the net's text and of the GeoJSON files it read (path and text, in
    /// the order read): a checkpoint names the net it belongs to by it.
    pub(crate) fingerprint: [u8; 16],
    /// The texts it was loaded from.
    pub(crate) source: Arc<NetSource>,
}

/// A zone anchored to an event: re-centred on each of its occurrences, and (for a
/// sector with `heading`) rotated by the occurrence's heading attribute.
#[derive(Clone, Debug)]
pub(crate) struct Moving {
    pub(crate) zone: ZoneId,
    pub(crate) anchor: NodeId,
    pub(crate) heading: Option<Arc<str>>,
}

/// One operator of the model, possibly known by several names.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The names in the net that denote this node (empty for nodes made by
    /// expanding `Seq`/`And` over more than two operands).
    pub(crate) names: Vec<Arc<str>>,
    pub(crate) op: Op,
}

impl Node {
    /// A name to show for the node.
    pub(crate) fn label(&self, id: NodeId) -> String {
        match self.names.first() {
            Some(n) => n.to_string(),
            None => format!("#{id}"),
        }
    }
}

/// An attribute an operator matches on (`key:` or `distinct:`), with its slot in
/// the net's list of such attributes: tokens carry their terminator's values of
/// all of them, computed once per event.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct Attr {
    pub(crate) name: Arc<str>,
    pub(crate) slot: usize,
}

impl std::fmt::Display for Attr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// How a pairing operator chooses and consumes initiators (after Snoop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum Context {
    Recent,
    Chronicle,
    Continuous,
    Cumulative,
    Unrestricted,
}

impl Context {
    /// Do detections consume the occurrences that took part?
    pub(crate) fn consumes(self) -> bool {
        matches!(
            self,
            Context::Chronicle | Context::Continuous | Context::Cumulative
        )
    }
}

/// Options shared by pairing operators.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PairOpts {
    /// `within`, in microseconds; `None` is unbounded.
    pub(crate) window: Option<i64>,
    pub(crate) key: Option<Attr>,
    pub(crate) distinct: Option<Attr>,
    pub(crate) context: Context,
}

/// What a binary pairing operator checks between initiator and terminator.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum PairKind {
    /// x from `a`, y from `b`.
    Seq,
    /// Either order.
    And,
    /// Either order, distance at most `max`.
    Dist { max: f64 },
    /// Either order; the location of the `a` (`of`) occurrence relative to the `b`
    /// (`from`) occurrence satisfies one of the relations.
    Direction { rels: RelSet },
}

/// Interval operators: an occurrence of `start` opens, `end` closes.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum IntervalKind {
    /// Snoop's A: each `e` inside the interval.
    A,
    /// Snoop's A*: once at the end, with every `e` inside.
    AStar,
    /// Snoop's P: a tick every `period` microseconds.
    P { period: i64 },
    /// Snoop's P*: once at the end, with the number of ticks.
    PStar { period: i64 },
}

/// An operator with its operands bound.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Atomic {
        kind: Arc<str>,
        filter: Option<Filter>,
    },
    Within {
        of: NodeId,
        zones: Vec<ZoneId>,
    },
    Or {
        of: Vec<NodeId>,
    },
    Pair {
        kind: PairKind,
        a: NodeId,
        b: NodeId,
        /// The operator names the same event twice (`And(of: ["a", "a"])`): x and y
        /// both come from it. Two names with identical definitions are still two events.
        same: bool,
        opts: PairOpts,
    },
    Not {
        start: NodeId,
        absent: NodeId,
        end: NodeId,
        /// `start` and `end` name the same event: a consumed end is a consumed start.
        same_ends: bool,
        opts: PairOpts,
    },
    Any {
        m: usize,
        of: Vec<NodeId>,
        opts: PairOpts,
    },
    DirBox {
        of: NodeId,
        rels: RelSet,
        zone: ZoneId,
    },
    /// The counting rule: n occurrences of `of` pairwise closer than `distance`
    /// inside `window`; with `distinct`, pairwise different values of it.
    Count {
        of: NodeId,
        n: usize,
        distance: f64,
        window: i64,
        distinct: Option<Attr>,
    },
    Times {
        k: usize,
        of: NodeId,
        window: Option<i64>,
        key: Option<Attr>,
    },
    Interval {
        kind: IntervalKind,
        start: NodeId,
        /// The occurrences counted inside the interval (A and A* only).
        e: Option<NodeId>,
        end: NodeId,
        window: Option<i64>,
        key: Option<Attr>,
    },
    /// A state: true or false over event time, per key value.
    State {
        op: StateOp,
        key: StateKey,
    },
    /// `Starts` (`start: true`) or `Ends`: an occurrence at each such transition.
    Phase {
        of: NodeId,
        start: bool,
    },
    /// `During`: the occurrences of `of` at which `state` holds (or, with
    /// `holds: false`, does not), for their value of the state's key.
    During {
        of: NodeId,
        state: NodeId,
        holds: bool,
        key: Option<Attr>,
    },
}

impl Op {
    /// The operands, in slot order (a slot is the index of an operand).
    pub(crate) fn operands(&self) -> Vec<NodeId> {
        match self {
            Op::Atomic { .. } => vec![],
            Op::Within { of, .. }
            | Op::DirBox { of, .. }
            | Op::Times { of, .. }
            | Op::Count { of, .. } => vec![*of],
            Op::Or { of } | Op::Any { of, .. } => of.clone(),
            Op::Pair { a, b, .. } => vec![*a, *b],
            Op::Not {
                start, absent, end, ..
            } => vec![*start, *absent, *end],
            Op::Interval { start, e, end, .. } => match e {
                Some(e) => vec![*start, *e, *end],
                None => vec![*start, *end],
            },
            Op::State { op, .. } => op.operands(),
            Op::Phase { of, .. } => vec![*of],
            // The state first: an occurrence sees the state after its own step's changes.
            Op::During { of, state, .. } => vec![*state, *of],
        }
    }

    /// The operator's name as written in nets.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Op::Atomic { .. } => "Atomic",
            Op::Within { .. } => "Within",
            Op::Or { .. } => "Or",
            Op::Pair {
                kind: PairKind::Seq,
                ..
            } => "Seq",
            Op::Pair {
                kind: PairKind::And,
                ..
            } => "And",
            Op::Pair {
                kind: PairKind::Dist { .. },
                ..
            } => "Dist",
            Op::Pair {
                kind: PairKind::Direction { .. },
                ..
            }
            | Op::DirBox { .. } => "Direction",
            Op::Not { .. } => "Not",
            Op::Any { .. } => "Any",
            Op::Times { .. } => "Times",
            Op::Count { .. } => "Count",
            Op::Interval {
                kind: IntervalKind::A,
                ..
            } => "A",
            Op::Interval {
                kind: IntervalKind::AStar,
                ..
            } => "AStar",
            Op::Interval {
                kind: IntervalKind::P { .. },
                ..
            } => "P",
            Op::Interval {
                kind: IntervalKind::PStar { .. },
                ..
            } => "PStar",
            Op::State { op, .. } => op.name(),
            Op::Phase { start: true, .. } => "Starts",
            Op::Phase { start: false, .. } => "Ends",
            Op::During { .. } => "During",
        }
    }

    /// Is the node a state (read by `Starts`, `Ends`, `During` and other states)
    /// rather than a stream of occurrences?
    pub(crate) fn is_state(&self) -> bool {
        matches!(self, Op::State { .. })
    }
}
