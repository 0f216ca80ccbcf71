#![allow(unreachable_pub, missing_docs)]

//! Property test: ccpn's `Detector` against the brute-force reference in
//! `tests/reference/` on random nets mixing states (every state operator) with
//! `Starts`, `Ends`, `During`, `Seq`, `And`, `Within`, `Or`, `P` and `Count`, over
//! streams made for the states' corner cases (jitter at zone boundaries and
//! margins, exact-time ties, missing keys, unlocated reports). Detections are
//! compared with their `phase` and, on ends, `start`. A second property restores
//! the detector from its snapshot after every event.

mod reference;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use reference::against::{ccpn_lines, compare_found};
use reference::gen::Choices;
use reference::gen_states::{gen_state_net, state_ev_specs, state_events};
use reference::{Net, Op, Zone};

fn config() -> ProptestConfig {
    reference::proptest_config(256, 0x0057_47e5, 4096)
}

proptest! {
    #![proptest_config(config())]

    /// States, the operators reading them and those they read, nested.
    #[test]
    fn states_match_reference(
        choices in prop::collection::vec(any::<u32>(), 160),
        specs in state_ev_specs(50),
    ) {
        let net = gen_state_net(&choices);
        let events = state_events(&specs);
        // Nets whose occurrences explode (nested unrestricted pairings) are skipped.
        compare_found(&net, &events, 20_000).map_err(TestCaseError::fail)?;
    }

    /// A detector of a net with states, dropped and restored from its snapshot after
    /// every event, writes the same lines (`seq`, `phase` and `start` included) as one
    /// left running: state places, per-key anchors and latest occurrences, armed
    /// timed transitions and `Close` pairs all survive, and so do the counters.
    #[test]
    fn state_snapshots_change_nothing(
        choices in prop::collection::vec(any::<u32>(), 160),
        specs in state_ev_specs(50),
    ) {
        let net = gen_state_net(&choices);
        let events = state_events(&specs);
        // Nets whose occurrences explode (nested unrestricted pairings) are skipped.
        if reference::Reference::run_found_bounded(&net, &events, 20_000).is_some() {
            let straight = ccpn_lines(&net, &events, None).map_err(TestCaseError::fail)?;
            let restarted = ccpn_lines(&net, &events, Some(1)).map_err(TestCaseError::fail)?;
            prop_assert_eq!(straight, restarted, "net:\n{}", net.to_ron());
        }
    }
}

/// A net of two `Inside` states (margins 0 and more, keyed by ship or not) over 30
/// zones of every kind scattered on the reports' square, off the reports' quarter
/// grid by 0.3137 (so that no report is exactly a margin from an edge).
fn many_zones_net(choices: &[u32]) -> Net {
    let mut ch = Choices::new(choices);
    let mut net = Net::default();
    let off = 0.3137;
    for i in 0..30 {
        let (x, y) = (ch.pick(10) as f64 + off, ch.pick(10) as f64 + off);
        let (w, h) = (0.5 + ch.pick(4) as f64 / 2.0, 0.5 + ch.pick(4) as f64 / 2.0);
        let zone = match ch.pick(5) {
            0 => Zone::Rect {
                min: (x, y),
                max: (x + w, y + h),
            },
            1 => Zone::Circle {
                center: (x, y),
                radius: w,
            },
            2 => Zone::Polygon(vec![(x, y), (x + w, y), (x, y + h)]),
            3 => Zone::Sector {
                center: (x, y),
                radius: w + 0.5,
                from_deg: 45.0 * ch.pick(8) as f64,
                to_deg: 45.0 * ch.pick(8) as f64 + 90.0,
            },
            _ => Zone::Line {
                points: vec![(x, y), (x + w, y + h)],
                width: 0.5,
            },
        };
        net.zones.insert(format!("z{i:02}"), zone);
    }
    let names: Vec<String> = net.zones.keys().cloned().collect();
    net.events.insert(
        "a".into(),
        Op::Atomic {
            ty: "A".into(),
            when: None,
        },
    );
    for (name, margin, key) in [
        ("in", 0.0, None),
        (
            "near",
            [0.25, 0.5, 1.0][ch.pick(3)],
            Some("ship".to_owned()),
        ),
    ] {
        let zones = names
            .iter()
            .filter(|_| ch.chance(70))
            .cloned()
            .collect::<Vec<_>>();
        let zones = if zones.is_empty() {
            names.clone()
        } else {
            zones
        };
        net.events.insert(
            name.into(),
            Op::Inside {
                of: "a".into(),
                zones,
                key,
                margin,
            },
        );
        net.outputs.push(name.into());
    }
    net
}

