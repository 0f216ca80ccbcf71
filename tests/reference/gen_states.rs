//! Random nets mixing states with the other operators, and streams made to reach
//! the states' corner cases: reports jittering at zone boundaries and at margins,
//! exact-time ties between events and what is due (ticks, timed transitions),
//! reports lacking the key attribute, unlocated reports.
//!
//! As in `gen.rs`, a net is read from a list of `u32` choices (0 once the list runs
//! out), choice 0 being the simplest option, so that shrinking simplifies nets.

use proptest::prelude::*;

use super::gen::{Choices, TYPES};
use super::{CmpOp, Comb, Ctx, Ev, Net, Op, Opts, Val, When, Zone};

/// What a generated name is.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// An atomic event, or `Within`/`Or` of atomics: at most one location per
    /// input event, so a located state reading it sees one place per step.
    Leaf,
    /// Any other occurrence stream.
    Occ,
    /// A state, with its key attribute; `Close` states have `pair: true` (keyed by
    /// pairs of values: not read by `During`, `AllOf`, `AnyOf` or `Unless`).
    State { key: Option<String>, pair: bool },
}

struct B {
    net: Net,
    kinds: Vec<(String, Kind)>,
}

impl B {
    fn add(&mut self, name: String, op: Op, kind: Kind) {
        self.net.events.insert(name.clone(), op);
        self.kinds.push((name, kind));
    }

    fn pick(&self, ch: &mut Choices, ok: impl Fn(&Kind) -> bool) -> Option<String> {
        let v: Vec<&String> = self
            .kinds
            .iter()
            .filter(|(_, k)| ok(k))
            .map(|(n, _)| n)
            .collect();
        if v.is_empty() {
            None
        } else {
            Some(v[ch.pick(v.len())].clone())
        }
    }

    /// An occurrence stream, preferring the newer (more composite) ones now and then.
    fn occ(&self, ch: &mut Choices) -> String {
        let all: Vec<&String> = self
            .kinds
            .iter()
            .filter(|(_, k)| !matches!(k, Kind::State { .. }))
            .map(|(n, _)| n)
            .collect();
        if ch.chance(40) {
            let comps: Vec<&&String> = all
                .iter()
                .filter(|n| matches!(self.kind(n), Kind::Occ))
                .collect();
            if !comps.is_empty() {
                return (*comps[ch.pick(comps.len())]).clone();
            }
        }
        all[ch.pick(all.len())].clone()
    }

    fn leaf(&self, ch: &mut Choices) -> String {
        self.pick(ch, |k| *k == Kind::Leaf).unwrap()
    }

    /// A leaf giving at most one occurrence per input event (not an `Or`).
    fn single(&self, ch: &mut Choices) -> String {
        let v: Vec<&String> = self
            .kinds
            .iter()
            .filter(|(n, k)| *k == Kind::Leaf && !n.starts_with('o'))
            .map(|(n, _)| n)
            .collect();
        v[ch.pick(v.len())].clone()
    }

    fn kind(&self, name: &str) -> &Kind {
        &self.kinds.iter().find(|(n, _)| n == name).unwrap().1
    }
}

fn gen_key(ch: &mut Choices) -> Option<String> {
    match ch.pick(10) {
        0..=4 => None,
        5..=8 => Some("ship".into()),
        _ => Some("kind".into()),
    }
}

fn gen_window(ch: &mut Choices) -> Option<i64> {
    if ch.chance(70) {
        Some(1 + ch.pick(10) as i64)
    } else {
        None
    }
}

