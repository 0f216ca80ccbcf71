#![allow(unreachable_pub, missing_docs)]

//! Reloading a running detector: the property that an output whose components all
//! kept their state detects what the new net would have from the start, and one
//! whose components all started empty what the new net started at the reload
//! would; and hand-checked cases (an edited zone, a waiting `Seq` token, a state,
//! a removed output, a counting index, ticks, key attributes laid out anew).

mod reference;

use std::collections::BTreeSet;

use ccpn::{Detection, Detector, DetectorOptions, Event, Net as CNet, Timestamp, Value};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use reference::against::to_event;
use reference::gen::{self, EvSpec, Family};
use reference::gen_states::{gen_state_net, state_ev_specs, state_events, StateEvSpec};
use reference::{Ev, Net, Op};

fn config() -> ProptestConfig {
    reference::proptest_config(192, 0x0e10_ad21, 2048)
}

fn op_zones(op: &Op) -> Vec<String> {
    match op {
        Op::Within { zones, .. } | Op::Inside { zones, .. } => zones.clone(),
        Op::DirBox { zone, .. } => vec![zone.clone()],
        _ => vec![],
    }
}

/// N2: the entries of `g`, with some of `n1`'s copied over it (each with every
/// entry and zone it depends on, so that its tree is `n1`'s), and the outputs of
/// both that survive.
fn mix(n1: &Net, g: &Net, picks: &[bool]) -> Net {
    let mut n2 = g.clone();
    n2.space = n1.space;
    n2.text_durations = n1.text_durations;
    let mut copied = BTreeSet::new();
    for (name, pick) in n1.events.keys().zip(picks.iter().cycle()) {
        if !pick {
            continue;
        }
        let mut stack = vec![name.clone()];
        while let Some(n) = stack.pop() {
            if !copied.insert(n.clone()) {
                continue;
            }
            let op = &n1.events[&n];
            for z in op_zones(op) {
                n2.zones.insert(z.clone(), n1.zones[&z].clone());
            }
            stack.extend(op.operands().into_iter().map(String::from));
            n2.events.insert(n, op.clone());
        }
    }
    for o in &n1.outputs {
        if copied.contains(o) && !n2.outputs.contains(o) {
            n2.outputs.push(o.clone());
        }
    }
    n2.outputs.sort();
    n2
}

fn options() -> DetectorOptions {
    DetectorOptions {
        max_tokens: usize::MAX,
        ..DetectorOptions::default()
    }
}

/// What a detection says, but its sequence number.
fn seqless(d: &Detection) -> String {
    let ids: Vec<_> = d.ids().collect();
    format!(
        "{} at {:?} from {:?} {:?} ids {ids:?} {:?}",
        d.event, d.time, d.start, d.location, d.detail
    )
}

fn of(out: &[Detection], name: &str) -> Vec<String> {
    out.iter()
        .filter(|d| &*d.event == name)
        .map(seqless)
        .collect()
}

/// Runs `det` on `events`, then finishes.
fn run(det: &mut Detector, events: &[Event]) -> Vec<Detection> {
    let mut out = Vec::new();
    for e in events {
        det.push_into(e.clone(), &mut out).expect("in time order");
    }
    out.extend(det.finish());
    out
}

