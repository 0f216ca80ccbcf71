//! Seeded target tracks around an own ship, after the object model of seed 002
//! ("An Indexing Method of Continuous Spatiotemporal Queries for Stream Data
//! Processing Rules of Detected Target Objects", tables 1 and 3 and section 4.1).
//!
//! Every report carries an event id, a time (seconds), a position (`lon`, `lat`), the
//! object id, IFF (`"foe"`/`"friend"`), the kind (`"aircraft"`, `"vessel"`,
//! `"submarine"`), speed (m/s), elevation (m, negative below the surface) and the
//! range from own ship (m, as the sensor measures it). Own ship reports as type
//! `"own"` with her `course` and `speed` and no `object`, so that nets can anchor
//! moving zones to her and keys on `object` never take her for a contact.
//!
//! Table 1 gives elevation in tens of metres and a wider speed range; the
//! generator follows table 3's per-kind ranges in metres and m/s instead. Positions
//! stay inside table 1's box (longitude 115–136°E, latitude 15–46°N; the table
//! swaps the two names).
//!
//! Shared by `examples/gen_targets.rs` and `tests/threat.rs` (`#[path]` include).

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;

use geo::{Bearing, Destination, Distance, Geodesic, Point};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Where own ship starts (lon, lat): at sea north-east of Keelung.
pub(crate) const OWN_START: (f64, f64) = (121.9, 25.3);
/// The first report's time (seconds since the epoch).
pub(crate) const T0: f64 = 1_700_000_000.0;
/// Own ship's course (degrees) and speed (m/s) in generated scenarios.
const OWN_COURSE: f64 = 60.0;
const OWN_SPEED: f64 = 8.0;
/// Own ship reports every 2 s.
const OWN_PERIOD_MS: u64 = 2_000;

/// Entity kinds of table 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Aircraft,
    Vessel,
    Submarine,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Aircraft => "aircraft",
            Kind::Vessel => "vessel",
            Kind::Submarine => "submarine",
        }
    }

    /// Speed (m/s) and elevation (m) ranges of table 3.
    fn ranges(self) -> ((f64, f64), (f64, f64)) {
        match self {
            Kind::Aircraft => ((10.0, 100.0), (10.0, 100.0)),
            Kind::Vessel => ((3.0, 100.0), (0.0, 10.0)),
            Kind::Submarine => ((0.0, 100.0), (-10.0, 0.0)),
        }
    }
}

/// How the kinds are mixed (section 4.1): uniform thirds, or 60/20/20 air/surface/under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mix {
    Uniform,
    NonUniform,
}

/// Movement patterns of section 4.1 (figure 8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pattern {
    /// Head for own ship.
    Approach,
    /// Head for own ship offset by `side` × 60°, passing around it.
    Detour { side: f64 },
    /// Straight on, then a 180° turn at `rate` °/s after `after` seconds.
    UTurn { after: f64, rate: f64 },
    /// A steady turn at `rate` °/s.
    Turning { rate: f64 },
    /// Approach until `range` metres from own ship, then the other pattern.
    ApproachThen { range: f64, then: Then },
}

/// What follows an approach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Then {
    Detour { side: f64 },
    UTurn { rate: f64 },
    Turning { rate: f64 },
}

/// One report, ready to print.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Report {
    pub(crate) id: u64,
    /// Milliseconds after [`T0`].
    pub(crate) ms: u64,
    pub(crate) lon: f64,
    pub(crate) lat: f64,
    pub(crate) object: u32,
    /// `Some(course)` for own ship's reports.
    pub(crate) own_course: Option<f64>,
    pub(crate) foe: bool,
    pub(crate) kind: Kind,
    pub(crate) speed: f64,
    pub(crate) elevation: f64,
    /// Metres from own ship (0 for own ship).
    pub(crate) range: f64,
}

impl Report {
    /// The report's time in seconds since the epoch.
    pub(crate) fn time(&self) -> f64 {
        T0 + self.ms as f64 / 1000.0
    }

    /// One JSON object.
    pub(crate) fn json(&self) -> String {
        let mut s = String::with_capacity(200);
        let _ = write!(
            s,
            "{{\"id\":{},\"type\":\"{}\",\"time\":{:.3},\"lon\":{:.6},\"lat\":{:.6}",
            self.id,
            self.type_name(),
            self.time(),
            self.lon,
            self.lat,
        );
        match self.own_course {
            Some(c) => {
                let _ = write!(s, ",\"course\":{c:.1},\"speed\":{:.1}}}", self.speed);
            }
            None => {
                let _ = write!(
                    s,
                    concat!(
                        ",\"object\":{},\"iff\":\"{}\",\"kind\":\"{}\",",
                        "\"speed\":{:.1},\"elevation\":{:.1},\"range\":{:.0}}}"
                    ),
                    self.object,
                    self.iff(),
                    self.kind.name(),
                    self.speed,
                    self.elevation,
                    self.range
                );
            }
        }
        s
    }

