//! Which partitioning a net allows, read off its operators.

use std::fmt;
use std::sync::Arc;

use crate::model::{Context, Model, NodeId, Op, PairKind, StateKey};

/// How a net's work may be split between detectors so that, together, they detect
/// exactly what one detector would.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// No operator keeps state from one event to the next: every event may go to
    /// any partition.
    Stateless,
    /// Every stateful operator correlates on the same `key:` attribute: events are
    /// split by a stable hash of its value, so each key's whole history is in one
    /// partition.
    ByKey {
        /// The key attribute.
        attr: Arc<str>,
    },
    /// Every stateful operator relates occurrences no farther apart than a bounded
    /// distance (`Dist` and `Count`, in contexts that consume nothing): events are
    /// split by grid cell, with copies to the cells within `reach`.
    BySpace {
        /// How far from an occurrence's location its constituents, and the
        /// occurrences it pairs with, can lie (the net's unit, metres on WGS84).
        reach: f64,
    },
    /// Neither: one partition does all the detecting.
    Global {
        /// Why the net cannot be split, naming an operator.
        reason: String,
    },
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Plan::Stateless => {
                f.write_str("stateless: every event goes to one partition by its id")
            }
            Plan::ByKey { attr } => write!(f, "by key: events are split by their `{attr}`"),
            Plan::BySpace { reach } => write!(
                f,
                "by space: grid cells, with copies to the cells within {reach} of an event"
            ),
            Plan::Global { reason } => write!(f, "global: one partition ({reason})"),
        }
    }
}

/// The plan for `model`: by key if every stateful operator has the same key, else by
/// space if every stateful operator is distance-bounded, else global.
pub(crate) fn plan(model: &Model) -> Plan {
    let label = |id: NodeId| model.nodes[id].label(id);
    let mut key: Option<Arc<str>> = None;
    let mut keyed = true;
    let mut unkeyed_at: Option<String> = None;
    let mut stateful = false;
    for (id, node) in model.nodes.iter().enumerate() {
        let k = match &node.op {
            Op::Atomic { .. } | Op::Within { .. } | Op::Or { .. } | Op::DirBox { .. } => continue,
            Op::Pair { opts, .. } | Op::Not { opts, .. } | Op::Any { opts, .. } => {
                opts.key.as_ref()
            }
            Op::Times { key, .. } | Op::Interval { key, .. } => key.as_ref(),
            Op::Count { .. } => None,
            // A state per key value, read per key value: split by that key. A state
            // of pairs (`Close`) needs both objects of a pair in one partition.
            Op::State {
                key: StateKey::Attr(a),
                ..
            } => Some(a),
            Op::State { .. } => None,
            Op::Phase { .. } => continue,
            Op::During { key, .. } => key.as_ref(),
        };
        stateful = true;
        match (k, &key) {
            (Some(k), None) => key = Some(k.name.clone()),
            (Some(k), Some(first)) if k.name == *first => {}
            (Some(k), Some(first)) => {
                keyed = false;
                unkeyed_at.get_or_insert_with(|| {
                    format!(
                        "`{}` is keyed on `{}`, others on `{first}`",
                        label(id),
                        k.name
                    )
                });
            }
            (None, _) => {
                keyed = false;
                unkeyed_at.get_or_insert_with(|| format!("`{}` has no key", label(id)));
            }
        }
    }
    if !stateful {
        return Plan::Stateless;
    }
    if keyed {
        if let Some(attr) = key {
            return Plan::ByKey { attr };
        }
    }
    match reach(model) {
        Ok(reach) => Plan::BySpace { reach },
        Err(why) => Plan::Global {
            reason: format!(
                "not by key: {}; not by space: {why}",
                unkeyed_at.unwrap_or_default()
            ),
        },
    }
}

/// The largest span of any node: how far an occurrence's constituents, and the
/// occurrences a pairing operator considers, can lie from its location. An error
/// names the first operator whose span is unbounded.
fn reach(model: &Model) -> Result<f64, String> {
    let mut span = vec![0.0f64; model.nodes.len()];
    let mut reach = 0.0f64;
    for (id, node) in model.nodes.iter().enumerate() {
        let of = |ids: &[NodeId]| ids.iter().map(|&i| span[i]).fold(0.0, f64::max);
        let unbounded = |what: &str| Err(format!("`{}` {what}", node.label(id)));
        span[id] = match &node.op {
            Op::Atomic { .. } => 0.0,
            Op::Within { of: o, .. } | Op::DirBox { of: o, .. } => span[*o],
            Op::Or { of: o } => of(o),
            Op::Pair {
                kind: PairKind::Dist { max },
                a,
                b,
                opts,
                ..
            } => {
                if opts.context.consumes() {
                    return unbounded("consumes occurrences, which far-away detections would see");
                }
                debug_assert!(matches!(
                    opts.context,
                    Context::Recent | Context::Unrestricted
                ));
                max + of(&[*a, *b])
            }
            Op::Count {
                of: o, distance, ..
            } => distance + span[*o],
            Op::Pair { .. } => return unbounded("pairs occurrences at any distance"),
            Op::Not { .. } => return unbounded("waits for an absence anywhere"),
            Op::Any { .. } => return unbounded("pairs occurrences at any distance"),
            Op::Times { .. } => return unbounded("counts occurrences anywhere"),
            Op::Interval { .. } => return unbounded("opens intervals closed anywhere"),
            Op::State { .. } => return unbounded("holds a state that occurrences anywhere change"),
            Op::Phase { of: o, .. } => span[*o],
            Op::During { .. } => {
                return unbounded("reads a state that occurrences anywhere change")
            }
        };
        reach = reach.max(span[id]);
    }
    if reach.is_finite() {
        Ok(reach)
    } else {
        Err("its reach is not finite".into())
    }
}

/// The event types that feed a moving zone's anchor: every partition must see them
/// to know where the zone is.
pub(crate) fn anchor_types(model: &Model) -> Vec<Arc<str>> {
    let mut feeds = vec![false; model.nodes.len()];
    for m in &model.moving {
        feeds[m.anchor] = true;
    }
    // Operands come before their users: walk back from the anchors.
    let mut types: Vec<Arc<str>> = Vec::new();
    for id in (0..model.nodes.len()).rev() {
        if !feeds[id] {
            continue;
        }
        let op = &model.nodes[id].op;
        if let Op::Atomic { kind, .. } = op {
            if !types.contains(kind) {
                types.push(kind.clone());
            }
        }
        for o in op.operands() {
            feeds[o] = true;
        }
    }
    types.sort_unstable();
    types
}
