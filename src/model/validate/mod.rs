//! Checking a [`NetSpec`] and binding it into a [`Model`]: names, cycles, parameter
//! values, zones, and sharing of identical sub-expressions. The checks of each
//! operator family are in their own files, as in `compile`: `guard.rs` (Atomic,
//! Within, Or), `pair.rs` (Seq, And, Any, Not, Dist, Direction) and `repeat.rs`
//! (Count, A, A*, P, P*, Times), and `state.rs` (the states and the operators that
//! read them).

mod guard;
mod pair;
mod repeat;
mod state;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::Xxh3Default;

use super::duration::micros;
use super::{
    Attr, Context, Model, NetError, NetSource, Node, NodeId, Op, PairOpts, Problem, ZoneId,
};
use crate::spatial::{Shape, Zone};
use crate::spec::{self, ContextSpec, DurationSpec, NetSpec, OpSpec, SourceMap, ZoneSpec};

/// Largest `m`, `k` or operand count an operator may have.
pub(crate) const MAX_ARITY: usize = 1024;

impl Model {
    /// Loads a net from its text; `file` names it in error messages. GeoJSON files
    /// whose resolved paths are in `supplied` are taken from there rather than read.
    /// The model's [`NetSource`] keeps a shared `text` itself, not a copy (a net of
    /// many zones may be megabytes); a text just read is shared beside the parse.
    pub(crate) fn load(
        file: &str,
        text: NetText,
        supplied: &[(PathBuf, Arc<str>)],
    ) -> Result<Model, NetError> {
        let src = match &text {
            NetText::Shared(t) => &**t,
            NetText::Read(t) => t.as_str(),
        };
        // A byte-order mark (some Windows editors write one) is not part of the net.
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        let (spec, Indexed(source, digest, shared)) = if src.len() >= spec::PARALLEL_BYTES {
            // The parse of a large net leaves a processor idle at times (reading the
            // cuts between its pieces, joining them): the rest is done there.
            std::thread::scope(|scope| {
                let side = std::thread::Builder::new()
                    .name("net-text".into())
                    .spawn_scoped(scope, || Indexed::of(&text, src));
                let spec = spec::parse(file, src);
                let side = side.ok().and_then(|h| h.join().ok());
                (spec, side.unwrap_or_else(|| Indexed::of(&text, src)))
            })
        } else {
            (spec::parse(file, src), Indexed::of(&text, src))
        };
        let spec = spec.map_err(|p| NetError::Invalid { problems: vec![p] })?;
        let mut v = Validator {
            file,
            source,
            spec: &spec,
            problems: Vec::new(),
            warnings: Vec::new(),
            key_attrs: Vec::new(),
            zone_ids: FxHashMap::default(),
            zones: Vec::new(),
            nodes: Vec::new(),
            by_name: HashMap::new(),
            canon: HashMap::new(),
            visiting: Vec::new(),
            supplied,
            read: Vec::new(),
            digest,
        };
        v.zones();
        let names: Vec<&String> = spec.events.keys().collect();
        v.resolve(&names);
        let outputs = v.outputs();
        v.unused(&outputs);
        let moving = v.moving();
        let Validator {
            mut problems,
            mut warnings,
            zones,
            nodes,
            key_attrs,
            digest,
            read,
            ..
        } = v;
        if !problems.is_empty() {
            problems.sort_by_key(|p| (p.line, p.col));
            problems.dedup();
            return Err(NetError::Invalid { problems });
        }
        warnings.sort_by_key(|p| (p.line, p.col));
        let space = spec.space;
        spec::drop_aside(spec);
        Ok(Model {
            space,
            zones,
            nodes,
            outputs,
            warnings,
            key_attrs,
            moving,
            fingerprint: digest.digest128().to_le_bytes(),
            source: Arc::new(NetSource {
                file: file.to_owned(),
                text: shared,
                geojson: read,
            }),
        })
    }
}

/// A net's text as [`Model::load`] takes it: shared already, or just read.
pub(crate) enum NetText {
    /// A text the caller keeps too (a net's source, loaded again): kept, not copied.
    Shared(Arc<str>),
    /// A text just read from a file: shared by a copy made beside the parse.
    Read(String),
}

impl From<&str> for NetText {
    fn from(text: &str) -> NetText {
        NetText::Shared(text.into())
    }
}

/// What a net's text gives besides its parse: its lines' index, the fingerprint
/// begun with it, and the text shared (without a byte-order mark).
struct Indexed<'s>(SourceMap<'s>, Xxh3Default, Arc<str>);