/// A random net of states (every state operator), the operators reading them
/// (`Starts`, `Ends`, `During`) and the others they mix with (`Seq`, `And`,
/// `Within`, `Or`, `P`, `Count`), states reading composites and composites reading
/// states' transitions.
pub fn gen_state_net(choices: &[u32]) -> Net {
    let mut ch = Choices::new(choices);
    let mut b = B {
        net: Net::default(),
        kinds: Vec::new(),
    };
    b.net.text_durations = ch.chance(20);

    // Zones on a grid of whole units (reports fall on and around their edges).
    let n_zones = 1 + ch.pick(3);
    for i in 0..n_zones {
        let (x, y) = (ch.pick(7) as f64, ch.pick(7) as f64);
        let (w, h) = (1.0 + ch.pick(5) as f64, 1.0 + ch.pick(5) as f64);
        let zone = match ch.pick(5) {
            0 => Zone::Rect {
                min: (x, y),
                max: (x + w, y + h),
            },
            1 => Zone::Circle {
                center: (x, y),
                radius: w,
            },
            2 => {
                if ch.chance(50) {
                    Zone::Polygon(vec![(x, y), (x + w, y), (x, y + h)])
                } else {
                    // Not convex: an L.
                    Zone::Polygon(vec![
                        (x, y),
                        (x + w + 1.0, y),
                        (x + w + 1.0, y + 1.0),
                        (x + 1.0, y + 1.0),
                        (x + 1.0, y + h + 1.0),
                        (x, y + h + 1.0),
                    ])
                }
            }
            3 => {
                let from = 45.0 * ch.pick(8) as f64;
                Zone::Sector {
                    center: (x, y),
                    radius: w + 1.0,
                    from_deg: from,
                    to_deg: from + 45.0 * (1 + ch.pick(4)) as f64,
                }
            }
            _ => Zone::Line {
                points: vec![(x, y), (x + w, y + h - 1.0)],
                width: 1.0 + ch.pick(2) as f64,
            },
        };
        b.net.zones.insert(format!("z{i}"), zone);
    }
    let zone_names: Vec<String> = b.net.zones.keys().cloned().collect();

    // Atomics: one per type, maybe a filtered one; a Within and an Or of leaves.
    for (i, ty) in TYPES.iter().enumerate() {
        let when = if ch.chance(15) {
            Some(When::Cmp(
                "speed".into(),
                if ch.chance(50) { CmpOp::Gt } else { CmpOp::Le },
                Val::Num(5.0 + ch.pick(11) as f64),
            ))
        } else {
            None
        };
        b.add(
            format!("a{i}"),
            Op::Atomic {
                ty: (*ty).into(),
                when,
            },
            Kind::Leaf,
        );
    }
    if ch.chance(40) {
        b.add(
            "f0".into(),
            Op::Atomic {
                ty: TYPES[ch.pick(TYPES.len())].into(),
                when: Some(When::Cmp(
                    "speed".into(),
                    CmpOp::Ge,
                    Val::Num(ch.pick(21) as f64),
                )),
            },
            Kind::Leaf,
        );
    }
    if ch.chance(40) {
        let of = b.leaf(&mut ch);
        let zones = vec![zone_names[ch.pick(zone_names.len())].clone()];
        b.add("w0".into(), Op::Within { of, zones }, Kind::Leaf);
    }
    if ch.chance(30) {
        let of = vec![b.leaf(&mut ch), b.leaf(&mut ch)];
        b.add("o0".into(), Op::Or { of }, Kind::Leaf);
    }

    // States and composites, interleaved so that each may read the other.
    let n_items = 3 + ch.pick(6);
    let (mut ns, mut nc) = (0, 0);
    for _ in 0..n_items + 4 {
        if ns + nc >= n_items {
            break;
        }
        let has_state = b.kinds.iter().any(|(_, k)| matches!(k, Kind::State { .. }));
        // Half states, half composites (composites reading states once there are some).
        let want_state = !has_state || ch.chance(50);
        if want_state {
            let Some((op, kind)) = gen_state(&mut b, &mut ch, &zone_names) else {
                continue;
            };
            b.add(format!("s{ns}"), op, kind);
            ns += 1;
        } else {
            let op = gen_composite(&b, &mut ch);
            b.add(format!("c{nc}"), op, Kind::Occ);
            nc += 1;
        }
    }

    // Outputs: every state and composite, and some leaves.
    let mut outputs: Vec<String> = b
        .kinds
        .iter()
        .filter(|(n, k)| *k != Kind::Leaf || (n.starts_with('w') || ch.chance(20)))
        .map(|(n, _)| n.clone())
        .collect();
    outputs.sort();
    b.net.outputs = outputs;
    b.net
}