    /// The CSV header matching [`Report::csv`].
    pub(crate) fn csv_header() -> &'static str {
        "id,type,time,lon,lat,object,iff,kind,speed,elevation,range,course"
    }

    /// One CSV row (own ship leaves the track columns empty, tracks the course).
    pub(crate) fn csv(&self) -> String {
        let head = format!(
            "{},{},{:.3},{:.6},{:.6}",
            self.id,
            self.type_name(),
            self.time(),
            self.lon,
            self.lat,
        );
        match self.own_course {
            Some(c) => format!("{head},,,,{:.1},,,{c:.1}", self.speed),
            None => format!(
                "{head},{},{},{},{:.1},{:.1},{:.0},",
                self.object,
                self.iff(),
                self.kind.name(),
                self.speed,
                self.elevation,
                self.range
            ),
        }
    }

    fn type_name(&self) -> &'static str {
        if self.own_course.is_some() {
            "own"
        } else {
            "track"
        }
    }

    fn iff(&self) -> &'static str {
        if self.foe {
            "foe"
        } else {
            "friend"
        }
    }
}

/// A moving object: own ship (object 0) or a target.
#[derive(Clone, Debug)]
struct Mover {
    object: u32,
    foe: bool,
    kind: Kind,
    pos: Point<f64>,
    heading: f64,
    speed: f64,
    elevation: f64,
    pattern: Pattern,
    /// Seconds since the object appeared.
    age: f64,
    /// Degrees turned so far in a U-turn.
    turned: f64,
    /// Whether an `ApproachThen` has switched to its second pattern.
    switched: bool,
    /// Report period range (ms), drawn per report; own ship uses a fixed period.
    period: (u64, u64),
}

/// Degrees in [0, 360).
fn norm(deg: f64) -> f64 {
    deg.rem_euclid(360.0)
}

/// Turn `heading` towards `goal` by at most `max` degrees.
fn steer(heading: f64, goal: f64, max: f64) -> f64 {
    let diff = norm(goal - heading + 180.0) - 180.0;
    norm(heading + diff.clamp(-max, max))
}

/// An approach: head for own ship, turning at most 3°/s.
fn approach(m: &Mover, own: Point<f64>, dt: f64) -> f64 {
    steer(m.heading, Geodesic.bearing(m.pos, own), 3.0 * dt)
}

/// A detour: head 60° to one side of own ship.
fn detour(m: &Mover, own: Point<f64>, dt: f64, side: f64) -> f64 {
    steer(
        m.heading,
        Geodesic.bearing(m.pos, own) + side * 60.0,
        3.0 * dt,
    )
}

/// A U-turn: turn at `rate` until 180° are done, then hold the course.
fn u_turn(m: &mut Mover, dt: f64, rate: f64) -> f64 {
    if m.turned >= 180.0 {
        return m.heading;
    }
    let step = (rate * dt).min(180.0 - m.turned);
    m.turned += step;
    norm(m.heading + step)
}

/// The heading after `dt` seconds of the mover's pattern.
fn next_heading(m: &mut Mover, own: Point<f64>, dt: f64) -> f64 {
    match m.pattern {
        Pattern::Approach => approach(m, own, dt),
        Pattern::Detour { side } => detour(m, own, dt, side),
        Pattern::UTurn { after, rate } if m.age >= after => u_turn(m, dt, rate),
        Pattern::UTurn { .. } => m.heading,
        Pattern::Turning { rate } => norm(m.heading + rate * dt),
        Pattern::ApproachThen { range, then } => {
            if !m.switched && Geodesic.distance(m.pos, own) <= range {
                m.switched = true;
            }
            match (m.switched, then) {
                (false, _) => approach(m, own, dt),
                (true, Then::Detour { side }) => detour(m, own, dt, side),
                (true, Then::UTurn { rate }) => u_turn(m, dt, rate),
                (true, Then::Turning { rate }) => norm(m.heading + rate * dt),
            }
        }
    }
}

/// Move `dt` seconds along the pattern.
fn advance(m: &mut Mover, own: Point<f64>, dt: f64) {
    m.heading = next_heading(m, own, dt);
    m.pos = Geodesic.destination(m.pos, m.heading, m.speed * dt);
    m.age += dt;
}