fn check_reload(n1: &Net, n2: &Net, evs: &[Ev], k: usize) -> Result<(), TestCaseError> {
    let c1 =
        CNet::from_ron("n1.ron", &n1.to_ron()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let Ok(c2) = CNet::from_ron("n2.ron", &n2.to_ron()) else {
        // The mix may not be a net (an operand of the wrong kind): nothing to check.
        return Ok(());
    };
    let events: Vec<Event> = evs.iter().map(to_event).collect();
    let k = k.min(events.len());
    let (before, after) = events.split_at(k);

    let mut reloaded = Detector::with_options(&c1, options());
    for e in before {
        reloaded.push(e.clone()).expect("in time order");
    }
    let report = reloaded
        .reload(&c2)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let got = run(&mut reloaded, after);

    let mut whole = Detector::with_options(&c2, options());
    for e in before {
        whole.push(e.clone()).expect("in time order");
    }
    let from_start = run(&mut whole, after);
    let from_k = run(&mut Detector::with_options(&c2, options()), after);

    for name in &report.unchanged {
        prop_assert_eq!(
            of(&got, name),
            of(&from_start, name),
            "unchanged output {} differs from the new net run from the start\nN1 {}\nN2 {}\nreport {:?}",
            name,
            n1.to_ron(),
            n2.to_ron(),
            report
        );
    }
    for name in &report.restarted {
        prop_assert_eq!(
            of(&got, name),
            of(&from_k, name),
            "restarted output {} differs from the new net started at the reload\nN1 {}\nN2 {}\nreport {:?}",
            name,
            n1.to_ron(),
            n2.to_ron(),
            report
        );
    }
    // Nothing but the new net's outputs is detected.
    let outputs: Vec<&str> = c2.outputs().collect();
    prop_assert!(got.iter().all(|d| outputs.contains(&&*d.event)));
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Every family of operators, every context, windows and keys.
    #[test]
    fn reload_keeps_what_is_unchanged(
        c1 in prop::collection::vec(any::<u32>(), 120),
        c2 in prop::collection::vec(any::<u32>(), 120),
        picks in prop::collection::vec(any::<bool>(), 1..8),
        specs in gen::ev_specs(60),
        k in 0usize..60,
    ) {
        let n1 = gen::gen_net(&c1, Family::Mixed);
        let g = gen::gen_net(&c2, Family::Mixed);
        let n2 = mix(&n1, &g, &picks);
        let types = gen::n_types(&n1).max(gen::n_types(&n2));
        let evs = gen::events(&specs as &[EvSpec], types);
        check_reload(&n1, &n2, &evs, k)?;
    }

    /// States, `Starts`, `Ends`, `During`, `Count`, `P`.
    #[test]
    fn reload_keeps_unchanged_states(
        c1 in prop::collection::vec(any::<u32>(), 120),
        c2 in prop::collection::vec(any::<u32>(), 120),
        picks in prop::collection::vec(any::<bool>(), 1..8),
        specs in state_ev_specs(60),
        k in 0usize..60,
    ) {
        let n1 = gen_state_net(&c1);
        let g = gen_state_net(&c2);
        let n2 = mix(&n1, &g, &picks);
        let evs = state_events(&specs as &[StateEvSpec]);
        check_reload(&n1, &n2, &evs, k)?;
    }
}

// Hand-checked cases.

fn t(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s).unwrap()
}

fn net(src: &str) -> CNet {
    CNet::from_ron("hand.ron", src).unwrap()
}

fn names(out: &[Detection]) -> Vec<&str> {
    out.iter().map(|d| &*d.event).collect()
}

fn has(v: &[String], name: &str) -> bool {
    v.iter().any(|n| n == name)
}

const ZONES: &str = r#"Net(
    zones: { "z1": Rect(min: (0.0, 0.0), max: (10.0, 10.0)), "z2": Rect(min: (0.0, 0.0), max: (20.0, 20.0)) },
    events: {
        "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "w1": Within(of: "a", zones: ["z1"]), "w2": Within(of: "a", zones: ["z2"]),
        "s1": Seq(of: ["w1", "b"], within: 60.0), "s2": Seq(of: ["w2", "b"], within: 60.0),
    },
    outputs: ["s1", "s2"],
)"#;

#[test]
fn an_edited_zone_resets_only_its_readers() {
    let mut d = Detector::new(&net(ZONES));
    d.push(Event::new(1, "A", t(0.0)).at(5.0, 5.0)).unwrap();
    let edited = ZONES.replace("max: (10.0, 10.0)", "max: (10.0, 11.0)");
    let report = d.reload(&net(&edited)).unwrap();
    assert!(
        has(&report.reset, "w1") && has(&report.reset, "s1"),
        "{report:?}"
    );
    assert!(
        has(&report.kept, "w2") && has(&report.kept, "s2"),
        "{report:?}"
    );
    assert!(
        has(&report.kept, "a") && has(&report.kept, "b"),
        "{report:?}"
    );
    assert_eq!(report.unchanged, ["s2"]);
    assert_eq!(report.restarted, ["s1"]);
    let found = d.push(Event::new(2, "B", t(1.0))).unwrap();
    assert_eq!(names(&found), ["s2"]);
}

