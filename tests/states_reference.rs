#![allow(unreachable_pub, missing_docs)]

//! The reference's states against the cases worked by hand in `tests/states/`:
//! each case's `net.ron` is read into the reference's AST (a reader for the RON
//! subset the cases use), its events are run through the REFERENCE (not ccpn), and
//! its detections must equal `expected.jsonl` on the fields the contract fixes:
//! `event`, `phase`, `time`, `ids` and, on ends, `start`.
//!
//! The reference counts time in whole units: here milliseconds, every time,
//! window, period and duration of a case multiplied by 1000 (the operators only
//! compare and add times, so the scale changes nothing).

mod reference;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use reference::states::{Comb, Found, Phase};
use reference::{CmpOp, Ctx, Ev, Net, Op, Opts, Reference, Space, Val, When, Zone};

/// Milliseconds per second.
const MS: f64 = 1000.0;

// ---------------------------------------------------------------------------
// The RON subset of the cases
// ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename = "Net")]
struct NetR {
    #[serde(default)]
    space: Option<SpaceR>,
    #[serde(default)]
    zones: BTreeMap<String, ZoneR>,
    events: BTreeMap<String, OpR>,
    outputs: Vec<String>,
}

#[derive(Deserialize)]
enum SpaceR {
    Planar,
    Wgs84,
}

#[derive(Deserialize)]
enum ZoneR {
    Polygon(Vec<(f64, f64)>),
    Rect {
        min: (f64, f64),
        max: (f64, f64),
    },
    Circle {
        center: (f64, f64),
        radius: f64,
    },
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

/// A duration: seconds, or text such as `"90s"`, `"10m"`, `"2h"`, `"3d"`.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Dur {
    Secs(f64),
    Text(String),
}

impl Dur {
    /// The duration in units of `1 / per_sec` seconds.
    fn units(&self, per_sec: f64) -> i64 {
        let secs = match self {
            Dur::Secs(s) => *s,
            Dur::Text(t) => {
                let t = t.trim();
                let (num, unit) =
                    t.split_at(t.find(|c: char| c.is_alphabetic()).unwrap_or(t.len()));
                let n: f64 = num
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("duration {t:?}"));
                n * match unit {
                    "" | "s" => 1.0,
                    "m" => 60.0,
                    "h" => 3600.0,
                    "d" => 86400.0,
                    other => panic!("duration unit {other:?}"),
                }
            }
        };
        (secs * per_sec).round() as i64
    }
}

#[derive(Deserialize)]
enum CtxR {
    Recent,
    Chronicle,
    Continuous,
    Cumulative,
    Unrestricted,
}

#[derive(Deserialize)]
enum OpR {
    Atomic {
        #[serde(rename = "type")]
        ty: String,
        when: Option<String>,
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
        within: Option<Dur>,
        key: Option<String>,
        distinct: Option<String>,
        context: Option<CtxR>,
    },
    And {
        of: Vec<String>,
        within: Option<Dur>,
        key: Option<String>,
        distinct: Option<String>,
        context: Option<CtxR>,
    },
    P {
        start: String,
        period: Dur,
        end: String,
        within: Option<Dur>,
        key: Option<String>,
    },
    Count {
        of: String,
        n: usize,
        distance: f64,
        window: Dur,
        distinct: Option<String>,
    },
    State {
        on: String,
        off: String,
        key: Option<String>,
    },
    Inside {
        of: String,
        zones: Vec<String>,
        key: Option<String>,
        margin: Option<f64>,
    },
    Stationary {
        of: String,
        radius: f64,
        #[serde(rename = "for")]
        for_: Dur,
        key: Option<String>,
    },
    Silent {
        of: String,
        #[serde(rename = "for")]
        for_: Dur,
        key: Option<String>,
    },
    Close {
        of: String,
        max: f64,
        within: Option<Dur>,
        distinct: String,
    },
    Lasting {
        of: String,
        min: Dur,
    },
    AllOf {
        of: Vec<String>,
    },
    AnyOf {
        of: Vec<String>,
    },
    Unless {
        of: String,
        except: String,
    },
    Starts {
        of: String,
    },
    Ends {
        of: String,
    },
    During {
        of: String,
        state: String,
        holds: Option<bool>,
    },
}

