//! Operators with their ids rewritten, and what follows from it: a node's
//! *definition* (independent of the net it is in: operands by their definitions,
//! zones by their content, key attributes by name, filters by their canonical
//! text), which tells a reloaded net's unchanged components; and a model whose
//! key-attribute slots extend those of another, so that tokens made under one are
//! read right under the other.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::{Attr, Model, NodeId, Op, PairOpts, StateKey, StateOp, ZoneId};
use crate::spatial::{Shape, Zone};

impl Op {
    /// The operator with operand ids, zone ids and key attributes rewritten.
    pub(crate) fn map(
        &self,
        node: &impl Fn(NodeId) -> NodeId,
        zone: &impl Fn(ZoneId) -> ZoneId,
        attr: &impl Fn(&Attr) -> Attr,
    ) -> Op {
        let opt = |a: &Option<Attr>| a.as_ref().map(attr);
        let opts = |o: &PairOpts| PairOpts {
            window: o.window,
            key: opt(&o.key),
            distinct: opt(&o.distinct),
            context: o.context,
        };
        let nodes = |v: &[NodeId]| v.iter().map(|&n| node(n)).collect::<Vec<_>>();
        match self {
            Op::Atomic { kind, filter } => Op::Atomic {
                kind: kind.clone(),
                filter: filter.clone(),
            },
            Op::Within { of, zones } => Op::Within {
                of: node(*of),
                zones: zones.iter().map(|&z| zone(z)).collect(),
            },
            Op::Or { of } => Op::Or { of: nodes(of) },
            Op::Pair {
                kind,
                a,
                b,
                same,
                opts: o,
            } => Op::Pair {
                kind: kind.clone(),
                a: node(*a),
                b: node(*b),
                same: *same,
                opts: opts(o),
            },
            Op::Not {
                start,
                absent,
                end,
                same_ends,
                opts: o,
            } => Op::Not {
                start: node(*start),
                absent: node(*absent),
                end: node(*end),
                same_ends: *same_ends,
                opts: opts(o),
            },
            Op::Any { m, of, opts: o } => Op::Any {
                m: *m,
                of: nodes(of),
                opts: opts(o),
            },
            Op::DirBox { of, rels, zone: z } => Op::DirBox {
                of: node(*of),
                rels: rels.clone(),
                zone: zone(*z),
            },
            Op::Count {
                of,
                n,
                distance,
                window,
                distinct,
            } => Op::Count {
                of: node(*of),
                n: *n,
                distance: *distance,
                window: *window,
                distinct: opt(distinct),
            },
            Op::Times { k, of, window, key } => Op::Times {
                k: *k,
                of: node(*of),
                window: *window,
                key: opt(key),
            },
            Op::Interval {
                kind,
                start,
                e,
                end,
                window,
                key,
            } => Op::Interval {
                kind: *kind,
                start: node(*start),
                e: e.map(node),
                end: node(*end),
                window: *window,
                key: opt(key),
            },
            Op::State { op, key } => Op::State {
                op: op.map(node, zone),
                key: match key {
                    StateKey::Whole => StateKey::Whole,
                    StateKey::Attr(a) => StateKey::Attr(attr(a)),
                    StateKey::Pair(a) => StateKey::Pair(attr(a)),
                },
            },
            Op::Phase { of, start } => Op::Phase {
                of: node(*of),
                start: *start,
            },
            Op::During {
                of,
                state,
                holds,
                key,
            } => Op::During {
                of: node(*of),
                state: node(*state),
                holds: *holds,
                key: opt(key),
            },
        }
    }
}

impl StateOp {
    fn map(&self, node: &impl Fn(NodeId) -> NodeId, zone: &impl Fn(ZoneId) -> ZoneId) -> StateOp {
        match self {
            StateOp::Toggle { on, off } => StateOp::Toggle {
                on: node(*on),
                off: node(*off),
            },
            StateOp::Inside { of, zones, margin } => StateOp::Inside {
                of: node(*of),
                zones: zones.iter().map(|&z| zone(z)).collect(),
                margin: *margin,
            },
            StateOp::Stationary { of, radius, hold } => StateOp::Stationary {
                of: node(*of),
                radius: *radius,
                hold: *hold,
            },
            StateOp::Silent { of, hold } => StateOp::Silent {
                of: node(*of),
                hold: *hold,
            },
            StateOp::Close { of, max, within } => StateOp::Close {
                of: node(*of),
                max: *max,
                within: *within,
            },
            StateOp::Lasting { of, min } => StateOp::Lasting {
                of: node(*of),
                min: *min,
            },
            StateOp::Combine { how, of } => StateOp::Combine {
                how: *how,
                of: of.iter().map(|&n| node(n)).collect(),
            },
        }
    }
}

