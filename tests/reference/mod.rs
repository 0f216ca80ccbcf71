//! A brute-force reference for ccpn's detection semantics, written from the
//! contract (the operators, and the states: situations that hold over time) and
//! the decisions recorded with the property tests, independently of ccpn's runtime.
//!
//! It keeps the whole history of every node (every occurrence it ever produced,
//! with the step and position that produced it) and checks each operator's
//! definition directly against that history: nothing is dropped for windows, so
//! it is quadratic, which is fine for test streams.
//!
//! Times, windows and periods are whole seconds (`i64`).

#![allow(dead_code)]

pub mod against;
pub mod gen;
pub mod gen_states;
pub mod states;

use states::{Comb, Phase};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

// ---------------------------------------------------------------------------
// The net, as a Rust AST
// ---------------------------------------------------------------------------

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Num(f64),
    Str(String),
    Bool(bool),
}

/// Comparison operators of `when` expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A `when` expression.
#[derive(Clone, Debug, PartialEq)]
pub enum When {
    Cmp(String, CmpOp, Val),
    And(Box<When>, Box<When>),
    Or(Box<When>, Box<When>),
    Not(Box<When>),
}

impl When {
    /// The expression as `when:` text, fully parenthesised.
    pub fn text(&self) -> String {
        match self {
            When::Cmp(f, op, v) => {
                let lit = match v {
                    Val::Num(n) => format!("{n}"),
                    Val::Str(s) => format!("{s:?}"),
                    Val::Bool(b) => format!("{b}"),
                };
                format!("{f} {} {lit}", op.text())
            }
            When::And(a, b) => format!("({}) && ({})", a.text(), b.text()),
            When::Or(a, b) => format!("({}) || ({})", a.text(), b.text()),
            When::Not(a) => format!("!({})", a.text()),
        }
    }

    /// Evaluates the expression: a comparison with a missing attribute, or between
    /// values of different types, is false (and `!` negates that).
    pub fn eval(&self, attrs: &[(String, Val)]) -> bool {
        match self {
            When::Cmp(f, op, lit) => {
                let Some(v) = attr(attrs, f) else {
                    return false;
                };
                let ord = match (v, lit) {
                    (Val::Num(a), Val::Num(b)) => a.partial_cmp(b),
                    (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
                    (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
                    _ => None,
                };
                let Some(ord) = ord else {
                    return false;
                };
                use std::cmp::Ordering::*;
                match op {
                    CmpOp::Eq => ord == Equal,
                    CmpOp::Ne => ord != Equal,
                    CmpOp::Lt => ord == Less,
                    CmpOp::Le => ord != Greater,
                    CmpOp::Gt => ord == Greater,
                    CmpOp::Ge => ord != Less,
                }
            }
            When::And(a, b) => a.eval(attrs) && b.eval(attrs),
            When::Or(a, b) => a.eval(attrs) || b.eval(attrs),
            When::Not(a) => !a.eval(attrs),
        }
    }
}

/// The net's space: planar `x`/`y`, or WGS84 `lon`/`lat` in degrees with
/// geodesic metres. The reference's pairing operators (`Dist`, `Direction`) are
/// planar only; zones and states know both (see `states.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Space {
    #[default]
    Planar,
    Wgs84,
}

/// A zone. Bearings of sectors are degrees clockwise from north; a line's zone is
/// every point within `width / 2` of it.
#[derive(Clone, Debug, PartialEq)]
pub enum Zone {
    Rect {
        min: (f64, f64),
        max: (f64, f64),
    },
    Circle {
        center: (f64, f64),
        radius: f64,
    },
    Polygon(Vec<(f64, f64)>),
    Sector {
        center: (f64, f64),
        radius: f64,
        from_deg: f64,
        to_deg: f64,
    },
    Line {
        points: Vec<(f64, f64)>,
        width: f64,
    },
}

fn pts(v: &[(f64, f64)]) -> String {
    let inner: Vec<String> = v
        .iter()
        .map(|p| format!("({:?}, {:?})", p.0, p.1))
        .collect();
    format!("[{}]", inner.join(", "))
}

impl Zone {
    fn ron(&self) -> String {
        match self {
            Zone::Polygon(v) => format!("Polygon({})", pts(v)),
            Zone::Sector {
                center,
                radius,
                from_deg,
                to_deg,
            } => format!(
                "Sector(center: ({:?}, {:?}), radius: {radius:?}, from_deg: {from_deg:?}, to_deg: {to_deg:?})",
                center.0, center.1
            ),
            Zone::Line { points, width } => {
                format!("Line(points: {}, width: {width:?})", pts(points))
            }
            Zone::Rect { min, max } => format!(
                "Rect(min: ({:?}, {:?}), max: ({:?}, {:?}))",
                min.0, min.1, max.0, max.1
            ),
            Zone::Circle { center, radius } => format!(
                "Circle(center: ({:?}, {:?}), radius: {:?})",
                center.0, center.1, radius
            ),
        }
    }
}

/// Pairing contexts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    Recent,
    Chronicle,
    Continuous,
    Cumulative,
    Unrestricted,
}

/// Projection-based direction relations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    N,
    S,
    E,
    W,
    NE,
    NW,
    SE,
    SW,
}

impl Rel {
    pub const ALL: [Rel; 8] = [
        Rel::N,
        Rel::S,
        Rel::E,
        Rel::W,
        Rel::NE,
        Rel::NW,
        Rel::SE,
        Rel::SW,
    ];

    /// The (N, S, E, W) tuple this relation names.
    fn tuple(self) -> (bool, bool, bool, bool) {
        match self {
            Rel::N => (true, false, false, false),
            Rel::S => (false, true, false, false),
            Rel::E => (false, false, true, false),
            Rel::W => (false, false, false, true),
            Rel::NE => (true, false, true, false),
            Rel::NW => (true, false, false, true),
            Rel::SE => (false, true, true, false),
            Rel::SW => (false, true, false, true),
        }
    }
}

/// Does point `p` stand in one of `rels` to the rectangle (left, bottom, right, top)?
fn rel_holds(rels: &[Rel], p: (f64, f64), rect: (f64, f64, f64, f64)) -> bool {
    let (l, b, r, t) = rect;
    let tuple = (p.1 > t, p.1 < b, p.0 > r, p.0 < l);
    rels.iter().any(|rel| rel.tuple() == tuple)
}

/// Window, key, distinct and context of a pairing operator.
#[derive(Clone, Debug, PartialEq)]
pub struct Opts {
    pub within: Option<i64>,
    pub key: Option<String>,
    pub distinct: Option<String>,
    pub ctx: Ctx,
}

impl Opts {
    pub fn plain() -> Opts {
        Opts {
            within: None,
            key: None,
            distinct: None,
            ctx: Ctx::Recent,
        }
    }
    pub fn within(w: i64) -> Opts {
        Opts {
            within: Some(w),
            ..Opts::plain()
        }
    }
    pub fn ctx(mut self, ctx: Ctx) -> Opts {
        self.ctx = ctx;
        self
    }
    pub fn key(mut self, k: &str) -> Opts {
        self.key = Some(k.into());
        self
    }
    pub fn distinct(mut self, k: &str) -> Opts {
        self.distinct = Some(k.into());
        self
    }
}

