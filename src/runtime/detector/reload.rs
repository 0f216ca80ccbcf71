//! Reloading: a detector goes on with another program, each component whose
//! definition did not change keeping its state (moved, not copied), with its
//! counting index, its pending ticks and the positions of the moving zones it reads.
//! What is new or changed starts empty; what is gone is dropped.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::zones::place_zone;
use super::Detector;
use crate::event::Space;
use crate::model::{Definitions, Model, Op};
use crate::runtime::component::{Component, CountShared};
use crate::runtime::dirty::Dirty;
use crate::runtime::program::Program;
use crate::spatial::Zone;

/// What [`Detector::reload`](crate::Detector::reload) did with each component of the
/// two nets, by name (a component's first name in its net; `#n` for a part the
/// loader made of an operator over more than two operands).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadReport {
    /// Components of the new net whose definition did not change: they keep what
    /// they held (waiting tokens, open intervals, states, counting sets, ticks).
    pub kept: Vec<String>,
    /// Components whose name the running net had, with another definition (or a
    /// `Count` whose counting index is now shared otherwise): they start empty.
    pub reset: Vec<String>,
    /// Components new to the net: they start empty.
    pub added: Vec<String>,
    /// Components of the running net that the new net does not have: dropped.
    pub removed: Vec<String>,
    /// Outputs of the new net all of whose components kept their state: they detect
    /// from now on exactly what the new net would have, had it run from the start.
    pub unchanged: Vec<String>,
    /// Outputs of the new net none of whose components kept any state: they detect
    /// what the new net started empty now would.
    pub restarted: Vec<String>,
}

impl fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, what: &str, names: &[String]| {
            write!(f, "{what} {}", names.len())?;
            if !names.is_empty() {
                let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
                let more = if names.len() > 8 { ", …" } else { "" };
                write!(f, " ({}{more})", shown.join(", "))?;
            }
            Ok(())
        };
        list(f, "kept", &self.kept)?;
        list(f, ", reset", &self.reset)?;
        list(f, ", added", &self.added)?;
        list(f, ", removed", &self.removed)
    }
}

/// A net the running detector cannot change to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The new net's `space` is not the running net's: no location could be read
    /// alike.
    #[error(
        "the net's space is {new:?} and the running net's {running:?}: a reload keeps the space"
    )]
    Space {
        /// The running net's space.
        running: Space,
        /// The new net's space.
        new: Space,
    },
}

impl Detector {
    /// The model the detector runs.
    pub(crate) fn model(&self) -> &Model {
        &self.program.model
    }