impl<'s> Indexed<'s> {
    /// Of `src`, the net's text in `text` (all of it or all but a byte-order mark).
    fn of(text: &NetText, src: &'s str) -> Indexed<'s> {
        let shared = match text {
            NetText::Shared(t) if t.len() == src.len() => Arc::clone(t),
            _ => Arc::from(src),
        };
        let mut digest = Xxh3Default::new();
        digest.update(src.as_bytes());
        Indexed(SourceMap::new(src), digest, shared)
    }
}

/// What makes two operators one node: their operands and parameters. `Within` is
/// keyed by its operand and its zones as they are (a rule of a thousand zones printed
/// would be a thousand numbers formatted); every other operator by its `Debug` text,
/// which shows every operand and parameter.
#[derive(PartialEq, Eq, Hash)]
enum Canon {
    Within(NodeId, Vec<ZoneId>),
    Printed(String),
}

impl Canon {
    fn of(op: &Op) -> Canon {
        match op {
            Op::Within { of, zones } => Canon::Within(*of, zones.clone()),
            other => Canon::Printed(format!("{other:?}")),
        }
    }
}

struct Validator<'a> {
    file: &'a str,
    /// The net's text, indexed to point problems at it.
    source: SourceMap<'a>,
    spec: &'a NetSpec,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    zone_ids: FxHashMap<&'a str, usize>,
    zones: Vec<Zone>,
    nodes: Vec<Node>,
    /// Resolved names: `None` while a name failed to resolve.
    by_name: HashMap<&'a str, Option<NodeId>>,
    /// Canonical form of each node, for sharing identical sub-expressions.
    canon: HashMap<Canon, NodeId>,
    /// The chain of names being resolved, to report cycles.
    visiting: Vec<&'a str>,
    key_attrs: Vec<Arc<str>>,
    /// The net's text and the GeoJSON files it reads.
    digest: Xxh3Default,
    /// GeoJSON texts to take rather than read, by resolved path.
    supplied: &'a [(PathBuf, Arc<str>)],
    /// GeoJSON texts read, by resolved path, in the order read.
    read: Vec<(PathBuf, Arc<str>)>,
}

impl<'a> Validator<'a> {
    fn problem_at(&self, path: &[&str], message: String) -> Problem {
        let (line, col) = self.source.locate(path);
        Problem {
            file: self.file.to_owned(),
            line,
            col,
            message,
        }
    }

    fn error(&mut self, path: &[&str], message: String) {
        let p = self.problem_at(path, message);
        self.problems.push(p);
    }

    fn warn(&mut self, path: &[&str], message: String) {
        let p = self.problem_at(path, message);
        self.warnings.push(p);
    }

