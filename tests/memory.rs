//! Bounded memory under an adversarial stream (every event in one spot, at one
//! time): `max_tokens` and `max_sets` hold, the heap stops growing once they are
//! reached, and the bytes per live token and per kept counting set stay within the
//! figures docs/performance.md gives. The heap is measured by a counting allocator.

use std::alloc::System;
use std::sync::Mutex;

use cap::Cap;
use ccpn::{Detector, DetectorOptions, Event, Net, Timestamp};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// The heap is shared by the tests of this file: one measures at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn net(events: &str) -> Net {
    Net::from_ron(
        "memory.ron",
        &format!("Net(\n    events: {{ {events} }},\n    outputs: [\"out\"],\n)"),
    )
    .expect("net loads")
}

/// A detector for `net` holding at most `max_tokens` tokens.
fn capped(net: &Net, max_tokens: usize) -> Detector {
    Detector::with_options(
        net,
        DetectorOptions {
            max_tokens,
            ..DetectorOptions::default()
        },
    )
}

/// The `i`-th event of the stream: type `A`, one spot, one time, a key per event
/// when `keyed`, and two attributes as sensors send them.
fn event(i: u64, keyed: bool) -> Event {
    let t = Timestamp::from_secs_f64(1_700_000_000.0).expect("time");
    let e = Event::new(i as i64, "A", t)
        .at(10.0, 20.0)
        .with("speed", 12.5)
        .with("iff", "foe");
    if keyed {
        e.with("k", i as f64)
    } else {
        e.with("k", 1.0)
    }
}

/// Pushes `n` events from `from`; returns the heap's growth.
fn push(detector: &mut Detector, from: u64, n: u64, keyed: bool) -> isize {
    let before = HEAP.allocated() as isize;
    for i in from..from + n {
        let found = detector.push(event(i, keyed)).expect("in order");
        assert!(found.is_empty(), "the stream detects nothing");
    }
    HEAP.allocated() as isize - before
}

/// Bytes per live token with `cap` tokens held, and the growth after the cap.
fn tokens(keyed: bool) -> (f64, isize) {
    // No window, no end: every `a` waits for a `b` that never comes.
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "out": Seq(of: ["a", "b"], key: "k", context: Unrestricted)"#);
    let cap = 20_000;
    let (grown, after) = fill_past_cap(&mut capped(&net, cap), cap, keyed);
    (grown as f64 / cap as f64, after)
}

/// Pushes `cap` events, then `3 × cap` more; checks that the detector holds `cap`
/// tokens after each, each newcomer past the cap evicting one. Returns the heap's
/// growth up to the cap and past it.
fn fill_past_cap(detector: &mut Detector, cap: usize, keyed: bool) -> (isize, isize) {
    let grown = push(detector, 0, cap as u64, keyed);
    assert_eq!(detector.stats().live_tokens, cap);
    let past = push(detector, cap as u64, 3 * cap as u64, keyed);
    let stats = detector.stats();
    assert_eq!(stats.live_tokens, cap, "the cap holds");
    assert_eq!(stats.evicted, 3 * cap as u64, "each newcomer evicts one");
    (grown, past)
}

#[test]
fn max_tokens_bounds_the_heap() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (per_token, after) = tokens(false);
    eprintln!("one key: {per_token:.0} bytes per live token; {after} bytes more after the cap");
    assert!(per_token < 1024.0, "{per_token} bytes per token");
    assert!(
        after < 64 * 1024,
        "the heap grew {after} bytes past the cap"
    );

    let (per_token, after) = tokens(true);
    eprintln!(
        "a key per token: {per_token:.0} bytes per live token; {after} bytes more after the cap"
    );
    assert!(per_token < 1536.0, "{per_token} bytes per token");
    assert!(
        after < 256 * 1024,
        "the heap grew {after} bytes past the cap"
    );
}

