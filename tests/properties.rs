#![allow(unreachable_pub, missing_docs)]

//! Property tests: ccpn's `Detector` against the brute-force reference in
//! `tests/reference/`, on random nets and streams, plus hand-checked unit tests of
//! the reference itself.

mod reference;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use reference::against::{compare, run_ccpn, run_ccpn_restarting};
use reference::gen::{self, EvSpec, Family};
use reference::{CmpOp, Ctx, Det, Ev, Net, Op, Opts, Output, Reference, Rel, Val, When, Zone};

fn check(family: Family, choices: &[u32], specs: &[EvSpec]) -> Result<(), TestCaseError> {
    let net = gen::gen_net(choices, family);
    let events = gen::events(specs, gen::n_types(&net));
    compare(&net, &events).map_err(TestCaseError::fail)
}

fn config() -> ProptestConfig {
    reference::proptest_config(256, 0x00cc_b17e, 4096)
}

proptest! {
    #![proptest_config(config())]

    /// Seq, And (2 and 3 operands), Dist, Direction: windows, keys, distinct, all contexts.
    #[test]
    fn pairing_matches_reference(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
    ) {
        check(Family::Pairing, &choices, &specs)?;
    }

    /// Not, with all contexts.
    #[test]
    fn not_matches_reference(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
    ) {
        check(Family::Not, &choices, &specs)?;
    }

    /// Any (m of n), all contexts.
    #[test]
    fn any_matches_reference(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
    ) {
        check(Family::Any, &choices, &specs)?;
    }

    /// A, AStar, P, PStar, Times.
    #[test]
    fn intervals_match_reference(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
    ) {
        check(Family::Interval, &choices, &specs)?;
    }

    /// A detector restored from its snapshot every few events detects what one
    /// left running does.
    #[test]
    fn snapshots_change_nothing(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
        every in 1usize..8,
    ) {
        let net = gen::gen_net(&choices, Family::Mixed);
        let events = gen::events(&specs, gen::n_types(&net));
        let straight = run_ccpn(&net, &events).map_err(TestCaseError::fail)?;
        let restarted = run_ccpn_restarting(&net, &events, Some(every)).map_err(TestCaseError::fail)?;
        prop_assert_eq!(straight, restarted, "net:\n{}", net.to_ron());
    }

    /// An observed event changes the detector's state as a pushed one does, and
    /// makes none of the detections it terminates (those at its own time); the ticks
    /// due before it are made all the same.
    #[test]
    fn observed_events_make_only_their_ticks(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
        observed in prop::collection::vec(any::<bool>(), 60),
    ) {
        let net = gen::gen_net(&choices, Family::Mixed);
        let events = gen::events(&specs, gen::n_types(&net));
        let compiled = ccpn::Net::from_ron("prop.ron", &net.to_ron()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let options = ccpn::DetectorOptions { max_tokens: usize::MAX, ..ccpn::DetectorOptions::default() };
        let mut pushed = ccpn::Detector::with_options(&compiled, options);
        let mut mixed = ccpn::Detector::with_options(&compiled, options);
        let key = |d: &ccpn::Detection| format!("{} {} {:?}", d.event, d.time.micros(), d.ids().collect::<Vec<_>>());
        for (i, e) in events.iter().enumerate() {
            let ev = reference::against::to_event(e);
            let time = ev.time;
            let all = pushed.push(ev.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut got = Vec::new();
            let want: Vec<String> = if observed.get(i).copied().unwrap_or(false) {
                mixed.observe_into(ev, &mut got).map_err(|e| TestCaseError::fail(e.to_string()))?;
                all.iter().filter(|d| d.time < time).map(key).collect()
            } else {
                mixed.push_into(ev, &mut got).map_err(|e| TestCaseError::fail(e.to_string()))?;
                all.iter().map(key).collect()
            };
            let got: Vec<String> = got.iter().map(key).collect();
            prop_assert_eq!(got, want, "event {}; net:\n{}", i, net.to_ron());
        }
        let (a, b): (Vec<String>, Vec<String>) =
            (pushed.finish().iter().map(key).collect(), mixed.finish().iter().map(key).collect());
        prop_assert_eq!(a, b);
    }

    /// Every operator, nested.
    #[test]
    fn mixed_nets_match_reference(
        choices in prop::collection::vec(any::<u32>(), 120),
        specs in gen::ev_specs(60),
    ) {
        check(Family::Mixed, &choices, &specs)?;
    }
}

// ---------------------------------------------------------------------------
// Hand-checked unit tests of the reference
// ---------------------------------------------------------------------------

fn atomic(ty: &str) -> Op {
    Op::Atomic {
        ty: ty.into(),
        when: None,
    }
}

fn net(events: Vec<(&str, Op)>, outputs: &[&str]) -> Net {
    Net {
        events: events.into_iter().map(|(n, o)| (n.to_owned(), o)).collect(),
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
        ..Net::default()
    }
}

fn ab() -> Vec<(&'static str, Op)> {
    vec![("a", atomic("A")), ("b", atomic("B")), ("c", atomic("C"))]
}

/// Events from (type, time); ids are 1, 2, 3… in order.
fn evs(v: &[(&str, i64)]) -> Vec<Ev> {
    v.iter()
        .enumerate()
        .map(|(i, (ty, t))| Ev::new(i as i64 + 1, ty, *t))
        .collect()
}

/// The (time, ids) of one output.
fn dets(out: &Output, name: &str) -> Vec<(f64, Vec<i64>)> {
    out[name].iter().map(|d| (d.time, d.ids.clone())).collect()
}

fn with(mut base: Vec<(&'static str, Op)>, name: &'static str, op: Op) -> Net {
    base.push((name, op));
    net(base, &[name])
}

fn seq(ctx: Ctx) -> Op {
    Op::Seq {
        of: vec!["a".into(), "b".into()],
        opts: Opts::plain().ctx(ctx),
    }
}

#[test]
fn reference_seq_contexts() {
    let stream = evs(&[("A", 1), ("A", 2), ("B", 3), ("B", 4)]);
    let run = |ctx| dets(&Reference::run(&with(ab(), "s", seq(ctx)), &stream), "s");
    assert_eq!(run(Ctx::Recent), vec![(3.0, vec![2, 3]), (4.0, vec![2, 4])]);
    assert_eq!(
        run(Ctx::Chronicle),
        vec![(3.0, vec![1, 3]), (4.0, vec![2, 4])]
    );
    assert_eq!(
        run(Ctx::Continuous),
        vec![(3.0, vec![1, 3]), (3.0, vec![2, 3])]
    );
    assert_eq!(run(Ctx::Cumulative), vec![(3.0, vec![1, 2, 3])]);
    assert_eq!(
        run(Ctx::Unrestricted),
        vec![
            (3.0, vec![1, 3]),
            (3.0, vec![2, 3]),
            (4.0, vec![1, 4]),
            (4.0, vec![2, 4])
        ]
    );
}

#[test]
fn reference_seq_window_key_distinct() {
    let s = |opts: Opts| {
        with(
            ab(),
            "s",
            Op::Seq {
                of: vec!["a".into(), "b".into()],
                opts,
            },
        )
    };
    let stream = vec![
        Ev::new(1, "A", 0).with("ship", Val::Str("s0".into())),
        Ev::new(2, "A", 3).with("ship", Val::Str("s1".into())),
        Ev::new(3, "B", 5).with("ship", Val::Str("s0".into())),
        Ev::new(4, "B", 6),
    ];
    // Window 5: B@5 reaches A@0 (5 - 0 <= 5) but Recent takes A@3.
    assert_eq!(
        dets(&Reference::run(&s(Opts::within(5)), &stream), "s"),
        vec![(5.0, vec![2, 3]), (6.0, vec![2, 4])]
    );
    // Window 2: only A@3 is close enough to B@5 (2) and B@6 (3 > 2: no).
    assert_eq!(
        dets(&Reference::run(&s(Opts::within(2)), &stream), "s"),
        vec![(5.0, vec![2, 3])]
    );
    // Key: B@5 (s0) pairs with A@0 (s0); B@6 has no ship.
    assert_eq!(
        dets(&Reference::run(&s(Opts::plain().key("ship")), &stream), "s"),
        vec![(5.0, vec![1, 3])]
    );
    // Distinct: B@5 (s0) pairs with A@3 (s1).
    assert_eq!(
        dets(
            &Reference::run(&s(Opts::plain().distinct("ship")), &stream),
            "s"
        ),
        vec![(5.0, vec![2, 3])]
    );
}

#[test]
fn reference_same_event_never_pairs() {
    let mut n = ab();
    n.push((
        "both",
        Op::And {
            of: vec!["a".into(), "a2".into()],
            opts: Opts::plain(),
        },
    ));
    n.push((
        "a2",
        Op::Atomic {
            ty: "A".into(),
            when: Some(When::Cmp("speed".into(), CmpOp::Gt, Val::Num(1.0))),
        },
    ));
    let n = net(n, &["both"]);
    let fast = |id, t| Ev::new(id, "A", t).with("speed", Val::Num(5.0));
    // One event in both operands: no pair. A second one pairs both ways (Recent).
    assert_eq!(dets(&Reference::run(&n, &[fast(1, 0)]), "both"), vec![]);
    assert_eq!(
        dets(&Reference::run(&n, &[fast(1, 0), fast(2, 1)]), "both"),
        vec![(1.0, vec![1, 2]), (1.0, vec![1, 2])]
    );
}

#[test]
fn reference_and_same_operand_chronicle() {
    // And(a, a) in Chronicle: 1 and 2 pair, then 3 waits, 4 pairs with 3.
    let n = with(
        ab(),
        "aa",
        Op::And {
            of: vec!["a".into(), "a".into()],
            opts: Opts::plain().ctx(Ctx::Chronicle),
        },
    );
    let out = Reference::run(&n, &evs(&[("A", 1), ("A", 2), ("A", 3), ("A", 4)]));
    assert_eq!(dets(&out, "aa"), vec![(2.0, vec![1, 2]), (4.0, vec![3, 4])]);
}

#[test]
fn reference_and3_nests_left() {
    let n = with(
        ab(),
        "abc",
        Op::And {
            of: vec!["a".into(), "b".into(), "c".into()],
            opts: Opts::within(4),
        },
    );
    // C@5 with And(a, b)@3 = {A@0, B@3}: 5 - 0 > 4, no. With {B@3, A@4} (fired at 4): yes.
    let out = Reference::run(&n, &evs(&[("A", 0), ("B", 3), ("A", 4), ("C", 5)]));
    assert_eq!(dets(&out, "abc"), vec![(5.0, vec![2, 3, 4])]);
}

#[test]
fn reference_not() {
    let n = with(
        ab(),
        "q",
        Op::Not {
            start: "a".into(),
            absent: "b".into(),
            end: "c".into(),
            opts: Opts::plain(),
        },
    );
    let out = Reference::run(
        &n,
        &evs(&[("A", 1), ("B", 2), ("C", 3), ("A", 4), ("C", 5)]),
    );
    assert_eq!(dets(&out, "q"), vec![(5.0, vec![4, 5])]);
    // An absent in the same step as the start or the end does not count.
    let n = with(
        ab(),
        "q",
        Op::Not {
            start: "a".into(),
            absent: "o".into(),
            end: "c".into(),
            opts: Opts::plain(),
        },
    );
    let mut n = n;
    n.events.insert(
        "o".into(),
        Op::Or {
            of: vec!["a".into(), "c".into()],
        },
    );
    let out = Reference::run(&n, &evs(&[("A", 1), ("C", 2), ("C", 3)]));
    assert_eq!(dets(&out, "q"), vec![(2.0, vec![1, 2])]);
}

#[test]
fn reference_any() {
    let any = |m, ctx| {
        with(
            ab(),
            "any",
            Op::Any {
                m,
                of: vec!["a".into(), "b".into(), "c".into()],
                opts: Opts::within(5).ctx(ctx),
            },
        )
    };
    let stream = evs(&[("A", 0), ("B", 1), ("A", 2), ("C", 3), ("C", 9)]);
    assert_eq!(
        dets(&Reference::run(&any(2, Ctx::Recent), &stream), "any"),
        vec![(1.0, vec![1, 2]), (2.0, vec![2, 3]), (3.0, vec![3, 4])]
    );
    assert_eq!(
        dets(&Reference::run(&any(3, Ctx::Recent), &stream), "any"),
        vec![(3.0, vec![2, 3, 4])]
    );
    assert_eq!(
        dets(&Reference::run(&any(3, Ctx::Chronicle), &stream), "any"),
        vec![(3.0, vec![1, 2, 4])]
    );
    // Cumulative, m = 2: B takes A@0; A@2 finds B consumed; C takes A@2.
    assert_eq!(
        dets(&Reference::run(&any(2, Ctx::Cumulative), &stream), "any"),
        vec![(1.0, vec![1, 2]), (3.0, vec![3, 4])]
    );
    assert_eq!(
        dets(&Reference::run(&any(1, Ctx::Recent), &stream), "any").len(),
        5
    );
}

#[test]
fn reference_times() {
    let n = with(
        ab(),
        "t",
        Op::Times {
            k: 2,
            of: "b".into(),
            within: Some(3),
            key: None,
        },
    );
    let out = Reference::run(
        &n,
        &evs(&[("B", 0), ("B", 1), ("B", 2), ("B", 6), ("B", 10), ("B", 13)]),
    );
    assert_eq!(dets(&out, "t"), vec![(1.0, vec![1, 2]), (13.0, vec![5, 6])]);
}

#[test]
fn reference_a_and_astar() {
    let stream = evs(&[
        ("B", 0),
        ("A", 1),
        ("B", 2),
        ("B", 3),
        ("C", 4),
        ("B", 5),
        ("A", 6),
        ("C", 7),
        ("A", 8),
        ("B", 20),
        ("C", 21),
    ]);
    let a = with(
        ab(),
        "x",
        Op::A {
            start: "a".into(),
            e: "b".into(),
            end: "c".into(),
            within: Some(10),
            key: None,
        },
    );
    assert_eq!(
        dets(&Reference::run(&a, &stream), "x"),
        vec![(2.0, vec![2, 3]), (3.0, vec![2, 4])]
    );
    let s = with(
        ab(),
        "x",
        Op::AStar {
            start: "a".into(),
            e: "b".into(),
            end: "c".into(),
            within: Some(10),
            key: None,
        },
    );
    assert_eq!(
        dets(&Reference::run(&s, &stream), "x"),
        vec![(4.0, vec![2, 3, 4, 5])]
    );
}

#[test]
fn reference_p_and_pstar() {
    let p = |w| {
        with(
            ab(),
            "p",
            Op::P {
                start: "a".into(),
                period: 2,
                end: "c".into(),
                within: w,
                key: None,
            },
        )
    };
    // Start at 1: ticks at 3, 5 (end at 5 comes first), none after.
    let stream = evs(&[("A", 1), ("B", 3), ("C", 5), ("B", 9)]);
    assert_eq!(
        dets(&Reference::run(&p(None), &stream), "p"),
        vec![(3.0, vec![1])]
    );
    // Window 5: ticks at 3 and 5 (2 and 4 <= 5), not 7; no tick after the last event (8).
    let stream = evs(&[("A", 1), ("B", 8)]);
    assert_eq!(
        dets(&Reference::run(&p(Some(5)), &stream), "p"),
        vec![(3.0, vec![1]), (5.0, vec![1])]
    );
    let stream = evs(&[("A", 1), ("B", 4)]);
    assert_eq!(
        dets(&Reference::run(&p(None), &stream), "p"),
        vec![(3.0, vec![1])]
    );
    // PStar: start at 1, end at 6: ticks 3, 5 before 6.
    let ps = with(
        ab(),
        "p",
        Op::PStar {
            start: "a".into(),
            period: 2,
            end: "c".into(),
            within: None,
            key: None,
        },
    );
    let out = Reference::run(
        &ps,
        &evs(&[("A", 1), ("C", 6), ("A", 7), ("C", 7), ("C", 8)]),
    );
    assert_eq!(
        out["p"],
        vec![
            Det {
                time: 6.0,
                ids: vec![1, 2],
                ticks: Some(2)
            },
            Det {
                time: 7.0,
                ids: vec![3, 4],
                ticks: Some(0)
            },
        ]
    );
}

#[test]
fn reference_spatial() {
    let mut base = ab();
    base.push((
        "near",
        Op::Dist {
            a: "a".into(),
            b: "b".into(),
            max: 5.0,
            opts: Opts::plain(),
        },
    ));
    base.push((
        "north",
        Op::Direction {
            rel: vec![Rel::N],
            of: "a".into(),
            from: "b".into(),
            opts: Opts::plain(),
        },
    ));
    base.push((
        "inbox",
        Op::DirBox {
            rel: vec![Rel::NE],
            of: "a".into(),
            zone: "r".into(),
        },
    ));
    base.push((
        "in",
        Op::Within {
            of: "a".into(),
            zones: vec!["r".into(), "c".into()],
        },
    ));
    let mut n = net(base, &["near", "north", "inbox", "in"]);
    n.zones.insert(
        "r".into(),
        Zone::Rect {
            min: (0.0, 0.0),
            max: (2.0, 2.0),
        },
    );
    n.zones.insert(
        "c".into(),
        Zone::Circle {
            center: (10.0, 10.0),
            radius: 1.0,
        },
    );
    let stream = vec![
        Ev::new(1, "B", 0).at(0.0, 0.0),
        Ev::new(2, "A", 1).at(0.0, 5.0), // north of B, distance 5, in neither zone... on x = 0
        Ev::new(3, "A", 2).at(3.0, 4.0), // distance 5 from B, NE (not N), NE of the box
        Ev::new(4, "A", 3).at(11.0, 10.0), // circle boundary
        Ev::new(5, "A", 4),              // no location
        Ev::new(6, "A", 5).at(2.0, 2.0), // box corner
    ];
    let out = Reference::run(&n, &stream);
    assert_eq!(
        dets(&out, "near"),
        vec![(1.0, vec![1, 2]), (2.0, vec![1, 3]), (5.0, vec![1, 6])]
    );
    assert_eq!(dets(&out, "north"), vec![(1.0, vec![1, 2])]);
    assert_eq!(dets(&out, "inbox"), vec![(2.0, vec![3]), (3.0, vec![4])]);
    assert_eq!(dets(&out, "in"), vec![(3.0, vec![4]), (5.0, vec![6])]);
}

#[test]
fn reference_filters() {
    let w = |s: &str, op, v| When::Cmp(s.into(), op, v);
    let attrs = vec![
        ("speed".to_string(), Val::Num(12.0)),
        ("kind".to_string(), Val::Str("x".into())),
    ];
    assert!(w("speed", CmpOp::Gt, Val::Num(10.0)).eval(&attrs));
    assert!(!w("speed", CmpOp::Gt, Val::Str("10".into())).eval(&attrs));
    assert!(!w("flag", CmpOp::Ne, Val::Bool(true)).eval(&attrs));
    assert!(When::Not(Box::new(w("flag", CmpOp::Eq, Val::Bool(true)))).eval(&attrs));
    assert!(!w("kind", CmpOp::Ne, Val::Str("x".into())).eval(&attrs));
    assert_eq!(
        When::And(
            Box::new(w("speed", CmpOp::Le, Val::Num(12.0))),
            Box::new(w("kind", CmpOp::Eq, Val::Str("x".into())))
        )
        .text(),
        "(speed <= 12) && (kind == \"x\")"
    );
}

/// A fixed net through both: checks the RON rendering and the harness, too.
#[test]
fn harness_smoke() {
    let n = with(ab(), "s", seq(Ctx::Chronicle));
    let stream = evs(&[("A", 1), ("A", 2), ("B", 3), ("B", 4)]);
    compare(&n, &stream).unwrap();
}

// ---------------------------------------------------------------------------
// Disagreements the properties found (all since fixed in ccpn), kept as minimal
// regression cases. Each first checks the reference against the hand-derived
// expectation, then compares ccpn with the reference.
// ---------------------------------------------------------------------------

fn ship(id: i64, ty: &str, t: i64, s: &str) -> Ev {
    Ev::new(id, ty, t).with("ship", Val::Str(s.into()))
}

/// Checks the reference's `name` output, then ccpn against the reference.
fn expect(n: &Net, stream: &[Ev], name: &str, want: Vec<(f64, Vec<i64>)>) {
    let out = Reference::run(n, stream);
    assert_eq!(dets(&out, name), want, "the reference is off");
    if let Err(msg) = compare(n, stream) {
        panic!("{msg}");
    }
}

/// Decision 3: an operand named twice counts once; `Or` has one occurrence per
/// occurrence of `a`.
#[test]
fn ccpn_or_operand_named_twice() {
    let n = with(
        ab(),
        "o",
        Op::Or {
            of: vec!["a".into(), "a".into()],
        },
    );
    expect(&n, &evs(&[("A", 0)]), "o", vec![(0.0, vec![1])]);
}

/// Two names with the same definition (up to zone order) are two events: `Or` of
/// both has two occurrences per event (ccpn used to share them as one node).
#[test]
fn ccpn_identical_definitions_are_distinct_events() {
    let mut n = ab();
    n.push((
        "w0",
        Op::Within {
            of: "a".into(),
            zones: vec!["z0".into(), "z1".into()],
        },
    ));
    n.push((
        "w1",
        Op::Within {
            of: "a".into(),
            zones: vec!["z1".into(), "z0".into()],
        },
    ));
    n.push((
        "o",
        Op::Or {
            of: vec!["w0".into(), "w1".into()],
        },
    ));
    let mut n = net(n, &["o"]);
    n.zones.insert(
        "z0".into(),
        Zone::Rect {
            min: (0.0, 0.0),
            max: (1.0, 1.0),
        },
    );
    n.zones.insert(
        "z1".into(),
        Zone::Rect {
            min: (0.0, 0.0),
            max: (2.0, 2.0),
        },
    );
    let stream = vec![Ev::new(1, "A", 0).at(0.0, 0.0)];
    expect(&n, &stream, "o", vec![(0.0, vec![1]), (0.0, vec![1])]);
}

/// Decision 6 / §4 contexts: in `Chronicle`, the y of a detection is consumed, so
/// with start == end it cannot start another one.
#[test]
fn ccpn_not_same_start_end_chronicle_consumes_y() {
    let n = with(
        ab(),
        "q",
        Op::Not {
            start: "a".into(),
            absent: "b".into(),
            end: "a".into(),
            opts: Opts::plain().ctx(Ctx::Chronicle),
        },
    );
    expect(
        &n,
        &evs(&[("A", 0), ("A", 1), ("A", 2)]),
        "q",
        vec![(1.0, vec![1, 2])],
    );
}

/// Decision 5: with `distinct`, the chosen set of an `Any` is pairwise distinct,
/// in `Cumulative` too.
#[test]
fn ccpn_any_cumulative_distinct_is_pairwise() {
    let n = with(
        ab(),
        "any",
        Op::Any {
            m: 2,
            of: vec!["a".into(), "b".into()],
            opts: Opts::plain().distinct("ship").ctx(Ctx::Cumulative),
        },
    );
    let stream = vec![
        ship(1, "A", 0, "s0"),
        ship(2, "A", 1, "s0"),
        ship(3, "B", 2, "s1"),
    ];
    expect(&n, &stream, "any", vec![(2.0, vec![1, 3])]);
}

/// Decision 3: same-step occurrences are ordered by role (`o` before `b`), so the
/// oldest for `Chronicle` is `o`'s; then `o`'s next occurrence pairs with `b`'s.
#[test]
fn ccpn_any_same_step_role_order() {
    let mut n = ab();
    n.push((
        "o",
        Op::Or {
            of: vec!["a".into(), "b".into()],
        },
    ));
    n.push((
        "any",
        Op::Any {
            m: 2,
            of: vec!["a".into(), "o".into(), "b".into()],
            opts: Opts::plain().ctx(Ctx::Chronicle),
        },
    ));
    let n = net(n, &["any"]);
    expect(
        &n,
        &evs(&[("B", 0), ("A", 1)]),
        "any",
        vec![(1.0, vec![1, 2]), (1.0, vec![1, 2])],
    );
}

/// Decision 10: a newer start replaces the open interval, even one that cannot fit
/// W itself ({C@0, A@3}: 3 > 2), so the `e` A@3 (same step) fires with nothing.
/// (ccpn used to ignore that start and fire A@3 with the old interval {C@1, A@2}.)
#[test]
fn ccpn_a_unfit_start_replaces_interval() {
    let mut n = ab();
    n.push((
        "s",
        Op::Seq {
            of: vec!["c".into(), "a".into()],
            opts: Opts::plain().key("ship"),
        },
    ));
    n.push((
        "x",
        Op::A {
            start: "s".into(),
            e: "a".into(),
            end: "b".into(),
            within: Some(2),
            key: None,
        },
    ));
    let n = net(n, &["x"]);
    let stream = vec![
        ship(1, "C", 0, "s2"),
        ship(2, "C", 1, "s0"),
        ship(3, "A", 2, "s0"),
        ship(4, "A", 3, "s2"),
    ];
    expect(&n, &stream, "x", vec![]);
}

/// Decision 4 / §4: the whole `AStar` occurrence must fit W, from its earliest
/// constituent (here the `e`'s B at 0): 4 - 0 > 3.
#[test]
fn ccpn_astar_whole_occurrence_fits_window() {
    let mut n = ab();
    n.push(("d", atomic("D")));
    n.push((
        "e",
        Op::Seq {
            of: vec!["b".into(), "c".into()],
            opts: Opts::plain(),
        },
    ));
    n.push((
        "x",
        Op::AStar {
            start: "a".into(),
            e: "e".into(),
            end: "d".into(),
            within: Some(3),
            key: None,
        },
    ));
    let n = net(n, &["x"]);
    expect(
        &n,
        &evs(&[("B", 0), ("A", 2), ("C", 3), ("D", 4)]),
        "x",
        vec![],
    );
}

/// Decisions 1 and 10: p1 ticks at 2 and 4; its tick at 4 replaces p3's interval
/// (opened at 2, last tick due at 4 = t0 + W), which then ticks at 5 and 6.
#[test]
fn ccpn_p_restarted_by_tick_at_its_last_tick() {
    let mut n = ab();
    n.push((
        "p1",
        Op::P {
            start: "a".into(),
            period: 2,
            end: "b".into(),
            within: None,
            key: None,
        },
    ));
    n.push((
        "p3",
        Op::P {
            start: "p1".into(),
            period: 1,
            end: "c".into(),
            within: Some(2),
            key: None,
        },
    ));
    let n = net(n, &["p3"]);
    expect(
        &n,
        &evs(&[("A", 0), ("B", 5), ("D", 9)]),
        "p3",
        vec![(3.0, vec![1]), (5.0, vec![1]), (6.0, vec![1])],
    );
}

/// Decision 10: an end with another key value does not close (or pre-empt the
/// tick of) the interval of key s0, whose last tick is at t0 + W = 2.
#[test]
fn ccpn_p_other_key_end_at_last_tick() {
    let mut n = ab();
    n.push((
        "ps",
        Op::PStar {
            start: "b".into(),
            period: 1,
            end: "c".into(),
            within: None,
            key: None,
        },
    ));
    n.push((
        "pk",
        Op::P {
            start: "ps".into(),
            period: 1,
            end: "b".into(),
            within: Some(1),
            key: Some("ship".into()),
        },
    ));
    let n = net(n, &["pk"]);
    let stream = vec![
        Ev::new(1, "B", 0),
        ship(2, "C", 1, "s0"),
        ship(3, "B", 2, "s1"),
    ];
    expect(&n, &stream, "pk", vec![(2.0, vec![1, 2])]);
}
