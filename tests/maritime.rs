//! `nets/maritime.ron` on the shipped hour of New York Harbor AIS
//! (`examples/ais/ny_harbor_2020-06-30.csv`, read as it comes through a field
//! mapping): one detection of every output looked up in the raw reports and explained,
//! then invariants over every detection of the hour.

use std::collections::HashMap;
use std::path::PathBuf;

use ccpn::io::read::{EventReader, FieldMap};
use ccpn::{Detail, Detection, Detector, Event, Net, Phase, Value};

/// The net's directory and the sample.
fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The sample's reports, as the net reads them: MMSI is both the id and the key.
fn reports() -> Vec<Event> {
    let file = std::fs::File::open(path("examples/ais/ny_harbor_2020-06-30.csv")).unwrap();
    let fields = FieldMap::new()
        .field("time", "BaseDateTime")
        .and_then(|f| f.field("id", "MMSI"))
        .and_then(|f| f.field("MMSI", "MMSI"))
        .and_then(|f| f.default_type("ais"))
        .unwrap();
    let events: Vec<Event> = EventReader::new(std::io::BufReader::new(file), ccpn::Space::Wgs84)
        .with_fields(fields)
        .map(|e| e.expect("every report of the sample reads"))
        .collect();
    assert_eq!(events.len(), 8689);
    events
}

/// Every detection of the hour, in order.
fn detections(events: &[Event]) -> Vec<Detection> {
    let net = Net::from_file(path("nets/maritime.ron")).unwrap();
    assert!(net.warnings().is_empty(), "{:?}", net.warnings());
    let mut d = Detector::new(&net);
    let mut out = Vec::new();
    for e in events {
        out.extend(d.push(e.clone()).unwrap());
    }
    out.extend(d.finish());
    out
}

fn num(e: &Event, attr: &str) -> Option<f64> {
    match e.attr(attr) {
        Some(Value::Num(n)) => Some(*n),
        _ => None,
    }
}

fn mmsi(e: &Event) -> u64 {
    num(e, "MMSI").unwrap() as u64
}

/// `HH:MM:SS` of the hour.
fn clock(t: ccpn::Timestamp) -> String {
    t.to_rfc3339()[11..19].to_owned()
}

fn phase(d: &Detection) -> Phase {
    match &d.detail {
        Detail::Transition { phase, .. } => *phase,
        other => panic!("{}: not a transition: {other:?}", d.event),
    }
}

/// The first start of `output` for vessel `mmsi`.
fn first_start<'d>(ds: &'d [Detection], output: &str, vessel: u64) -> &'d Detection {
    ds.iter()
        .find(|d| {
            &*d.event == output
                && phase(d) == Phase::Start
                && d.members().any(|m| mmsi(m) == vessel)
        })
        .unwrap_or_else(|| panic!("no `{output}` start for {vessel}"))
}

/// Distance in metres on a sphere of the WGS84 mean radius: within 0.5 % of the
/// geodesic, enough for these checks.
fn metres(a: &Event, b: &Event) -> f64 {
    let (p, q) = (a.location.unwrap(), b.location.unwrap());
    let (la1, la2) = (p.y.to_radians(), q.y.to_radians());
    let dlat = la2 - la1;
    let dlon = (q.x - p.x).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6_371_008.8 * h.sqrt().asin()
}

fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