/// A seeded scenario: own ship and `objects` targets for `duration` seconds.
pub(crate) struct Scenario {
    rng: SmallRng,
    own: Mover,
    targets: Vec<Mover>,
    /// (next report ms, index + 1; 0 is own ship).
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    /// Last time (ms) each mover was advanced to.
    clock: Vec<u64>,
    end_ms: u64,
    next_id: u64,
}

impl Scenario {
    /// A scenario with the given seed, number of targets, length and mix.
    pub(crate) fn new(seed: u64, objects: usize, duration: f64, mix: Mix) -> Scenario {
        let mut rng = SmallRng::seed_from_u64(seed);
        let own = Mover {
            object: 0,
            foe: false,
            kind: Kind::Vessel,
            pos: Point::new(OWN_START.0, OWN_START.1),
            heading: OWN_COURSE,
            speed: OWN_SPEED,
            elevation: 0.0,
            pattern: Pattern::Turning { rate: 0.0 },
            age: 0.0,
            turned: 0.0,
            switched: false,
            period: (OWN_PERIOD_MS, OWN_PERIOD_MS),
        };
        let targets: Vec<Mover> = (0..objects)
            .map(|i| random_target(&mut rng, i as u32 + 1, own.pos, mix))
            .collect();
        let mut queue = BinaryHeap::new();
        queue.push(Reverse((0, 0)));
        for i in 0..targets.len() {
            queue.push(Reverse((rng.random_range(0..5_000), i + 1)));
        }
        let clock = vec![0; targets.len() + 1];
        Scenario {
            rng,
            own,
            targets,
            queue,
            clock,
            end_ms: (duration * 1000.0) as u64,
            next_id: 1,
        }
    }

    /// The next report in time order, or `None` after the duration.
    pub(crate) fn next_report(&mut self) -> Option<Report> {
        let Reverse((ms, who)) = self.queue.pop()?;
        if ms > self.end_ms {
            return None;
        }
        // Own ship moves in a straight line; advance it to `ms` first.
        let own_dt = (ms - self.clock[0]) as f64 / 1000.0;
        let here = self.own.pos;
        advance(&mut self.own, here, own_dt);
        self.clock[0] = ms;
        let id = self.next_id;
        self.next_id += 1;
        let report = if who == 0 {
            self.queue.push(Reverse((ms + OWN_PERIOD_MS, 0)));
            own_report(&self.own, id, ms)
        } else {
            let m = &mut self.targets[who - 1];
            advance(m, self.own.pos, (ms - self.clock[who]) as f64 / 1000.0);
            self.clock[who] = ms;
            let next = ms + self.rng.random_range(m.period.0..=m.period.1);
            self.queue.push(Reverse((next, who)));
            track_report(m, self.own.pos, id, ms)
        };
        Some(report)
    }
}

impl Iterator for Scenario {
    type Item = Report;
    fn next(&mut self) -> Option<Report> {
        self.next_report()
    }
}

/// A kind drawn from the mix.
fn random_kind(rng: &mut SmallRng, mix: Mix) -> Kind {
    let air = match mix {
        Mix::Uniform => 1.0 / 3.0,
        Mix::NonUniform => 0.6,
    };
    let u: f64 = rng.random();
    if u < air {
        Kind::Aircraft
    } else if u < air + (1.0 - air) / 2.0 {
        Kind::Vessel
    } else {
        Kind::Submarine
    }
}

/// A pattern drawn uniformly from the seven of section 4.1.
fn random_pattern(rng: &mut SmallRng) -> Pattern {
    let side = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
    let rate = rng.random_range(1.0..4.0);
    let range = rng.random_range(6_000.0..15_000.0);
    match rng.random_range(0..7) {
        0 => Pattern::Approach,
        1 => Pattern::Detour { side },
        2 => Pattern::UTurn {
            after: rng.random_range(60.0..300.0),
            rate,
        },
        3 => Pattern::Turning { rate: side * rate },
        4 => Pattern::ApproachThen {
            range,
            then: Then::Detour { side },
        },
        5 => Pattern::ApproachThen {
            range,
            then: Then::UTurn { rate },
        },
        _ => Pattern::ApproachThen {
            range,
            then: Then::Turning { rate: side * rate },
        },
    }
}

