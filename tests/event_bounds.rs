//! The work and the detections of one event are bounded whatever the detector holds:
//! a terminator's search for initiators passes over the waiting tokens of its own
//! `distinct` value at once, and over at most 10,000 other ineligible tokens,
//! an operator fires at most 100,000 times for one terminator, and a `Count` whose set
//! cap is full reads only the sets an event could complete, and one step makes at
//! most a bounded number of tokens, however deep the net. Each stop is counted in
//! `truncated_firings`; below the caps the detections are those without them.

use ccpn::{Detection, Detector, DetectorOptions, Event, Net, Timestamp};

fn t(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s).unwrap()
}

fn net(events: &str) -> Net {
    Net::from_ron(
        "bounds.ron",
        &format!("Net(events: {{ {events} }}, outputs: [\"out\"])"),
    )
    .expect("net loads")
}

fn ids(d: &Detection) -> Vec<String> {
    d.ids().map(|i| i.to_string()).collect()
}

/// 200,000 waiting `a` of one ship, and `b` of the same ship: none is eligible
/// (`distinct`), and the search used to read all of them for every such `b` (20 ms an
/// event at a million). A run of waiting tokens of one value is now passed over at
/// once, by a binary search: the partner behind them is found, exactly, and a thousand
/// `b` take milliseconds rather than (in a debug build) tens of seconds.
#[test]
fn a_distinct_terminator_passes_over_its_own_values_at_once() {
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": Seq(of: ["a", "b"], within: "1d", distinct: "ship")"#);
    let mut d = Detector::new(&net);
    // Ship 2's `a` is eligible, behind 200,000 of ship 1.
    d.push(Event::new(0, "A", t(0.0)).with("ship", 2.0))
        .unwrap();
    for i in 1..=200_000 {
        let e = Event::new(i, "A", t(i as f64 * 1e-4)).with("ship", 1.0);
        assert!(d.push(e).unwrap().is_empty());
    }
    let start = std::time::Instant::now();
    for j in 0..1_000 {
        let b = Event::new(300_000 + j, "B", t(100.0 + j as f64)).with("ship", 1.0);
        let found = d.push(b).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(ids(&found[0]), ["0", format!("{}", 300_000 + j).as_str()]);
    }
    let took = start.elapsed();
    assert!(took.as_secs_f64() < 5.0, "1,000 terminators took {took:?}");
    // Without the attribute, nothing is eligible: passed over at once too.
    assert!(d
        .push(Event::new(400_000, "B", t(2000.0)))
        .unwrap()
        .is_empty());
    // Another ship pairs with the most recent.
    let found = d
        .push(Event::new(400_001, "B", t(2001.0)).with("ship", 3.0))
        .unwrap();
    assert_eq!(ids(&found[0]), ["200000", "400001"]);
    assert_eq!(d.stats().truncated_firings, 0);
}

/// A `Direction` whose 15,000 waiting tokens all lie the wrong way: no index of the
/// place tells which do, and the search used to read them all for every terminator. It
/// now gives up after 10,000 and counts the terminator.
#[test]
fn a_direction_with_every_partner_the_wrong_way_stops_searching() {
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": Direction(rel: N, of: "b", from: "a", within: "1d")"#);
    let mut d = Detector::new(&net);
    for i in 0..15_000 {
        let e = Event::new(i, "A", t(i as f64 * 1e-3)).at(0.0, 10.0);
        assert!(d.push(e).unwrap().is_empty());
    }
    let south = Event::new(20_000, "B", t(100.0)).at(0.0, 0.0);
    assert!(d.push(south).unwrap().is_empty());
    assert_eq!(d.stats().truncated_firings, 1);
    let north = Event::new(20_001, "B", t(101.0)).at(0.0, 20.0);
    assert_eq!(d.push(north).unwrap().len(), 1);
    assert_eq!(d.stats().truncated_firings, 1);
}

