//! Times the events whose cost used to grow with what the detector holds: a
//! terminator with no eligible partner among a million waiting tokens, `Count` with
//! n = 1024 once its set cap is full, and one event completing C(69, 4) `Count` sets.
//! Timed with `Instant` around the pushes only (docs/performance.md, *Bounded work
//! per event*).
//!
//! ```text
//! cargo run --release --example event_cost [TOKENS]
//! ```

use std::time::Instant;

use ccpn::{Detector, Event, Net, Timestamp};

fn t(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s).expect("time")
}

fn net_of(events: &str) -> Result<Net, ccpn::NetError> {
    Net::from_ron(
        "event_cost.ron",
        &format!("Net(events: {{ {events} }}, outputs: [\"out\"])"),
    )
}

/// `tokens` waiting `a` of one ship, then 1,000 `b` that pair with none of them:
/// microseconds per `b`.
fn no_partner(op: &str, tokens: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let net = net_of(&format!(
        r#""a": Atomic(type: "A"), "b": Atomic(type: "B"), "out": {op}"#
    ))?;
    let mut d = Detector::new(&net);
    for i in 0..tokens {
        d.push(
            Event::new(i as i64, "A", t(i as f64 * 1e-4))
                .at(0.0, 10.0)
                .with("ship", 1.0),
        )?;
    }
    let from = tokens as f64 * 1e-4;
    let start = Instant::now();
    let mut found = 0;
    for j in 0..1_000 {
        let e = Event::new((tokens + j) as i64, "B", t(from + j as f64 * 1e-3))
            .at(0.0, 0.0)
            .with("ship", 1.0);
        found += d.push(e)?.len();
    }
    assert_eq!(found, 0);
    Ok(start.elapsed().as_secs_f64() * 1e6 / 1_000.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tokens: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let seq = r#"Seq(of: ["a", "b"], within: "1d", distinct: "ship")"#;
    let dir = r#"Direction(rel: N, of: "b", from: "a", within: "1d")"#;
    println!(
        "Seq distinct, no partner among {tokens}: {:.1} µs per terminator",
        no_partner(seq, tokens)?
    );
    println!(
        "Direction, no partner among {tokens}: {:.1} µs per terminator",
        no_partner(dir, tokens)?
    );

    // Count n = 1024 at one spot: 25 points fill the default cap of 1,000,000 sets.
    let net = net_of(
        r#""a": Atomic(type: "A"), "out": Count(of: "a", n: 1024, distance: 100.0, window: "1h")"#,
    )?;
    let mut d = Detector::new(&net);
    let at = |i: i64| Event::new(i, "A", t(i as f64 * 1e-2)).at(0.0, 0.0);
    let mut i = 0;
    while d.stats().refused_sets == 0 {
        d.push(at(i))?;
        i += 1;
    }
    let filled = i;
    let start = Instant::now();
    for _ in 0..100 {
        d.push(at(i))?;
        i += 1;
    }
    println!(
        "Count n = 1024, set cap full after {filled} points: {:.3} ms per event",
        start.elapsed().as_secs_f64() * 1e3 / 100.0
    );

    // Count n = 5 over 70 points pairwise close: the 70th completes C(69, 4) sets.
    let net = net_of(
        r#""a": Atomic(type: "A"), "out": Count(of: "a", n: 5, distance: 100.0, window: "1h")"#,
    )?;
    let mut d = Detector::new(&net);
    let (mut most, mut slowest) = (0, 0.0f64);
    for i in 0..70 {
        let start = Instant::now();
        let found = d.push(at(i))?;
        slowest = slowest.max(start.elapsed().as_secs_f64());
        most = most.max(found.len());
    }
    println!(
        "Count n = 5, 70 points: at most {most} detections from one event, the slowest in {:.0} ms; {} events cut short",
        slowest * 1e3,
        d.stats().truncated_firings
    );
    Ok(())
}
