//! Component nets of the memoryless operators: Atomic, Within, Direction(box), Or.

use rustc_hash::FxHashMap;

use super::StabGroup;
use super::{output, Ports};
use crate::filter::Filter;
use crate::model::{Model, ZoneId};
use crate::petri::{ArcKind, NodeIndex, PetriNet};
use crate::runtime::{Component, Guard, Stab};
use crate::spatial::RelSet;

/// Atomic: the type's source place, read by a transition guarded by `when`.
pub(super) fn atomic(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    source: NodeIndex,
    filter: Option<&Filter>,
) -> (Component, Ports) {
    let guard = filter.map_or_else(|| "match".to_owned(), |f| format!("when {f}"));
    let t = net.transition(guard, id);
    net.arc(source, t, ArcKind::Read, "");
    let out = output(net, id, label, t, "");
    (
        Component::Guard(Guard::Atomic(filter.cloned())),
        Ports {
            inputs: vec![],
            output: out,
        },
    )
}

/// Within: a transition reading the group's shared stab place (the R*-tree of every
/// zone named by a `Within` of the same input); the spatial predicate sits on its arc
/// to the output place. The group's first component runs the stab for all of them:
/// it is given the group's `stab` (from [`stabs`]), the others `None`.
pub(super) fn within(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    model: &Model,
    zones: &[ZoneId],
    stab: Option<Stab>,
    stab_place: NodeIndex,
) -> (Component, Ports) {
    let names: Vec<&str> = zones.iter().map(|&z| &*model.zones[z].name).collect();
    let t = net.transition("within", id);
    net.arc(stab_place, t, ArcKind::Read, "stab hit");
    let out = output(net, id, label, t, &format!("IN({})", names.join(" ∨ ")));
    let component = stab.map_or(Component::Served, Component::Stab);
    (
        component,
        Ports {
            inputs: vec![stab_place],
            output: out,
        },
    )
}

/// Each `Within` group's stab, by the component that runs it (the group's first).
///
/// Building a group's index takes milliseconds per ten thousand zones, and groups are
/// independent: when the groups name [`ZONES_APART`] zones or more in all, they are
/// built on as many threads as the machine runs at once (each group on one thread, the
/// largest first, each to the thread with the fewest zones so far), else on the
/// caller's. Either way each stab is the same.
pub(super) fn stabs(model: &Model, groups: &FxHashMap<usize, StabGroup>) -> FxHashMap<usize, Stab> {
    let size = |g: &StabGroup| g.members.iter().map(|m| m.1.len()).sum::<usize>();
    let build = |g: &&StabGroup| {
        let stab = Stab::new(model.space, &model.zones, g.members.clone());
        (g.members[0].0, stab)
    };
    let mut groups: Vec<&StabGroup> = groups.values().collect();
    groups.sort_by_key(|g| (std::cmp::Reverse(size(g)), g.members[0].0));
    let total: usize = groups.iter().map(|g| size(g)).sum();
    // (Asked only of a large net: the question reads the process's CPU limits, which
    // costs a small net's compiling a tenth of its time.)
    let threads = if total < ZONES_APART {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get().min(8))
            .min(groups.len())
    };
    if threads < 2 {
        return groups.iter().map(build).collect();
    }
    let mut buckets: Vec<(usize, Vec<&StabGroup>)> = vec![(0, Vec::new()); threads];
    for g in groups {
        let lightest = buckets
            .iter_mut()
            .min_by_key(|b| b.0)
            .expect("at least two threads");
        lightest.0 += size(g);
        lightest.1.push(g);
    }
    std::thread::scope(|scope| {
        let (mine, others) = buckets.split_first().expect("at least two threads");
        let spawned: Vec<_> = others
            .iter()
            .map(|(_, bucket)| {
                let on_thread = std::thread::Builder::new()
                    .name("net-index".into())
                    .spawn_scoped(scope, || bucket.iter().map(build).collect::<Vec<_>>());
                (bucket, on_thread)
            })
            .collect();
        let mut stabs: FxHashMap<usize, Stab> = mine.1.iter().map(build).collect();
        for (bucket, on_thread) in spawned {
            match on_thread {
                Ok(handle) => match handle.join() {
                    Ok(built) => stabs.extend(built),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                // A thread that could not start: its groups on the caller's.
                Err(_) => stabs.extend(bucket.iter().map(build)),
            }
        }
        stabs
    })
}

/// From how many zone references in all [`stabs`] builds the groups on several threads.
const ZONES_APART: usize = 10_000;

/// Direction against a zone's bounding box: the relation is the output arc's predicate.
pub(super) fn dir_box(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    model: &Model,
    rels: &RelSet,
    zone: ZoneId,
) -> (Component, Ports) {
    let z = &model.zones[zone];
    let rect = z
        .bbox(model.space)
        .unwrap_or(geo_types::Rect::new((0.0, 0.0), (0.0, 0.0)));
    let input = net.place(format!("{label}.in"), Some(id));
    let t = net.transition("direction", id);
    net.arc(input, t, ArcKind::Normal, "");
    let out = output(net, id, label, t, &format!("{:?}(box {})", rels.0, z.name));
    (
        Component::Guard(Guard::DirBox(rels.clone(), rect)),
        Ports {
            inputs: vec![input],
            output: out,
        },
    )
}

/// Or: one transition per operand into a shared output place.
pub(super) fn or(net: &mut PetriNet, id: usize, label: &str, n: usize) -> (Component, Ports) {
    let out = net.place(format!("{label}.out"), Some(id));
    let mut inputs = Vec::with_capacity(n);
    for i in 0..n {
        let input = net.place(format!("{label}.in{i}"), Some(id));
        let t = net.transition(format!("or{i}"), id);
        net.arc(input, t, ArcKind::Normal, "");
        net.arc(t, out, ArcKind::Normal, "");
        inputs.push(input);
    }
    (
        Component::Guard(Guard::Or),
        Ports {
            inputs,
            output: out,
        },
    )
}