/// A target of a random kind and side. Foes start 15–40 km out heading roughly
/// inbound; friends sail with the convoy, 1–6 km from own ship.
fn random_target(rng: &mut SmallRng, object: u32, own: Point<f64>, mix: Mix) -> Mover {
    let kind = random_kind(rng, mix);
    let foe = rng.random_bool(0.5);
    let ((s0, s1), (e0, e1)) = kind.ranges();
    let bearing = rng.random_range(0.0..360.0);
    let (dist, heading, pattern) = if foe {
        let inbound = norm(bearing + 180.0 + rng.random_range(-20.0..20.0));
        (
            rng.random_range(15_000.0..40_000.0),
            inbound,
            random_pattern(rng),
        )
    } else {
        let rate = rng.random_range(-2.0..2.0);
        (
            rng.random_range(1_000.0..6_000.0),
            OWN_COURSE,
            Pattern::Turning { rate },
        )
    };
    Mover {
        object,
        foe,
        kind,
        pos: Geodesic.destination(own, bearing, dist),
        heading,
        // Friends keep station at the convoy's pace; foes use table 3's speeds.
        speed: if foe {
            rng.random_range(s0..=s1)
        } else {
            rng.random_range(s0..=s1).min(OWN_SPEED + 4.0)
        },
        elevation: rng.random_range(e0..=e1),
        pattern,
        age: 0.0,
        turned: 0.0,
        switched: false,
        period: (3_000, 5_000),
    }
}

fn own_report(own: &Mover, id: u64, ms: u64) -> Report {
    Report {
        id,
        ms,
        lon: own.pos.x(),
        lat: own.pos.y(),
        object: 0,
        own_course: Some(own.heading),
        foe: false,
        kind: Kind::Vessel,
        speed: own.speed,
        elevation: 0.0,
        range: 0.0,
    }
}

fn track_report(m: &Mover, own: Point<f64>, id: u64, ms: u64) -> Report {
    Report {
        id,
        ms,
        lon: m.pos.x(),
        lat: m.pos.y(),
        object: m.object,
        own_course: None,
        foe: m.foe,
        kind: m.kind,
        speed: m.speed,
        elevation: m.elevation,
        range: Geodesic.distance(m.pos, own),
    }
}

// ---------------------------------------------------------------------------
// Scripted scenarios: fixed, hand-checkable tracks for the tests.
// ---------------------------------------------------------------------------

/// Own ship's position in the scripts: stationary, away from the net's default
/// zone centre, so that the test also checks that the zones follow own ship.
pub(crate) const SCRIPT_OWN: (f64, f64) = (122.2, 25.5);

/// A scripted straight-line track: `object` starts `dist` metres from own ship at
/// `bearing`, sails along `heading` at `speed`, reporting every 4 s from `t0` s for
/// `n` reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leg {
    pub(crate) object: u32,
    pub(crate) foe: bool,
    pub(crate) kind: Kind,
    pub(crate) bearing: f64,
    pub(crate) dist: f64,
    pub(crate) heading: f64,
    pub(crate) speed: f64,
    pub(crate) elevation: f64,
    pub(crate) t0: u64,
    pub(crate) n: u64,
}

/// The scripted approach: one enemy vessel (object 101) from due north, 20,030 m out,
/// straight for own ship at 25 m/s (100 m per report): report k (from 0) is
/// 20,030 − 100·k m out, so report 79 is at 12,130 m, 80 at 12,030 m and 81, the
/// first inside 12 km, at 11,930 m.
pub(crate) fn script_approach() -> Vec<Leg> {
    vec![Leg {
        object: 101,
        foe: true,
        kind: Kind::Vessel,
        bearing: 0.0,
        dist: 20_030.0,
        heading: 180.0,
        speed: 25.0,
        elevation: 2.0,
        t0: 0,
        n: 100,
    }]
}

/// The scripted swarm: three enemy vessels (objects 201–203) in line abreast
/// 1.5 km apart, coming from the east at 20 m/s; each crosses 12 km within a minute
/// of the others, a few km apart.
pub(crate) fn script_swarm() -> Vec<Leg> {
    [(201, 90.0), (202, 85.7), (203, 94.3)]
        .into_iter()
        .map(|(object, bearing)| Leg {
            object,
            foe: true,
            kind: Kind::Vessel,
            bearing,
            dist: 20_030.0,
            heading: 270.0,
            speed: 20.0,
            elevation: 3.0,
            t0: 0,
            n: 150,
        })
        .collect()
}