/// 150,000 waiting initiators and one terminator, Unrestricted: it used to make all
/// 150,000 detections at once; it makes the oldest 100,000 and is counted.
#[test]
fn unrestricted_seq_fires_at_most_the_firing_cap_per_terminator() {
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": Seq(of: ["a", "b"], within: "1d", context: Unrestricted)"#);
    let mut d = Detector::new(&net);
    for i in 0..150_000 {
        assert!(d
            .push(Event::new(i, "A", t(i as f64 * 1e-3)))
            .unwrap()
            .is_empty());
    }
    let found = d.push(Event::new(200_000, "B", t(1000.0))).unwrap();
    assert_eq!(found.len(), 100_000);
    assert_eq!(ids(&found[0]), ["0", "200000"]);
    assert_eq!(ids(&found[99_999]), ["99999", "200000"]);
    assert_eq!(d.stats().truncated_firings, 1);
    // Below the cap, every initiator fires and nothing is counted.
    let net = net_small();
    let mut d = Detector::new(&net);
    for i in 0..1_000 {
        d.push(Event::new(i, "A", t(i as f64))).unwrap();
    }
    assert_eq!(
        d.push(Event::new(5_000, "B", t(2_000.0))).unwrap().len(),
        1_000
    );
    assert_eq!(d.stats().truncated_firings, 0);
}

fn net_small() -> Net {
    net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": Seq(of: ["a", "b"], within: "1d", context: Unrestricted)"#)
}

/// A detector for `Count(n)` over every `A` closer than 100, keeping `max_sets` sets.
fn count(n: usize, max_sets: usize) -> Detector {
    let net = net(&format!(
        r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: {n}, distance: 100.0, window: "1h")"#
    ));
    Detector::with_options(
        &net,
        DetectorOptions {
            max_sets,
            ..DetectorOptions::default()
        },
    )
}

/// `Count` with n = 1024 at one spot once `max_sets` is full: every event used to read
/// every kept set owned by its neighbours, extend each and refuse the extension (80 ms
/// an event at a million sets), though no rule could complete. Past the cap, an event
/// now refuses only its pairs: at most one per live point.
#[test]
fn count_with_a_full_set_cap_reads_no_set_it_cannot_complete() {
    let mut d = count(1024, 20_000);
    let mut i = 0;
    let at = |i: i64| Event::new(i, "A", t(i as f64 * 1e-2)).at(0.0, 0.0);
    while d.stats().refused_sets == 0 {
        assert!(d.push(at(i)).unwrap().is_empty());
        i += 1;
    }
    for _ in 0..50 {
        let before = d.stats().refused_sets;
        assert!(d.push(at(i)).unwrap().is_empty());
        i += 1;
        let refused = d.stats().refused_sets - before;
        assert!(
            refused <= d.stats().live_tokens as u64,
            "{refused} sets refused by one event among {} points",
            d.stats().live_tokens
        );
    }
}

/// Below the set cap, or past it, a `Count` finds the matches it found before: those
/// whose every prefix was kept (here n = 3, a cap of one pair).
#[test]
fn count_with_a_full_set_cap_still_completes_kept_sets() {
    let mut d = count(3, 1);
    let mut found = Vec::new();
    for i in 0..4 {
        found.extend(
            d.push(Event::new(i, "A", t(i as f64)).at(0.0, 0.0))
                .unwrap(),
        );
    }
    let sets: Vec<Vec<String>> = found.iter().map(ids).collect();
    assert_eq!(sets, [vec!["0", "1", "2"], vec!["0", "1", "3"]]);
}

/// 45 points pairwise close, n = 5: the 45th completes C(44, 4) = 135,751 sets, of
/// which the first 100,000 (members in insertion order, lexicographically) fire.
#[test]
fn count_completing_more_sets_than_the_firing_cap_fires_the_first() {
    let net = net(r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: 5, distance: 100.0, window: "1h")"#);
    let mut d = Detector::new(&net);
    let mut last = Vec::new();
    for i in 0..45 {
        last = d
            .push(Event::new(i, "A", t(i as f64 * 1e-2)).at(0.0, 0.0))
            .unwrap();
        assert!(last.len() <= 100_000);
    }
    assert_eq!(last.len(), 100_000);
    assert_eq!(ids(&last[0]), ["0", "1", "2", "3", "44"]);
    assert!(d.stats().truncated_firings >= 1);
}