    /// Goes on with `program` (of a model in the same space, whose key slots extend
    /// the running model's), keeping the state of every component whose definition
    /// did not change. Between events only.
    pub(crate) fn reload_program(&mut self, program: Arc<Program>) -> ReloadReport {
        let old = Arc::clone(&self.program);
        let (om, nm) = (&*old.model, &*program.model);
        let mut defs = Definitions::default();
        let od = defs.of(om);
        let nd = defs.of(nm);

        // Each new node takes the old node of its definition, at most once.
        let mut by_def: HashMap<usize, usize> = HashMap::new();
        for (i, d) in od.nodes.iter().enumerate() {
            by_def.entry(*d).or_insert(i);
        }
        let mut taken = vec![false; om.nodes.len()];
        let mut from: Vec<Option<usize>> = nd
            .nodes
            .iter()
            .map(|d| {
                let i = *by_def.get(d)?;
                (!std::mem::replace(&mut taken[i], true)).then_some(i)
            })
            .collect();

        // A counting index is kept if it serves the same rules in the same order.
        let old_groups = count_groups(&old, &od.nodes);
        let new_groups = count_groups(&program, &nd.nodes);
        let mut old_counts: Vec<Option<CountShared>> = std::mem::take(&mut self.counts)
            .into_iter()
            .map(Some)
            .collect();
        let space = nm.space;
        let mut counts = Vec::with_capacity(program.counts.len());
        for (g, group) in program.counts.iter().enumerate() {
            let same = old_groups
                .iter()
                .position(|o| o.1 == new_groups[g].1)
                .and_then(|o| old_counts[o].take());
            match same {
                Some(shared) => counts.push(shared),
                None => {
                    for &j in &new_groups[g].0 {
                        from[j] = None;
                    }
                    counts.push(CountShared::new(
                        space,
                        group.rules.clone(),
                        group.distinct.clone(),
                        self.options.max_sets,
                    ));
                }
            }
        }

        // Moving zones whose content and anchor are unchanged stay where they are.
        let mut moved: Vec<(usize, Zone)> = Vec::new();
        for m in &nm.moving {
            let kept_anchor = from[m.anchor].is_some();
            let Some(oz) = od.zones.iter().position(|&d| d == nd.zones[m.zone]) else {
                continue;
            };
            let at = old.zone_stabs[oz]
                .first()
                .and_then(|&c| self.components[c].zone(oz));
            if let (true, Some(at)) = (kept_anchor, at) {
                moved.push((m.zone, at.clone()));
            }
        }

        // The components: the new program's, with the kept ones' state moved in.
        let mut olds: Vec<Option<Component>> = std::mem::take(&mut self.components)
            .into_iter()
            .map(Some)
            .collect();
        let mut components = program.components.clone();
        if !self.options.zone_index {
            for u in &mut components {
                if let Component::Stab(stab) = u {
                    stab.scan_linearly();
                }
            }
        }
        let mut to: Vec<Option<usize>> = vec![None; om.nodes.len()];
        for (j, u) in components.iter_mut().enumerate() {
            let Some(i) = from[j] else { continue };
            if let Some(old_u) = olds[i].take() {
                if u.load(old_u.into_state()) {
                    to[i] = Some(j);
                } else {
                    from[j] = None;
                }
            }
        }
        for (z, zone) in &moved {
            place_zone(&program, &mut components, *z, zone);
        }
        drop(olds);
        drop(old_counts);

        self.timers.remap(|c| to[c]);
        self.budget.live = components.iter().map(Component::live).sum::<usize>()
            + counts.iter().map(CountShared::live).sum::<usize>();
        let n = components.len();
        self.components = components;
        self.counts = counts;
        self.inbox = vec![Vec::new(); n];
        self.dirty = Dirty::new(n);
        self.kinds = Default::default();
        self.key_names = vec![None; program.model.key_attrs.len()];
        self.names = super::names::OutputNames::of(&program);
        self.program = Arc::clone(&program);
        report(om, nm, &from, &to, &self.components)
    }
}

/// Each counting group's `Count` nodes, and their definitions, in rule order.
fn count_groups(program: &Program, defs: &[usize]) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut groups = vec![Vec::new(); program.counts.len()];
    for (j, u) in program.components.iter().enumerate() {
        if let Component::Count(c) = u {
            groups[c.index].push((c.rule, j));
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            let nodes: Vec<usize> = g.into_iter().map(|(_, j)| j).collect();
            let ds = nodes.iter().map(|&j| defs[j]).collect();
            (nodes, ds)
        })
        .collect()
}

/// The report of a reload from `om` to `nm`: `from` gives each new node's old node
/// (if it kept its state), `to` each old node's new one.
fn report(
    om: &Model,
    nm: &Model,
    from: &[Option<usize>],
    to: &[Option<usize>],
    components: &[Component],
) -> ReloadReport {
    let old_names: std::collections::HashSet<&str> = om
        .nodes
        .iter()
        .flat_map(|n| n.names.iter().map(|s| &**s))
        .collect();
    let new_names: std::collections::HashSet<&str> = nm
        .nodes
        .iter()
        .flat_map(|n| n.names.iter().map(|s| &**s))
        .collect();
    let mut r = ReloadReport::default();
    for (j, node) in nm.nodes.iter().enumerate() {
        let label = node.label(j);
        if from[j].is_some() {
            r.kept.push(label);
        } else if node.names.iter().any(|n| old_names.contains(&**n)) {
            r.reset.push(label);
        } else {
            r.added.push(label);
        }
    }
    for (i, node) in om.nodes.iter().enumerate() {
        if to[i].is_none() && !node.names.iter().any(|n| new_names.contains(&**n)) {
            r.removed.push(node.label(i));
        }
    }
    // Which nodes hold state, and kept it.
    let stateful =
        |j: usize| components[j].holds_state() || matches!(nm.nodes[j].op, Op::Count { .. });
    for (name, out) in &nm.outputs {
        let mut seen = vec![false; nm.nodes.len()];
        let mut stack = vec![*out];
        let (mut kept, mut lost) = (false, false);
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            if stateful(j) {
                if from[j].is_some() {
                    kept = true;
                } else {
                    lost = true;
                }
            }
            stack.extend(nm.nodes[j].op.operands());
        }
        if !lost {
            r.unchanged.push(name.to_string());
        } else if !kept {
            r.restarted.push(name.to_string());
        }
    }
    r
}
