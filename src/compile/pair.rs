//! Component nets of the pairing operators: Seq, And, Dist, Direction(from), Not, Any.

use super::{key_label, output, window_label, Ports};
use crate::model::{PairKind, PairOpts};
use crate::petri::{ArcKind, PetriNet};
use crate::runtime::{Any, Component, Not, Pair};

fn guard_label(opts: &PairOpts) -> String {
    let mut s = format!("{:?}", opts.context);
    let w = window_label(opts.window);
    if !w.is_empty() {
        s.push(' ');
        s.push_str(&w);
    }
    s.push_str(&key_label(&opts.key));
    if let Some(d) = &opts.distinct {
        s.push_str(&format!(" distinct={d}"));
    }
    s
}

/// Seq, And, Dist, Direction(from): a place per operand; a firing transition per
/// terminating operand reads the other operand's place (initiators stay unless the
/// context consumes them). The operator's condition is the output arc's predicate.
pub(super) fn pair(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    kind: &PairKind,
    opts: &PairOpts,
    same: bool,
    space: crate::event::Space,
) -> (Component, Ports) {
    let predicate = match kind {
        PairKind::Seq | PairKind::And => String::new(),
        PairKind::Dist { max } => format!("dist ≤ {max}"),
        PairKind::Direction { rels } => format!("{:?}(a from b)", rels.0),
    };
    let read = if opts.context.consumes() {
        ArcKind::Normal
    } else {
        ArcKind::Read
    };
    let guard = guard_label(opts);
    let a = net.place(format!("{label}.a"), Some(id));
    let b = if same {
        a
    } else {
        net.place(format!("{label}.b"), Some(id))
    };
    let out = net.place(format!("{label}.out"), Some(id));
    let fire_b = net.transition(format!("b fires: {guard}"), id);
    net.arc(b, fire_b, ArcKind::Normal, "y");
    net.arc(a, fire_b, read, "x");
    net.arc(fire_b, out, ArcKind::Normal, &predicate);
    if *kind != PairKind::Seq && !same {
        let fire_a = net.transition(format!("a fires: {guard}"), id);
        net.arc(a, fire_a, ArcKind::Normal, "y");
        net.arc(b, fire_a, read, "x");
        net.arc(fire_a, out, ArcKind::Normal, &predicate);
    }
    let component = Component::Pair(Pair::new(kind.clone(), opts.clone(), same, space));
    (
        component,
        Ports {
            inputs: vec![a, b],
            output: out,
        },
    )
}

/// Not: start and end places meet in the firing transition; the absent place feeds a
/// transition with a reset arc on the start place.
pub(super) fn not(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    opts: &PairOpts,
    same_ends: bool,
) -> (Component, Ports) {
    let start = net.place(format!("{label}.start"), Some(id));
    let absent = net.place(format!("{label}.absent"), Some(id));
    let end = net.place(format!("{label}.end"), Some(id));
    let fire = net.transition(format!("end fires: {}", guard_label(opts)), id);
    let read = if opts.context.consumes() {
        ArcKind::Normal
    } else {
        ArcKind::Read
    };
    net.arc(start, fire, read, "x");
    net.arc(end, fire, ArcKind::Normal, "y");
    let reset = net.transition("absent resets", id);
    net.arc(absent, reset, ArcKind::Normal, "");
    net.arc(reset, start, ArcKind::Reset, key_label(&opts.key));
    let out = output(net, id, label, fire, "");
    (
        Component::Not(Not::new(opts.clone(), same_ends)),
        Ports {
            inputs: vec![start, absent, end],
            output: out,
        },
    )
}

/// Any: a place per operand; each operand's transition fires with initiators read
/// from m-1 of the other places.
pub(super) fn any(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    m: usize,
    n: usize,
    opts: &PairOpts,
) -> (Component, Ports) {
    let out = net.place(format!("{label}.out"), Some(id));
    let inputs: Vec<_> = (0..n)
        .map(|i| net.place(format!("{label}.{i}"), Some(id)))
        .collect();
    let read = if opts.context.consumes() {
        ArcKind::Normal
    } else {
        ArcKind::Read
    };
    let guard = guard_label(opts);
    for (i, &p) in inputs.iter().enumerate() {
        let t = net.transition(format!("{i} fires: {m} of {n}, {guard}"), id);
        net.arc(p, t, ArcKind::Normal, "y");
        for (j, &q) in inputs.iter().enumerate() {
            if j != i {
                net.arc(q, t, read, "x");
            }
        }
        net.arc(t, out, ArcKind::Normal, "");
    }
    (
        Component::Any(Any::new(m, n, opts.clone())),
        Ports {
            inputs,
            output: out,
        },
    )
}
