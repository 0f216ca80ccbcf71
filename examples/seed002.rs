//! The experiment of "An Indexing Method of Continuous Spatiotemporal Queries for
//! Stream Data Processing Rules of Detected Target Objects", reproduced on ccpn.
//!
//! For each rule set of the paper's table 2 (50–100 rules mixing radar circles, sonar
//! sectors and rectangular "plot dist" areas) and each number of target objects (500,
//! 2,500, 4,500; uniform or 60/20/20 mix), it generates the targets' reports over
//! `DURATION` seconds with `examples/common/targets.rs`, then times the detector over
//! them with the zone R*-tree and with every zone tested (`zone_index: false`), best
//! of five alternating runs each, and prints one table row per cell. Detections are checked equal between the two.
//!
//! ```text
//! cargo run --release --example seed002 [-- [--tree-only] [DURATION_S [RULES OBJECTS]]]
//! ```
//!
//! With `RULES OBJECTS`, only the cells of that rule set and number of objects run
//! (both mixes); with `--tree-only`, only the R*-tree runs (the scan column is
//! empty): what a profiler wants.

use std::fmt::Write as _;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use ccpn::io::read::LineParser;
use ccpn::{Detector, DetectorOptions, Event, Net};

#[path = "common/targets.rs"]
mod targets;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Table 2: rules, and the shares of radar, sonar and plot-dist rules.
const TABLE_2: [(usize, f64, f64); 6] = [
    (50, 0.34, 0.32),
    (60, 0.41, 0.28),
    (70, 0.44, 0.27),
    (80, 0.43, 0.25),
    (90, 0.42, 0.24),
    (100, 0.25, 0.25),
];

/// The paper's table 4 (uniform objects), milliseconds: (rules, objects, indexed, original).
const TABLE_4: [(usize, usize, u32, u32); 18] = [
    (50, 500, 220, 409),
    (50, 2500, 1071, 1448),
    (50, 4500, 2143, 2211),
    (60, 500, 226, 521),
    (60, 2500, 1163, 1444),
    (60, 4500, 2183, 2500),
    (70, 500, 245, 662),
    (70, 2500, 1041, 1512),
    (70, 4500, 2303, 2736),
    (80, 500, 222, 762),
    (80, 2500, 1061, 1893),
    (80, 4500, 1631, 2958),
    (90, 500, 226, 913),
    (90, 2500, 1237, 2183),
    (90, 4500, 2450, 3463),
    (100, 500, 246, 1057),
    (100, 2500, 1356, 2169),
    (100, 4500, 3042, 3599),
];

/// Entity events the rules filter on (the paper's entity hash: IFF and kind).
const ENTITIES: [(&str, &str); 6] = [
    ("enemy_aircraft", "iff == \"foe\" && kind == \"aircraft\""),
    ("enemy_vessel", "iff == \"foe\" && kind == \"vessel\""),
    ("enemy_submarine", "iff == \"foe\" && kind == \"submarine\""),
    ("ally_aircraft", "iff == \"friend\" && kind == \"aircraft\""),
    ("ally_vessel", "iff == \"friend\" && kind == \"vessel\""),
    (
        "ally_submarine",
        "iff == \"friend\" && kind == \"submarine\"",
    ),
];

/// A net of `rules` `Within` rules over seeded zones around own ship's start.
fn rule_net(rules: usize, radar: f64, sonar: f64, seed: u64) -> String {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (lon0, lat0) = targets::OWN_START;
    let mut zones = String::new();
    let mut events = String::new();
    for (name, when) in ENTITIES {
        let _ = writeln!(
            events,
            "        {name:?}: Atomic(type: \"track\", when: {when:?}),"
        );
    }
    let mut outputs = Vec::new();
    let (n_radar, n_sonar) = (
        (rules as f64 * radar).round() as usize,
        (rules as f64 * sonar).round() as usize,
    );
    for r in 0..rules {
        let (lon, lat): (f64, f64) = (
            lon0 + rng.random_range(-0.6..0.6),
            lat0 + rng.random_range(-0.6..0.6),
        );
        let zone = if r < n_radar {
            format!(
                "Circle(center: ({lon:.4}, {lat:.4}), radius: {:.0})",
                rng.random_range(5_000.0..20_000.0)
            )
        } else if r < n_radar + n_sonar {
            let from: f64 = rng.random_range(0.0..360.0);
            format!(
                "Sector(center: ({lon:.4}, {lat:.4}), radius: {:.0}, from_deg: {from:.0}, to_deg: {:.0})",
                rng.random_range(5_000.0..15_000.0),
                (from + 90.0) % 360.0
            )
        } else {
            let (w, h): (f64, f64) = (rng.random_range(0.05..0.2), rng.random_range(0.05..0.2));
            format!(
                "Rect(min: ({lon:.4}, {lat:.4}), max: ({:.4}, {:.4}))",
                lon + w,
                lat + h
            )
        };
        let _ = writeln!(zones, "        \"z{r}\": {zone},");
        let _ = writeln!(
            events,
            "        \"r{r}\": Within(of: {:?}, zones: [\"z{r}\"]),",
            ENTITIES[r % 6].0
        );
        outputs.push(format!("\"r{r}\""));
    }
    format!(
        "Net(\n    space: Wgs84,\n    zones: {{\n{zones}    }},\n    events: {{\n{events}    }},\n    outputs: [{}],\n)",
        outputs.join(", ")
    )
}