fn gen_state(b: &mut B, ch: &mut Choices, zones: &[String]) -> Option<(Op, Kind)> {
    let states: Vec<(String, Option<String>)> = b
        .kinds
        .iter()
        .filter_map(|(n, k)| match k {
            Kind::State { key, pair: false } => Some((n.clone(), key.clone())),
            _ => None,
        })
        .collect();
    let plain = |key: Option<String>| Kind::State { key, pair: false };
    Some(match ch.pick(9) {
        0 => {
            let key = gen_key(ch);
            (
                Op::State {
                    on: b.occ(ch),
                    off: b.occ(ch),
                    key: key.clone(),
                },
                plain(key),
            )
        }
        1 => {
            let key = gen_key(ch);
            let mut zs = vec![zones[ch.pick(zones.len())].clone()];
            let z = zones[ch.pick(zones.len())].clone();
            if ch.chance(35) && !zs.contains(&z) {
                zs.push(z);
            }
            (
                Op::Inside {
                    of: b.leaf(ch),
                    zones: zs,
                    key: key.clone(),
                    margin: [0.0, 0.5, 1.0, 0.25][ch.pick(4)],
                },
                plain(key),
            )
        }
        2 => {
            let key = gen_key(ch);
            (
                Op::Stationary {
                    of: b.leaf(ch),
                    radius: [1.0, 0.5, 2.0, 3.0][ch.pick(4)],
                    for_: 1 + ch.pick(4) as i64,
                    key: key.clone(),
                },
                plain(key),
            )
        }
        3 => {
            let key = gen_key(ch);
            (
                Op::Silent {
                    of: b.occ(ch),
                    for_: 1 + ch.pick(5) as i64,
                    key: key.clone(),
                },
                plain(key),
            )
        }
        4 => (
            // One occurrence per event: "the value's latest occurrence" is then one.
            Op::Close {
                of: b.single(ch),
                max: [1.0, 2.0, 3.0, 5.0][ch.pick(4)],
                within: gen_window(ch),
                distinct: if ch.chance(20) { "kind" } else { "ship" }.into(),
            },
            Kind::State {
                key: None,
                pair: true,
            },
        ),
        5 => {
            // Lasting of any state (Close included: it keeps the pairs).
            let of = b.pick(ch, |k| matches!(k, Kind::State { .. }))?;
            let kind = b.kind(&of).clone();
            (
                Op::Lasting {
                    of,
                    min: 1 + ch.pick(4) as i64,
                },
                kind,
            )
        }
        6..=8 => {
            // AllOf, AnyOf, Unless over states sharing one key attribute.
            let (first, key) = states.get(ch.pick(states.len().max(1)))?.clone();
            let same: Vec<&String> = states
                .iter()
                .filter(|(_, k)| *k == key)
                .map(|(n, _)| n)
                .collect();
            let mut of = vec![first];
            for _ in 0..1 + ch.pick(2) {
                of.push(same[ch.pick(same.len())].clone());
            }
            let comb = [Comb::All, Comb::Any, Comb::Unless][ch.pick(3)];
            if comb == Comb::Unless {
                of.truncate(2);
            }
            (Op::Combine { comb, of }, plain(key))
        }
        _ => unreachable!(),
    })
}