#[test]
fn max_sets_bounds_the_heap() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Every event is close to every other: the partial sets (levels 2 to 19) grow
    // as 2^k, and the cap is reached before any set is complete.
    let net = net(r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: 20, distance: 100.0, window: "1h")"#);
    let cap = 50_000;
    let mut detector = Detector::with_options(
        &net,
        DetectorOptions {
            max_sets: cap,
            ..DetectorOptions::default()
        },
    );
    let before = HEAP.allocated() as isize;
    let mut i = 0;
    while detector.stats().refused_sets == 0 {
        let found = detector.push(event(i, true)).expect("in order");
        assert!(found.is_empty(), "no 20 events yet");
        i += 1;
        assert!(i < 1_000, "the cap is never reached");
    }
    let stats = detector.stats();
    let sets: usize = stats.live_sets.iter().sum();
    let per_set = (HEAP.allocated() as isize - before) as f64 / sets as f64;
    assert!(sets <= cap, "{sets} live sets, cap {cap}");
    // Dense input: the cap stops the growth, the run goes on.
    let grown = {
        let before = HEAP.allocated() as isize;
        for j in i..i + 200 {
            let _ = detector.push(event(j, true)).expect("in order");
        }
        HEAP.allocated() as isize - before
    };
    let stats = detector.stats();
    assert!(stats.live_sets.iter().sum::<usize>() <= cap);
    assert!(stats.refused_sets > 0);
    eprintln!(
        "{sets} sets after {i} events: {per_set:.0} bytes per kept set; {grown} bytes more over 200 events past the cap"
    );
    assert!(per_set < 256.0, "{per_set} bytes per set");
    assert!(
        grown < 4 * 1024 * 1024,
        "the heap grew {grown} bytes past the cap"
    );
}

#[test]
fn max_tokens_bounds_open_intervals() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cap = 1_000;
    let t = Timestamp::from_secs_f64(1_700_000_000.0).expect("time");
    // A*: one interval, never closed, collecting every occurrence inside it.
    let net1 = net(
        r#""s": Atomic(type: "S"), "a": Atomic(type: "A"), "z": Atomic(type: "Z"),
        "out": AStar(start: "s", e: "a", end: "z")"#,
    );
    let mut detector = capped(&net1, cap);
    let _ = detector.push(Event::new(0, "S", t)).expect("in order");
    let grown = push(&mut detector, 1, 4 * cap as u64, false);
    assert_eq!(detector.stats().live_tokens, cap, "the cap holds");
    let past = push(&mut detector, 10_000, 4 * cap as u64, false);
    assert!(
        past < 16 * 1024,
        "the heap grew {past} bytes past the cap ({grown} before)"
    );
    let stats = detector.stats();
    assert_eq!(stats.live_tokens, cap);
    assert_eq!(stats.evicted, 7 * cap as u64 + 1);
    // The end closes the interval with what it still holds.
    let found = detector.push(Event::new(99_999, "Z", t)).expect("in order");
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].ids().count(),
        cap + 1,
        "the start, the last {} inside, the end",
        cap - 1
    );
    assert_eq!(detector.stats().live_tokens, 0);

    // A, keyed: an open interval per key value, a new key with every start.
    let net2 = net(
        r#""s": Atomic(type: "A"), "a": Atomic(type: "B"), "z": Atomic(type: "Z"),
        "out": A(start: "s", e: "a", end: "z", key: "k")"#,
    );
    let mut detector = capped(&net2, cap);
    push(&mut detector, 0, 3 * cap as u64, true);
    let stats = detector.stats();
    assert_eq!(stats.live_tokens, cap, "the cap holds");
    assert_eq!(stats.evicted, 2 * cap as u64);
}

#[test]
fn max_tokens_bounds_the_live_events_of_count() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // One spot, one time, one `iff`: every event is close to every other and stays in
    // the window, but no two are distinct, so nothing is kept but the events.
    let net = net(r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: 3, distance: 100.0, window: "1h", distinct: "iff")"#);
    let cap = 2_000;
    let (grown, past) = fill_past_cap(&mut capped(&net, cap), cap, true);
    let per_event = grown as f64 / cap as f64;
    eprintln!("Count: {per_event:.0} bytes per live event; {past} bytes more after the cap");
    assert!(per_event < 1024.0, "{per_event} bytes per live event");
    assert!(past < 64 * 1024, "the heap grew {past} bytes past the cap");
}

#[test]
fn count_detects_among_the_events_the_cap_keeps() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let net = net(r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: 2, distance: 100.0, window: "1h")"#);
    let mut detector = capped(&net, 3);
    let mut pairs = Vec::new();
    for i in 0..6 {
        for d in detector.push(event(i, true)).expect("in order") {
            let ids: Vec<String> = d.ids().map(ToString::to_string).collect();
            pairs.push(ids.join(","));
        }
    }
    // Each event pairs with the (at most) two before it that the cap still holds.
    assert_eq!(
        pairs,
        ["0,1", "0,2", "1,2", "1,3", "2,3", "2,4", "3,4", "3,5", "4,5"]
    );
}

