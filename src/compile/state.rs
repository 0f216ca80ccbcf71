//! Component nets of states and of the operators that read them. A state's net has a
//! *state place* (`holds`), marked with one token per key value while the state
//! holds: its start transition has an inhibitor arc from it (nothing starts while it
//! holds), its end transition consumes from it. Timed states add the place of the
//! token that arms their timer (anchor, latest occurrence, operand's start) and a
//! timed transition driven by the detector's clock. `Starts` and `Ends` read a
//! state's output place; `During` is a guard with a read arc on the state place.

use super::{output, Ports};
use crate::model::{Combine as How, Model, StateKey, StateOp};
use crate::petri::{ArcKind, NodeIndex, PetriNet};
use crate::runtime::{
    Close, Combine, Component, Decide, During, Lasting, NearZones, PhaseOf, Silent, Stationary,
    Toggle,
};

fn key_label(key: &StateKey) -> String {
    match key {
        StateKey::Whole => String::new(),
        StateKey::Attr(a) => format!(" key={a}"),
        StateKey::Pair(a) => format!(" pairs of {a}"),
    }
}

fn secs(us: i64) -> String {
    if us == i64::MAX {
        "any time".to_owned()
    } else {
        format!("{}s", us as f64 / 1e6)
    }
}

/// A state's component net; returns its component, its ports and its state place.
pub(super) fn state(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    model: &Model,
    op: &StateOp,
    key: &StateKey,
) -> (Component, Ports, NodeIndex) {
    let holds = net.place(format!("{label}.holds{}", key_label(key)), Some(id));
    let out = net.place(format!("{label}.out"), Some(id));
    let begin = |net: &mut PetriNet, what: String| {
        let t = net.transition(format!("start: {what}"), id);
        net.arc(holds, t, ArcKind::Inhibitor, "same key");
        net.arc(t, holds, ArcKind::Normal, "key, since, cause");
        net.arc(t, out, ArcKind::Normal, "phase start");
        t
    };
    let finish = |net: &mut PetriNet, what: String| {
        let t = net.transition(format!("end: {what}"), id);
        net.arc(holds, t, ArcKind::Normal, "same key");
        net.arc(t, out, ArcKind::Normal, "phase end");
        t
    };
    let (component, inputs) = match op {
        StateOp::Toggle { .. } => {
            let (on, off) = (
                net.place(format!("{label}.on"), Some(id)),
                net.place(format!("{label}.off"), Some(id)),
            );
            let t = begin(net, "on".into());
            net.arc(on, t, ArcKind::Normal, "");
            let t = finish(net, "off".into());
            net.arc(off, t, ArcKind::Normal, "");
            (
                Component::Toggle(Toggle::new(Decide::OnOff, key.clone())),
                vec![on, off],
            )
        }
        StateOp::Inside { zones, margin, .. } => {
            let input = net.place(format!("{label}.in"), Some(id));
            let names: Vec<&str> = zones.iter().map(|&z| &*model.zones[z].name).collect();
            let t = begin(net, format!("inside by {margin}"));
            net.arc(input, t, ArcKind::Normal, names.join(", "));
            let t = finish(net, format!("outside by {margin}"));
            net.arc(input, t, ArcKind::Normal, names.join(", "));
            let zones = zones.iter().map(|&z| (z, model.zones[z].clone())).collect();
            (
                Component::Toggle(Toggle::new(
                    Decide::Inside(NearZones::new(model.space, zones, *margin)),
                    key.clone(),
                )),
                vec![input],
            )
        }
        StateOp::Stationary { hold, .. } | StateOp::Silent { hold, .. } => {
            let input = net.place(format!("{label}.in"), Some(id));
            let armed = net.place(format!("{label}.armed"), Some(id));
            let rearm = net.transition(
                match op {
                    StateOp::Stationary { radius, .. } => format!("anchor: moved > {radius}"),
                    _ => "latest".to_owned(),
                },
                id,
            );
            net.arc(input, rearm, ArcKind::Normal, "");
            net.arc(rearm, armed, ArcKind::Normal, "replace");
            let end = finish(net, "moved or seen".into());
            net.arc(input, end, ArcKind::Normal, "");
            let due = begin(net, format!("timed, armed + {}", secs(*hold)));
            net.arc(armed, due, ArcKind::Read, "clock");
            let component = match op {
                StateOp::Stationary { radius, hold, .. } => {
                    Component::Stationary(Stationary::new(key.clone(), *radius, *hold))
                }
                _ => Component::Silent(Silent::new(key.clone(), *hold)),
            };
            (component, vec![input])
        }
        StateOp::Close { max, within, .. } => {
            let input = net.place(format!("{label}.in"), Some(id));
            let latest = net.place(format!("{label}.latest: grid"), Some(id));
            let keep = net.transition("latest per value", id);
            net.arc(input, keep, ArcKind::Normal, "");
            net.arc(keep, latest, ArcKind::Normal, "replace");
            let t = begin(net, format!("dist <= {max}, dt <= {}", secs(*within)));
            net.arc(latest, t, ArcKind::Read, "other value");
            net.arc(input, t, ArcKind::Normal, "");
            let t = finish(net, "apart".into());
            net.arc(latest, t, ArcKind::Read, "other value");
            net.arc(input, t, ArcKind::Normal, "");
            let StateKey::Pair(attr) = key else {
                unreachable!("the model gives Close a key of pairs")
            };
            (
                Component::Close(Close::new(attr.clone(), *max, *within)),
                vec![input],
            )
        }
        StateOp::Lasting { min, .. } => {
            let input = net.place(format!("{label}.in"), Some(id));
            let armed = net.place(format!("{label}.armed"), Some(id));
            let arm = net.transition("operand starts", id);
            net.arc(input, arm, ArcKind::Normal, "phase start");
            net.arc(arm, armed, ArcKind::Normal, "");
            let disarm = finish(net, "operand ends".into());
            net.arc(input, disarm, ArcKind::Normal, "phase end");
            net.arc(armed, disarm, ArcKind::Reset, "");
            let due = begin(net, format!("timed, start + {}", secs(*min)));
            net.arc(armed, due, ArcKind::Read, "clock");
            (Component::Lasting(Lasting::new(*min)), vec![input])
        }
        StateOp::Combine { how, of } => {
            let inputs: Vec<_> = (0..of.len())
                .map(|i| net.place(format!("{label}.in{i}"), Some(id)))
                .collect();
            let marks = net.place(format!("{label}.operands"), Some(id));
            let t = net.transition("mark operand", id);
            for &i in &inputs {
                net.arc(i, t, ArcKind::Normal, "");
            }
            net.arc(t, marks, ArcKind::Normal, "");
            let rule = match how {
                How::All => "all hold",
                How::Any => "any holds",
                How::Unless => "first holds, second not",
            };
            let t = begin(net, rule.into());
            net.arc(marks, t, ArcKind::Read, "");
            let t = finish(net, format!("not: {rule}"));
            net.arc(marks, t, ArcKind::Read, "");
            (Component::Combine(Combine::new(*how, of.len())), inputs)
        }
    };
    (
        component,
        Ports {
            inputs,
            output: out,
        },
        holds,
    )
}