fn gen_composite(b: &B, ch: &mut Choices) -> Op {
    let state = |ch: &mut Choices| b.pick(ch, |k| matches!(k, Kind::State { .. }));
    let readable = |ch: &mut Choices| b.pick(ch, |k| matches!(k, Kind::State { pair: false, .. }));
    let opts = |ch: &mut Choices| Opts {
        within: gen_window(ch),
        key: if ch.chance(25) {
            Some("ship".into())
        } else {
            None
        },
        distinct: None,
        ctx: [Ctx::Recent, Ctx::Chronicle, Ctx::Unrestricted][ch.pick(3)],
    };
    match ch.pick(9) {
        0 | 1 => match state(ch) {
            Some(of) => Op::Starts { of },
            None => Op::Or {
                of: vec![b.occ(ch)],
            },
        },
        2 => match state(ch) {
            Some(of) => Op::Ends { of },
            None => Op::Or {
                of: vec![b.occ(ch)],
            },
        },
        3 => match readable(ch) {
            Some(state) => Op::During {
                of: b.occ(ch),
                state,
                holds: !ch.chance(35),
            },
            None => Op::Or {
                of: vec![b.occ(ch)],
            },
        },
        4 => Op::Seq {
            of: vec![b.occ(ch), b.occ(ch)],
            opts: opts(ch),
        },
        5 => Op::And {
            of: vec![b.occ(ch), b.occ(ch)],
            opts: opts(ch),
        },
        6 => Op::P {
            start: b.occ(ch),
            period: 1 + ch.pick(3) as i64,
            end: b.occ(ch),
            within: gen_window(ch),
            key: if ch.chance(30) {
                Some("ship".into())
            } else {
                None
            },
        },
        7 => Op::Count {
            of: b.leaf(ch),
            n: 2 + ch.pick(2),
            distance: [1.5, 2.5, 4.0][ch.pick(3)],
            window: 1 + ch.pick(6) as i64,
            distinct: if ch.chance(30) {
                Some("ship".into())
            } else {
                None
            },
        },
        _ => Op::Within {
            of: b.occ(ch),
            zones: vec![b.net.zones.keys().next().unwrap().clone()],
        },
    }
}

/// One random report, before it gets a time and an id.
#[derive(Clone)]
pub struct StateEvSpec {
    pub dt: u8,
    pub ty: u8,
    /// Half units on a 0..10 grid, and a jitter of a quarter unit either way.
    pub loc: Option<(u8, u8, i8, i8)>,
    pub speed: Option<u8>,
    pub ship: Option<u8>,
    pub kind: Option<u8>,
}

impl std::fmt::Debug for StateEvSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "(dt {} ty {} loc {:?} speed {:?} ship {:?} kind {:?})",
            self.dt, self.ty, self.loc, self.speed, self.ship, self.kind
        )
    }
}

pub fn state_ev_spec() -> impl Strategy<Value = StateEvSpec> {
    (
        // Many ties: a third of the reports share the previous one's time.
        prop_oneof![3 => Just(0u8), 3 => Just(1u8), 2 => Just(2u8), 1 => Just(3u8), 1 => Just(5u8)],
        0..4u8,
        // One report in eight unlocated.
        prop::option::weighted(
            0.88,
            (
                0..=20u8,
                0..=20u8,
                prop_oneof![6 => Just(0i8), 1 => Just(1i8), 1 => Just(-1i8)],
                prop_oneof![6 => Just(0i8), 1 => Just(1i8), 1 => Just(-1i8)],
            ),
        ),
        prop::option::weighted(0.8, 0..=20u8),
        // One report in six without a ship.
        prop::option::weighted(0.83, 0..3u8),
        prop::option::weighted(0.7, 0..2u8),
    )
        .prop_map(|(dt, ty, loc, speed, ship, kind)| StateEvSpec {
            dt,
            ty,
            loc,
            speed,
            ship,
            kind,
        })
}

pub fn state_ev_specs(max: usize) -> impl Strategy<Value = Vec<StateEvSpec>> {
    prop::collection::vec(state_ev_spec(), 5..=max)
}

/// The reports of a stream: ids 1, 2, 3…, times in whole seconds.
pub fn state_events(specs: &[StateEvSpec]) -> Vec<Ev> {
    let mut t = 0i64;
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            t += s.dt as i64;
            let mut e = Ev::new(i as i64 + 1, TYPES[s.ty as usize % TYPES.len()], t);
            if let Some((x, y, jx, jy)) = s.loc {
                e = e.at(
                    x as f64 / 2.0 + jx as f64 / 4.0,
                    y as f64 / 2.0 + jy as f64 / 4.0,
                );
            }
            if let Some(v) = s.speed {
                e = e.with("speed", Val::Num(v as f64));
            }
            if let Some(v) = s.ship {
                e = e.with("ship", Val::Str(format!("s{v}")));
            }
            if let Some(v) = s.kind {
                e = e.with("kind", Val::Str(["x", "y"][v as usize].into()));
            }
            e
        })
        .collect()
}