/// Friends only: allied vessels, aircraft and a submarine doing what the foes do in
/// the other scripts (approaches, a close pass, a sub north-west).
pub(crate) fn script_friends() -> Vec<Leg> {
    let mut legs: Vec<Leg> = script_approach()
        .into_iter()
        .chain(script_swarm())
        .map(|l| Leg { foe: false, ..l })
        .collect();
    legs.push(Leg {
        object: 301,
        foe: false,
        kind: Kind::Aircraft,
        bearing: 45.0,
        dist: 6_000.0,
        heading: 225.0,
        speed: 90.0,
        elevation: 60.0,
        t0: 0,
        n: 30,
    });
    legs.push(Leg {
        object: 302,
        foe: false,
        kind: Kind::Submarine,
        bearing: 315.0,
        dist: 3_000.0,
        heading: 315.0,
        speed: 5.0,
        elevation: -8.0,
        t0: 0,
        n: 60,
    });
    legs
}

/// Contacts near the convoy: an allied vessel (401) 5 km east of own ship sailing
/// north at 3 m/s, a hostile aircraft (402) 15 km east flying west at 50 m/s over
/// it, and a hostile submarine (403) 3 km north-west of own ship creeping away
/// north-west at 2 m/s, inside the bow sonar sector.
pub(crate) fn script_contacts() -> Vec<Leg> {
    let leg = |object, kind, bearing, dist, heading, speed, elevation| Leg {
        object,
        foe: object != 401,
        kind,
        bearing,
        dist,
        heading,
        speed,
        elevation,
        t0: 0,
        n: 60,
    };
    vec![
        leg(401, Kind::Vessel, 90.0, 5_000.0, 0.0, 3.0, 4.0),
        leg(402, Kind::Aircraft, 90.0, 15_000.0, 270.0, 50.0, 80.0),
        leg(403, Kind::Submarine, 315.0, 3_000.0, 315.0, 2.0, -8.0),
    ]
}

/// A script by name: `approach`, `swarm`, `friends`, `contacts`, or `all` (the three in turn,
/// an hour apart).
pub(crate) fn script(name: &str) -> Option<Vec<Leg>> {
    let shift = |legs: Vec<Leg>, h: u64| {
        legs.into_iter().map(move |l| Leg {
            t0: l.t0 + h * 3_600_000,
            ..l
        })
    };
    match name {
        "approach" => Some(script_approach()),
        "swarm" => Some(script_swarm()),
        "friends" => Some(script_friends()),
        "contacts" => Some(script_contacts()),
        "all" => Some(
            shift(script_approach(), 0)
                .chain(shift(script_swarm(), 1))
                .chain(shift(script_friends(), 2))
                .collect(),
        ),
        _ => None,
    }
}

/// The reports of scripted legs, in time order (ties by object), with own ship
/// (stationary at [`SCRIPT_OWN`], course 0) reporting first and every 10 s.
pub(crate) fn scripted(legs: &[Leg]) -> Vec<Report> {
    let own = Point::new(SCRIPT_OWN.0, SCRIPT_OWN.1);
    let end = legs.iter().map(|l| l.t0 + l.n * 4_000).max().unwrap_or(0);
    let mut rows: Vec<(u64, u32, Report)> = Vec::new();
    let mut ms = 0;
    while ms <= end {
        let r = own_report(
            &Mover {
                object: 0,
                foe: false,
                kind: Kind::Vessel,
                pos: own,
                heading: 0.0,
                speed: 0.0,
                elevation: 0.0,
                pattern: Pattern::Approach,
                age: 0.0,
                turned: 0.0,
                switched: false,
                period: (0, 0),
            },
            0,
            ms,
        );
        rows.push((ms, 0, r));
        ms += 10_000;
    }
    for leg in legs {
        let start = Geodesic.destination(own, leg.bearing, leg.dist);
        for k in 0..leg.n {
            let pos = Geodesic.destination(start, leg.heading, leg.speed * 4.0 * k as f64);
            let m = Mover {
                object: leg.object,
                foe: leg.foe,
                kind: leg.kind,
                pos,
                heading: leg.heading,
                speed: leg.speed,
                elevation: leg.elevation,
                pattern: Pattern::Approach,
                age: 0.0,
                turned: 0.0,
                switched: false,
                period: (4_000, 4_000),
            };
            let ms = leg.t0 + k * 4_000;
            rows.push((ms, leg.object, track_report(&m, own, 0, ms)));
        }
    }
    rows.sort_by_key(|(ms, object, _)| (*ms, *object));
    rows.into_iter()
        .enumerate()
        .map(|(i, (_, _, r))| Report {
            id: i as u64 + 1,
            ..r
        })
        .collect()
}