/// `Starts` / `Ends`: a transition passing the state's starts (ends) on as occurrences.
pub(super) fn phase(net: &mut PetriNet, id: usize, label: &str, start: bool) -> (Component, Ports) {
    let input = net.place(format!("{label}.in"), Some(id));
    let which = if start { "start" } else { "end" };
    let t = net.transition(format!("phase {which}"), id);
    net.arc(input, t, ArcKind::Normal, which);
    let out = output(net, id, label, t, "");
    (
        Component::Phase(PhaseOf { start }),
        Ports {
            inputs: vec![input],
            output: out,
        },
    )
}

/// `During`: a guard on the occurrence with a read arc on the state place (mirrored
/// from the state's transitions, input arc 0).
pub(super) fn during(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    holds: bool,
    key: &Option<crate::model::Attr>,
    state_place: NodeIndex,
) -> (Component, Ports) {
    let marks = net.place(format!("{label}.state"), Some(id));
    let input = net.place(format!("{label}.in"), Some(id));
    let t = net.transition(
        format!(
            "{} {}",
            if holds { "while" } else { "unless" },
            key.as_ref()
                .map(|k| format!("same {k}"))
                .unwrap_or_default()
        ),
        id,
    );
    net.arc(input, t, ArcKind::Normal, "");
    net.arc(
        state_place,
        t,
        if holds {
            ArcKind::Read
        } else {
            ArcKind::Inhibitor
        },
        "same key",
    );
    let out = output(net, id, label, t, "");
    (
        Component::During(During::new(key.clone(), holds)),
        Ports {
            inputs: vec![marks, input],
            output: out,
        },
    )
}