/// The `i`-th report of a stream where every report is a new key value `k`, each
/// 10 apart (so no two are close) and all at one time (so nothing timed is due).
fn new_key(i: u64) -> Event {
    let t = Timestamp::from_secs_f64(1_700_000_000.0).expect("time");
    Event::new(i as i64, "A", t)
        .at(10.0 * i as f64, 20.0)
        .with("speed", 12.5)
        .with("iff", "foe")
        .with("k", i as f64)
}

/// Pushes reports `from..from + n` of [`new_key`]; returns the heap's growth.
fn push_new_keys(detector: &mut Detector, from: u64, n: u64) -> isize {
    let before = HEAP.allocated() as isize;
    for i in from..from + n {
        drop(detector.push(new_key(i)).expect("in order"));
    }
    HEAP.allocated() as isize - before
}

/// A state whose every report is a new key value: the cap holds its key values'
/// entries (as many per key value as `per_key` states the net keeps), the newcomers
/// past it are turned away and counted, and the heap stops growing. Returns the
/// heap per key value up to the cap and its growth past it.
fn state_keys(events: &str, per_key: usize) -> (f64, isize) {
    let net = net(events);
    let cap = 20_000;
    let keys = (cap / per_key) as u64;
    let mut detector = capped(&net, cap);
    let grown = push_new_keys(&mut detector, 0, keys);
    assert_eq!(detector.stats().live_tokens, cap, "{events}");
    let past = push_new_keys(&mut detector, keys, 3 * keys);
    let stats = detector.stats();
    assert_eq!(stats.live_tokens, cap, "the cap holds: {events}");
    assert_eq!(stats.peak_live_tokens, cap, "{events}");
    assert_eq!(
        stats.evicted,
        3 * keys,
        "each newcomer is turned away: {events}"
    );
    // Timed states keep one timer per key value held, none for those turned away.
    assert!(
        stats.timers <= keys as usize,
        "{} timers: {events}",
        stats.timers
    );
    (grown as f64 / keys as f64, past)
}

#[test]
fn max_tokens_bounds_the_key_values_of_states() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let zones = r#"Rect(min: (-1.0, -1.0), max: (1.0e9, 1.0e9))"#;
    let cases = [
        (
            "Inside",
            r#""a": Atomic(type: "A"), "out": Inside(of: "a", zones: ["z"], key: "k")"#.to_owned(),
            1,
        ),
        (
            "State",
            r#""a": Atomic(type: "A"), "b": Atomic(type: "B"), "out": State(on: "a", off: "b", key: "k")"#.to_owned(),
            1,
        ),
        (
            "Silent",
            r#""a": Atomic(type: "A"), "out": Silent(of: "a", for: "1h", key: "k")"#.to_owned(),
            1,
        ),
        (
            "Stationary",
            r#""a": Atomic(type: "A"), "out": Stationary(of: "a", radius: 5.0, for: "1h", key: "k")"#.to_owned(),
            1,
        ),
        (
            "Lasting of Inside",
            r#""a": Atomic(type: "A"), "in": Inside(of: "a", zones: ["z"], key: "k"), "out": Lasting(of: "in", min: "1h")"#.to_owned(),
            2,
        ),
        (
            "Close",
            r#""a": Atomic(type: "A"), "out": Close(of: "a", max: 1.0, within: "1m", distinct: "k")"#.to_owned(),
            1,
        ),
    ];
    for (what, events, per_key) in cases {
        let events = format!("{events} }}, zones: {{ \"z\": {zones}");
        let (per_value, past) = state_keys(&events, per_key);
        eprintln!("{what}: {per_value:.0} bytes per key value; {past} bytes more after the cap");
        assert!(
            per_value < 1536.0,
            "{what}: {per_value} bytes per key value"
        );
        assert!(
            past < 64 * 1024,
            "{what}: the heap grew {past} bytes past the cap"
        );
    }
}

#[test]
fn a_key_reporting_often_keeps_one_timer() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A tracker reporting every second to a `Silent` of an hour, and a `Lasting` of
    // an hour over a state flapping every second: one timer each, not one per report.
    let net = net(r#""a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "dark": Silent(of: "a", for: "1h", key: "k"),
        "on": State(on: "a", off: "b", key: "k"),
        "out": Lasting(of: "on", min: "1h")"#);
    let mut detector = capped(&net, 1_000);
    // The first reports make what one key value holds (its entries, its queue, the
    // timers' room); the heap is measured over the rest, when nothing new is needed.
    let mut before = 0;
    for i in 0..20_000u64 {
        if i == 1_000 {
            before = HEAP.allocated() as isize;
        }
        let t = Timestamp::from_secs_f64(1_700_000_000.0 + i as f64).expect("time");
        let ty = if i % 2 == 0 { "A" } else { "B" };
        let found = detector
            .push(Event::new(i as i64, ty, t).with("k", 1.0))
            .expect("in order");
        assert!(found.is_empty(), "nothing lasts an hour");
        assert!(
            detector.stats().timers <= 2,
            "{} timers",
            detector.stats().timers
        );
    }
    let grown = HEAP.allocated() as isize - before;
    assert!(grown < 16 * 1024, "the heap grew {grown} bytes");
}