/// One operator of the net.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Atomic {
        ty: String,
        when: Option<When>,
    },
    Within {
        of: String,
        zones: Vec<String>,
    },
    Or {
        of: Vec<String>,
    },
    Seq {
        of: Vec<String>,
        opts: Opts,
    },
    And {
        of: Vec<String>,
        opts: Opts,
    },
    Not {
        start: String,
        absent: String,
        end: String,
        opts: Opts,
    },
    Any {
        m: usize,
        of: Vec<String>,
        opts: Opts,
    },
    Dist {
        a: String,
        b: String,
        max: f64,
        opts: Opts,
    },
    Direction {
        rel: Vec<Rel>,
        of: String,
        from: String,
        opts: Opts,
    },
    DirBox {
        rel: Vec<Rel>,
        of: String,
        zone: String,
    },
    Times {
        k: usize,
        of: String,
        within: Option<i64>,
        key: Option<String>,
    },
    A {
        start: String,
        e: String,
        end: String,
        within: Option<i64>,
        key: Option<String>,
    },
    AStar {
        start: String,
        e: String,
        end: String,
        within: Option<i64>,
        key: Option<String>,
    },
    P {
        start: String,
        period: i64,
        end: String,
        within: Option<i64>,
        key: Option<String>,
    },
    PStar {
        start: String,
        period: i64,
        end: String,
        within: Option<i64>,
        key: Option<String>,
    },
    /// `Count(of, n, distance, window, distinct)`.
    Count {
        of: String,
        n: usize,
        distance: f64,
        window: i64,
        distinct: Option<String>,
    },
    // States (see `states.rs`).
    State {
        on: String,
        off: String,
        key: Option<String>,
    },
    Inside {
        of: String,
        zones: Vec<String>,
        key: Option<String>,
        margin: f64,
    },
    Stationary {
        of: String,
        radius: f64,
        for_: i64,
        key: Option<String>,
    },
    Silent {
        of: String,
        for_: i64,
        key: Option<String>,
    },
    Close {
        of: String,
        max: f64,
        within: Option<i64>,
        distinct: String,
    },
    Lasting {
        of: String,
        min: i64,
    },
    /// `AllOf`, `AnyOf` (operands in `of`), `Unless` (`of: [s, except]`).
    Combine {
        comb: Comb,
        of: Vec<String>,
    },
    // Occurrences from states.
    Starts {
        of: String,
    },
    Ends {
        of: String,
    },
    During {
        of: String,
        state: String,
        holds: bool,
    },
}

impl Op {
    /// Operand names, in role order (repeats kept).
    pub fn operands(&self) -> Vec<&str> {
        match self {
            Op::Atomic { .. } => vec![],
            Op::Within { of, .. } | Op::DirBox { of, .. } | Op::Times { of, .. } => vec![of],
            Op::Or { of } | Op::Seq { of, .. } | Op::And { of, .. } | Op::Any { of, .. } => {
                of.iter().map(|s| s.as_str()).collect()
            }
            Op::Not {
                start, absent, end, ..
            } => vec![start, absent, end],
            Op::Dist { a, b, .. } => vec![a, b],
            Op::Direction { of, from, .. } => vec![of, from],
            Op::A { start, e, end, .. } | Op::AStar { start, e, end, .. } => vec![start, e, end],
            Op::P { start, end, .. } | Op::PStar { start, end, .. } => vec![start, end],
            Op::Count { of, .. }
            | Op::Inside { of, .. }
            | Op::Stationary { of, .. }
            | Op::Silent { of, .. }
            | Op::Close { of, .. }
            | Op::Lasting { of, .. }
            | Op::Starts { of }
            | Op::Ends { of } => vec![of],
            Op::State { on, off, .. } => vec![on, off],
            Op::Combine { of, .. } => of.iter().map(|s| s.as_str()).collect(),
            Op::During { of, state, .. } => vec![of, state],
        }
    }

    /// Is this operator a state (a value over time rather than occurrences)?
    pub fn is_state(&self) -> bool {
        matches!(
            self,
            Op::State { .. }
                | Op::Inside { .. }
                | Op::Stationary { .. }
                | Op::Silent { .. }
                | Op::Close { .. }
                | Op::Lasting { .. }
                | Op::Combine { .. }
        )
    }
}

/// A whole net.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Net {
    pub space: Space,
    pub zones: BTreeMap<String, Zone>,
    pub events: BTreeMap<String, Op>,
    pub outputs: Vec<String>,
    /// Render windows and periods as `"5s"` strings instead of `5.0` (same meaning).
    pub text_durations: bool,
}

fn names(v: &[String]) -> String {
    let inner: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", inner.join(", "))
}

fn rels(v: &[Rel]) -> String {
    if v.len() == 1 {
        format!("{:?}", v[0])
    } else {
        let inner: Vec<String> = v.iter().map(|r| format!("{r:?}")).collect();
        format!("[{}]", inner.join(", "))
    }
}

impl Net {
    fn dur(&self, secs: i64) -> String {
        if self.text_durations {
            format!("\"{secs}s\"")
        } else {
            format!("{secs}.0")
        }
    }

    fn opts_ron(&self, o: &Opts) -> String {
        let mut s = String::new();
        if let Some(w) = o.within {
            write!(s, ", within: {}", self.dur(w)).unwrap();
        }
        if let Some(k) = &o.key {
            write!(s, ", key: {k:?}").unwrap();
        }
        if let Some(k) = &o.distinct {
            write!(s, ", distinct: {k:?}").unwrap();
        }
        if o.ctx != Ctx::Recent {
            write!(s, ", context: {:?}", o.ctx).unwrap();
        }
        s
    }

    fn wk_ron(&self, within: &Option<i64>, key: &Option<String>) -> String {
        let mut s = String::new();
        if let Some(w) = within {
            write!(s, ", within: {}", self.dur(*w)).unwrap();
        }
        if let Some(k) = key {
            write!(s, ", key: {k:?}").unwrap();
        }
        s
    }

