//! Fuzz checks of ccpn's bounds: nets of any shape load (or are refused) in bounded
//! time without overflowing the stack, and hostile streams through the operators
//! that can multiply their work (`Count`, `Any`, `Seq` unrestricted, `P`) cost
//! bounded time per event and bounded memory, with the detector's caps holding.
//!
//! Memory is the process's heap after each event, above what it was before the run,
//! counted by `cap` (the global allocator of every binary this harness is part of:
//! the fuzz targets and `tests/fuzz_corpus.rs`, whose other tests add a little).

use std::alloc::System;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use cap::Cap;

use ccpn::{Detector, DetectorOptions, Event, Net, Timestamp};

/// The system allocator, counting the heap in use: the allocator of every binary
/// this harness is part of.
#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// The heap in use now.
fn heap() -> usize {
    HEAP.allocated()
}

/// The most one event may take. At the caps an event's work is bounded (100,000
/// firings of an operator: 0.13 s for a jump of 10⁷ s at a 1 ms period in a release
/// build, 7 s in an instrumented fuzzing build at low priority), so this only trips
/// on work the caps do not bound.
const PER_EVENT: Duration = Duration::from_secs(60);
/// The most a net may take to load or be refused. A release build loads the largest
/// nets made here (20,000 events) in under half a second; an instrumented fuzzing
/// build on a busy machine took minutes, so only a blow-up (quadratic or worse) trips
/// this.
const PER_NET: Duration = Duration::from_secs(600);
/// The most heap a fuzzed stream may hold at its peak.
const PEAK_BYTES: usize = 512 << 20;
/// Caps of the detectors the streams run through.
const OPTIONS: DetectorOptions = DetectorOptions {
    max_tokens: 20_000,
    max_sets: 20_000,
    zone_index: true,
};

/// The nets whose work can grow fastest with a stream: every set of five co-located
/// events, every combination of four of five types, every pair, ticks every ms.
const HEAVY: [&str; 4] = [
    r#"Net(events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "any": Or(of: ["a", "b"]),
        "five": Count(of: "any", n: 5, distance: 5.0, window: 600.0) }, outputs: ["five"])"#,
    r#"Net(events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"), "c": Atomic(type: "C"),
        "d": Atomic(type: "D"), "e": Atomic(type: "E"),
        "four": Any(m: 4, of: ["a", "b", "c", "d", "e"], within: 600.0, context: Unrestricted) },
        outputs: ["four"])"#,
    r#"Net(events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "ab": Seq(of: ["a", "b"], within: 600.0, context: Unrestricted) }, outputs: ["ab"])"#,
    r#"Net(events: { "a": Atomic(type: "A"), "b": Atomic(type: "B"),
        "tick": P(start: "a", period: 0.001, end: "b", within: 100000000.0) }, outputs: ["tick"])"#,
];

/// A hostile stream (three bytes an event: type, time step, place) through one of
/// [`HEAVY`]: each event within [`PER_EVENT`], the heap within [`PEAK_BYTES`] (with
/// the event's detections, before they are dropped), the token cap holding.
pub(crate) fn stream_bounds(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let net = Net::from_ron("heavy.ron", HEAVY[usize::from(first) % HEAVY.len()]).expect("net");
    let types = ["A", "B", "C", "D", "E"];
    let mut t = 0.0f64;
    let base = heap();
    let mut peak = 0;
    {
        let mut d = Detector::with_options(&net, OPTIONS);
        for (i, b) in rest.chunks_exact(3).take(2_000).enumerate() {
            t += [0.0, 0.0, 0.0, 0.001, 1.0, 60.0, 1e5, 1e7][usize::from(b[1]) % 8];
            let Some(time) = Timestamp::from_secs_f64(t) else {
                break;
            };
            // Most events at one spot (every set is a match), some scattered.
            let (x, y) = if b[2] < 192 {
                (0.0, 0.0)
            } else {
                (f64::from(b[2] % 16), f64::from(b[2] / 16 % 4))
            };
            let ev = Event::new(i as i64, types[usize::from(b[0]) % 5], time).at(x, y);
            let started = Instant::now();
            let found = d.push(ev).expect("in time order");
            peak = peak.max(heap().saturating_sub(base));
            drop(found);
            let took = started.elapsed();
            assert!(took < PER_EVENT, "event {i} took {took:?}");
            assert!(
                d.stats().live_tokens <= OPTIONS.max_tokens,
                "{:?}",
                d.stats()
            );
            peak = peak.max(heap().saturating_sub(base));
        }
        let started = Instant::now();
        drop(d.finish());
        assert!(
            started.elapsed() < PER_EVENT,
            "finish took {:?}",
            started.elapsed()
        );
    }
    assert!(
        peak <= PEAK_BYTES,
        "the stream held {peak} bytes at its peak"
    );
}

