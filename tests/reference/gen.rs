//! Random nets and streams for the property tests.
//!
//! A net is built from a list of `u32` choices (read one by one, 0 once the list
//! runs out), so that proptest's shrinking of the list (smaller values, fewer
//! entries) tends towards simpler nets: choice 0 always means the simplest option.

use std::collections::HashMap;

use proptest::prelude::*;

use super::{CmpOp, Ctx, Ev, Net, Op, Opts, Rel, Val, When, Zone};

/// Event types a net may use (the first 2–4).
pub const TYPES: [&str; 4] = ["A", "B", "C", "D"];

/// A stream of choices.
pub struct Choices<'a> {
    v: &'a [u32],
    i: usize,
}

impl<'a> Choices<'a> {
    pub fn new(v: &'a [u32]) -> Choices<'a> {
        Choices { v, i: 0 }
    }

    /// A number in `0..n` (0 when the choices are exhausted).
    pub fn pick(&mut self, n: usize) -> usize {
        let c = self.v.get(self.i).copied().unwrap_or(0);
        self.i += 1;
        if n <= 1 {
            0
        } else {
            c as usize % n
        }
    }

    /// True with probability `pct`% (false for a 0 choice).
    pub fn chance(&mut self, pct: usize) -> bool {
        self.pick(100) >= 100 - pct
    }

    fn one<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.pick(v.len())].clone()
    }
}

/// Which operators the composite layer may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Seq, And (2 and 3 operands), Dist, Direction with all contexts.
    Pairing,
    /// Not (plus a little Seq/And for nesting).
    Not,
    /// Any (plus a little Seq/And for nesting).
    Any,
    /// A, AStar, P, PStar, Times.
    Interval,
    /// Everything.
    Mixed,
}

fn gen_when(ch: &mut Choices, depth: usize) -> When {
    let leaf = depth >= 2 || ch.pick(3) == 0;
    if leaf {
        match ch.pick(7) {
            0 => When::Cmp(
                "speed".into(),
                CmpOp::Gt,
                Val::Num(5.0 + ch.pick(11) as f64),
            ),
            1 => When::Cmp(
                "speed".into(),
                CmpOp::Le,
                Val::Num(5.0 + ch.pick(11) as f64),
            ),
            2 => When::Cmp(
                "kind".into(),
                CmpOp::Eq,
                Val::Str(ch.one(&["x", "y"]).into()),
            ),
            3 => When::Cmp(
                "kind".into(),
                CmpOp::Ne,
                Val::Str(ch.one(&["x", "y"]).into()),
            ),
            4 => When::Cmp("flag".into(), CmpOp::Eq, Val::Bool(ch.chance(50))),
            5 => When::Cmp("speed".into(), CmpOp::Ge, Val::Num(ch.pick(21) as f64)),
            _ => When::Cmp(
                "ship".into(),
                CmpOp::Ne,
                Val::Str(ch.one(&["s0", "s1"]).into()),
            ),
        }
    } else {
        match ch.pick(3) {
            0 => When::And(
                Box::new(gen_when(ch, depth + 1)),
                Box::new(gen_when(ch, depth + 1)),
            ),
            1 => When::Or(
                Box::new(gen_when(ch, depth + 1)),
                Box::new(gen_when(ch, depth + 1)),
            ),
            _ => When::Not(Box::new(gen_when(ch, depth + 1))),
        }
    }
}

fn gen_window(ch: &mut Choices) -> Option<i64> {
    if ch.chance(75) {
        Some(1 + ch.pick(12) as i64)
    } else {
        None
    }
}

fn gen_key(ch: &mut Choices) -> Option<String> {
    match ch.pick(12) {
        0..=7 => None,
        8..=10 => Some("ship".into()),
        _ => Some("kind".into()),
    }
}

fn gen_opts(ch: &mut Choices, ctxs: &[Ctx]) -> Opts {
    let within = gen_window(ch);
    let key = gen_key(ch);
    let distinct = if ch.chance(18) {
        let d = if key.as_deref() == Some("ship") {
            "kind"
        } else {
            "ship"
        };
        Some(d.to_owned())
    } else {
        None
    };
    Opts {
        within,
        key,
        distinct,
        ctx: ch.one(ctxs),
    }
}