const SEQ: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
              "ab": Seq(of: ["a", "b"], within: 60.0),
    },
    outputs: ["ab"],
)"#;

#[test]
fn a_kept_seq_keeps_its_waiting_token_and_seq_goes_on() {
    let mut d = Detector::new(&net(SEQ));
    d.push(Event::new(1, "A", t(0.0))).unwrap();
    d.push(Event::new(2, "B", t(1.0))).unwrap();
    d.push(Event::new(3, "A", t(2.0))).unwrap();
    let v2 = SEQ.replace(
        "    },\n    outputs: [\"ab\"]",
        "\"ac\": Seq(of: [\"a\", \"c\"], within: 60.0) }, outputs: [\"ab\", \"ac\"]",
    );
    let report = d.reload(&net(&v2)).unwrap();
    assert_eq!(report.added, ["ac"]);
    assert!(has(&report.kept, "ab"));
    assert_eq!(report.unchanged, ["ab"]);
    assert_eq!(report.restarted, ["ac"]);
    assert!(d.stats().live_tokens >= 1, "an a waits in ab");
    let found = d.push(Event::new(4, "B", t(3.0))).unwrap();
    assert_eq!(names(&found), ["ab"]);
    assert_eq!(found[0].seq, 1, "numbering goes on");
    // The new Seq saw nothing before the reload.
    assert!(d.push(Event::new(5, "C", t(4.0))).unwrap().is_empty());
}

#[test]
fn an_edited_window_resets_the_operator() {
    let mut d = Detector::new(&net(SEQ));
    d.push(Event::new(1, "A", t(0.0))).unwrap();
    let report = d.reload(&net(&SEQ.replace("60.0", "90.0"))).unwrap();
    assert_eq!(report.reset, ["ab"]);
    assert_eq!(d.stats().live_tokens, 0, "the budget is recounted");
    assert!(d.push(Event::new(2, "B", t(1.0))).unwrap().is_empty());
}

const STATE: &str = r#"Net(
    events: { "on": Atomic(type: "ON"), "off": Atomic(type: "OFF"), "x": Atomic(type: "X"),
              "up": State(on: "on", off: "off", key: "ship"),
              "seen": During(of: "x", state: "up") },
    outputs: ["seen"],
)"#;

#[test]
fn a_kept_state_survives_a_new_key_layout() {
    let mut d = Detector::new(&net(STATE));
    let ship = |e: Event, s: &str| e.with("ship", Value::Str(s.into()));
    d.push(ship(Event::new(1, "ON", t(0.0)), "s1")).unwrap();
    // A new operator keyed on another attribute, met first in name order.
    let v2 = STATE.replace(
        r#""on": Atomic"#,
        r#""aa": Times(k: 2, of: "x", within: 10.0, key: "flag"), "on": Atomic"#,
    );
    let v2 = v2.replace(r#"outputs: ["seen"]"#, r#"outputs: ["seen", "aa"]"#);
    let report = d.reload(&net(&v2)).unwrap();
    assert!(
        has(&report.kept, "up") && has(&report.kept, "seen"),
        "{report:?}"
    );
    assert_eq!(report.added, ["aa"]);
    let found = d.push(ship(Event::new(2, "X", t(1.0)), "s1")).unwrap();
    assert_eq!(names(&found), ["seen"]);
    assert!(d
        .push(ship(Event::new(3, "X", t(2.0)), "s2"))
        .unwrap()
        .is_empty());
    let flag = |e: Event| e.with("flag", Value::Str("f".into()));
    d.push(flag(Event::new(4, "X", t(3.0)))).unwrap();
    let found = d.push(flag(Event::new(5, "X", t(4.0)))).unwrap();
    assert_eq!(names(&found), ["aa"]);
}

#[test]
fn a_removed_output_stops() {
    let both = SEQ.replace(
        "    },\n    outputs: [\"ab\"]",
        "\"ba\": Seq(of: [\"b\", \"a\"], within: 60.0) }, outputs: [\"ab\", \"ba\"]",
    );
    let mut d = Detector::new(&net(&both));
    d.push(Event::new(1, "B", t(0.0))).unwrap();
    d.push(Event::new(2, "A", t(1.0))).unwrap();
    let report = d.reload(&net(SEQ)).unwrap();
    assert_eq!(report.removed, ["ba"]);
    let found = d.push(Event::new(3, "B", t(2.0))).unwrap();
    assert_eq!(names(&found), ["ab"]);
    assert!(d.push(Event::new(4, "A", t(3.0))).unwrap().is_empty());
}

const TICKS: &str = r#"Net(
    events: { "s": Atomic(type: "S"), "e": Atomic(type: "E"),
              "tick": P(start: "s", period: 10.0, end: "e", within: 100.0),
              "other": P(start: "s", period: 5.0, end: "e", within: 100.0) },
    outputs: ["tick", "other"],
)"#;

