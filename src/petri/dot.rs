//! Graphviz drawing of the net: places as circles, transitions as boxes, connection
//! transitions as bars, one cluster per component.

use std::fmt::Write;

use super::{ArcKind, NetNode, PetriNet};

/// The net in Graphviz `dot` syntax.
pub(crate) fn to_dot(net: &PetriNet) -> String {
    let mut s = String::from("digraph ccpn {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
    let mut clusters: Vec<Vec<String>> = vec![Vec::new(); net.components.len()];
    let mut free: Vec<String> = Vec::new();
    for (id, node) in net.nodes.iter().enumerate() {
        let (line, component) = match node {
            NetNode::Place { label, component } => {
                (format!("n{id} [shape=circle, label={}];", quote(label)), *component)
            }
            NetNode::Transition { label, component } => {
                (format!("n{id} [shape=box, label={}];", quote(label)), Some(*component))
            }
            NetNode::Connection => (
                format!("n{id} [shape=box, style=filled, fillcolor=black, label=\"\", width=0.08, height=0.3];"),
                None,
            ),
        };
        match component {
            Some(c) => clusters[c].push(line),
            None => free.push(line),
        }
    }
    for (c, lines) in clusters.iter().enumerate() {
        let _ = writeln!(
            s,
            "  subgraph cluster_{c} {{\n    label={};\n    style=rounded;",
            quote(&net.components[c])
        );
        for l in lines {
            let _ = writeln!(s, "    {l}");
        }
        s.push_str("  }\n");
    }
    for l in free {
        let _ = writeln!(s, "  {l}");
    }
    for w in &net.arcs {
        let style = match w.kind {
            ArcKind::Normal => "",
            ArcKind::Read => ", style=dashed",
            ArcKind::Reset => ", style=dashed, arrowhead=odot",
            ArcKind::Inhibitor => ", arrowhead=dot",
        };
        let _ = writeln!(
            s,
            "  n{} -> n{} [label={}{style}];",
            w.from.index(),
            w.to.index(),
            quote(&w.label)
        );
    }
    s.push_str("}\n");
    s
}

fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