    /// The net as RON text, in ccpn's syntax.
    pub fn to_ron(&self) -> String {
        let mut s = format!("Net(\n    space: {:?},\n    zones: {{\n", self.space);
        for (name, z) in &self.zones {
            writeln!(s, "        {name:?}: {},", z.ron()).unwrap();
        }
        s.push_str("    },\n    events: {\n");
        for (name, op) in &self.events {
            let body = match op {
                Op::Atomic { ty, when } => match when {
                    None => format!("Atomic(type: {ty:?})"),
                    Some(w) => format!("Atomic(type: {ty:?}, when: {:?})", w.text()),
                },
                Op::Within { of, zones } => format!("Within(of: {of:?}, zones: {})", names(zones)),
                Op::Or { of } => format!("Or(of: {})", names(of)),
                Op::Seq { of, opts } => format!("Seq(of: {}{})", names(of), self.opts_ron(opts)),
                Op::And { of, opts } => format!("And(of: {}{})", names(of), self.opts_ron(opts)),
                Op::Not {
                    start,
                    absent,
                    end,
                    opts,
                } => format!(
                    "Not(start: {start:?}, absent: {absent:?}, end: {end:?}{})",
                    self.opts_ron(opts)
                ),
                Op::Any { m, of, opts } => {
                    format!("Any(m: {m}, of: {}{})", names(of), self.opts_ron(opts))
                }
                Op::Dist { a, b, max, opts } => format!(
                    "Dist(a: {a:?}, b: {b:?}, max: {max:?}{})",
                    self.opts_ron(opts)
                ),
                Op::Direction {
                    rel,
                    of,
                    from,
                    opts,
                } => format!(
                    "Direction(rel: {}, of: {of:?}, from: {from:?}{})",
                    rels(rel),
                    self.opts_ron(opts)
                ),
                Op::DirBox { rel, of, zone } => {
                    format!("Direction(rel: {}, of: {of:?}, box: {zone:?})", rels(rel))
                }
                Op::Times { k, of, within, key } => {
                    format!("Times(k: {k}, of: {of:?}{})", self.wk_ron(within, key))
                }
                Op::A {
                    start,
                    e,
                    end,
                    within,
                    key,
                } => format!(
                    "A(start: {start:?}, e: {e:?}, end: {end:?}{})",
                    self.wk_ron(within, key)
                ),
                Op::AStar {
                    start,
                    e,
                    end,
                    within,
                    key,
                } => format!(
                    "AStar(start: {start:?}, e: {e:?}, end: {end:?}{})",
                    self.wk_ron(within, key)
                ),
                Op::P {
                    start,
                    period,
                    end,
                    within,
                    key,
                } => format!(
                    "P(start: {start:?}, period: {}, end: {end:?}{})",
                    self.dur(*period),
                    self.wk_ron(within, key)
                ),
                Op::PStar {
                    start,
                    period,
                    end,
                    within,
                    key,
                } => format!(
                    "PStar(start: {start:?}, period: {}, end: {end:?}{})",
                    self.dur(*period),
                    self.wk_ron(within, key)
                ),
                other => self.more_ron(other),
            };
            writeln!(s, "        {name:?}: {body},").unwrap();
        }
        writeln!(s, "    }},\n    outputs: {},\n)", names(&self.outputs)).unwrap();
        s
    }
}

/// An input event. `time` in whole seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Ev {
    pub id: i64,
    pub ty: String,
    pub time: i64,
    pub loc: Option<(f64, f64)>,
    pub attrs: Vec<(String, Val)>,
}

impl Ev {
    pub fn new(id: i64, ty: &str, time: i64) -> Ev {
        Ev {
            id,
            ty: ty.into(),
            time,
            loc: None,
            attrs: Vec::new(),
        }
    }
    pub fn at(mut self, x: f64, y: f64) -> Ev {
        self.loc = Some((x, y));
        self
    }
    pub fn with(mut self, k: &str, v: Val) -> Ev {
        self.attrs.push((k.into(), v));
        self
    }
}

/// One detection: time (seconds), ids in order, and `ticks` for `PStar`.
#[derive(Clone, Debug, PartialEq)]
pub struct Det {
    /// Seconds.
    pub time: f64,
    pub ids: Vec<i64>,
    pub ticks: Option<u64>,
}

impl std::fmt::Display for Det {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t={} ids={:?}", self.time, self.ids)?;
        if let Some(t) = self.ticks {
            write!(f, " ticks={t}")?;
        }
        Ok(())
    }
}

/// Per output name, its detections in order.
pub type Output = BTreeMap<String, Vec<Det>>;

fn attr<'a>(attrs: &'a [(String, Val)], name: &str) -> Option<&'a Val> {
    attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

type Attrs = Rc<Vec<(String, Val)>>;

/// One occurrence of a node, as the reference keeps it forever.
#[derive(Clone, Debug)]
struct Occ {
    start: i64,
    end: i64,
    loc: Option<(f64, f64)>,
    /// Input-event indices, ascending (= by time, then input order), no repeats.
    ids: Vec<usize>,
    /// The terminator's attributes.
    attrs: Attrs,
    /// The step that produced it, and its position among the node's occurrences of that step.
    step: usize,
    pos: usize,
    ticks: Option<u64>,
    /// For a state's transition: start or end, the time the ending interval began,
    /// and the key value (or pair of values, for `Close`) it is for.
    phase: Option<Phase>,
    began: Option<i64>,
    skey: Option<String>,
}

/// What an operator adds to `Occ` when it fires; step/pos are filled in later.
struct Draft {
    start: i64,
    end: i64,
    loc: Option<(f64, f64)>,
    ids: Vec<usize>,
    attrs: Attrs,
    ticks: Option<u64>,
    phase: Option<Phase>,
    began: Option<i64>,
    skey: Option<String>,
}

impl Draft {
    fn pass(o: &Occ) -> Draft {
        Draft {
            start: o.start,
            end: o.end,
            loc: o.loc,
            ids: o.ids.clone(),
            attrs: o.attrs.clone(),
            ticks: None,
            phase: None,
            began: None,
            skey: None,
        }
    }

