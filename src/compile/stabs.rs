//! The stabs of a net's `Within` groups, built before the components: each group's
//! zone index is its own, so a net of many zones builds them on several threads.

use rustc_hash::FxHashMap;

use super::StabGroup;
use crate::model::Model;
use crate::runtime::Stab;

/// Below this many zone references in all groups, the stabs are built on the
/// caller's thread: threads cost more than they save.
const MIN_REFS: usize = 10_000;

/// A group to build: the occurrence it reads, the group, its zone references.
type Todo<'a> = (usize, &'a StabGroup, usize);

/// Each group's stab, by the occurrence the group reads.
pub(super) fn build(model: &Model, groups: &FxHashMap<usize, StabGroup>) -> FxHashMap<usize, Stab> {
    let mut todo: Vec<Todo<'_>> = groups
        .iter()
        .map(|(&of, g)| (of, g, g.members.iter().map(|m| m.1.len()).sum()))
        .collect();
    let refs: usize = todo.iter().map(|t| t.2).sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get().min(8))
        .min(todo.len());
    let one =
        |(of, g, _): &Todo<'_>| (*of, Stab::new(model.space, &model.zones, g.members.clone()));
    if threads < 2 || refs < MIN_REFS {
        return todo.iter().map(one).collect();
    }
    // The largest first, each to the thread with the least so far.
    todo.sort_by_key(|t| std::cmp::Reverse(t.2));
    let mut bins: Vec<(usize, Vec<Todo<'_>>)> = vec![(0, Vec::new()); threads];
    for t in todo {
        if let Some(bin) = bins.iter_mut().min_by_key(|b| b.0) {
            bin.0 += t.2;
            bin.1.push(t);
        }
    }
    std::thread::scope(|scope| {
        let others: Vec<_> = bins[1..]
            .iter()
            .map(|(_, bin)| {
                let handle = std::thread::Builder::new()
                    .name("net-build".into())
                    .spawn_scoped(scope, move || bin.iter().map(one).collect::<Vec<_>>());
                (handle, bin)
            })
            .collect();
        let mut stabs: FxHashMap<usize, Stab> = bins[0].1.iter().map(one).collect();
        for (handle, bin) in others {
            match handle {
                Ok(h) => match h.join() {
                    Ok(built) => stabs.extend(built),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                // A thread that could not start: its groups are built here.
                Err(_) => stabs.extend(bin.iter().map(one)),
            }
        }
        stabs
    })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::sync::Arc;

    use crate::model::{Model, Op};
    use crate::runtime::Component;

    /// Three groups of `Within`, of more zone references together than one thread
    /// builds: each group's first component holds its own group's zones and no
    /// other's, and the others are served by it.
    #[test]
    fn each_group_gets_its_own_stab_when_they_are_built_on_several_threads() {
        let per = super::MIN_REFS / 2;
        let mut zones = String::new();
        for i in 0..3 * per {
            let _ = writeln!(
                zones,
                "\"z{i}\": Circle(center: ({i}.0, 0.0), radius: 0.4),"
            );
        }
        let mut events = String::new();
        for (g, kind) in ["A", "B", "C"].iter().enumerate() {
            let _ = writeln!(events, "\"{kind}\": Atomic(type: \"{kind}\"),");
            for half in 0..2 {
                let names: Vec<String> = (g * per + half * per / 2..g * per + (half + 1) * per / 2)
                    .map(|i| format!("\"z{i}\""))
                    .collect();
                let _ = writeln!(
                    events,
                    "\"in{kind}{half}\": Within(of: \"{kind}\", zones: [{}]),",
                    names.join(", ")
                );
            }
        }
        let src = format!(
            "Net(space: Planar, zones: {{ {zones} }}, events: {{ {events} }}, \
             outputs: [\"inA0\", \"inA1\", \"inB0\", \"inB1\", \"inC0\", \"inC1\"])"
        );
        let model = Arc::new(Model::load("many.ron", src.into(), &[]).expect("the net loads"));
        let (_, program) = super::super::compile(&model);
        // Zone ids are in name order: each group's by the number in its names.
        let group_of = |z: usize| -> usize {
            let n: usize = model.zones[z].name[1..].parse().expect("z and a number");
            n / per
        };
        let mut stabs = 0;
        for (id, node) in model.nodes.iter().enumerate() {
            let Op::Within { zones: mine, .. } = &node.op else {
                continue;
            };
            let c = &program.components[id];
            match c {
                Component::Stab(_) => {
                    stabs += 1;
                    let g = group_of(mine[0]);
                    for z in 0..model.zones.len() {
                        assert_eq!(
                            c.zone(z).is_some(),
                            group_of(z) == g,
                            "component {id}, zone {z}"
                        );
                    }
                }
                Component::Served => {}
                _ => panic!("a Within is a stab or served by one"),
            }
        }
        assert_eq!(stabs, 3);
    }
}