/// Interns definitions: equal definitions, of one net or of two, get equal ids.
#[derive(Default)]
pub(crate) struct Definitions {
    ids: HashMap<String, usize>,
}

/// The definition ids of a model's nodes and zones.
pub(crate) struct Defined {
    pub(crate) nodes: Vec<usize>,
    pub(crate) zones: Vec<usize>,
}

impl Definitions {
    fn id(&mut self, key: String) -> usize {
        let next = self.ids.len();
        *self.ids.entry(key).or_insert(next)
    }

    /// The definition of every node and zone of `model`.
    pub(crate) fn of(&mut self, model: &Model) -> Defined {
        let zones: Vec<usize> = model
            .zones
            .iter()
            .enumerate()
            .map(|(z, zone)| {
                let mut key = String::from("zone ");
                zone_key(zone, &mut key);
                for m in model.moving.iter().filter(|m| m.zone == z) {
                    let anchor = model.nodes[m.anchor].label(m.anchor);
                    let _ = write!(key, " anchored to {anchor:?} heading {:?}", m.heading);
                }
                self.id(key)
            })
            .collect();
        let mut nodes: Vec<usize> = Vec::with_capacity(model.nodes.len());
        for node in &model.nodes {
            let key = match &node.op {
                Op::Atomic { kind, filter } => match filter {
                    Some(f) => format!("Atomic {kind:?} when {f}"),
                    None => format!("Atomic {kind:?}"),
                },
                op => {
                    let mapped = op.map(&|n| nodes[n], &|z| zones[z], &|a| Attr {
                        name: a.name.clone(),
                        slot: 0,
                    });
                    format!("{mapped:?}")
                }
            };
            let id = self.id(key);
            nodes.push(id);
        }
        Defined { nodes, zones }
    }
}

/// A zone's name and shape as text (a widened line without its cache).
fn zone_key(zone: &Zone, out: &mut String) {
    let _ = write!(out, "{:?} ", zone.name);
    let _ = match &zone.shape {
        Shape::Line {
            line, half_width, ..
        } => write!(out, "Line {line:?} {half_width:?}"),
        shape => write!(out, "{shape:?}"),
    };
}

impl Model {
    /// This model with its key-attribute slots laid out as in `first` (each of
    /// `first`'s attributes keeps its slot, the others follow), or `None` if they
    /// already are. Its fingerprint mixes in the layout.
    pub(crate) fn with_slots_of(&self, first: &[Arc<str>]) -> Option<Model> {
        if self.key_attrs.starts_with(first) {
            return None;
        }
        let mut key_attrs: Vec<Arc<str>> = first.to_vec();
        for a in &self.key_attrs {
            if !key_attrs.contains(a) {
                key_attrs.push(a.clone());
            }
        }
        let slot = |a: &Attr| Attr {
            name: a.name.clone(),
            slot: key_attrs
                .iter()
                .position(|k| *k == a.name)
                .expect("every attribute is laid out"),
        };
        let mut model = self.clone();
        for node in &mut model.nodes {
            node.op = node.op.map(&|n| n, &|z| z, &slot);
        }
        // A snapshot names its net by the fingerprint, and its tokens' keys are read
        // by slot: a net laid out otherwise is another net to it.
        let mut d = xxhash_rust::xxh3::Xxh3Default::new();
        d.update(&model.fingerprint);
        for a in &key_attrs {
            d.update(b"\0key ");
            d.update(a.as_bytes());
        }
        model.fingerprint = d.digest128().to_le_bytes();
        model.key_attrs = key_attrs;
        Some(model)
    }
}