const ALL_CTX: [Ctx; 5] = [
    Ctx::Recent,
    Ctx::Chronicle,
    Ctx::Continuous,
    Ctx::Cumulative,
    Ctx::Unrestricted,
];
/// Any's contexts, the three that fire at most once per terminator first.
const ANY_CTX: [Ctx; 5] = [
    Ctx::Recent,
    Ctx::Chronicle,
    Ctx::Cumulative,
    Ctx::Continuous,
    Ctx::Unrestricted,
];

fn gen_rels(ch: &mut Choices) -> Vec<Rel> {
    let n = 1 + ch.pick(3);
    let mut v: Vec<Rel> = Vec::new();
    for _ in 0..n {
        let r = ch.one(&Rel::ALL);
        if !v.contains(&r) {
            v.push(r);
        }
    }
    v
}

struct Builder {
    net: Net,
    /// name -> depth (composite nesting).
    depth: HashMap<String, usize>,
    /// How often (%) an operand is a composite rather than a leaf.
    comp_pct: usize,
}

impl Builder {
    /// Adds an event. Two names may have the same definition: they are still two
    /// events (the contract shares a *name*'s occurrences, not equal definitions).
    fn add(&mut self, name: String, op: Op, depth: usize) {
        self.depth.insert(name.clone(), depth);
        self.net.events.insert(name.clone(), op);
        self.net.outputs.push(name);
    }

    /// A random operand of depth < 3, favouring composites so that nets nest.
    fn operand(&self, ch: &mut Choices) -> String {
        let pct = self.comp_pct;
        let all: Vec<&String> = self
            .net
            .outputs
            .iter()
            .filter(|n| self.depth[*n] < 3)
            .collect();
        let comps: Vec<&String> = all.iter().copied().filter(|n| n.starts_with('c')).collect();
        if !comps.is_empty() && ch.chance(pct) {
            comps[ch.pick(comps.len())].clone()
        } else {
            all[ch.pick(all.len())].clone()
        }
    }

    fn leaf(&self, ch: &mut Choices) -> String {
        let leaves: Vec<&String> = self
            .net
            .outputs
            .iter()
            .filter(|n| !n.starts_with('c'))
            .collect();
        leaves[ch.pick(leaves.len())].clone()
    }

    fn depth_of(&self, ops: &[&String]) -> usize {
        1 + ops.iter().map(|o| self.depth[*o]).max().unwrap_or(0)
    }
}