/// One event's own detections were all held at once: 70 points pairwise close with
/// `Count(n: 5)` made C(69, 4) = 864,501 detections at the last one (C(70, 5) in all,
/// 862 MB at the peak). Each operator fires at most 100,000 times for one event, so
/// what one event's detections hold is bounded whatever the sets it completes (here
/// 50 points: 211,876 sets at the last).
#[test]
fn one_events_count_detections_stay_within_the_firing_cap() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let net = net(r#""a": Atomic(type: "A"),
        "out": Count(of: "a", n: 5, distance: 100.0, window: "1h")"#);
    let mut detector = Detector::new(&net);
    let mut most = 0;
    let mut held = 0;
    for i in 0..50 {
        let before = HEAP.allocated() as isize;
        let found = detector.push(event(i, true)).expect("in order");
        held = held.max(HEAP.allocated() as isize - before);
        most = most.max(found.len());
    }
    eprintln!("{most} detections at most from one event, holding {held} bytes at most");
    assert_eq!(most, 100_000);
    assert!(detector.stats().truncated_firings >= 1);
    assert!(
        held < 64 * 1024 * 1024,
        "one event's detections held {held} bytes"
    );
}

/// `Close` forgets a value whose latest report is older than `within` and that holds
/// no pair, at its next sweep (every half of `within`), however many values there
/// are; a value in a pair that holds is kept however old its report, and forgotten
/// at the sweep after its last pair ends.
#[test]
fn close_forgets_stale_values_and_keeps_those_in_pairs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let net = net(r#""a": Atomic(type: "A"),
        "out": Close(of: "a", max: 10.0, within: "1m", distinct: "k")"#);
    let mut detector = Detector::new(&net);
    let at = |s: f64| Timestamp::from_secs_f64(1_700_000_000.0 + s).expect("time");
    let report = |d: &mut Detector, k: u64, s: f64, x: f64, y: f64| {
        d.push(
            Event::new(k as i64, "A", at(s))
                .at(x, y)
                .with("k", k as f64),
        )
        .expect("in order")
    };
    // 1,000 lone values 100 apart, and 10 pairs 1 apart: ten starts.
    for k in 0..1000 {
        assert!(report(&mut detector, k, 0.0, 100.0 * k as f64, 0.0).is_empty());
    }
    let mut starts = 0;
    for p in 0..10u64 {
        report(&mut detector, 2000 + 2 * p, 1.0, 100.0 * p as f64, 1000.0);
        starts += report(
            &mut detector,
            2001 + 2 * p,
            1.0,
            100.0 * p as f64 + 1.0,
            1000.0,
        )
        .len();
    }
    assert_eq!(starts, 10);
    assert_eq!(detector.stats().live_tokens, 1000 + 20 + 10);
    // Ten minutes of a ticker far away: every lone value is forgotten, the pairs stay.
    for s in 1..=20 {
        report(&mut detector, 9999, 30.0 * s as f64, -1.0e6, -1.0e6);
    }
    assert_eq!(detector.stats().live_tokens, 1 + 20 + 10, "ticker, pairs");
    // One value of the first pair moves away: the pair ends, and its partner, whose
    // report is ten minutes old, goes at the sweep after.
    let ends = report(&mut detector, 2000, 601.0, 5.0e5, 5.0e5);
    assert_eq!(ends.len(), 1);
    assert_eq!(detector.stats().live_tokens, 1 + 20 + 9);
    for s in 1..=2 {
        report(&mut detector, 9999, 601.0 + 30.0 * s as f64, -1.0e6, -1.0e6);
    }
    assert_eq!(
        detector.stats().live_tokens,
        1 + 19 + 9,
        "the partner forgotten"
    );
    // A minute after its last report, the moved value goes too.
    report(&mut detector, 9999, 700.0, -1.0e6, -1.0e6);
    assert_eq!(detector.stats().live_tokens, 1 + 18 + 9);
}
