//! Component nets of the memoryless operators: Atomic, Within, Direction(box), Or.

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
/// to the output place. The group's first component runs the stab for all of them.
pub(super) fn within(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    model: &Model,
    zones: &[ZoneId],
    group: &StabGroup,
    stab_place: NodeIndex,
) -> (Component, Ports) {
    let names: Vec<&str> = zones.iter().map(|&z| &*model.zones[z].name).collect();
    let t = net.transition("within", id);
    net.arc(stab_place, t, ArcKind::Read, "stab hit");
    let out = output(net, id, label, t, &format!("IN({})", names.join(" ∨ ")));
    let component = if group.members[0].0 == id {
        Component::Stab(Stab::new(model.space, &model.zones, group.members.clone()))
    } else {
        Component::Served
    };
    (
        component,
        Ports {
            inputs: vec![stab_place],
            output: out,
        },
    )
}

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
