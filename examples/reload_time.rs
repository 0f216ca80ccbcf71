//! How long `Detector::reload` takes on a large running net: 10,000 zones read by
//! 100 `Within`s, each feeding a keyed `Seq` whose initiators wait a day, about a
//! million tokens waiting; then one small component (a `Seq` of two atomics) has
//! its window edited. Prints the time to load the edited net and to reload it.
//!
//! `cargo run --release --example reload_time [events]`

use std::fmt::Write as _;
use std::time::Instant;

use ccpn::{Detector, DetectorOptions, Event, Net, Timestamp, Value};

fn net(small_window: f64) -> String {
    let mut s = String::from("Net(\n  zones: {\n");
    for z in 0..10_000 {
        let (x, y) = ((z % 100) as f64 * 10.0, (z / 100) as f64 * 10.0);
        let _ = writeln!(
            s,
            "    \"z{z}\": Rect(min: ({x:.1}, {y:.1}), max: ({:.1}, {:.1})),",
            x + 10.0,
            y + 10.0
        );
    }
    s.push_str("  },\n  events: {\n    \"a\": Atomic(type: \"A\"), \"b\": Atomic(type: \"B\"),\n");
    let mut outputs = Vec::new();
    for g in 0..100 {
        let zones: Vec<String> = (0..100).map(|i| format!("\"z{}\"", g * 100 + i)).collect();
        let _ = writeln!(
            s,
            "    \"in{g}\": Within(of: \"a\", zones: [{}]),\n    \"long{g}\": Seq(of: [\"in{g}\", \"b\"], within: \"1d\", key: \"ship\"),",
            zones.join(", ")
        );
        outputs.push(format!("\"long{g}\""));
    }
    let _ = writeln!(
        s,
        "    \"small\": Seq(of: [\"a\", \"b\"], within: {small_window:.1}),\n  }},\n  outputs: [{}, \"small\"],\n)",
        outputs.join(", ")
    );
    s
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let t = Instant::now();
    let v1 = Net::from_ron("v1.ron", &net(60.0)).expect("the net loads");
    println!("load v1: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let mut d = Detector::with_options(
        &v1,
        DetectorOptions {
            max_tokens: usize::MAX,
            ..DetectorOptions::default()
        },
    );
    let t = Instant::now();
    for i in 0..n {
        let (x, y) = (
            (i * 7919 % 1000) as f64 + 0.5,
            (i * 104_729 % 1000) as f64 + 0.5,
        );
        let e = Event::new(
            i as i64,
            "A",
            Timestamp::from_secs_f64(i as f64 * 0.01).unwrap(),
        )
        .at(x, y)
        .with("ship", Value::Num((i % 5000) as f64));
        d.push(e).expect("in time order");
    }
    println!(
        "pushed {n} events in {:.1} s: {} live tokens",
        t.elapsed().as_secs_f64(),
        d.stats().live_tokens
    );
    let t = Instant::now();
    let v2 = Net::from_ron("v2.ron", &net(90.0)).expect("the edited net loads");
    println!("load v2: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    // The edit, undone, and again.
    for next in [&v2, &v1, &v2] {
        let t = Instant::now();
        let report = d.reload(next).expect("same space");
        let took = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "reload: {took:.1} ms ({} kept, {} reset), {} live tokens",
            report.kept.len(),
            report.reset.len(),
            d.stats().live_tokens
        );
    }
}