#[test]
fn pending_ticks_follow_kept_components_only() {
    let mut d = Detector::new(&net(TICKS));
    d.push(Event::new(1, "S", t(0.0))).unwrap();
    let v2 = TICKS.replace("period: 5.0", "period: 7.0");
    let report = d.reload(&net(&v2)).unwrap();
    assert!(
        has(&report.kept, "tick") && has(&report.reset, "other"),
        "{report:?}"
    );
    let found = d.advance_to(t(25.0));
    assert_eq!(
        names(&found),
        ["tick", "tick"],
        "the reset P's ticks are dropped"
    );
}

const COUNT: &str = r#"Net(
    events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
              "three": Count(of: "a", n: 3, distance: 5.0, window: 60.0) },
    outputs: ["three"],
)"#;

#[test]
fn a_counting_index_is_kept_with_its_rules() {
    let mut d = Detector::new(&net(COUNT));
    d.push(Event::new(1, "A", t(0.0)).at(0.0, 0.0)).unwrap();
    d.push(Event::new(2, "A", t(1.0)).at(1.0, 0.0)).unwrap();
    let v2 = COUNT.replace(r#"outputs: ["three"]"#, r#"outputs: ["three", "b"]"#);
    let report = d.reload(&net(&v2)).unwrap();
    assert!(has(&report.kept, "three"), "{report:?}");
    let found = d.push(Event::new(3, "A", t(2.0)).at(2.0, 0.0)).unwrap();
    assert_eq!(names(&found), ["three"]);
    // Another rule on the same index: the index is laid out anew, and starts empty.
    let v3 = COUNT.replace(
        r#"window: 60.0) }"#,
        r#"window: 60.0), "two": Count(of: "a", n: 2, distance: 5.0, window: 60.0) }"#,
    );
    let report = d.reload(&net(&v3)).unwrap();
    assert!(has(&report.reset, "three"), "{report:?}");
    assert_eq!(d.stats().live_tokens, 0);
}

#[test]
fn a_net_of_another_space_is_refused() {
    let mut d = Detector::new(&net(SEQ));
    d.push(Event::new(1, "A", t(0.0))).unwrap();
    let wgs = SEQ.replace("Net(", "Net(space: Wgs84, ");
    assert!(d.reload(&net(&wgs)).is_err());
    let found = d.push(Event::new(2, "B", t(1.0))).unwrap();
    assert_eq!(names(&found), ["ab"], "the running net goes on");
}

#[test]
fn a_snapshot_after_a_reload_restores_on_the_new_net() {
    let mut d = Detector::new(&net(SEQ));
    d.push(Event::new(1, "A", t(0.0))).unwrap();
    let v2 = net(&SEQ.replace(r#"outputs: ["ab"]"#, r#"outputs: ["ab", "c"]"#));
    d.reload(&v2).unwrap();
    let mut restored = Detector::restore(&v2, &d.snapshot()).unwrap();
    let found = restored.push(Event::new(2, "B", t(1.0))).unwrap();
    assert_eq!(names(&found), ["ab"]);
}