    /// Builds the zones (see `model/zones.rs`), in name order.
    fn zones(&mut self) {
        let built = super::zones::build(
            self.file,
            &self.source,
            self.spec,
            &mut self.digest,
            self.supplied,
        );
        self.read = built.read;
        self.zone_ids = built
            .names
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i))
            .collect();
        for (zone, name) in built.zones.iter().zip(&built.names) {
            self.warn_crossing(name, zone);
        }
        self.zones = built.zones;
        self.problems.extend(built.problems);
    }

    /// Warns about a polygon zone whose boundary crosses itself.
    fn warn_crossing(&mut self, name: &str, zone: &Zone) {
        let polygons: Vec<&geo_types::Polygon<f64>> = match &zone.shape {
            Shape::Polygon(p) => vec![p],
            Shape::MultiPolygon(m) => m.0.iter().collect(),
            _ => return,
        };
        for (k, polygon) in polygons.iter().enumerate() {
            let rings = std::iter::once(polygon.exterior()).chain(polygon.interiors());
            for (r, ring) in rings.enumerate() {
                let Some((i, j)) = crate::spatial::self_crossing(ring) else {
                    continue;
                };
                let which = match (polygons.len(), r) {
                    (1, 0) => "its outline".to_owned(),
                    (1, h) => format!("its hole {h}"),
                    (_, 0) => format!("the outline of its polygon {}", k + 1),
                    (_, h) => format!("hole {h} of its polygon {}", k + 1),
                };
                let msg = format!(
                    "zone `{name}`: {which} crosses itself (its edges from points {} and {}): \
                     a point is inside where the boundary winds around it (non-zero winding), \
                     so both loops of a figure-eight are inside; if that is not meant, \
                     reorder the points",
                    i + 1,
                    j + 1
                );
                self.warn(&[name], msg);
                return;
            }
        }
    }

    /// Warns that an interval operator keyed without a window keeps an open interval
    /// for every key value until its end comes.
    fn warn_open_intervals(&mut self, name: &str) {
        let msg = format!(
            "`{name}` has no `within`: an open interval per key value waits until its end comes"
        );
        self.warn(&[name], msg);
    }

    /// Is zone `name` anchored to a tracked object?
    fn moves(&self, name: &str) -> bool {
        matches!(
            self.spec.zones.get(name),
            Some(
                ZoneSpec::Circle {
                    anchor: Some(_),
                    ..
                } | ZoneSpec::Sector {
                    anchor: Some(_),
                    ..
                }
            )
        )
    }

    /// Binds the anchors of moving zones to events.
    fn moving(&mut self) -> Vec<super::Moving> {
        let mut moving = Vec::new();
        for (name, z) in &self.spec.zones {
            let (anchor, heading) = match z {
                ZoneSpec::Circle { anchor, .. } => (anchor, &None),
                ZoneSpec::Sector {
                    anchor, heading, ..
                } => (anchor, heading),
                _ => continue,
            };
            let Some(anchor) = anchor else {
                if heading.is_some() {
                    self.error(
                        &[name],
                        format!("zone `{name}`: `heading` needs an `anchor`"),
                    );
                }
                continue;
            };
            let Some(&zone) = self.zone_ids.get(name.as_str()) else {
                continue;
            };
            match self.by_name.get(anchor.as_str()) {
                Some(Some(node)) => moving.push(super::Moving {
                    zone,
                    anchor: *node,
                    heading: heading.as_deref().map(|h| Arc::from(h.as_str())),
                }),
                Some(None) => {}
                None => {
                    let msg = format!(
                        "zone `{name}` is anchored to `{anchor}`, which is not an event of the net"
                    );
                    self.error(&[name, anchor], msg);
                }
            }
        }
        moving
    }

    fn outputs(&mut self) -> Vec<(Arc<str>, NodeId)> {
        let mut out = Vec::new();
        if self.spec.outputs.is_empty() {
            self.warn(&[], "`outputs` is empty: the net detects nothing".into());
        }
        for name in &self.spec.outputs {
            match self.by_name.get(name.as_str()) {
                Some(Some(id)) => out.push((Arc::from(name.as_str()), *id)),
                Some(None) => {}
                None => {
                    let (line, col) = locate_output(&self.source, name);
                    self.problems.push(Problem {
                        file: self.file.to_owned(),
                        line,
                        col,
                        message: format!("output `{name}` is not an event of the net"),
                    });
                }
            }
        }
        out
    }

    /// Warns about events that no output depends on.
    fn unused(&mut self, outputs: &[(Arc<str>, NodeId)]) {
        let mut used = vec![false; self.nodes.len()];
        for (_, id) in outputs {
            used[*id] = true;
        }
        for id in (0..self.nodes.len()).rev() {
            if used[id] {
                for o in self.nodes[id].op.operands() {
                    used[o] = true;
                }
            }
        }
        // The events each unused one feeds (all unused too).
        let mut feeds: Vec<Vec<NodeId>> = vec![Vec::new(); self.nodes.len()];
        for id in (0..self.nodes.len()).filter(|&id| !used[id]) {
            for o in self.nodes[id].op.operands() {
                if !feeds[o].contains(&id) {
                    feeds[o].push(id);
                }
            }
        }
        let unused: Vec<(String, String)> = (0..self.nodes.len())
            .filter(|&id| !used[id])
            .flat_map(|id| {
                let why = match feeds[id].as_slice() {
                    [] => "feeds no other event".to_owned(),
                    fed => {
                        let names: Vec<String> = fed
                            .iter()
                            .filter_map(|&f| self.nodes[f].names.first())
                            .map(|n| format!("`{n}`"))
                            .collect();
                        format!(
                            "no output depends on it (it feeds only {}, which no output depends on either)",
                            names.join(", ")
                        )
                    }
                };
                self.nodes[id]
                    .names
                    .iter()
                    .map(move |n| (n.to_string(), why.clone()))
            })
            .collect();
        for (name, why) in unused {
            self.warn(
                &[&name],
                format!("event `{name}` is not an output and {why}"),
            );
        }
    }

    /// Resolves the events `roots` (and what they read) in the order [`Self::node`]
    /// would, operands first, but walking the references with a stack of its own: a
    /// chain of references as long as the net is resolves one level at a time, and a
    /// cycle is reported without following it further.
    fn resolve(&mut self, roots: &[&'a String]) {
        let spec = self.spec;
        let reads = |name: &'a str| -> Vec<&'a str> {
            spec.events
                .get(name)
                .map_or_else(Vec::new, |s| s.operand_names())
        };
        let mut on_path: HashSet<&'a str> = HashSet::new();
        for root in roots {
            let root = root.as_str();
            if self.by_name.contains_key(root) {
                continue;
            }
            // (event, what it reads, how many of those are done)
            let mut path: Vec<(&'a str, Vec<&'a str>, usize)> = vec![(root, reads(root), 0)];
            on_path.insert(root);
            while let Some((name, operands, done)) = path.last_mut() {
                let Some(&next) = operands.get(*done) else {
                    let name = *name;
                    path.pop();
                    on_path.remove(name);
                    if !self.by_name.contains_key(name) {
                        self.node(name);
                    }
                    continue;
                };
                *done += 1;
                if self.by_name.contains_key(next) || !spec.events.contains_key(next) {
                    continue;
                }
                if on_path.contains(next) {
                    let from = path.iter().position(|(n, ..)| *n == next).unwrap_or(0);
                    let mut chain: Vec<&str> = path[from..].iter().map(|(n, ..)| *n).collect();
                    chain.push(next);
                    let msg = format!("cycle between composite events: {}", cycle_text(&chain));
                    self.error(&[next], msg);
                    for (n, ..) in &path[from..] {
                        self.by_name.insert(n, None);
                    }
                    continue;
                }
                on_path.insert(next);
                path.push((next, reads(next), 0));
            }
        }
    }

    /// Resolves the event called `name`, building its operands first.
    fn node(&mut self, name: &'a str) -> Option<NodeId> {
        if let Some(done) = self.by_name.get(name) {
            return *done;
        }
        if let Some(pos) = self.visiting.iter().position(|n| *n == name) {
            let mut chain: Vec<&str> = self.visiting[pos..].to_vec();
            chain.push(name);
            let msg = format!("cycle between composite events: {}", chain.join(" -> "));
            self.error(&[name], msg);
            return None;
        }
        let spec = self.spec.events.get(name)?;
        self.visiting.push(name);
        let op = self.op(name, spec);
        self.visiting.pop();
        let id = op.map(|op| self.intern(Some(name), op));
        self.by_name.insert(name, id);
        id
    }

    /// Adds `op` as a node, or returns the identical node already built.
    fn intern(&mut self, name: Option<&str>, op: Op) -> NodeId {
        let key = Canon::of(&op);
        let id = match self.canon.get(&key) {
            Some(&id) => id,
            None => {
                self.nodes.push(Node {
                    names: Vec::new(),
                    op,
                });
                self.canon.insert(key, self.nodes.len() - 1);
                self.nodes.len() - 1
            }
        };
        if let Some(name) = name {
            self.nodes[id].names.push(name.into());
        }
        id
    }

    /// Resolves an operand name used by event `user`, which reads its occurrences.
    fn operand(&mut self, user: &'a str, name: &'a str) -> Option<NodeId> {
        let id = self.any_operand(user, name)?;
        if self.nodes[id].op.is_state() {
            let msg = format!(
                "`{name}` is a state: read it with Starts, Ends or During (`{user}` reads occurrences)"
            );
            self.error(&[user, name], msg);
            return None;
        }
        Some(id)
    }

    /// Resolves an operand name used by event `user`, which reads a state.
    fn state_operand(&mut self, user: &'a str, name: &'a str) -> Option<NodeId> {
        let id = self.any_operand(user, name)?;
        if !self.nodes[id].op.is_state() {
            let msg = format!(
                "`{name}` is not a state, and `{user}` reads one: make a state of it with State(on: \"{name}\", off: …), Inside, Silent, Stationary or Close"
            );
            self.error(&[user, name], msg);
            return None;
        }
        Some(id)
    }

    /// Resolves an operand name used by event `user`, of either kind.
    fn any_operand(&mut self, user: &'a str, name: &'a str) -> Option<NodeId> {
        if !self.spec.events.contains_key(name) {
            let msg = format!("`{user}` refers to `{name}`, which is not an event of the net");
            self.error(&[user, name], msg);
            return None;
        }
        self.node(name)
    }

    fn operands(&mut self, user: &'a str, names: &'a [String]) -> Option<Vec<NodeId>> {
        let ids: Vec<Option<NodeId>> = names.iter().map(|n| self.operand(user, n)).collect();
        ids.into_iter().collect()
    }

    fn duration(
        &mut self,
        user: &str,
        field: &str,
        d: &Option<DurationSpec>,
    ) -> Option<Option<i64>> {
        match d {
            None => Some(None),
            Some(d) => match micros(d) {
                Ok(us) => Some(Some(us)),
                Err(msg) => {
                    self.error(&[user], format!("`{user}`: `{field}`: {msg}"));
                    None
                }
            },
        }
    }

    fn opts(
        &mut self,
        user: &str,
        within: &Option<DurationSpec>,
        key: &Option<String>,
        distinct: &Option<String>,
        context: ContextSpec,
    ) -> Option<PairOpts> {
        let window = self.duration(user, "within", within)?;
        if window.is_none() {
            self.warn(
                &[user],
                format!(
                    "`{user}` has no `within`: its waiting occurrences are bounded only by --max-tokens"
                ),
            );
        }
        let context = match context {
            ContextSpec::Recent => Context::Recent,
            ContextSpec::Chronicle => Context::Chronicle,
            ContextSpec::Continuous => Context::Continuous,
            ContextSpec::Cumulative => Context::Cumulative,
            ContextSpec::Unrestricted => Context::Unrestricted,
        };
        Some(PairOpts {
            window,
            key: key.as_deref().map(|k| self.attr(k)),
            distinct: distinct.as_deref().map(|d| self.attr(d)),
            context,
        })
    }

    /// The slot of a `key:` or `distinct:` attribute.
    fn attr(&mut self, name: &str) -> Attr {
        let slot = match self.key_attrs.iter().position(|a| &**a == name) {
            Some(slot) => slot,
            None => {
                self.key_attrs.push(name.into());
                self.key_attrs.len() - 1
            }
        };
        Attr {
            name: self.key_attrs[slot].clone(),
            slot,
        }
    }

    fn zone(&mut self, user: &str, name: &str) -> Option<usize> {
        match self.zone_ids.get(name) {
            Some(&id) => Some(id),
            None => {
                if !self.spec.zones.contains_key(name) {
                    self.error(
                        &[user, name],
                        format!("`{user}` refers to unknown zone `{name}`"),
                    );
                }
                None
            }
        }
    }

    /// Checks one operator and binds its operands: each family of operators is
    /// checked in its own file, as `compile` builds each in its own.
    fn op(&mut self, name: &'a str, spec: &'a OpSpec) -> Option<Op> {
        match spec {
            OpSpec::Atomic { .. } | OpSpec::Within { .. } | OpSpec::Or { .. } => {
                self.guard_op(name, spec)
            }
            OpSpec::Seq { .. }
            | OpSpec::And { .. }
            | OpSpec::Any { .. }
            | OpSpec::Not { .. }
            | OpSpec::Dist { .. }
            | OpSpec::Direction { .. } => self.pair_op(name, spec),
            OpSpec::Count { .. }
            | OpSpec::A { .. }
            | OpSpec::AStar { .. }
            | OpSpec::P { .. }
            | OpSpec::PStar { .. }
            | OpSpec::Times { .. } => self.repeat_op(name, spec),
            OpSpec::State { .. }
            | OpSpec::Inside { .. }
            | OpSpec::Stationary { .. }
            | OpSpec::Silent { .. }
            | OpSpec::Close { .. }
            | OpSpec::Lasting { .. }
            | OpSpec::AllOf { .. }
            | OpSpec::AnyOf { .. }
            | OpSpec::Unless { .. }
            | OpSpec::Starts { .. }
            | OpSpec::Ends { .. }
            | OpSpec::During { .. } => self.state_op(name, spec),
        }
    }
}