/// Runs `events` through `net`; (milliseconds, detections). The events are copied
/// before the clock starts: the detector takes each by value, as from a reader.
fn run(net: &Net, events: &[Event], zone_index: bool) -> (f64, usize) {
    let events = events.to_vec();
    let mut d = Detector::with_options(
        net,
        DetectorOptions {
            zone_index,
            ..DetectorOptions::default()
        },
    );
    let mut out = Vec::new();
    let start = Instant::now();
    for e in events {
        d.push_into(e, &mut out).expect("generated in time order");
    }
    out.extend(d.finish());
    (start.elapsed().as_secs_f64() * 1e3, out.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tree_only = args.iter().any(|a| a == "--tree-only");
    let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
    let duration: f64 = numbers.next().and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let only: Option<(usize, usize)> = {
        let mut rest = numbers.map(|s| s.parse().ok());
        match (rest.next().flatten(), rest.next().flatten()) {
            (Some(r), Some(o)) => Some((r, o)),
            _ => None,
        }
    };
    println!("Each cell: the targets' reports over {duration} s (own ship included), times in ms.");
    println!();
    println!("| rules | objects | mix | events | ccpn, R*-tree | ccpn, every zone | detections | paper: indexed Rete | paper: original (Drools) | Drools ÷ ccpn |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for mix in [targets::Mix::Uniform, targets::Mix::NonUniform] {
        for objects in [500, 2500, 4500] {
            if only.is_some_and(|(_, o)| o != objects) {
                continue;
            }
            let scenario = targets::Scenario::new(7, objects, duration, mix);
            let lines: Vec<String> = scenario.map(|r| r.json()).collect();
            for (rules, radar, sonar) in TABLE_2 {
                if only.is_some_and(|(r, _)| r != rules) {
                    continue;
                }
                let net =
                    Net::from_ron("seed002.ron", &rule_net(rules, radar, sonar, rules as u64))
                        .unwrap_or_else(|e| panic!("{e}"));
                let parser = LineParser::json(net.space()).with_known_names(net.names_read());
                let events: Vec<Event> = lines
                    .iter()
                    .map(|l| parser.parse(l.as_bytes()).expect("generated line"))
                    .collect();
                // Best of five runs of each, alternating: the first run of a cell pays
                // for warming the allocator and caches, whichever mode it is.
                let (mut tree_ms, mut scan_ms) = (f64::INFINITY, f64::INFINITY);
                let mut found = 0;
                for _ in 0..5 {
                    let (ms, n) = run(&net, &events, true);
                    tree_ms = tree_ms.min(ms);
                    found = n;
                    if tree_only {
                        continue;
                    }
                    let (ms, n) = run(&net, &events, false);
                    scan_ms = scan_ms.min(ms);
                    assert_eq!(found, n, "the index changes no detection");
                }
                let paper = TABLE_4
                    .iter()
                    .find(|p| p.0 == rules && p.1 == objects && mix == targets::Mix::Uniform)
                    .map_or(
                        ("—".to_owned(), "—".to_owned(), "—".to_owned()),
                        |p| {
                            (
                                p.2.to_string(),
                                p.3.to_string(),
                                format!("{:.0}", f64::from(p.3) / tree_ms),
                            )
                        },
                    );
                let mix_name = if mix == targets::Mix::Uniform {
                    "uniform"
                } else {
                    "60/20/20"
                };
                let scan = if tree_only {
                    "—".to_owned()
                } else {
                    format!("{scan_ms:.1}")
                };
                println!(
                    "| {rules} | {objects} | {mix_name} | {} | {tree_ms:.1} | {scan} | {found} | {} | {} | {} |",
                    events.len(),
                    paper.0,
                    paper.1,
                    paper.2
                );
            }
        }
    }
}