    /// The occurrence made of `parts` terminated by `y` (location, time, attributes of `y`).
    fn merge(parts: &[&Occ], y: &Occ) -> Draft {
        let mut ids: Vec<usize> = parts.iter().flat_map(|o| o.ids.iter().copied()).collect();
        ids.extend(y.ids.iter().copied());
        ids.sort_unstable();
        ids.dedup();
        let start = parts
            .iter()
            .map(|o| o.start)
            .chain([y.start])
            .min()
            .unwrap();
        Draft {
            start,
            end: y.end,
            loc: y.loc,
            ids,
            attrs: y.attrs.clone(),
            ticks: None,
            phase: None,
            began: None,
            skey: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum PairKind {
    Seq,
    And,
    Dist(f64),
    Dir,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum IvKind {
    A,
    AStar,
    P(i64),
    PStar(i64),
}

#[derive(Clone, Debug)]
enum NOp {
    Atomic {
        ty: String,
        when: Option<When>,
    },
    Within {
        of: usize,
        zones: Vec<Zone>,
    },
    Or {
        of: Vec<usize>,
    },
    Pair {
        kind: PairKind,
        rels: Vec<Rel>,
        a: usize,
        b: usize,
        opts: Opts,
    },
    Not {
        start: usize,
        absent: usize,
        end: usize,
        opts: Opts,
    },
    Any {
        m: usize,
        of: Vec<usize>,
        opts: Opts,
    },
    DirBox {
        of: usize,
        rels: Vec<Rel>,
        rect: (f64, f64, f64, f64),
    },
    Times {
        k: usize,
        of: usize,
        within: Option<i64>,
        key: Option<String>,
    },
    Interval {
        kind: IvKind,
        start: usize,
        e: Option<usize>,
        end: usize,
        within: Option<i64>,
        key: Option<String>,
    },
    Count {
        of: usize,
        n: usize,
        distance: f64,
        window: i64,
        distinct: Option<String>,
    },
    /// A state (see `states.rs`).
    St(states::SOp),
    /// `Starts` / `Ends`: the state's transitions of one phase, as occurrences.
    Trans {
        of: usize,
        phase: Phase,
    },
    /// `During`: `key` is the state's key attribute.
    During {
        of: usize,
        state: usize,
        holds: bool,
        key: Option<String>,
    },
}

impl NOp {
    /// Distinct operands, in role order.
    fn operands(&self) -> Vec<usize> {
        let mut v = match self {
            NOp::Atomic { .. } => vec![],
            NOp::Within { of, .. } | NOp::DirBox { of, .. } | NOp::Times { of, .. } => vec![*of],
            NOp::Or { of } | NOp::Any { of, .. } => of.clone(),
            NOp::Pair { a, b, .. } => vec![*a, *b],
            NOp::Not {
                start, absent, end, ..
            } => vec![*start, *absent, *end],
            NOp::Interval { start, e, end, .. } => {
                let mut v = vec![*start];
                v.extend(e.iter().copied());
                v.push(*end);
                v
            }
            NOp::Count { of, .. } | NOp::Trans { of, .. } => vec![*of],
            NOp::During { of, state, .. } => vec![*of, *state],
            NOp::St(s) => s.operands(),
        };
        let mut seen = HashSet::new();
        v.retain(|x| seen.insert(*x));
        v
    }
}

/// An open interval of an interval operator.
#[derive(Clone, Debug)]
struct Iv {
    /// The start occurrence (index in the start node's history).
    s: usize,
    /// `e` occurrences collected (AStar).
    collected: Vec<usize>,
    /// t0 and the next tick's k (P).
    t0: i64,
    next_k: i64,
    /// Global opening order.
    seq: u64,
}

#[derive(Default)]
struct State {
    consumed: HashSet<(usize, usize)>,
    pending: HashMap<String, Vec<usize>>,
    open: HashMap<String, Iv>,
}

/// The reference detector.
pub struct Reference {
    space: Space,
    nodes: Vec<NOp>,
    /// Each state node's values and memory per key value (empty for other nodes).
    smem: Vec<states::Mem>,
    /// Output name -> node.
    outputs: Vec<(String, usize)>,
    pstar: HashSet<usize>,
    events: Vec<Ev>,
    evattrs: Vec<Attrs>,
    hist: Vec<Vec<Occ>>,
    state: Vec<State>,
    step: usize,
    open_seq: u64,
}

fn key_str(attrs: &[(String, Val)], key: &str) -> Option<String> {
    attr(attrs, key).map(|v| format!("{v:?}"))
}

fn key_ok(
    x: &[(String, Val)],
    y: &[(String, Val)],
    key: &Option<String>,
    distinct: &Option<String>,
) -> bool {
    if let Some(k) = key {
        match (attr(x, k), attr(y, k)) {
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
    if let Some(k) = distinct {
        match (attr(x, k), attr(y, k)) {
            (Some(a), Some(b)) if a != b => {}
            _ => return false,
        }
    }
    true
}

fn fits(within: Option<i64>, start: i64, end: i64) -> bool {
    within.is_none_or(|w| end - start <= w)
}

fn point_rect(p: (f64, f64)) -> (f64, f64, f64, f64) {
    (p.0, p.1, p.0, p.1)
}

impl Reference {
    /// Builds the reference for `net`. Nodes are numbered like a depth-first,
    /// post-order walk of the event names in alphabetical order (this fixes the
    /// order in which a step runs the nodes, hence of simultaneous ticks).
    pub fn new(net: &Net) -> Reference {
        struct B<'a> {
            net: &'a Net,
            nodes: Vec<NOp>,
            by_name: HashMap<String, usize>,
        }
        impl B<'_> {
            fn node(&mut self, name: &str) -> usize {
                if let Some(&i) = self.by_name.get(name) {
                    return i;
                }
                let op = self
                    .net
                    .events
                    .get(name)
                    .unwrap_or_else(|| panic!("no event {name}"));
                let mut ids = Vec::new();
                for o in op.operands() {
                    ids.push(self.node(o));
                }
                let zone = |z: &str| self.net.zones[z].clone();
                let nop = match op {
                    Op::Atomic { ty, when } => NOp::Atomic {
                        ty: ty.clone(),
                        when: when.clone(),
                    },
                    Op::Within { zones, .. } => NOp::Within {
                        of: ids[0],
                        zones: zones.iter().map(|z| zone(z)).collect(),
                    },
                    Op::Or { .. } => NOp::Or { of: ids },
                    Op::Seq { opts, .. } | Op::And { opts, .. } => {
                        let kind = if matches!(op, Op::Seq { .. }) {
                            PairKind::Seq
                        } else {
                            PairKind::And
                        };
                        let mut acc = ids[0];
                        for &next in &ids[1..ids.len() - 1] {
                            self.nodes.push(NOp::Pair {
                                kind,
                                rels: vec![],
                                a: acc,
                                b: next,
                                opts: opts.clone(),
                            });
                            acc = self.nodes.len() - 1;
                        }
                        NOp::Pair {
                            kind,
                            rels: vec![],
                            a: acc,
                            b: ids[ids.len() - 1],
                            opts: opts.clone(),
                        }
                    }
                    Op::Not { opts, .. } => NOp::Not {
                        start: ids[0],
                        absent: ids[1],
                        end: ids[2],
                        opts: opts.clone(),
                    },
                    Op::Any { m, opts, .. } => NOp::Any {
                        m: *m,
                        of: ids,
                        opts: opts.clone(),
                    },
                    Op::Dist { max, opts, .. } => NOp::Pair {
                        kind: PairKind::Dist(*max),
                        rels: vec![],
                        a: ids[0],
                        b: ids[1],
                        opts: opts.clone(),
                    },
                    Op::Direction { rel, opts, .. } => NOp::Pair {
                        kind: PairKind::Dir,
                        rels: rel.clone(),
                        a: ids[0],
                        b: ids[1],
                        opts: opts.clone(),
                    },
                    Op::DirBox { rel, zone: z, .. } => {
                        let Zone::Rect { min, max } = zone(z) else {
                            panic!("box zones must be rectangles in the reference")
                        };
                        NOp::DirBox {
                            of: ids[0],
                            rels: rel.clone(),
                            rect: (min.0, min.1, max.0, max.1),
                        }
                    }
                    Op::Times { k, within, key, .. } => NOp::Times {
                        k: *k,
                        of: ids[0],
                        within: *within,
                        key: key.clone(),
                    },
                    Op::A { within, key, .. } | Op::AStar { within, key, .. } => NOp::Interval {
                        kind: if matches!(op, Op::A { .. }) {
                            IvKind::A
                        } else {
                            IvKind::AStar
                        },
                        start: ids[0],
                        e: Some(ids[1]),
                        end: ids[2],
                        within: *within,
                        key: key.clone(),
                    },
                    Op::P {
                        period,
                        within,
                        key,
                        ..
                    }
                    | Op::PStar {
                        period,
                        within,
                        key,
                        ..
                    } => NOp::Interval {
                        kind: if matches!(op, Op::P { .. }) {
                            IvKind::P(*period)
                        } else {
                            IvKind::PStar(*period)
                        },
                        start: ids[0],
                        e: None,
                        end: ids[1],
                        within: *within,
                        key: key.clone(),
                    },
                    Op::Count {
                        n,
                        distance,
                        window,
                        distinct,
                        ..
                    } => NOp::Count {
                        of: ids[0],
                        n: *n,
                        distance: *distance,
                        window: *window,
                        distinct: distinct.clone(),
                    },
                    other => states::lower(other, &ids, &self.nodes, &|z: &str| {
                        self.net.zones[z].clone()
                    }),
                };
                self.nodes.push(nop);
                let id = self.nodes.len() - 1;
                self.by_name.insert(name.to_owned(), id);
                id
            }
        }
        let mut b = B {
            net,
            nodes: Vec::new(),
            by_name: HashMap::new(),
        };
        for name in net.events.keys() {
            b.node(name);
        }
        let outputs: Vec<(String, usize)> = net
            .outputs
            .iter()
            .map(|o| (o.clone(), b.by_name[o]))
            .collect();
        let pstar = b
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                matches!(
                    n,
                    NOp::Interval {
                        kind: IvKind::PStar(_),
                        ..
                    }
                )
            })
            .map(|(i, _)| i)
            .collect();
        let n = b.nodes.len();
        Reference {
            space: net.space,
            smem: (0..n).map(|_| states::Mem::default()).collect(),
            nodes: b.nodes,
            outputs,
            pstar,
            events: Vec::new(),
            evattrs: Vec::new(),
            hist: vec![Vec::new(); n],
            state: (0..n).map(|_| State::default()).collect(),
            step: 0,
            open_seq: 0,
        }
    }

    /// Runs the whole stream (times non-decreasing) and `finish`, returning the
    /// detections per output name.
    pub fn run(net: &Net, events: &[Ev]) -> Output {
        Reference::run_bounded(net, events, usize::MAX)
            .expect("no bound, and no distance a rounding error from its threshold")
    }

    /// Like [`Reference::run`], giving up (`None`) once the occurrences of all
    /// events together exceed `max` (nested unrestricted contexts can make them
    /// grow exponentially with the stream), or when a distance came within rounding
    /// of a threshold without being on it (`states::NEAR_TIE`).
    pub fn run_bounded(net: &Net, events: &[Ev], max: usize) -> Option<Output> {
        Reference::run_all(net, events, max).map(|r| r.output())
    }

    /// Runs the whole stream and `finish`: the reference after it, or `None` past
    /// `max` occurrences or on a near tie.
    fn run_all(net: &Net, events: &[Ev], max: usize) -> Option<Reference> {
        states::NEAR_TIE.set(false);
        let mut r = Reference::new(net);
        for ev in events {
            // Whatever is due before the event's time happens first; what is due at
            // its time waits for every event at that time (which may prevent it).
            r.run_instants(|t| t < ev.time);
            r.events.push(ev.clone());
            r.evattrs.push(Rc::new(ev.attrs.clone()));
            r.run_step(Some(r.events.len() - 1), None);
            if r.hist.iter().map(Vec::len).sum::<usize>() > max {
                return None;
            }
        }
        // Time stops at the last event's time: what is due then happens, nothing later.
        if let Some(last) = events.last().map(|e| e.time) {
            r.run_instants(|t| t <= last);
        }
        // A distance within rounding of its threshold: either side is right.
        (!states::NEAR_TIE.get()).then_some(r)
    }

    fn output(&self) -> Output {
        let mut out = Output::new();
        for (name, node) in &self.outputs {
            let dets = self.hist[*node]
                .iter()
                .map(|o| Det {
                    time: o.end as f64,
                    ids: o.ids.iter().map(|&i| self.events[i].id).collect(),
                    ticks: if self.pstar.contains(node) {
                        o.ticks
                    } else {
                        None
                    },
                })
                .collect();
            out.insert(name.clone(), dets);
        }
        out
    }

    /// Runs every timed instant accepted by `due`, earliest first. One timed
    /// instant is one step, as one input event is: every `P` tick and every timed
    /// state transition due at that time happens in it, so none of them is "before"
    /// another (an `A` whose start and end tick at one instant closes the interval
    /// that was open, then opens the new one, as for one event that is both).
    fn run_instants(&mut self, due: impl Fn(i64) -> bool) {
        while let Some(t) = self.next_instant().filter(|&t| due(t)) {
            self.run_step(None, Some(t));
        }
    }

    /// The earliest time at which a tick or a timed transition is due.
    fn next_instant(&self) -> Option<i64> {
        let mut best: Option<i64> = None;
        for (n, op) in self.nodes.iter().enumerate() {
            let due = match op {
                NOp::Interval {
                    kind: IvKind::P(period),
                    within,
                    ..
                } => self.state[n]
                    .open
                    .values()
                    .filter(|iv| within.is_none_or(|w| iv.next_k * period <= w))
                    .map(|iv| iv.t0 + iv.next_k * period)
                    .min(),
                NOp::St(s) => self.state_due(n, s),
                _ => None,
            };
            if let Some(t) = due {
                best = Some(best.map_or(t, |b: i64| b.min(t)));
            }
        }
        best
    }

    /// One step: an input event, or one timed instant. Nodes run in topological
    /// order; within a node, what the step's occurrences do comes first, then what
    /// is due at the instant (an end or a newer start at a tick's time comes first).
    fn run_step(&mut self, event: Option<usize>, instant: Option<i64>) {
        let step = self.step;
        self.step += 1;
        let now = match (event, instant) {
            (Some(e), _) => self.events[e].time,
            (None, Some(t)) => t,
            (None, None) => unreachable!(),
        };
        for n in 0..self.nodes.len() {
            let mut drafts = self.node_step(n, step, event, now);
            if let Some(t) = instant {
                drafts.extend(self.due_ticks(n, t));
            }
            for (pos, d) in drafts.into_iter().enumerate() {
                self.hist[n].push(Occ {
                    start: d.start,
                    end: d.end,
                    loc: d.loc,
                    ids: d.ids,
                    attrs: d.attrs,
                    step,
                    pos,
                    ticks: d.ticks,
                    phase: d.phase,
                    began: d.began,
                    skey: d.skey,
                });
            }
        }
    }

    /// The ticks of `P` node `n`'s open intervals due at `t`, in opening order.
    fn due_ticks(&mut self, n: usize, t: i64) -> Vec<Draft> {
        let NOp::Interval {
            kind: IvKind::P(period),
            start,
            within,
            ..
        } = &self.nodes[n]
        else {
            return vec![];
        };
        let (period, start, within) = (*period, *start, *within);
        let mut open: Vec<(u64, String)> = self.state[n]
            .open
            .iter()
            .filter(|(_, iv)| {
                within.is_none_or(|w| iv.next_k * period <= w) && iv.t0 + iv.next_k * period == t
            })
            .map(|(k, iv)| (iv.seq, k.clone()))
            .collect();
        open.sort();
        let mut out = Vec::new();
        for (_, k) in open {
            let iv = self.state[n].open.get_mut(&k).unwrap();
            iv.next_k += 1;
            let s = &self.hist[start][iv.s];
            out.push(Draft {
                start: s.start,
                end: t,
                loc: s.loc,
                ids: s.ids.clone(),
                attrs: s.attrs.clone(),
                ticks: None,
                phase: None,
                began: None,
                skey: None,
            });
        }
        out
    }

    /// Indices (in `hist[node]`) of the occurrences `node` produced in `step`.
    fn produced(&self, node: usize, step: usize) -> Vec<usize> {
        let h = &self.hist[node];
        let mut i = h.len();
        while i > 0 && h[i - 1].step == step {
            i -= 1;
        }
        (i..h.len()).collect()
    }

    fn node_step(&mut self, n: usize, step: usize, event: Option<usize>, now: i64) -> Vec<Draft> {
        let op = self.nodes[n].clone();
        match &op {
            NOp::Atomic { ty, when } => {
                let Some(e) = event else { return vec![] };
                let ev = &self.events[e];
                if ev.ty != *ty || !when.as_ref().is_none_or(|w| w.eval(&ev.attrs)) {
                    return vec![];
                }
                vec![Draft {
                    start: ev.time,
                    end: ev.time,
                    loc: ev.loc,
                    ids: vec![e],
                    attrs: self.evattrs[e].clone(),
                    ticks: None,
                    phase: None,
                    began: None,
                    skey: None,
                }]
            }
            NOp::Within { of, zones } => self
                .produced(*of, step)
                .into_iter()
                .map(|i| &self.hist[*of][i])
                .filter(|o| {
                    o.loc
                        .is_some_and(|p| zones.iter().any(|z| z.contains_in(self.space, p)))
                })
                .map(Draft::pass)
                .collect(),
            NOp::DirBox { of, rels, rect } => self
                .produced(*of, step)
                .into_iter()
                .map(|i| &self.hist[*of][i])
                .filter(|o| o.loc.is_some_and(|p| rel_holds(rels, p, *rect)))
                .map(Draft::pass)
                .collect(),
            NOp::Or { .. } => {
                let mut out = Vec::new();
                for o in op.operands() {
                    for i in self.produced(o, step) {
                        out.push(Draft::pass(&self.hist[o][i]));
                    }
                }
                out
            }
            NOp::Pair {
                kind,
                rels,
                a,
                b,
                opts,
            } => self.pair_step(n, step, *kind, rels, *a, *b, opts),
            NOp::Not {
                start,
                absent,
                end,
                opts,
            } => self.not_step(n, step, *start, *absent, *end, opts),
            NOp::Any { m, of, opts } => self.any_step(n, step, *m, of, opts),
            NOp::Times { k, of, within, key } => self.times_step(n, step, *k, *of, *within, key),
            NOp::Interval {
                kind,
                start,
                e,
                end,
                within,
                key,
            } => self.interval_step(n, step, *kind, *start, *e, *end, *within, key),
            NOp::Count {
                of,
                n: size,
                distance,
                window,
                distinct,
            } => self.count_step(step, *of, *size, *distance, *window, distinct),
            NOp::St(s) => self.state_step(n, step, s, event.is_none(), now),
            NOp::Trans { of, phase } => self
                .produced(*of, step)
                .into_iter()
                .map(|i| &self.hist[*of][i])
                .filter(|o| o.phase == Some(*phase))
                .map(Draft::pass)
                .collect(),
            NOp::During {
                of,
                state,
                holds,
                key,
            } => self.during_step(step, *of, *state, *holds, key),
        }
    }

    /// Fires `y` against the eligible candidates `cands` (indices in `hist[pool]`,
    /// oldest first) according to the context; marks consumption.
    fn fire(
        &mut self,
        n: usize,
        ctx: Ctx,
        pool: usize,
        cands: Vec<usize>,
        ynode: usize,
        yi: usize,
    ) -> Vec<Draft> {
        if cands.is_empty() {
            return vec![];
        }
        let y = &self.hist[ynode][yi];
        let x = |i: usize| &self.hist[pool][i];
        let (out, used): (Vec<Draft>, Vec<usize>) = match ctx {
            Ctx::Recent => {
                let i = *cands.last().unwrap();
                (vec![Draft::merge(&[x(i)], y)], vec![])
            }
            Ctx::Chronicle => {
                let i = cands[0];
                (vec![Draft::merge(&[x(i)], y)], vec![i])
            }
            Ctx::Continuous => (
                cands.iter().map(|&i| Draft::merge(&[x(i)], y)).collect(),
                cands.clone(),
            ),
            Ctx::Unrestricted => (
                cands.iter().map(|&i| Draft::merge(&[x(i)], y)).collect(),
                vec![],
            ),
            Ctx::Cumulative => {
                let parts: Vec<&Occ> = cands.iter().map(|&i| x(i)).collect();
                (vec![Draft::merge(&parts, y)], cands.clone())
            }
        };
        if !matches!(ctx, Ctx::Recent | Ctx::Unrestricted) {
            let st = &mut self.state[n];
            for i in used {
                st.consumed.insert((pool, i));
            }
            st.consumed.insert((ynode, yi));
        }
        out
    }

    fn consuming(ctx: Ctx) -> bool {
        !matches!(ctx, Ctx::Recent | Ctx::Unrestricted)
    }

    #[allow(clippy::too_many_arguments)]
    fn pair_step(
        &mut self,
        n: usize,
        step: usize,
        kind: PairKind,
        rels: &[Rel],
        a: usize,
        b: usize,
        opts: &Opts,
    ) -> Vec<Draft> {
        // (y node, y index, pool node, y comes from `a`)
        let mut ys: Vec<(usize, usize, usize, bool)> = Vec::new();
        if a == b {
            for i in self.produced(a, step) {
                ys.push((a, i, a, true));
            }
        } else {
            if kind != PairKind::Seq {
                for i in self.produced(a, step) {
                    ys.push((a, i, b, true));
                }
            }
            for i in self.produced(b, step) {
                ys.push((b, i, a, false));
            }
        }
        let mut out = Vec::new();
        for (ynode, yi, pool, y_from_a) in ys {
            let y = &self.hist[ynode][yi];
            let cands: Vec<usize> = (0..self.hist[pool].len())
                .filter(|&i| {
                    let x = &self.hist[pool][i];
                    if x.step >= step {
                        return false;
                    }
                    if Self::consuming(opts.ctx) && self.state[n].consumed.contains(&(pool, i)) {
                        return false;
                    }
                    if !fits(opts.within, x.start.min(y.start), y.end) {
                        return false;
                    }
                    if !key_ok(&x.attrs, &y.attrs, &opts.key, &opts.distinct) {
                        return false;
                    }
                    match kind {
                        PairKind::Seq | PairKind::And => true,
                        PairKind::Dist(max) => match (x.loc, y.loc) {
                            (Some(p), Some(q)) => {
                                ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt() <= max
                            }
                            _ => false,
                        },
                        PairKind::Dir => match (x.loc, y.loc) {
                            (Some(px), Some(py)) => {
                                let y_of_x = rel_holds(rels, py, point_rect(px));
                                let x_of_y = rel_holds(rels, px, point_rect(py));
                                if a == b {
                                    y_of_x || x_of_y
                                } else if y_from_a {
                                    y_of_x
                                } else {
                                    x_of_y
                                }
                            }
                            _ => false,
                        },
                    }
                })
                .collect();
            out.extend(self.fire(n, opts.ctx, pool, cands, ynode, yi));
        }
        out
    }

    fn not_step(
        &mut self,
        n: usize,
        step: usize,
        start: usize,
        absent: usize,
        end: usize,
        opts: &Opts,
    ) -> Vec<Draft> {
        let mut out = Vec::new();
        for yi in self.produced(end, step) {
            let y = &self.hist[end][yi];
            let cands: Vec<usize> = (0..self.hist[start].len())
                .filter(|&i| {
                    let x = &self.hist[start][i];
                    if x.step >= step {
                        return false;
                    }
                    if Self::consuming(opts.ctx) && self.state[n].consumed.contains(&(start, i)) {
                        return false;
                    }
                    if !fits(opts.within, x.start.min(y.start), y.end) {
                        return false;
                    }
                    if !key_ok(&x.attrs, &y.attrs, &opts.key, &opts.distinct) {
                        return false;
                    }
                    !self.hist[absent].iter().any(|z| {
                        z.step > x.step
                            && z.step < y.step
                            && opts.key.as_ref().is_none_or(|k| {
                                attr(&z.attrs, k).is_some_and(|v| Some(v) == attr(&x.attrs, k))
                            })
                    })
                })
                .collect();
            out.extend(self.fire(n, opts.ctx, start, cands, end, yi));
        }
        out
    }

    fn any_step(
        &mut self,
        n: usize,
        step: usize,
        m: usize,
        of: &[usize],
        opts: &Opts,
    ) -> Vec<Draft> {
        let mut out = Vec::new();
        for (role, &ynode) in of.iter().enumerate() {
            for yi in self.produced(ynode, step) {
                let y = self.hist[ynode][yi].clone();
                if !fits(opts.within, y.start, y.end) {
                    continue;
                }
                // A keyed Any ignores occurrences without the key, even with m = 1
                // (where `distinct` is vacuous: a set of one is pairwise distinct).
                if opts
                    .key
                    .as_ref()
                    .is_some_and(|k| attr(&y.attrs, k).is_none())
                {
                    continue;
                }
                if m == 1 {
                    out.push(Draft::merge(&[], &y));
                    continue;
                }
                // Eligible candidates of the other operands, oldest first:
                // ordered by (step, role, pos).
                let mut keyed: Vec<((usize, usize, usize), usize, usize)> = Vec::new();
                for (r, &node) in of.iter().enumerate() {
                    if r == role {
                        continue;
                    }
                    for (i, x) in self.hist[node].iter().enumerate() {
                        if x.step >= step {
                            continue;
                        }
                        if Self::consuming(opts.ctx) && self.state[n].consumed.contains(&(node, i))
                        {
                            continue;
                        }
                        if !fits(opts.within, x.start.min(y.start), y.end) {
                            continue;
                        }
                        if !key_ok(&x.attrs, &y.attrs, &opts.key, &opts.distinct) {
                            continue;
                        }
                        // Decision 3: within a step, by role.
                        keyed.push(((x.step, r, x.pos), node, i));
                    }
                }
                keyed.sort_by_key(|k| k.0);
                // Unrestricted / Continuous: every set of one occurrence of each of m-1
                // different other operands (pairwise distinct), operands in role
                // order, the first varying slowest, occurrences oldest first.
                if matches!(opts.ctx, Ctx::Unrestricted | Ctx::Continuous) {
                    let mut lists: Vec<(usize, Vec<(usize, usize)>)> = Vec::new(); // (role, [(node, idx)])
                    for r in 0..of.len() {
                        if r == role {
                            continue;
                        }
                        let mut v: Vec<((usize, usize, usize), usize, usize)> =
                            keyed.iter().filter(|k| k.0 .1 == r).cloned().collect();
                        v.sort_by_key(|k| k.0);
                        if !v.is_empty() {
                            lists.push((r, v.into_iter().map(|k| (k.1, k.2)).collect()));
                        }
                    }
                    let mut sets: Vec<Vec<(usize, usize)>> = Vec::new();
                    let mut combos: Vec<Vec<usize>> = Vec::new();
                    fn choose(
                        n: usize,
                        k: usize,
                        from: usize,
                        cur: &mut Vec<usize>,
                        out: &mut Vec<Vec<usize>>,
                    ) {
                        if cur.len() == k {
                            out.push(cur.clone());
                            return;
                        }
                        for i in from..n {
                            cur.push(i);
                            choose(n, k, i + 1, cur, out);
                            cur.pop();
                        }
                    }
                    choose(lists.len(), m - 1, 0, &mut Vec::new(), &mut combos);
                    for combo in combos {
                        let mut partial: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
                        for &li in &combo {
                            let mut next = Vec::new();
                            for p in &partial {
                                for &(node, i) in &lists[li].1 {
                                    let x = &self.hist[node][i];
                                    let ok = opts.distinct.as_ref().is_none_or(|d| {
                                        p.iter().all(|&(pn, pi)| {
                                            attr(&self.hist[pn][pi].attrs, d) != attr(&x.attrs, d)
                                        })
                                    });
                                    if ok {
                                        let mut q = p.clone();
                                        q.push((node, i));
                                        next.push(q);
                                    }
                                }
                            }
                            partial = next;
                        }
                        sets.extend(partial);
                    }
                    for set in &sets {
                        let parts: Vec<&Occ> =
                            set.iter().map(|&(node, i)| &self.hist[node][i]).collect();
                        out.push(Draft::merge(&parts, &y));
                    }
                    if opts.ctx == Ctx::Continuous && !sets.is_empty() {
                        let st = &mut self.state[n];
                        for set in &sets {
                            for &(node, i) in set {
                                st.consumed.insert((node, i));
                            }
                        }
                        st.consumed.insert((ynode, yi));
                    }
                    continue;
                }
                if opts.ctx == Ctx::Recent {
                    keyed.reverse();
                }
                // Recent / Chronicle (decision 8): each other operand's most recent
                // (oldest) eligible occurrence, kept in that order.
                if opts.ctx != Ctx::Cumulative {
                    let mut seen = HashSet::new();
                    keyed.retain(|(_, node, _)| seen.insert(*node));
                }
                // Decision 5: greedy choice in the context's order, skipping
                // occurrences whose `distinct` value is already chosen.
                let mut chosen: Vec<(usize, usize, usize)> = Vec::new(); // (role, node, idx)
                for ((_, _, _), node, i) in keyed {
                    let r = of.iter().position(|&o| o == node).unwrap();
                    let x = &self.hist[node][i];
                    if let Some(d) = &opts.distinct {
                        let conflict = chosen.iter().any(|c| {
                            let o = &self.hist[c.1][c.2];
                            attr(&o.attrs, d) == attr(&x.attrs, d)
                        });
                        if conflict {
                            continue;
                        }
                    }
                    chosen.push((r, node, i));
                    if opts.ctx != Ctx::Cumulative && chosen.len() == m - 1 {
                        break;
                    }
                }
                let mut roles: Vec<usize> = chosen.iter().map(|c| c.0).collect();
                roles.sort_unstable();
                roles.dedup();
                if roles.len() < m - 1 {
                    continue;
                }
                let parts: Vec<&Occ> = chosen.iter().map(|c| &self.hist[c.1][c.2]).collect();
                out.push(Draft::merge(&parts, &y));
                if Self::consuming(opts.ctx) {
                    let st = &mut self.state[n];
                    for c in &chosen {
                        st.consumed.insert((c.1, c.2));
                    }
                    st.consumed.insert((ynode, yi));
                }
            }
        }
        out
    }

    fn times_step(
        &mut self,
        n: usize,
        step: usize,
        k: usize,
        of: usize,
        within: Option<i64>,
        key: &Option<String>,
    ) -> Vec<Draft> {
        let mut out = Vec::new();
        for yi in self.produced(of, step) {
            let y = self.hist[of][yi].clone();
            if !fits(within, y.start, y.end) {
                continue;
            }
            let kv = match key {
                None => String::new(),
                Some(k) => match key_str(&y.attrs, k) {
                    Some(v) => v,
                    None => continue,
                },
            };
            let hist = &self.hist[of];
            let pending = self.state[n].pending.entry(kv).or_default();
            pending.retain(|&i| fits(within, hist[i].start.min(y.start), y.end));
            pending.push(yi);
            if pending.len() == k {
                let parts: Vec<&Occ> = pending.iter().map(|&i| &hist[i]).collect();
                out.push(Draft::merge(&parts, &y));
                pending.clear();
            }
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn interval_step(
        &mut self,
        n: usize,
        step: usize,
        kind: IvKind,
        start: usize,
        e: Option<usize>,
        end: usize,
        within: Option<i64>,
        key: &Option<String>,
    ) -> Vec<Draft> {
        let kv = |attrs: &[(String, Val)]| match key {
            None => Some(String::new()),
            Some(k) => key_str(attrs, k),
        };
        let mut out = Vec::new();
        // Decision 10: roles in order start, e, end.
        let mut roles: Vec<(u8, usize)> = vec![(0, start)];
        roles.extend(e.map(|e| (1, e)));
        roles.push((2, end));
        for (role, _) in roles {
            match role {
                0 => {
                    // Starts.
                    for si in self.produced(start, step) {
                        let s = &self.hist[start][si];
                        let Some(k) = kv(&s.attrs) else { continue };
                        // Decision 10: a start replaces the open interval, even one
                        // that cannot fit W itself.
                        let iv = Iv {
                            s: si,
                            collected: Vec::new(),
                            t0: s.end,
                            next_k: 1,
                            seq: self.open_seq,
                        };
                        self.open_seq += 1;
                        self.state[n].open.insert(k, iv);
                    }
                }
                1 => {
                    // e's.
                    if let Some(e) = e {
                        for yi in self.produced(e, step) {
                            let y = &self.hist[e][yi];
                            let Some(k) = kv(&y.attrs) else { continue };
                            let Some(iv) = self.state[n].open.get_mut(&k) else {
                                continue;
                            };
                            let s = &self.hist[start][iv.s];
                            if s.step >= step {
                                continue;
                            }
                            if !fits(within, s.start.min(y.start), y.end) {
                                self.state[n].open.remove(&k);
                                continue;
                            }
                            match kind {
                                IvKind::A => out.push(Draft::merge(&[s], y)),
                                IvKind::AStar => iv.collected.push(yi),
                                _ => unreachable!(),
                            }
                        }
                    }
                }
                _ => {
                    // Ends.
                    for zi in self.produced(end, step) {
                        let z = &self.hist[end][zi];
                        let Some(k) = kv(&z.attrs) else { continue };
                        let Some(iv) = self.state[n].open.get(&k) else {
                            continue;
                        };
                        let s = &self.hist[start][iv.s];
                        if s.step >= step {
                            continue;
                        }
                        let iv = self.state[n].open.remove(&k).unwrap();
                        match kind {
                            IvKind::A | IvKind::P(_) => {}
                            IvKind::AStar => {
                                if iv.collected.is_empty() {
                                    continue;
                                }
                                let e = e.unwrap();
                                let mut parts: Vec<&Occ> = vec![s];
                                parts.extend(iv.collected.iter().map(|&i| &self.hist[e][i]));
                                let d = Draft::merge(&parts, z);
                                if fits(within, d.start, d.end) {
                                    out.push(d);
                                }
                            }
                            IvKind::PStar(period) => {
                                let d = Draft::merge(&[s], z);
                                if fits(within, d.start, d.end) {
                                    let mut ticks = 0;
                                    let mut kk = 1;
                                    while iv.t0 + kk * period < z.end
                                        && within.is_none_or(|w| kk * period <= w)
                                    {
                                        ticks += 1;
                                        kk += 1;
                                    }
                                    out.push(Draft {
                                        ticks: Some(ticks),
                                        ..d
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// Shows a net's outputs side by side, for failure messages.
pub fn show_outputs(out: &Output) -> String {
    let mut s = String::new();
    for (name, dets) in out {
        writeln!(s, "  {name}:").unwrap();
        for d in dets {
            writeln!(s, "    {d}").unwrap();
        }
    }
    s
}

/// The property tests' configuration: `cases` cases (`PROPTEST_CASES` overrides, for
/// longer runs), no failure files, and a fixed seed (`PROPTEST_RNG_SEED` picks
/// another) so that CI is repeatable.
pub fn proptest_config(
    cases: u32,
    seed: u64,
    max_shrink_iters: u32,
) -> proptest::test_runner::Config {
    fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
        std::env::var(name).ok().and_then(|v| v.parse().ok())
    }
    proptest::test_runner::Config {
        cases: env("PROPTEST_CASES").unwrap_or(cases),
        failure_persistence: None,
        max_shrink_iters,
        rng_seed: proptest::test_runner::RngSeed::Fixed(env("PROPTEST_RNG_SEED").unwrap_or(seed)),
        ..proptest::test_runner::Config::default()
    }
}