#[test]
fn one_detection_of_each_output_checked_against_the_reports() {
    let events = reports();
    let ds = detections(&events);

    // JUSTINE (368564000), a passenger vessel, comes down the Upper Bay from the north
    // at 10 kn (00:00:57 at 40.69302 N, 74.03688 W; 00:02:25 at 40.68986, -74.04052:
    // still outside the Liberty Island zone) and is inside it at 00:03:55 (40.68794,
    // -74.04229, 2.3 kn), more than 30 m past its edge; it slows to 1 kn alongside the
    // island and leaves at 00:09:58 (40.68898, -74.03978, 9 kn), the first report
    // 30 m clear of it again (00:08:55, at -74.04191, is still inside).
    let r = first_start(&ds, "restricted", 368_564_000);
    assert_eq!(clock(r.time), "00:03:55");
    let end = ds
        .iter()
        .find(|d| &*d.event == "restricted" && phase(d) == Phase::End)
        .unwrap();
    assert_eq!(
        (clock(end.start), clock(end.time)),
        ("00:03:55".into(), "00:09:58".into())
    );

    // HEATHER ANNE (338159098) and BARBARO (338325609), pleasure craft (type 37), lie
    // still in Sandy Hook Bay, 85 m apart: BARBARO's report at 00:20:45 (0.0 kn) pairs
    // with HEATHER ANNE's at 00:19:55 (0.0 kn), 50 s earlier, so the pair is side by
    // side from 00:20:45; HEATHER ANNE's 00:22:56 report keeps it so, and ten minutes
    // later, at 00:30:45, the encounter starts, with both reports as its members.
    let e = first_start(&ds, "encounter", 338_159_098);
    assert_eq!(clock(e.time), "00:30:45");
    let members: Vec<(u64, String)> = e.members().map(|m| (mmsi(m), clock(m.time))).collect();
    assert_eq!(
        members,
        [
            (338_159_098, "00:19:55".into()),
            (338_325_609, "00:20:45".into())
        ]
    );

    // EAST COAST (367185680), a towing vessel, reports once, at 00:00:16 at the
    // northern edge of the picture (40.88444 N, 73.92799 W, 7 kn north-east), and
    // never again: dark from 00:10:16, with that report as its member, and no end.
    let dark = first_start(&ds, "dark", 367_185_680);
    assert_eq!(clock(dark.time), "00:10:16");
    assert_eq!(dark.members().count(), 1);
    assert!(!ds.iter().any(|d| &*d.event == "dark"
        && phase(d) == Phase::End
        && d.members().any(|m| mmsi(m) == 367_185_680)));

    // CAPTAIN DAVE III (367610930) lies in the Lower Bay off Rockaway (40.52668 N,
    // 73.96187 W), at 0.1 kn from its first report at 00:00:04, far from any port or
    // anchorage: stopped outside port 10 minutes later, at 00:10:04, and loitering
    // (under 2 kn) 30 minutes later, at 00:30:04, both anchored on that first report.
    let stopped = first_start(&ds, "stopped_outside_port", 367_610_930);
    assert_eq!(clock(stopped.time), "00:10:04");
    let loiter = first_start(&ds, "loitering", 367_610_930);
    assert_eq!(clock(loiter.time), "00:30:04");
    let anchor = loiter.members().next().unwrap();
    assert_eq!(
        (clock(anchor.time), num(anchor, "SOG")),
        ("00:00:04".into(), Some(0.1))
    );

    // GENESIS VIGILANT (338531000), a towing vessel, is at 10.4 kn in the Upper Bay
    // (40.64413 N, 74.05089 W) in the first second of the hour: speeding at once.
    let fast = first_start(&ds, "speeding", 338_531_000);
    assert_eq!(clock(fast.time), "00:00:00");
    assert_eq!(num(fast.members().next().unwrap(), "SOG"), Some(10.4));

    // CG SHRIKE (366999618), a Coast Guard boat at 19 kn, heads 349 while its course
    // over ground is -61.8 (298.2): 50.8 degrees apart, and still 47-53 apart at
    // 00:01:07 and 00:02:13. Drifting from 00:00:00, for 3 minutes by 00:03:00.
    let drift = first_start(&ds, "drifting", 366_999_618);
    assert_eq!(clock(drift.time), "00:03:00");
    let first = drift.members().next().unwrap();
    assert!(
        (angle_diff(num(first, "COG").unwrap(), num(first, "Heading").unwrap()) - 50.8).abs()
            < 1e-9
    );
}

