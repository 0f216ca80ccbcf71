//! What the fuzz targets check, shared by `fuzz_targets/*.rs` (run by `cargo fuzz`
//! on nightly Rust) and `tests/fuzz_corpus.rs` (which replays the corpora and the
//! regressions with `cargo test` on stable Rust).
//!
//! - `net_loader`: any bytes as a net file either load or are refused with problems;
//!   a net that loads draws, summarises and runs.
//! - `event_reader`: any bytes as an input of JSON Lines or CSV, in both spaces:
//!   every event parsed has a time in range and a valid location.
//! - `detector`: random nets and streams (decoded from the bytes) through the
//!   detector, compared with the brute-force reference of `tests/reference`, and
//!   with a detector restored from its snapshot every few events.
//! - `states`: random nets mixing the states (`Inside` with margins, `Stationary`,
//!   `Silent`, `Close`, `Lasting`, `AllOf`, `AnyOf`, `Unless`, `Starts`, `Ends`,
//!   `During`) with `Seq`, `Within`, `P` and `Count`, over streams with exact-time
//!   ties, jitter at boundaries and missing keys, compared with the reference
//!   (`phase` and `start` included), and restored from a snapshot after every event.
//! - `stream_bounds`, `net_shapes`: hostile streams through the operators that can
//!   multiply their work, and nets of every shape and size, within bounds of time
//!   per event, memory and caps (`bounds.rs`).
//! - `cluster_handshake`: any bytes as what a stranger sends a cluster process
//!   (`ccpn-run`'s handshake decoding, included from its source: it is no part of
//!   the library): no panic, and what decodes encodes back to the same bytes.

#![allow(dead_code)] // each fuzz target uses one of the functions

#[path = "../tests/reference/mod.rs"]
#[allow(dead_code, unreachable_pub, missing_docs, clippy::all)]
mod reference;

#[path = "bounds.rs"]
mod bounds;
// Each fuzz target uses one of the checks; the others are unused there.
#[allow(unused_imports)]
pub(crate) use bounds::{net_shapes, stream_bounds};

#[path = "../src/bin/ccpn-run/dataflow/cluster/handshake.rs"]
#[allow(dead_code, unreachable_pub, missing_docs, clippy::all)]
mod handshake;

use ccpn::io::read::{is_blank, Format, LineParser, Lines};
use ccpn::{Detector, Event, Net, Space, Timestamp};

use reference::gen::{self, EvSpec, Family};
use reference::gen_states::{self, StateEvSpec};
use reference::Val;

/// Any bytes as a net file.
pub(crate) fn net_loader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // GeoJSON zones name files to read: a fuzzer could name /dev/stdin.
    if text.contains("GeoJson") {
        return;
    }
    let net = match Net::from_ron("fuzz.ron", text) {
        Ok(net) => net,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "a refusal says why");
            return;
        }
    };
    assert!(net.to_dot().starts_with("digraph"));
    assert!(!net.summary().is_empty());
    let types: Vec<String> = net.event_types().map(str::to_owned).collect();
    let mut detector = Detector::new(&net);
    for i in 0..16 {
        let Some(ty) = types.get(i % types.len().max(1)) else {
            break;
        };
        let t = Timestamp::from_secs_f64(i as f64 * 7.0).expect("time in range");
        let ev = Event::new(i as i64, ty, t)
            .at(i as f64, 0.5)
            .with("speed", i as f64)
            .with("iff", "foe");
        let found = detector.push(ev).expect("events in time order");
        check_ids(&found, i as i64);
    }
    let found = detector.finish();
    check_ids(&found, 15);
}

/// Every detection's constituents are events pushed so far.
fn check_ids(found: &[ccpn::Detection], last: i64) {
    for d in found {
        for id in d.ids() {
            match id {
                ccpn::Id::Int(i) => assert!((0..=last).contains(i), "{d:?}"),
                other => panic!("unexpected id {other:?}"),
            }
        }
    }
}

/// Any bytes as an input stream, in both spaces.
pub(crate) fn event_reader(data: &[u8]) {
    for space in [Space::Planar, Space::Wgs84] {
        let mut lines = Lines::new(data, 4096);
        let mut parser: Option<LineParser> = None;
        let json = LineParser::json(space);
        while let Some(next) = lines.next_line() {
            let Ok((_, line)) = next else {
                break;
            };
            let Ok(line) = line else {
                continue;
            };
            if is_blank(line) {
                continue;
            }
            if let Ok(ev) = json.parse(line) {
                check_event(&ev, space);
            }
            let p = match &parser {
                Some(p) => p,
                None => {
                    if Format::detect(line) == Format::Csv {
                        if let Ok(p) = LineParser::csv(line, space) {
                            parser = Some(p);
                        }
                        continue;
                    }
                    parser.insert(LineParser::json(space))
                }
            };
            if let Ok(ev) = p.parse(line) {
                check_event(&ev, space);
            }
        }
    }
}

fn check_event(ev: &Event, space: Space) {
    assert!(ev.time >= Timestamp::MIN && ev.time <= Timestamp::MAX);
    if let Some(p) = ev.location {
        assert!(p.x.is_finite() && p.y.is_finite(), "{ev:?}");
        if space == Space::Wgs84 {
            assert!(p.y.abs() <= 90.0 && p.x.abs() <= 180.0, "{ev:?}");
        }
    }
}