fn opts(
    u: f64,
    within: &Option<Dur>,
    key: &Option<String>,
    distinct: &Option<String>,
    ctx: &Option<CtxR>,
) -> Opts {
    Opts {
        within: within.as_ref().map(|d| d.units(u)),
        key: key.clone(),
        distinct: distinct.clone(),
        ctx: match ctx {
            None | Some(CtxR::Recent) => Ctx::Recent,
            Some(CtxR::Chronicle) => Ctx::Chronicle,
            Some(CtxR::Continuous) => Ctx::Continuous,
            Some(CtxR::Cumulative) => Ctx::Cumulative,
            Some(CtxR::Unrestricted) => Ctx::Unrestricted,
        },
    }
}

fn lower(op: OpR, u: f64) -> Op {
    match op {
        OpR::Atomic { ty, when } => Op::Atomic {
            ty,
            when: when.map(|w| parse_when(&w)),
        },
        OpR::Within { of, zones } => Op::Within { of, zones },
        OpR::Or { of } => Op::Or { of },
        OpR::Seq {
            of,
            within,
            key,
            distinct,
            context,
        } => Op::Seq {
            of,
            opts: opts(u, &within, &key, &distinct, &context),
        },
        OpR::And {
            of,
            within,
            key,
            distinct,
            context,
        } => Op::And {
            of,
            opts: opts(u, &within, &key, &distinct, &context),
        },
        OpR::P {
            start,
            period,
            end,
            within,
            key,
        } => Op::P {
            start,
            period: period.units(u),
            end,
            within: within.as_ref().map(|d| d.units(u)),
            key,
        },
        OpR::Count {
            of,
            n,
            distance,
            window,
            distinct,
        } => Op::Count {
            of,
            n,
            distance,
            window: window.units(u),
            distinct,
        },
        OpR::State { on, off, key } => Op::State { on, off, key },
        OpR::Inside {
            of,
            zones,
            key,
            margin,
        } => Op::Inside {
            of,
            zones,
            key,
            margin: margin.unwrap_or(0.0),
        },
        OpR::Stationary {
            of,
            radius,
            for_,
            key,
        } => Op::Stationary {
            of,
            radius,
            for_: for_.units(u),
            key,
        },
        OpR::Silent { of, for_, key } => Op::Silent {
            of,
            for_: for_.units(u),
            key,
        },
        OpR::Close {
            of,
            max,
            within,
            distinct,
        } => Op::Close {
            of,
            max,
            within: within.as_ref().map(|d| d.units(u)),
            distinct,
        },
        OpR::Lasting { of, min } => Op::Lasting {
            of,
            min: min.units(u),
        },
        OpR::AllOf { of } => Op::Combine {
            comb: Comb::All,
            of,
        },
        OpR::AnyOf { of } => Op::Combine {
            comb: Comb::Any,
            of,
        },
        OpR::Unless { of, except } => Op::Combine {
            comb: Comb::Unless,
            of: vec![of, except],
        },
        OpR::Starts { of } => Op::Starts { of },
        OpR::Ends { of } => Op::Ends { of },
        OpR::During { of, state, holds } => Op::During {
            of,
            state,
            holds: holds.unwrap_or(true),
        },
    }
}

