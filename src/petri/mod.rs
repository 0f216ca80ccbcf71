//! The compositional coloured Petri net: places, transitions and arcs in an arena
//! (nodes and arcs in two vectors, an arc naming its ends by index), grouped into one component net per operator and joined by connection
//! transitions. Built once at load; drawn by [`dot`]; never walked per event.

mod dot;

pub(crate) use dot::to_dot;

/// A node's place in [`PetriNet::nodes`]; numbers the node in the `dot` drawing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct NodeIndex(u32);

impl NodeIndex {
    /// The node's position in [`PetriNet::nodes`].
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

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
    /// Enables its transition only while the place holds no token of the same key
    /// (a state's start: nothing starts while it holds).
    Inhibitor,
}

/// An arc from one node to another; its label shows its weight, guard or spatial
/// predicate.
#[derive(Clone, Debug)]
pub(crate) struct NetArc {
    pub(crate) from: NodeIndex,
    pub(crate) to: NodeIndex,
    pub(crate) kind: ArcKind,
    pub(crate) label: String,
}

/// The whole net, and a name for each component (an operator of the model).
#[derive(Clone, Debug, Default)]
pub(crate) struct PetriNet {
    /// Places and transitions, in the order they were added.
    pub(crate) nodes: Vec<NetNode>,
    /// Arcs, in the order they were added.
    pub(crate) arcs: Vec<NetArc>,
    /// `name: Operator` of each component, by model node.
    pub(crate) components: Vec<String>,
}

impl PetriNet {
    fn add_node(&mut self, node: NetNode) -> NodeIndex {
        let index = u32::try_from(self.nodes.len()).expect("fewer than 2^32 nodes");
        self.nodes.push(node);
        NodeIndex(index)
    }

    pub(crate) fn place(
        &mut self,
        label: impl Into<String>,
        component: Option<usize>,
    ) -> NodeIndex {
        self.add_node(NetNode::Place {
            label: label.into(),
            component,
        })
    }

    pub(crate) fn transition(&mut self, label: impl Into<String>, component: usize) -> NodeIndex {
        self.add_node(NetNode::Transition {
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
        self.arcs.push(NetArc {
            from,
            to,
            kind,
            label: label.into(),
        });
    }

    /// Joins output place `from` to input place `to` through a connection transition.
    pub(crate) fn connect(&mut self, from: NodeIndex, to: NodeIndex) {
        let t = self.add_node(NetNode::Connection);
        self.arc(from, t, ArcKind::Normal, "");
        self.arc(t, to, ArcKind::Normal, "");
    }

    /// Counts of (places, transitions, connection transitions, arcs).
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, self.arcs.len());
        for n in &self.nodes {
            match n {
                NetNode::Place { .. } => c.0 += 1,
                NetNode::Transition { .. } => c.1 += 1,
                NetNode::Connection => c.2 += 1,
            }
        }
        c
    }
}