/// A random net and stream decoded from the bytes, through ccpn and the reference.
pub(crate) fn detector(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let family = [
        Family::Pairing,
        Family::Not,
        Family::Any,
        Family::Interval,
        Family::Mixed,
    ][first as usize % 5];
    let (head, tail) = rest.split_at(rest.len().min(120));
    let choices: Vec<u32> = head.iter().map(|&b| u32::from(b)).collect();
    let specs: Vec<EvSpec> = tail.chunks_exact(6).take(60).map(spec).collect();
    if specs.len() < 2 {
        return;
    }
    let net = gen::gen_net(&choices, family);
    let events = gen::events(&specs, gen::n_types(&net));
    // Nested unrestricted contexts can make the occurrences grow exponentially with
    // the stream: such inputs are not compared (nor run again restored).
    match reference::against::compare_bounded(&net, &events, 100_000) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => panic!("{e}"),
    }
    let every = 1 + usize::from(first / 5) % 5;
    let straight = reference::against::run_ccpn(&net, &events);
    let restarted = reference::against::run_ccpn_restarting(&net, &events, Some(every));
    assert_eq!(
        straight,
        restarted,
        "restored every {every} events\n{}",
        net.to_ron()
    );
}

/// A random net with states and a stream decoded from the bytes, through ccpn and
/// the reference, and through ccpn restored from its snapshot after every event.
pub(crate) fn states(data: &[u8]) {
    let (head, tail) = data.split_at(data.len().min(160));
    let choices: Vec<u32> = head.iter().map(|&b| u32::from(b)).collect();
    let specs: Vec<StateEvSpec> = tail.chunks_exact(6).take(50).map(state_spec).collect();
    if specs.len() < 5 {
        return;
    }
    let net = gen_states::gen_state_net(&choices);
    let events = gen_states::state_events(&specs);
    // Skipped: nets whose occurrences explode, and streams with a distance a
    // rounding error from its threshold (either side is right there).
    match reference::against::compare_found(&net, &events, 20_000) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => panic!("{e}"),
    }
    let straight = reference::against::ccpn_lines(&net, &events, None).expect("runs");
    let restarted = reference::against::ccpn_lines(&net, &events, Some(1)).expect("runs");
    assert_eq!(
        straight,
        restarted,
        "restored after every event\n{}",
        net.to_ron()
    );
}

/// One report of a states stream from six bytes, with about the weights of the
/// states property tests (ties, a quarter-unit jitter, unlocated reports, missing
/// ships).
fn state_spec(b: &[u8]) -> StateEvSpec {
    let jitter = |v: u8| match v % 8 {
        0..=5 => 0,
        6 => 1,
        _ => -1,
    };
    StateEvSpec {
        dt: [0, 0, 0, 1, 1, 1, 2, 2, 3, 5][usize::from(b[0]) % 10],
        ty: b[1] % 4,
        loc: (!b[2].is_multiple_of(8))
            .then(|| (b[3] % 21, b[4] % 21, jitter(b[2] / 8), jitter(b[2] / 64))),
        speed: (!b[5].is_multiple_of(5)).then_some(b[5] / 5 % 21),
        ship: (b[0] / 10 % 6 < 5).then_some(b[1] / 4 % 3),
        kind: (b[3] / 21 % 10 < 7).then_some(b[4] / 21 % 2),
    }
}

/// One input event from six bytes, with about the weights of the property tests.
fn spec(b: &[u8]) -> EvSpec {
    EvSpec {
        dt: [0, 0, 0, 0, 1, 1, 1, 2, 3][usize::from(b[0]) % 9],
        ty: b[1] % 4,
        loc: (!b[2].is_multiple_of(10)).then_some((b[3] % 11, b[4] % 11)),
        speed: match b[5] % 10 {
            0..=6 => Some(Val::Num(f64::from(b[5] / 10 % 21))),
            7 => Some(Val::Str("fast".into())),
            _ => None,
        },
        kind: match b[2] / 10 % 10 {
            0..=6 => Some(Val::Str(["x", "y", "z"][usize::from(b[1] / 4) % 3].into())),
            7 => Some(Val::Num(1.0)),
            _ => None,
        },
        flag: (b[3] / 11 % 10 < 7).then_some(b[4] & 1 == 1),
        ship: (b[4] / 11 % 20 < 17).then_some(b[0] % 3),
    }
}

/// Any bytes as what a stranger sends: decoded as the accepting process reads them
/// (the prefix, then a whole hello, then a verdict byte).
pub(crate) fn cluster_handshake(data: &[u8]) {
    use handshake::{check_prefix, Hello, Malformed, Verdict, HELLO_LEN, PREFIX_LEN};
    let said = |e: Malformed| assert!(!e.to_string().is_empty(), "a refusal says why");
    let prefix_ok = data.get(..PREFIX_LEN).map(check_prefix);
    match Hello::decode(data) {
        Ok(h) => {
            assert_eq!(&h.encode()[..], data, "one encoding of a hello");
            assert!(h.from < h.processes && h.from != h.to, "{h:?}");
            assert_eq!(prefix_ok, Some(Ok(())));
        }
        Err(e) => said(e),
    }
    if let Some(first) = data.get(..HELLO_LEN) {
        match (Hello::decode(first), prefix_ok) {
            (Ok(h), _) => assert_eq!(Hello::decode(&h.encode()), Ok(h)),
            (Err(Malformed::Length { .. }), _) => panic!("a whole hello's length"),
            (Err(e), Some(Err(p))) => assert_eq!(e, p, "the prefix is read first"),
            (Err(e), _) => said(e),
        }
    }
    if let Some(&b) = data.get(HELLO_LEN) {
        match Verdict::decode(b) {
            Ok(v) => assert_eq!(v.byte(), b),
            Err(e) => said(e),
        }
    }
}