/// Reads a net, its durations in units of `1 / per_sec` seconds.
fn read_net(text: &str, per_sec: f64) -> Net {
    let r: NetR = ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(text)
        .unwrap_or_else(|e| panic!("net: {e}"));
    Net {
        space: match r.space {
            None | Some(SpaceR::Planar) => Space::Planar,
            Some(SpaceR::Wgs84) => Space::Wgs84,
        },
        zones: r
            .zones
            .into_iter()
            .map(|(name, z)| {
                let z = match z {
                    ZoneR::Polygon(v) => Zone::Polygon(v),
                    ZoneR::Rect { min, max } => Zone::Rect { min, max },
                    ZoneR::Circle { center, radius } => Zone::Circle { center, radius },
                    ZoneR::Sector {
                        center,
                        radius,
                        from_deg,
                        to_deg,
                    } => Zone::Sector {
                        center,
                        radius,
                        from_deg,
                        to_deg,
                    },
                    ZoneR::Line { points, width } => Zone::Line { points, width },
                };
                (name, z)
            })
            .collect(),
        events: r
            .events
            .into_iter()
            .map(|(n, o)| (n, lower(o, per_sec)))
            .collect(),
        outputs: r.outputs,
        text_durations: false,
    }
}

// ---------------------------------------------------------------------------
// `when` expressions
// ---------------------------------------------------------------------------

/// Parses a `when` expression: comparisons of an attribute with a literal, `&&`,
/// `||`, `!` and parentheses.
fn parse_when(text: &str) -> When {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn eat(&mut self, t: &str) -> bool {
            self.ws();
            if self.s[self.i..].starts_with(t.as_bytes()) {
                self.i += t.len();
                true
            } else {
                false
            }
        }
        fn or(&mut self) -> When {
            let mut w = self.and();
            while self.eat("||") {
                w = When::Or(Box::new(w), Box::new(self.and()));
            }
            w
        }
        fn and(&mut self) -> When {
            let mut w = self.unary();
            while self.eat("&&") {
                w = When::And(Box::new(w), Box::new(self.unary()));
            }
            w
        }
        fn unary(&mut self) -> When {
            if self.eat("!") {
                return When::Not(Box::new(self.unary()));
            }
            if self.eat("(") {
                let w = self.or();
                assert!(self.eat(")"), "expected )");
                return w;
            }
            self.ws();
            let start = self.i;
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
            {
                self.i += 1;
            }
            let name = std::str::from_utf8(&self.s[start..self.i])
                .unwrap()
                .to_owned();
            let op = [
                ("==", CmpOp::Eq),
                ("!=", CmpOp::Ne),
                ("<=", CmpOp::Le),
                (">=", CmpOp::Ge),
                ("<", CmpOp::Lt),
                (">", CmpOp::Gt),
            ]
            .into_iter()
            .find(|(t, _)| self.eat(t))
            .map(|(_, op)| op)
            .expect("a comparison");
            self.ws();
            let lit = if self.eat("true") {
                Val::Bool(true)
            } else if self.eat("false") {
                Val::Bool(false)
            } else if self.eat("\"") {
                let start = self.i;
                while self.s[self.i] != b'"' {
                    self.i += 1;
                }
                let v = std::str::from_utf8(&self.s[start..self.i])
                    .unwrap()
                    .to_owned();
                self.i += 1;
                Val::Str(v)
            } else {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_digit() || b"+-.eE".contains(&self.s[self.i]))
                {
                    self.i += 1;
                }
                let n = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Val::Num(n.parse().unwrap_or_else(|_| panic!("number {n:?}")))
            };
            When::Cmp(name, op, lit)
        }
    }
    let mut p = P {
        s: text.as_bytes(),
        i: 0,
    };
    let w = p.or();
    p.ws();
    assert_eq!(p.i, text.len(), "trailing text in {text:?}");
    w
}

// ---------------------------------------------------------------------------
// Events and expectations
// ---------------------------------------------------------------------------

/// A time of the input or of the expectations: seconds or RFC 3339, in ms.
fn time_ms(v: &serde_json::Value) -> i64 {
    match v {
        serde_json::Value::Number(n) => (n.as_f64().unwrap() * MS).round() as i64,
        serde_json::Value::String(s) => {
            let t: jiff::Timestamp = s.parse().unwrap_or_else(|e| panic!("time {s:?}: {e}"));
            t.as_millisecond()
        }
        other => panic!("time {other}"),
    }
}

