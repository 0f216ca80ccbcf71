//! The compositional coloured Petri net: places, transitions and arcs in a petgraph
//! graph, grouped into one component net per operator and joined by connection
//! transitions. Built once at load; drawn by [`dot`]; never walked per event.

mod dot;

pub(crate) use dot::to_dot;

use petgraph::graph::{DiGraph, NodeIndex};

/// A node of the net.
#[derive(Clone, Debug)]
pub(crate) enum NetNode {
    /// A place, holding a multiset of tokens.
    Place {
        label: String,
        component: Option<usize>,
    },
    /// A transition of a component net.
    Transition { label: String, component: usize },
    /// A connection transition: copies each token of a component's output place into
    /// an input place of a component that uses it.
    Connection,
}

/// How an arc acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArcKind {
    /// Takes tokens (place → transition, with a weight) or puts them (transition → place).
    Normal,
    /// Reads tokens without taking them (an initiator stays available).
    Read,
    /// Empties the place it points to (`Not`'s absent).
    Reset,
}

/// An arc; its label shows its weight, guard or spatial predicate.
#[derive(Clone, Debug)]
pub(crate) struct NetArc {
    pub(crate) kind: ArcKind,
    pub(crate) label: String,
}

/// The whole net, and a name for each component (an operator of the model).
#[derive(Clone, Debug, Default)]
pub(crate) struct PetriNet {
    pub(crate) graph: DiGraph<NetNode, NetArc>,
    /// `name: Operator` of each component, by model node.
    pub(crate) components: Vec<String>,
}

impl PetriNet {
    pub(crate) fn place(
        &mut self,
        label: impl Into<String>,
        component: Option<usize>,
    ) -> NodeIndex {
        self.graph.add_node(NetNode::Place {
            label: label.into(),
            component,
        })
    }

    pub(crate) fn transition(&mut self, label: impl Into<String>, component: usize) -> NodeIndex {
        self.graph.add_node(NetNode::Transition {
            label: label.into(),
            component,
        })
    }

    pub(crate) fn arc(
        &mut self,
        from: NodeIndex,
        to: NodeIndex,
        kind: ArcKind,
        label: impl Into<String>,
    ) {
        self.graph.add_edge(
            from,
            to,
            NetArc {
                kind,
                label: label.into(),
            },
        );
    }

    /// Joins output place `from` to input place `to` through a connection transition.
    pub(crate) fn connect(&mut self, from: NodeIndex, to: NodeIndex) {
        let t = self.graph.add_node(NetNode::Connection);
        self.arc(from, t, ArcKind::Normal, "");
        self.arc(t, to, ArcKind::Normal, "");
    }

    /// Counts of (places, transitions, connection transitions, arcs).
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, self.graph.edge_count());
        for n in self.graph.node_weights() {
            match n {
                NetNode::Place { .. } => c.0 += 1,
                NetNode::Transition { .. } => c.1 += 1,
                NetNode::Connection => c.2 += 1,
            }
        }
        c
    }
}

/// A loaded net: checked, compiled into a compositional coloured Petri net, and
/// ready to run in any number of [`crate::Detector`]s.
///
/// ```
/// use ccpn::Net;
/// let net = Net::from_ron("n.ron", r#"Net(
///     events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"), "ab": And(of: ["a", "b"], within: 5.0) },
///     outputs: ["ab"],
/// )"#)?;
/// assert!(net.to_dot().starts_with("digraph"));
/// # Ok::<(), ccpn::NetError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Net {
    pub(crate) model: crate::model::Model,
    pub(crate) petri: PetriNet,
    pub(crate) program: crate::compile::Program,
}

impl Net {
    /// Loads the net in file `path`.
    ///
    /// # Errors
    ///
    /// [`crate::NetError::Read`] if the file cannot be read; [`crate::NetError::Invalid`]
    /// with every problem found (file, line, column, what is wrong) if it is not a valid net.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Net, crate::NetError> {
        let path = path.as_ref();
        let src = std::fs::read_to_string(path).map_err(|source| crate::NetError::Read {
            path: path.to_owned(),
            source,
        })?;
        Net::from_ron(&path.display().to_string(), &src)
    }

    /// Loads a net from RON text; `file` names it in error messages.
    ///
    /// # Errors
    ///
    /// [`crate::NetError::Invalid`] with every problem found.
    pub fn from_ron(file: &str, src: &str) -> Result<Net, crate::NetError> {
        let model = crate::model::Model::load(file, src)?;
        let (petri, program) = crate::compile::compile(&model);
        Ok(Net {
            model,
            petri,
            program,
        })
    }

    /// A SHA-256 of the net's text and of every GeoJSON file it read: two nets with
    /// the same fingerprint detect the same things. Checkpoints and the processes of
    /// a cluster compare it.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.model.fingerprint
    }

    /// The net's space: which location fields events carry.
    pub fn space(&self) -> crate::Space {
        self.model.space
    }

    /// Things that load but deserve a word, such as an operator without a window.
    pub fn warnings(&self) -> &[crate::Problem] {
        &self.model.warnings
    }

    /// The output events' names.
    pub fn outputs(&self) -> impl Iterator<Item = &str> {
        self.model.outputs.iter().map(|(n, _)| &**n)
    }

    /// The event types the net reads.
    pub fn event_types(&self) -> impl Iterator<Item = &str> {
        self.program.by_type.keys().map(|k| &**k)
    }

    /// The attribute names the net reads (in `when` filters, `key:` and `distinct:`),
    /// sorted, without repeats. Readers may share one copy of each.
    pub fn attribute_names(&self) -> Vec<&str> {
        use crate::model::Op;
        let mut names: Vec<&str> = Vec::new();
        for node in &self.model.nodes {
            let (key, distinct) = match &node.op {
                Op::Atomic {
                    filter: Some(f), ..
                } => {
                    names.extend(f.fields());
                    (None, None)
                }
                Op::Pair { opts, .. } | Op::Not { opts, .. } | Op::Any { opts, .. } => {
                    (opts.key.as_ref(), opts.distinct.as_ref())
                }
                Op::Times { key, .. } | Op::Interval { key, .. } => (key.as_ref(), None),
                _ => (None, None),
            };
            names.extend(key.map(|a| &*a.name));
            names.extend(distinct.map(|a| &*a.name));
        }
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Every name the net reads from events: its attribute names (see
    /// [`Net::attribute_names`]) and its event types. Readers given them
    /// ([`crate::io::read::LineParser::with_known_names`]) share one copy of each.
    pub fn names_read(&self) -> Vec<&str> {
        let mut names = self.attribute_names();
        names.extend(self.event_types());
        names
    }

    /// The compiled Petri net in Graphviz `dot` syntax.
    pub fn to_dot(&self) -> String {
        to_dot(&self.petri)
    }

    /// A one-line description: components, places, transitions, connection transitions, arcs.
    pub fn summary(&self) -> String {
        let (p, t, c, a) = self.petri.counts();
        format!(
            "{} components, {p} places, {t} transitions, {c} connection transitions, {a} arcs",
            self.petri.components.len()
        )
    }
}