#[test]
fn invariants_over_the_hour() {
    let events = reports();
    let ds = detections(&events);
    let mut count: HashMap<&str, usize> = HashMap::new();
    for d in &ds {
        *count.entry(&d.event).or_default() += 1;
    }
    for output in [
        "loitering",
        "encounter",
        "dark",
        "stopped_outside_port",
        "speeding",
        "drifting",
        "restricted",
    ] {
        assert!(
            count.get(output).copied().unwrap_or(0) > 0,
            "no `{output}`: {count:?}"
        );
    }
    // Each vessel's reports in time order, to look up the one before a moment.
    let mut by_vessel: HashMap<u64, Vec<&Event>> = HashMap::new();
    for e in &events {
        by_vessel.entry(mmsi(e)).or_default().push(e);
    }
    for d in &ds {
        let members: Vec<&Event> = d.members().collect();
        let start = phase(d) == Phase::Start;
        match (&*d.event, start) {
            // Going dark: the member is the vessel's last report before the start,
            // exactly ten minutes before it; the end is the next report.
            ("dark", true) => {
                let [m] = members[..] else {
                    panic!("dark with {} members", members.len())
                };
                assert_eq!(d.time.since(m.time), 600_000_000, "{d:?}");
                let own = &by_vessel[&mmsi(m)];
                assert!(
                    !own.iter().any(|e| e.time > m.time && e.time <= d.time),
                    "{d:?}"
                );
            }
            ("dark", false) => {
                let m = members.last().unwrap();
                assert!(d.time.since(d.start) >= 0);
                let own = &by_vessel[&mmsi(m)];
                let before = own.iter().rfind(|e| e.time < m.time).unwrap();
                assert!(m.time.since(before.time) >= 600_000_000, "{d:?}");
            }
            // An encounter: two different vessels, both under 2 kn, within 500 m and
            // 5 minutes of each other when it began, ten minutes before the start.
            ("encounter", true) => {
                let [a, b] = members[..] else {
                    panic!("encounter with {} members", members.len())
                };
                assert_ne!(mmsi(a), mmsi(b));
                assert!(metres(a, b) <= 500.0 * 1.005, "{} m", metres(a, b));
                assert!(b.time.since(a.time) <= 300_000_000);
                for m in [a, b] {
                    assert!(num(m, "SOG").unwrap() < 2.0);
                    let tug =
                        [31.0, 32.0, 50.0, 52.0].contains(&num(m, "VesselType").unwrap_or(0.0));
                    assert!(!tug, "{d:?}");
                }
                assert_eq!(d.time.since(b.time.max(a.time)), 600_000_000, "{d:?}");
            }
            // Speeding starts at a report over 5 kn, or 5+ kn reported before entering.
            ("speeding", true) => {
                let m = members.last().unwrap();
                let own = &by_vessel[&mmsi(m)];
                let latest = own.iter().rfind(|e| e.time <= d.time).unwrap();
                assert!(num(latest, "SOG").unwrap() > 5.0, "{d:?}");
            }
            // Drifting began three minutes before the start, at a report under way with
            // course and heading more than 40 degrees apart.
            ("drifting", true) => {
                let m = members[0];
                assert!(num(m, "SOG").unwrap() > 2.7);
                let h = num(m, "Heading").unwrap();
                assert!(h < 360.0 && angle_diff(num(m, "COG").unwrap(), h) > 40.0);
                assert_eq!(d.time.since(m.time), 180_000_000);
            }
            ("stopped_outside_port", true) => {
                assert!(num(members[0], "SOG").unwrap() < 0.5);
                assert_eq!(d.time.since(members[0].time), 600_000_000);
            }
            ("loitering", true) => {
                assert!(num(members[0], "SOG").unwrap() < 2.0);
                assert_eq!(d.time.since(members[0].time), 1_800_000_000);
            }
            // Inside the waters around Liberty or Ellis Island: within 500 m of one.
            ("restricted", true) => {
                let m = members.last().unwrap();
                let (lon, lat) = (m.location.unwrap().x, m.location.unwrap().y);
                let near = |clon: f64, clat: f64| {
                    ((lon - clon) * 84_300.0).hypot((lat - clat) * 111_000.0) < 500.0
                };
                assert!(near(-74.0445, 40.6892) || near(-74.0397, 40.6987), "{d:?}");
            }
            _ => {}
        }
    }
}
