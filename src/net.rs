//! [`Net`], a loaded net: the checked model, its compositional coloured Petri net
//! (for `--dot`) and the program detectors run; and the [`Detector`] constructors
//! that take one. They live here, above the runtime, so that the runtime knows
//! programs, not nets.

use std::sync::Arc;

use crate::compile::compile;
use crate::event::Space;
use crate::model::{Model, NetError, NetSource, NetText, Problem};
use crate::petri::PetriNet;
use crate::runtime::{Detector, DetectorOptions, Program, ReloadError, ReloadReport, RestoreError};

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
        let text = NetText::Read(src);
        Net::from_model(Model::load(&path.display().to_string(), text, &[])?)
    }

    /// Loads a net from RON text; `file` names it in error messages.
    ///
    /// # Errors
    ///
    /// [`NetError::Invalid`] with every problem found.
    pub fn from_ron(file: &str, src: &str) -> Result<Net, NetError> {
        Net::from_model(Model::load(file, src.into(), &[])?)
    }

    /// Loads the net `source` was taken from ([`Net::source`]): its GeoJSON zones from
    /// the texts kept there, not from the files, so that the net is the same (same
    /// fingerprint) whatever the files hold now.
    ///
    /// # Errors
    ///
    /// [`NetError::Invalid`] with every problem found (none, for a source taken
    /// from a net that loaded with this version of ccpn).
    pub fn from_source(source: &NetSource) -> Result<Net, NetError> {
        Net::from_model(Model::load(
            &source.file,
            NetText::Shared(Arc::clone(&source.text)),
            &source.geojson,
        )?)
    }

    /// The texts this net was loaded from: the net's and each GeoJSON file's.
    pub fn source(&self) -> &NetSource {
        &self.model.source
    }

    fn from_model(model: Model) -> Result<Net, NetError> {
        let model = Arc::new(model);
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

    /// Goes on with `net` in place of the running net, between two events, keeping
    /// what the running net has seen wherever it still means the same thing.
    ///
    /// Every component whose *definition* is unchanged (its operator and parameters,
    /// its operands' definitions, the zones it reads by name and shape, its key
    /// attributes by name, its filter by its canonical text) keeps its state: waiting
    /// tokens, open intervals, states, counting sets (when its counting index serves
    /// the same rules) and pending ticks. The state is moved, not copied. Changed and
    /// new components start empty; removed ones are dropped. A zone whose shape
    /// changed resets exactly the components that read it; a moving zone stays
    /// where it is if its anchor kept its definition. Event time, the detections'
    /// [`Detection::seq`](crate::Detection::seq) and the options go on.
    ///
    /// A snapshot taken after a reload restores with the net reloaded, unless the
    /// reload laid the key attributes out anew (a net matching on attributes in
    /// another order than the running one): then its fingerprint is the layout's.
    ///
    /// ```
    /// use ccpn::{Detector, Event, Net, Timestamp};
    ///
    /// let v1 = Net::from_ron("v1.ron", r#"Net(
    ///     events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
    ///               "ab": Seq(of: ["a", "b"], within: 60.0) },
    ///     outputs: ["ab"],
    /// )"#)?;
    /// let v2 = Net::from_ron("v2.ron", r#"Net(
    ///     events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
    ///               "ab": Seq(of: ["a", "b"], within: 60.0),
    ///               "ba": Seq(of: ["b", "a"], within: 60.0) },
    ///     outputs: ["ab", "ba"],
    /// )"#)?;
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let mut detector = Detector::new(&v1);
    /// detector.push(Event::new(1, "A", t(0.0)))?;
    /// let report = detector.reload(&v2)?;
    /// assert_eq!(report.added, ["ba"]);
    /// assert!(report.kept.contains(&"ab".to_string()));
    /// // The `a` seen before the reload still starts an `ab`.
    /// let found = detector.push(Event::new(2, "B", t(30.0)))?;
    /// assert_eq!(found.len(), 1);
    /// assert_eq!(&*found[0].event, "ab");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ReloadError::Space`] if `net`'s space is not the running net's; the
    /// detector is then unchanged.
    pub fn reload(&mut self, net: &Net) -> Result<ReloadReport, ReloadError> {
        let running = self.model();
        if net.model.space != running.space {
            return Err(ReloadError::Space {
                running: running.space,
                new: net.model.space,
            });
        }
        let program = match net.model.with_slots_of(&running.key_attrs) {
            None => Arc::clone(&net.program),
            Some(model) => Arc::new(compile(&Arc::new(model)).1),
        };
        Ok(self.reload_program(program))
    }
}