/// A net of a shape and size decoded from the bytes (a chain of references, a wide
/// `Or`, a cycle, many outputs; up to about 20,000 events): it loads or is refused
/// within [`PER_NET`], and one that loads runs eight events within [`PER_EVENT`] each.
pub(crate) fn net_shapes(data: &[u8]) {
    let [shape, hi, lo, op, ..] = *data else {
        return;
    };
    let size = (usize::from(hi) << 8 | usize::from(lo)) % 20_000 + 1;
    let mut text =
        String::from("Net(events: {\n\"e0\": Atomic(type: \"A\"),\n\"e1\": Atomic(type: \"B\"),\n");
    let mut outputs = vec!["e0".to_owned()];
    let wrap = |prev: &str| match op % 5 {
        0 => format!("Or(of: [\"{prev}\"])"),
        1 => format!("Seq(of: [\"{prev}\", \"e1\"], within: 60.0)"),
        2 => format!("Times(k: 2, of: \"{prev}\", within: 60.0)"),
        3 => format!("Not(start: \"{prev}\", absent: \"e1\", end: \"e0\", within: 60.0)"),
        _ => format!("Dist(a: \"{prev}\", b: \"e1\", max: 5.0, within: 60.0)"),
    };
    match shape % 4 {
        // A chain e2 <- e3 <- … of one operator.
        0 => {
            for i in 2..size + 2 {
                let prev = if i == 2 {
                    "e0".to_owned()
                } else {
                    format!("e{}", i - 1)
                };
                let _ = writeln!(text, "\"e{i}\": {},", wrap(&prev));
            }
            outputs = vec![format!("e{}", size + 1)];
        }
        // One Or over many atomic events.
        1 => {
            let of: Vec<String> = (2..size + 2).map(|i| format!("\"e{i}\"")).collect();
            for i in 2..size + 2 {
                let _ = writeln!(text, "\"e{i}\": Atomic(type: \"T{}\"),", i % 7);
            }
            let _ = writeln!(text, "\"wide\": Or(of: [{}]),", of.join(", "));
            outputs = vec!["wide".into()];
        }
        // A cycle through `size` events.
        2 => {
            for i in 2..size + 2 {
                let next = if i == size + 1 { 2 } else { i + 1 };
                let _ = writeln!(text, "\"e{i}\": {},", wrap(&format!("e{next}")));
            }
            outputs = vec!["e2".into()];
        }
        // Many operators, each an output.
        _ => {
            for i in 2..size + 2 {
                let _ = writeln!(text, "\"e{i}\": {},", wrap("e0"));
                outputs.push(format!("e{i}"));
            }
        }
    }
    let quoted: Vec<String> = outputs.iter().map(|o| format!("\"{o}\"")).collect();
    let _ = write!(text, "}},\noutputs: [{}])", quoted.join(", "));
    let started = Instant::now();
    let loaded = Net::from_ron("shape.ron", &text);
    let took = started.elapsed();
    assert!(
        took < PER_NET,
        "a net of {size} events took {took:?} to load"
    );
    let Ok(net) = loaded else {
        return;
    };
    let mut d = Detector::new(&net);
    for i in 0..8u32 {
        let ev = Event::new(
            i64::from(i),
            ["A", "B"][i as usize % 2],
            Timestamp::from_secs(i64::from(i) * 5).expect("time"),
        )
        .at(f64::from(i), 0.0);
        let started = Instant::now();
        d.push(ev).expect("in time order");
        assert!(
            started.elapsed() < PER_EVENT,
            "an event took {:?}",
            started.elapsed()
        );
    }
}