/// A random net of the given family.
pub fn gen_net(choices: &[u32], family: Family) -> Net {
    let mut ch = Choices::new(choices);
    let mut b = Builder {
        net: Net::default(),
        depth: HashMap::new(),
        comp_pct: match family {
            Family::Interval => 15,
            Family::Mixed => 30,
            _ => 40,
        },
    };
    b.net.text_durations = ch.chance(20);
    let n_types = 2 + ch.pick(3);

    // Zones.
    let n_zones = ch.pick(4);
    let mut rects = Vec::new();
    for i in 0..n_zones {
        let name = format!("z{i}");
        let zone = if ch.chance(40) {
            Zone::Circle {
                center: (ch.pick(11) as f64, ch.pick(11) as f64),
                radius: 1.0 + ch.pick(5) as f64,
            }
        } else {
            let (x, y) = (ch.pick(8) as f64, ch.pick(8) as f64);
            rects.push(name.clone());
            Zone::Rect {
                min: (x, y),
                max: (x + 1.0 + ch.pick(6) as f64, y + 1.0 + ch.pick(6) as f64),
            }
        };
        b.net.zones.insert(name, zone);
    }

    // Atomics: one per type (maybe filtered), and a few more filtered ones.
    let mut n_atomic = 0;
    for ty in TYPES.iter().take(n_types) {
        let when = if ch.chance(20) {
            Some(gen_when(&mut ch, 0))
        } else {
            None
        };
        b.add(
            format!("a{n_atomic}"),
            Op::Atomic {
                ty: (*ty).into(),
                when,
            },
            0,
        );
        n_atomic += 1;
    }
    for _ in 0..ch.pick(3) {
        let ty = TYPES[ch.pick(n_types)];
        let when = Some(gen_when(&mut ch, 0));
        b.add(
            format!("a{n_atomic}"),
            Op::Atomic {
                ty: ty.into(),
                when,
            },
            0,
        );
        n_atomic += 1;
    }

    // Simple leaves: Within, Direction-in-box, Or.
    if n_zones > 0 {
        for i in 0..ch.pick(3) {
            let of = b.leaf(&mut ch);
            let mut zones = vec![format!("z{}", ch.pick(n_zones))];
            if ch.chance(30) {
                let z = format!("z{}", ch.pick(n_zones));
                if !zones.contains(&z) {
                    zones.push(z);
                }
            }
            b.add(format!("w{i}"), Op::Within { of, zones }, 0);
        }
    }
    if !rects.is_empty() {
        for i in 0..ch.pick(2) {
            let of = b.leaf(&mut ch);
            let rel = gen_rels(&mut ch);
            let zone = ch.one(&rects);
            b.add(format!("d{i}"), Op::DirBox { rel, of, zone }, 0);
        }
    }
    for i in 0..ch.pick(2) {
        let n = 1 + ch.pick(3);
        let of: Vec<String> = (0..n).map(|_| b.leaf(&mut ch)).collect();
        b.add(format!("o{i}"), Op::Or { of }, 0);
    }

    // Sometimes a second name for the same definition (two distinct events).
    if ch.chance(15) {
        let orig = b.leaf(&mut ch);
        let op = b.net.events[&orig].clone();
        b.add("e0".into(), op, 0);
    }

    // Composites.
    let n_comp = 2 + ch.pick(4);
    let mut made = 0;
    for _ in 0..n_comp + 3 {
        if made == n_comp {
            break;
        }
        let kinds: &[u8] = match family {
            Family::Pairing => &[0, 1, 2, 3],
            Family::Not => &[4, 4, 4, 0, 1],
            Family::Any => &[5, 5, 5, 0, 1],
            Family::Interval => &[6, 7, 8, 9, 10],
            Family::Mixed => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        };
        let kind = ch.one(kinds);
        let x = b.operand(&mut ch);
        let y = if ch.chance(10) {
            x.clone()
        } else {
            b.operand(&mut ch)
        };
        let op = match kind {
            0 | 1 => {
                let mut of = vec![x, y];
                if ch.chance(30) {
                    of.push(b.operand(&mut ch));
                }
                let opts = gen_opts(&mut ch, &ALL_CTX);
                if kind == 0 {
                    Op::Seq { of, opts }
                } else {
                    Op::And { of, opts }
                }
            }
            2 => Op::Dist {
                a: x,
                b: y,
                max: ch.pick(7) as f64,
                opts: gen_opts(&mut ch, &ALL_CTX),
            },
            3 => Op::Direction {
                rel: gen_rels(&mut ch),
                of: x,
                from: y,
                opts: gen_opts(&mut ch, &ALL_CTX),
            },
            4 => {
                let z = if ch.chance(15) {
                    x.clone()
                } else {
                    b.operand(&mut ch)
                };
                Op::Not {
                    start: x,
                    absent: y,
                    end: z,
                    opts: gen_opts(&mut ch, &ALL_CTX),
                }
            }
            5 => {
                let n = 2 + ch.pick(2);
                let mut of = vec![x];
                for _ in 0..6 {
                    if of.len() == n {
                        break;
                    }
                    let o = b.operand(&mut ch);
                    if !of.contains(&o) {
                        of.push(o);
                    }
                }
                if of.len() < 2 {
                    continue;
                }
                Op::Any {
                    m: 1 + ch.pick(of.len()),
                    of,
                    // Unrestricted and Continuous fire once per set: nested in other
                    // composites they multiply, so only the Any family draws them.
                    opts: gen_opts(
                        &mut ch,
                        if family == Family::Any {
                            &ANY_CTX
                        } else {
                            &ANY_CTX[..3]
                        },
                    ),
                }
            }
            6 | 7 => {
                let z = b.operand(&mut ch);
                let (within, key) = (gen_window(&mut ch), gen_key(&mut ch));
                if kind == 6 {
                    Op::A {
                        start: x,
                        e: y,
                        end: z,
                        within,
                        key,
                    }
                } else {
                    Op::AStar {
                        start: x,
                        e: y,
                        end: z,
                        within,
                        key,
                    }
                }
            }
            8 | 9 => {
                let period = 1 + ch.pick(3) as i64;
                let (within, key) = (gen_window(&mut ch), gen_key(&mut ch));
                if kind == 8 {
                    Op::P {
                        start: x,
                        period,
                        end: y,
                        within,
                        key,
                    }
                } else {
                    Op::PStar {
                        start: x,
                        period,
                        end: y,
                        within,
                        key,
                    }
                }
            }
            10 => Op::Times {
                k: 1 + ch.pick(3),
                of: x,
                within: gen_window(&mut ch),
                key: gen_key(&mut ch),
            },
            _ => Op::Not {
                start: x.clone(),
                absent: y,
                end: b.operand(&mut ch),
                opts: gen_opts(&mut ch, &ALL_CTX),
            },
        };
        let operands: Vec<String> = op.operands().into_iter().map(String::from).collect();
        let refs: Vec<&String> = operands.iter().collect();
        let depth = b.depth_of(&refs);
        b.add(format!("c{made}"), op, depth);
        made += 1;
    }
    b.net.outputs.sort();
    b.net
}