/// The runs a `distinct` search skips, against the definition: over a stream of
/// long runs of one ship, with a window, each `b` pairs with the most recent `a` of
/// another ship within it, for `Seq` and for `And` (either order).
#[test]
fn distinct_runs_pair_as_the_definition_says() {
    let mut seed = 7u64;
    let mut next = move |m: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    let mut stream = Vec::new();
    let mut ship = 1;
    for i in 0..3_000 {
        if next(10) == 0 {
            ship = 1 + next(3);
        }
        let kind = if next(4) == 0 { "B" } else { "A" };
        stream.push((i as i64, kind, ship, i as f64 * 0.1));
    }
    for op in ["Seq", "And"] {
        let net = net(&format!(
            r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
            "out": {op}(of: ["a", "b"], within: 50.0, distinct: "ship")"#
        ));
        let mut d = Detector::new(&net);
        for (j, &(id, kind, ship, time)) in stream.iter().enumerate() {
            let e = Event::new(id, kind, t(time)).with("ship", ship as f64);
            let found: Vec<Vec<String>> = d.push(e).unwrap().iter().map(ids).collect();
            let partner = if kind == "B" || op == "And" {
                stream[..j]
                    .iter()
                    .rev()
                    .take_while(|p| time - p.3 <= 50.0)
                    .find(|p| p.1 != kind && p.2 != ship)
            } else {
                None
            };
            let expected: Vec<Vec<String>> = partner
                .map(|p| vec![vec![p.0.to_string(), id.to_string()]])
                .unwrap_or_default();
            assert_eq!(found, expected, "{op} at event {id}");
        }
        assert_eq!(d.stats().truncated_firings, 0);
    }
}

/// `P` ticking every millisecond over a window of three years, and the stream jumping
/// ahead by 10⁷ s: ten billion ticks were due at once, all made into detections by
/// one push (the process ran out of memory). An interval now ticks at most 100,000
/// times in one run of timers and goes on from its first tick after the time the
/// run moves to; the ticks passed over are counted.
#[test]
fn a_periodic_interval_ticks_at_most_the_firing_cap_in_one_jump() {
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": P(start: "a", period: 0.001, end: "b", within: 100000000.0)"#);
    let mut d = Detector::new(&net);
    assert!(d.push(Event::new(1, "A", t(0.0))).unwrap().is_empty());
    let jump = d.push(Event::new(2, "C", t(1e7))).unwrap();
    assert_eq!(jump.len(), 100_000);
    assert_eq!(jump.last().unwrap().time, t(100.0));
    assert!(
        d.stats().truncated_firings >= 9_999_800_000,
        "{:?}",
        d.stats()
    );
    // The interval goes on ticking, on its own period, after the time it jumped to
    // (a tick at an event's own time comes after the event).
    let after = d.push(Event::new(3, "C", t(1e7 + 0.5))).unwrap();
    assert_eq!(after.len(), 499);
    assert_eq!(after[0].time, t(1e7 + 0.001));
    assert_eq!(after.last().unwrap().time, t(1e7 + 0.499));
    // Below the cap nothing is passed over.
    let mut d = Detector::new(&net);
    d.push(Event::new(1, "A", t(0.0))).unwrap();
    assert_eq!(
        d.push(Event::new(2, "C", t(99.9995))).unwrap().len(),
        99_999
    );
    assert_eq!(d.stats().truncated_firings, 0);
}

/// A chain of 1,500 `Dist`, each pairing the level below with every `b`: each level
/// makes one more token than the one below, so one event made about a million
/// tokens (and a chain of 10,241, found by the `net_shapes` fuzz target, fifty
/// million: 1.5 s an event in a release build). The token cap bounds what is kept,
/// not what one event makes; a step now makes at most the larger of the cap and a
/// million tokens, and what it does not make is counted.
#[test]
fn a_deep_chain_makes_at_most_the_step_bound_of_tokens_per_event() {
    let chain = |depth: usize| {
        let mut events = String::from(r#""e0": Atomic(type: "A"), "b": Atomic(type: "B"),"#);
        for i in 1..=depth {
            events += &format!(
                r#""e{i}": Dist(a: "e{}", b: "b", max: 5.0, within: 60.0),"#,
                i - 1
            );
        }
        events += &format!(r#""out": Or(of: ["e{depth}"])"#);
        net(&events)
    };
    let run = |net: &Net| {
        let mut d = Detector::new(net);
        let mut found = 0;
        for i in 0..6u32 {
            let ev = Event::new(
                i64::from(i),
                ["A", "B"][i as usize % 2],
                t(f64::from(i) * 5.0),
            )
            .at(f64::from(i), 0.0);
            found += d.push(ev).unwrap().len();
        }
        (found, d.stats())
    };
    // A shallow chain is not touched by the bound: every level fires.
    let (found, stats) = run(&chain(40));
    assert_eq!(stats.truncated_firings, 0, "{stats:?}");
    assert!(found > 0);
    // The deep one stops at the bound, and says so.
    let (_, stats) = run(&chain(1_500));
    assert!(stats.truncated_firings > 0, "{stats:?}");
}