fn lines(path: &Path) -> Vec<serde_json::Map<String, serde_json::Value>> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn read_events(path: &Path, space: Space) -> Vec<Ev> {
    let (xn, yn) = match space {
        Space::Planar => ("x", "y"),
        Space::Wgs84 => ("lon", "lat"),
    };
    lines(path)
        .into_iter()
        .map(|m| {
            let id = m["id"].as_i64().expect("integer ids");
            let ty = m.get("type").and_then(|t| t.as_str()).unwrap_or("event");
            let mut e = Ev::new(id, ty, time_ms(&m["time"]));
            if let (Some(x), Some(y)) = (m.get(xn), m.get(yn)) {
                e = e.at(x.as_f64().unwrap(), y.as_f64().unwrap());
            }
            for (k, v) in &m {
                if ["id", "time", "type", xn, yn].contains(&k.as_str()) {
                    continue;
                }
                let v = match v {
                    serde_json::Value::Number(n) => Val::Num(n.as_f64().unwrap()),
                    serde_json::Value::String(s) => Val::Str(s.clone()),
                    serde_json::Value::Bool(b) => Val::Bool(*b),
                    other => panic!("attribute {k}: {other}"),
                };
                e = e.with(k, v);
            }
            e
        })
        .collect()
}

/// The expected detections of each output, in order, times in ms.
fn read_expected(path: &Path, outputs: &[String]) -> BTreeMap<String, Vec<Found>> {
    let mut out: BTreeMap<String, Vec<Found>> =
        outputs.iter().map(|o| (o.clone(), Vec::new())).collect();
    for m in lines(path) {
        let phase = m.get("phase").map(|p| match p.as_str() {
            Some("start") => Phase::Start,
            Some("end") => Phase::End,
            other => panic!("phase {other:?}"),
        });
        let name = m["event"].as_str().unwrap().to_owned();
        out.get_mut(&name)
            .unwrap_or_else(|| panic!("{name} is not an output"))
            .push(Found {
                time: time_ms(&m["time"]) as f64,
                ids: m["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_i64().unwrap())
                    .collect(),
                ticks: None,
                phase,
                start: m.get("start").map(|s| time_ms(s) as f64),
            });
    }
    out
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/states");
    let mut v: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// Runs one case through the reference: `Ok` if it detects what is expected.
fn check(dir: &Path) -> Result<(), String> {
    let net = read_net(&fs::read_to_string(dir.join("net.ron")).unwrap(), MS);
    let events = read_events(&dir.join("events.jsonl"), net.space);
    let expected = read_expected(&dir.join("expected.jsonl"), &net.outputs);
    let got: BTreeMap<String, Vec<Found>> = Reference::run_found(&net, &events)
        .into_iter()
        .map(|(name, v)| {
            // Only the fields the cases give: no `ticks`.
            let v = v.into_iter().map(|f| Found { ticks: None, ..f }).collect();
            (name, v)
        })
        .collect();
    if got == expected {
        Ok(())
    } else {
        Err(format!(
            "{}:\n--- expected (ms) ---\n{}--- reference (ms) ---\n{}",
            dir.file_name().unwrap().to_string_lossy(),
            reference::states::show_findings(&expected),
            reference::states::show_findings(&got)
        ))
    }
}

#[test]
fn every_hand_worked_case_matches_the_reference() {
    let all = cases();
    assert!(all.len() >= 29, "the cases in tests/states/: {}", all.len());
    let failures: Vec<String> = all.iter().filter_map(|d| check(d).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// The reference's RON text of its nets, read back, is the same net: the syntax
/// the property tests give ccpn is the one the cases are written in.
#[test]
fn generated_nets_read_back_from_their_ron() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let choices = proptest::collection::vec(proptest::arbitrary::any::<u32>(), 160);
    for _ in 0..300 {
        let mut net =
            reference::gen_states::gen_state_net(&choices.new_tree(&mut runner).unwrap().current());
        let text = net.to_ron();
        net.text_durations = false;
        assert_eq!(read_net(&text, 1.0), net, "{text}");
    }
}

/// The reference's WGS84 distance agrees with `geo`'s geodesic.
#[test]
fn wgs84_distance_agrees_with_geo() {
    use geo::{Distance, Geodesic, Point};
    for (p, q) in [
        ((0.0, 0.0), (0.0, 0.0085)),
        ((0.0, 0.0), (0.0087, 0.0)),
        ((-4.5, 48.3), (-4.49, 48.31)),
        ((121.5, 25.1), (122.0, 24.0)),
        ((10.0, -60.0), (-20.0, 70.0)),
    ] {
        let ours = reference::states::geodesic(p, q);
        let theirs = Geodesic.distance(Point::new(p.0, p.1), Point::new(q.0, q.1));
        assert!(
            (ours - theirs).abs() < 1e-6 * theirs.max(1.0),
            "{p:?} {q:?}: {ours} {theirs}"
        );
    }
}

/// ccpn's detection lines are read field by field.
#[test]
fn detection_lines_split_into_fields() {
    let f = reference::against::top_level_fields(
        r#"{"event":"a,\"b","phase":"end","ids":[1,2],"time":3.5,"start":1.0,"seq":4}"#,
    );
    let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("event").as_deref(), Some(r#""a,\"b""#));
    assert_eq!(get("phase").as_deref(), Some(r#""end""#));
    assert_eq!(get("ids").as_deref(), Some("[1,2]"));
    assert_eq!(get("start").as_deref(), Some("1.0"));
    assert_eq!(f.len(), 6);
}

#[test]
fn when_expressions_parse() {
    let w = parse_when("!(speed > 10 && iff == false) || kind == \"x\"");
    let attrs = vec![
        ("speed".to_owned(), Val::Num(12.0)),
        ("iff".to_owned(), Val::Bool(false)),
    ];
    assert!(!w.eval(&attrs));
    let attrs = vec![("kind".to_owned(), Val::Str("x".into()))];
    assert!(w.eval(&attrs));
}

#[test]
fn zone_boundary_distances() {
    let sq = Zone::Polygon(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]);
    assert!(sq.contains_in(Space::Planar, (10.0, 5.0)));
    assert!(!sq.contains_in(Space::Planar, (10.5, 5.0)));
    assert_eq!(sq.boundary_dist(Space::Planar, (2.0, 5.0)), 2.0);
    assert_eq!(sq.boundary_dist(Space::Planar, (13.0, 14.0)), 5.0);
    let sec = Zone::Sector {
        center: (0.0, 0.0),
        radius: 10.0,
        from_deg: 0.0,
        to_deg: 90.0,
    };
    assert!(sec.contains_in(Space::Planar, (5.0, 5.0)));
    assert!(!sec.contains_in(Space::Planar, (-1.0, 5.0)));
    assert!((sec.boundary_dist(Space::Planar, (5.0, 5.0)) - (10.0 - 50f64.sqrt())).abs() < 1e-12);
    assert_eq!(sec.boundary_dist(Space::Planar, (-2.0, 5.0)), 2.0);
    // South of the centre: the nearest boundary point is the centre itself.
    assert_eq!(sec.boundary_dist(Space::Planar, (0.0, -3.0)), 3.0);
    // A metre of latitude at the equator is about 1 / 110574 degree.
    let rect = Zone::Rect {
        min: (0.0, 0.0),
        max: (0.1, 0.1),
    };
    let d = rect.boundary_dist(Space::Wgs84, (0.05, 0.0005));
    assert!((d - 0.0005 * 110_574.3).abs() < 0.5, "{d}");
}
