//! Component nets of repetition and intervals: Times (arc weight k), A, A*, P, P*.

use super::{key_label, output, window_label, Ports};
use crate::model::IntervalKind;
use crate::petri::{ArcKind, PetriNet};
use crate::runtime::{Component, Count, Interval, Times};

/// Times: the pending place feeds the firing transition through an arc of weight k.
pub(super) fn times(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    k: usize,
    window: Option<i64>,
    key: &Option<crate::model::Attr>,
) -> (Component, Ports) {
    let input = net.place(format!("{label}.in"), Some(id));
    let t = net.transition(
        format!("every {k}th {}{}", window_label(window), key_label(key)),
        id,
    );
    net.arc(input, t, ArcKind::Normal, format!("weight {k}"));
    let out = output(net, id, label, t, "");
    (
        Component::Times(Times::new(k, window, key.clone())),
        Ports {
            inputs: vec![input],
            output: out,
        },
    )
}

/// A, A*, P, P*: `start` opens the interval place, `end` (or the window) empties it;
/// `e` fires through it (A) or accumulates in it (A*); a timer transition ticks (P).
pub(super) fn interval(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    kind: IntervalKind,
    window: Option<i64>,
    key: &Option<crate::model::Attr>,
) -> (Component, Ports) {
    let start = net.place(format!("{label}.start"), Some(id));
    let end = net.place(format!("{label}.end"), Some(id));
    let open = net.place(format!("{label}.open"), Some(id));
    let opener = net.transition(
        format!("open {}{}", window_label(window), key_label(key)),
        id,
    );
    net.arc(start, opener, ArcKind::Normal, "");
    net.arc(opener, open, ArcKind::Normal, "replace");
    let closer = net.transition("close", id);
    net.arc(end, closer, ArcKind::Normal, "");
    net.arc(closer, open, ArcKind::Reset, "");
    let out = net.place(format!("{label}.out"), Some(id));
    let mut inputs = vec![start];
    match kind {
        IntervalKind::A | IntervalKind::AStar => {
            let e = net.place(format!("{label}.e"), Some(id));
            inputs.push(e);
            if kind == IntervalKind::A {
                let t = net.transition("e fires", id);
                net.arc(e, t, ArcKind::Normal, "");
                net.arc(open, t, ArcKind::Read, "");
                net.arc(t, out, ArcKind::Normal, "");
            } else {
                let acc = net.place(format!("{label}.inside"), Some(id));
                let t = net.transition("accumulate", id);
                net.arc(e, t, ArcKind::Normal, "");
                net.arc(open, t, ArcKind::Read, "");
                net.arc(t, acc, ArcKind::Normal, "");
                net.arc(acc, closer, ArcKind::Normal, "all");
                net.arc(closer, out, ArcKind::Normal, "if any inside");
            }
        }
        IntervalKind::P { period } => {
            let t = net.transition(format!("tick every {}s", period as f64 / 1e6), id);
            net.arc(open, t, ArcKind::Read, "timer");
            net.arc(t, out, ArcKind::Normal, "");
        }
        IntervalKind::PStar { period } => {
            net.arc(
                open,
                closer,
                ArcKind::Normal,
                format!("count ticks of {}s", period as f64 / 1e6),
            );
            net.arc(closer, out, ArcKind::Normal, "");
        }
    }
    inputs.push(end);
    (
        Component::Interval(Interval::new(kind, window, key.clone())),
        Ports {
            inputs,
            output: out,
        },
    )
}

/// Count: the input place is backed by the level-wise index shared by every `Count`
/// reading the same occurrences; the transition grows sets and fires on complete ones.
#[allow(clippy::too_many_arguments)]
pub(super) fn count(
    net: &mut PetriNet,
    id: usize,
    label: &str,
    n: usize,
    distance: f64,
    window: i64,
    distinct: &Option<crate::model::Attr>,
    index: usize,
    rule: usize,
) -> (Component, Ports) {
    let input = net.place(format!("{label}.in: L-level index #{index}"), Some(id));
    let distinct = distinct
        .as_ref()
        .map(|d| format!(" distinct={d}"))
        .unwrap_or_default();
    let t = net.transition(
        format!(
            "{n} pairwise < {distance}, {}{distinct}",
            window_label(Some(window))
        ),
        id,
    );
    net.arc(input, t, ArcKind::Read, format!("weight {n}"));
    let out = output(net, id, label, t, "");
    (
        Component::Count(Count { index, rule }),
        Ports {
            inputs: vec![input],
            output: out,
        },
    )
}