/// A cycle `a -> b -> … -> a` as text; a long one shows its first ten and last five
/// events.
fn cycle_text(chain: &[&str]) -> String {
    if chain.len() <= 16 {
        return chain.join(" -> ");
    }
    let (head, tail) = (&chain[..10], &chain[chain.len() - 5..]);
    format!(
        "{} -> … ({} more) … -> {} ({} events)",
        head.join(" -> "),
        chain.len() - 15,
        tail.join(" -> "),
        chain.len() - 1
    )
}

/// Position of an output name inside the `outputs` list.
fn locate_output(source: &SourceMap<'_>, name: &str) -> (usize, usize) {
    let src = source.src();
    let from = src.find("outputs").unwrap_or(0);
    let needle = format!("{name:?}");
    let at = src[from..].find(&needle).map_or(from, |p| from + p);
    source.line_col(at)
}

/// Position of byte `offset` of a `when` expression of event `name`.
pub(super) fn locate_when(
    source: &SourceMap<'_>,
    name: &str,
    when: &str,
    offset: usize,
) -> (usize, usize) {
    // Find the expression's string literal after the entry's key.
    let start = source.offset(&[name]);
    let lit = format!("{when:?}");
    match source.src().get(start..).and_then(|s| s.find(&lit)) {
        Some(p) => {
            let (l, c) = source.line_col(start + p);
            (l, c + 1 + when[..offset.min(when.len())].chars().count())
        }
        None => source.line_col(start),
    }
}