proptest! {
    #![proptest_config(config())]

    /// `Inside` over many zones (found through its R*-tree of boxes padded by the
    /// margin) detects what the reference does testing every zone.
    #[test]
    fn inside_among_many_zones_matches_reference(
        choices in prop::collection::vec(any::<u32>(), 200),
        specs in state_ev_specs(60),
    ) {
        let net = many_zones_net(&choices);
        let mut events = state_events(&specs);
        // Every report of type A.
        for e in &mut events {
            e.ty = "A".into();
        }
        compare_found(&net, &events, 20_000).map_err(TestCaseError::fail)?;
    }
}

/// The generator's nets are well formed for the reference, and over a few hundred
/// of them every state operator starts and ends, and every operator mixed with
/// them detects something.
#[test]
fn generated_state_nets_reach_every_operator() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use reference::states::{Comb, Phase};
    use reference::Op;
    use std::collections::BTreeMap;
    let mut runner = TestRunner::deterministic();
    let choices = prop::collection::vec(any::<u32>(), 160);
    let specs = state_ev_specs(50);
    // Operator name -> (starts, ends, other detections).
    let mut seen: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for _ in 0..300 {
        let net = gen_state_net(&choices.new_tree(&mut runner).unwrap().current());
        let events = state_events(&specs.new_tree(&mut runner).unwrap().current());
        let Some(found) = reference::Reference::run_found_bounded(&net, &events, 20_000) else {
            continue;
        };
        for (name, dets) in &found {
            let op = match &net.events[name] {
                Op::Atomic { .. } => "Atomic",
                Op::Within { .. } => "Within",
                Op::Or { .. } => "Or",
                Op::Seq { .. } => "Seq",
                Op::And { .. } => "And",
                Op::P { .. } => "P",
                Op::Count { .. } => "Count",
                Op::State { .. } => "State",
                Op::Inside { margin, .. } if *margin > 0.0 => "Inside with margin",
                Op::Inside { .. } => "Inside",
                Op::Stationary { .. } => "Stationary",
                Op::Silent { .. } => "Silent",
                Op::Close { .. } => "Close",
                Op::Lasting { .. } => "Lasting",
                Op::Combine {
                    comb: Comb::All, ..
                } => "AllOf",
                Op::Combine {
                    comb: Comb::Any, ..
                } => "AnyOf",
                Op::Combine { .. } => "Unless",
                Op::Starts { .. } => "Starts",
                Op::Ends { .. } => "Ends",
                Op::During { holds: true, .. } => "During",
                Op::During { .. } => "During (holds: false)",
                _ => "other",
            };
            let e = seen.entry(op).or_default();
            for d in dets {
                match d.phase {
                    Some(Phase::Start) => e.0 += 1,
                    Some(Phase::End) => e.1 += 1,
                    None => e.2 += 1,
                }
            }
        }
    }
    println!("{seen:#?}");
    for op in [
        "State",
        "Inside",
        "Inside with margin",
        "Stationary",
        "Silent",
        "Close",
        "Lasting",
        "AllOf",
        "AnyOf",
        "Unless",
    ] {
        let (starts, ends, _) = seen.get(op).copied().unwrap_or_default();
        assert!(starts > 0 && ends > 0, "{op}: {starts} starts, {ends} ends");
    }
    for op in [
        "Starts",
        "Ends",
        "During",
        "During (holds: false)",
        "Seq",
        "And",
        "P",
        "Count",
        "Within",
    ] {
        let (_, _, n) = seen.get(op).copied().unwrap_or_default();
        assert!(n > 0, "{op}: no detections");
    }
}
