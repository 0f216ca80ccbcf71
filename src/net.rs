//! [`Net`], a loaded net: the checked model, its compositional coloured Petri net
//! (for `--dot`) and the program detectors run; and the [`Detector`] constructors
//! that take one. They live here, above the runtime, so that the runtime knows
//! programs, not nets.

use std::sync::Arc;

use crate::compile::compile;
use crate::event::Space;
use crate::model::{Model, NetError, Problem};
use crate::petri::PetriNet;
use crate::runtime::{Detector, DetectorOptions, Program, RestoreError};

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
    pub(crate) model: Arc<Model>,
    pub(crate) petri: PetriNet,
    pub(crate) program: Arc<Program>,
}

impl Net {
    /// Loads the net in file `path`.
    ///
    /// # Errors
    ///
    /// [`NetError::Read`] if the file cannot be read; [`NetError::Invalid`]
    /// with every problem found (file, line, column, what is wrong) if it is not a valid net.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Net, NetError> {
        let path = path.as_ref();
        let src = std::fs::read_to_string(path).map_err(|source| NetError::Read {
            path: path.to_owned(),
            source,
        })?;
        Net::from_ron(&path.display().to_string(), &src)
    }

    /// Loads a net from RON text; `file` names it in error messages.
    ///
    /// # Errors
    ///
    /// [`NetError::Invalid`] with every problem found.
    pub fn from_ron(file: &str, src: &str) -> Result<Net, NetError> {
        let model = Arc::new(Model::load(file, src)?);
        let (petri, program) = compile(&model);
        Ok(Net {
            model,
            petri,
            program: Arc::new(program),
        })
    }

    /// An XXH3-128 hash of the net's text and of every GeoJSON file it read: two nets
    /// with the same fingerprint detect the same things. Checkpoints and the processes
    /// of a cluster compare it. It guards against mistakes (a checkpoint resumed on
    /// another net, a cluster process started with other files), not against someone
    /// crafting a net to collide.
    pub fn fingerprint(&self) -> [u8; 16] {
        self.model.fingerprint
    }

    /// The net's space: which location fields events carry.
    pub fn space(&self) -> Space {
        self.model.space
    }

    /// Things that load but deserve a word, such as an operator without a window.
    pub fn warnings(&self) -> &[Problem] {
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
        crate::petri::to_dot(&self.petri)
    }

    /// A one-line description: components, places, transitions, connection transitions, arcs.
    pub fn summary(&self) -> String {
        let (p, t, c, a) = self.petri.counts();
        let n =
            |count: usize, one: &str| format!("{count} {one}{}", if count == 1 { "" } else { "s" });
        format!(
            "{}, {}, {}, {}, {}",
            n(self.petri.components.len(), "component"),
            n(p, "place"),
            n(t, "transition"),
            n(c, "connection transition"),
            n(a, "arc")
        )
    }
}

impl Detector {
    /// A detector for `net` with default limits.
    pub fn new(net: &Net) -> Detector {
        Detector::with_options(net, DetectorOptions::default())
    }

    /// A detector for `net` with the given limits.
    pub fn with_options(net: &Net, options: DetectorOptions) -> Detector {
        Detector::from_program(Arc::clone(&net.program), options)
    }

    /// Like [`Detector::with_options`], for a net behind an `Arc`. Every detector of
    /// one net shares its program (zones and zone trees until a moving zone moves in
    /// one of them), whichever constructor made it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ccpn::{Detector, DetectorOptions, Net};
    ///
    /// let net = Arc::new(Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?);
    /// let detectors: Vec<Detector> =
    ///     (0..4).map(|_| Detector::with_shared_net(net.clone(), DetectorOptions::default())).collect();
    /// assert_eq!(detectors.len(), 4);
    /// # Ok::<(), ccpn::NetError>(())
    /// ```
    pub fn with_shared_net(net: Arc<Net>, options: DetectorOptions) -> Detector {
        Detector::from_program(Arc::clone(&net.program), options)
    }

    /// A detector for `net` in the state [`Detector::snapshot`] saved, with the
    /// options it had.
    ///
    /// # Errors
    ///
    /// [`RestoreError`] if the bytes are not a snapshot, are of another format
    /// version or another net (or the net's text or GeoJSON files changed), or are
    /// damaged.
    pub fn restore(net: &Net, bytes: &[u8]) -> Result<Detector, RestoreError> {
        Detector::restore_program(&net.program, bytes)
    }
}
