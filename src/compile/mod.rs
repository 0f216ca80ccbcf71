//! Model → compositional coloured Petri net: each operator becomes a component net
//! (its input places, transitions, arcs and output place), components are joined by
//! connection transitions, and the run-time [`Program`] is laid out beside the graph.

mod guard;
mod pair;
mod repeat;
mod state;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::{Model, Op};
use crate::petri::{ArcKind, NodeIndex, PetriNet};
use crate::runtime::{Component, CountGroup, Dispatch, Guard, Program, ZoneStabs};

/// The `Within` components reading one input: they share one zone R*-tree.
pub(crate) struct StabGroup {
    /// (component, its zones), in topological order; the first runs the stab.
    pub(crate) members: Vec<(usize, Vec<crate::model::ZoneId>)>,
}

/// The places through which a component meets the rest of the net.
pub(crate) struct Ports {
    /// One input place per input arc (operand position).
    pub(crate) inputs: Vec<NodeIndex>,
    pub(crate) output: NodeIndex,
}

/// Builds the Petri net and the program of a model.
pub(crate) fn compile(model: &Arc<Model>) -> (PetriNet, Program) {
    let mut net = PetriNet::default();
    let n = model.nodes.len();
    let mut components = Vec::with_capacity(n);
    let mut ports: Vec<Ports> = Vec::with_capacity(n);
    let mut atomics: FxHashMap<Arc<str>, Vec<(usize, Option<&crate::filter::Filter>)>> =
        FxHashMap::default();
    let mut type_places: FxHashMap<Arc<str>, NodeIndex> = FxHashMap::default();
    let mut counts: Vec<CountGroup> = Vec::new();
    // Every `Within` reading the same input shares one stab (and one drawn place).
    let mut stab_groups: FxHashMap<usize, StabGroup> = FxHashMap::default();
    for (id, node) in model.nodes.iter().enumerate() {
        if let Op::Within { of, zones } = &node.op {
            stab_groups
                .entry(*of)
                .or_insert_with(|| StabGroup {
                    members: Vec::new(),
                })
                .members
                .push((id, zones.clone()));
        }
    }
    let mut stabs = guard::stabs(model, &stab_groups);
    let mut stab_places: FxHashMap<usize, NodeIndex> = FxHashMap::default();
    let mut state_places: FxHashMap<usize, NodeIndex> = FxHashMap::default();
    for (id, node) in model.nodes.iter().enumerate() {
        let label = node.label(id);
        net.components.push(format!("{label}: {}", node.op.name()));
        let (component, p) = match &node.op {
            Op::Atomic { kind, filter } => {
                let source = *type_places
                    .entry(kind.clone())
                    .or_insert_with(|| net.place(format!("type {kind:?}"), None));
                atomics
                    .entry(kind.clone())
                    .or_default()
                    .push((id, filter.as_ref()));
                guard::atomic(&mut net, id, &label, source, filter.as_ref())
            }
            Op::Within { of, zones } => {
                let group = &stab_groups[of];
                let zone_count: usize = group.members.iter().map(|m| m.1.len()).sum();
                let place = *stab_places.entry(*of).or_insert_with(|| {
                    net.place(
                        format!("stab: R*-tree of {zone_count} zone references"),
                        None,
                    )
                });
                guard::within(&mut net, id, &label, model, zones, stabs.remove(&id), place)
            }
            Op::DirBox { rels, zone, .. } => {
                guard::dir_box(&mut net, id, &label, model, rels, *zone)
            }
            Op::Or { of } => guard::or(&mut net, id, &label, of.len()),
            Op::Pair {
                kind, opts, same, ..
            } => pair::pair(&mut net, id, &label, kind, opts, *same, model.space),
            Op::Not {
                opts, same_ends, ..
            } => pair::not(&mut net, id, &label, opts, *same_ends),
            Op::Any { m, of, opts } => pair::any(&mut net, id, &label, *m, of.len(), opts),
            Op::Times { k, window, key, .. } => {
                repeat::times(&mut net, id, &label, *k, *window, key)
            }
            Op::Count {
                of,
                n,
                distance,
                window,
                distinct,
            } => {
                let rule = crate::count::Rule {
                    n: *n,
                    distance: *distance,
                    window: *window,
                    distinct: distinct.is_some(),
                };
                let group = match counts
                    .iter()
                    .position(|g: &CountGroup| g.of == *of && g.distinct == *distinct)
                {
                    Some(g) => g,
                    None => {
                        counts.push(CountGroup {
                            of: *of,
                            distinct: distinct.clone(),
                            rules: Vec::new(),
                        });
                        counts.len() - 1
                    }
                };
                counts[group].rules.push(rule);
                let sharing = counts[group].rules.len();
                repeat::count(
                    &mut net,
                    id,
                    &label,
                    *n,
                    *distance,
                    *window,
                    distinct,
                    group,
                    sharing - 1,
                )
            }
            Op::Interval {
                kind, window, key, ..
            } => repeat::interval(&mut net, id, &label, *kind, *window, key),
            Op::State { op, key } => {
                let (component, ports, holds) = state::state(&mut net, id, &label, model, op, key);
                state_places.insert(id, holds);
                (component, ports)
            }
            Op::Phase { start, .. } => state::phase(&mut net, id, &label, *start),
            Op::During {
                state: s,
                holds,
                key,
                ..
            } => state::during(&mut net, id, &label, *holds, key, state_places[s]),
        };
        components.push(component);
        ports.push(p);
    }
    let mut consumers = vec![Vec::new(); n];
    for (id, node) in model.nodes.iter().enumerate() {
        if let Op::Within { of, .. } = &node.op {
            // One connection per stab group, to the component that runs the stab.
            if stab_groups[of].members[0].0 == id {
                consumers[*of].push((id, 0));
                net.connect(ports[*of].output, ports[id].inputs[0]);
            }
            continue;
        }
        for (role, operand) in node.op.operands().into_iter().enumerate() {
            consumers[operand].push((id, role));
            net.connect(ports[operand].output, ports[id].inputs[role]);
        }
    }
    let mut anchors = vec![Vec::new(); n];
    for (m, moving) in model.moving.iter().enumerate() {
        anchors[moving.anchor].push(m);
    }
    let mut zone_stabs = vec![ZoneStabs::new(); model.zones.len()];
    // Each zone once per group that reads it: marked with the group's stab as it is
    // first met (no sort of the group's zones, which a large net has many of).
    let mut marked: Vec<Option<usize>> = vec![None; model.zones.len()];
    for group in stab_groups.values() {
        let stab = group.members[0].0;
        for m in &group.members {
            for &z in &m.1 {
                if marked[z] != Some(stab) {
                    marked[z] = Some(stab);
                    zone_stabs[z].push(stab);
                }
            }
        }
    }
    // `Inside` components hold the zones they read, moving ones moved with the rest.
    for (id, node) in model.nodes.iter().enumerate() {
        if let Op::State {
            op: crate::model::StateOp::Inside { zones, .. },
            ..
        } = &node.op
        {
            for &z in zones {
                zone_stabs[z].push(id);
            }
        }
    }
    let mut types = Vec::new();
    let by_type: FxHashMap<Arc<str>, usize> = atomics
        .into_iter()
        .map(|(kind, of_kind)| {
            let reached = || {
                of_kind
                    .iter()
                    .flat_map(|&(id, _)| consumers[id].iter().map(|&(c, _)| c))
            };
            let warm = reached().filter(|&c| components[c].warms()).collect();
            let ahead = reached().filter(|&c| components[c].looks_ahead()).collect();
            types.push(Dispatch::new(&of_kind).warming(warm).fetching_ahead(ahead));
            (kind, types.len() - 1)
        })
        .collect();
    // An atomic component the dispatch reaches only for one value of an attribute
    // need not test that value again.
    for dispatch in &types {
        for (id, attr, text) in dispatch.filed() {
            if let Component::Guard(Guard::Atomic(filter)) = &mut components[id] {
                *filter = filter.as_ref().and_then(|f| f.assuming(attr, text));
            }
        }
    }
    let mut outputs = vec![Vec::new(); n];
    for (name, id) in &model.outputs {
        outputs[*id].push(name.clone());
        let sink = net.place(format!("output {name:?}"), None);
        net.connect(ports[*id].output, sink);
    }
    (
        net,
        Program {
            model: Arc::clone(model),
            components,
            consumers,
            by_type,
            looks_ahead: types.iter().any(|d| !d.ahead().is_empty()),
            types,
            outputs,
            counts,
            anchors,
            zone_stabs,
        },
    )
}

/// A window as a label: `W=10s`, or nothing.
pub(crate) fn window_label(window: Option<i64>) -> String {
    match window {
        Some(w) => format!("W={}s", w as f64 / 1e6),
        None => String::new(),
    }
}

/// `key=attr`, or nothing.
pub(crate) fn key_label(key: &Option<crate::model::Attr>) -> String {
    key.as_ref()
        .map(|k| format!(" key={k}"))
        .unwrap_or_default()
}

/// Adds the component's output place and the arc to it from `t`.
pub(crate) fn output(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    t: NodeIndex,
    arc: &str,
) -> NodeIndex {
    let out = net.place(format!("{label}.out"), Some(id));
    net.arc(t, out, ArcKind::Normal, arc);
    out
}
