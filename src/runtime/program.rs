//! The program a detector runs: one component per component of the compiled Petri net,
//! the connection transitions as fan-out lists, the dispatch of events to atomic
//! components by type, and the shared indexes' layout. `compile` lays it out beside
//! the graph; the [`Detector`](super::Detector) holds it behind an `Arc`, so many
//! detectors of one net share it.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::component::Component;
use super::dispatch::Dispatch;
use crate::model::Model;

/// What runs: one component per component, and the connection transitions as fan-out lists.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    /// The checked net the program was compiled from.
    pub(crate) model: Arc<Model>,
    /// One per model node, in topological order.
    pub(crate) components: Vec<Component>,
    /// For each component, the (component, input arc) pairs its output place feeds.
    pub(crate) consumers: Vec<Vec<(usize, usize)>>,
    /// The atomic components reading each event type's source place, by the type's
    /// place in `types`.
    pub(crate) by_type: FxHashMap<Arc<str>, usize>,
    /// Each event type's dispatch.
    pub(crate) types: Vec<Dispatch>,
    /// Do some types' dispatches fetch components events ahead
    /// ([`Dispatch::ahead`])?
    pub(crate) looks_ahead: bool,
    /// The output names each component's occurrences are reported under.
    pub(crate) outputs: Vec<Vec<Arc<str>>>,
    /// The counting indexes: one per input (and `distinct` attribute) of `Count`s.
    pub(crate) counts: Vec<CountGroup>,
    /// For each component, the moving zones (indexes into the model's `moving`) that
    /// its occurrences re-centre.
    pub(crate) anchors: Vec<Vec<usize>>,
    /// For each zone, the stab components whose index holds it (inline: most zones
    /// have one, and a net may have a hundred thousand).
    pub(crate) zone_stabs: Vec<ZoneStabs>,
}

/// The stab components of one zone.
pub(crate) type ZoneStabs = smallvec::SmallVec<[usize; 1]>;

/// The rules of the `Count` components sharing one level-wise index.
#[derive(Clone, Debug)]
pub(crate) struct CountGroup {
    pub(crate) of: usize,
    pub(crate) distinct: Option<crate::model::Attr>,
    pub(crate) rules: Vec<crate::count::Rule>,
}