/// One random input event, before it is given a type name, time and id.
#[derive(Clone)]
pub struct EvSpec {
    pub dt: u8,
    pub ty: u8,
    pub loc: Option<(u8, u8)>,
    pub speed: Option<Val>,
    pub kind: Option<Val>,
    pub flag: Option<bool>,
    pub ship: Option<u8>,
}

impl std::fmt::Debug for EvSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "(dt {} ty {} loc {:?} speed {:?} kind {:?} flag {:?} ship {:?})",
            self.dt, self.ty, self.loc, self.speed, self.kind, self.flag, self.ship
        )
    }
}

pub fn ev_spec() -> impl Strategy<Value = EvSpec> {
    (
        prop_oneof![4 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
        0..4u8,
        prop::option::weighted(0.9, (0..=10u8, 0..=10u8)),
        prop_oneof![
            7 => (0..=20u8).prop_map(|v| Some(Val::Num(v as f64))),
            1 => Just(Some(Val::Str("fast".into()))),
            2 => Just(None),
        ],
        prop_oneof![
            7 => prop_oneof![Just("x"), Just("y"), Just("z")].prop_map(|s| Some(Val::Str(s.into()))),
            1 => Just(Some(Val::Num(1.0))),
            2 => Just(None),
        ],
        prop::option::weighted(0.7, any::<bool>()),
        prop::option::weighted(0.85, 0..3u8),
    )
        .prop_map(|(dt, ty, loc, speed, kind, flag, ship)| EvSpec {
            dt,
            ty,
            loc,
            speed,
            kind,
            flag,
            ship,
        })
}

pub fn ev_specs(max: usize) -> impl Strategy<Value = Vec<EvSpec>> {
    prop::collection::vec(ev_spec(), 5..=max)
}

/// The events of a stream, for a net using the first `n_types` types.
pub fn events(specs: &[EvSpec], n_types: usize) -> Vec<Ev> {
    let mut t = 0i64;
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            t += s.dt as i64;
            let mut e = Ev::new(i as i64 + 1, TYPES[s.ty as usize % n_types], t);
            if let Some((x, y)) = s.loc {
                e = e.at(x as f64, y as f64);
            }
            if let Some(v) = &s.speed {
                e = e.with("speed", v.clone());
            }
            if let Some(v) = &s.kind {
                e = e.with("kind", v.clone());
            }
            if let Some(v) = s.flag {
                e = e.with("flag", Val::Bool(v));
            }
            if let Some(v) = s.ship {
                e = e.with("ship", Val::Str(format!("s{v}")));
            }
            e
        })
        .collect()
}

/// How many event types a net uses.
pub fn n_types(net: &Net) -> usize {
    net.events
        .values()
        .filter_map(|op| match op {
            Op::Atomic { ty, .. } => TYPES.iter().position(|t| t == ty),
            _ => None,
        })
        .max()
        .map_or(2, |i| i + 1)
}
