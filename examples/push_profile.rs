//! Pushes a generated stream through a net in-process and reports events/s: a
//! target for profilers (`perf record`), without I/O in the way.
//!
//! ```text
//! cargo run --release --features bench --example push_profile -- benches/nets/twenty.ron 1000000 [BATCH]
//! ```
//!
//! All events are parsed before the clock starts, unless `BATCH` is given: then they
//! are parsed `BATCH` at a time, each batch just before it is pushed, as `ccpn-run`'s
//! reader hands them to the detector; only the pushes are timed either way.

use std::time::Instant;

use ccpn::io::read::LineParser;
use ccpn::{Detector, Net};

use ccpn::bench::stream;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let net = Net::from_file(
        args.first()
            .map(String::as_str)
            .unwrap_or("benches/nets/twenty.ron"),
    )?;
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    // Events parsed `batch` at a time just before they are pushed (as ccpn-run's
    // reader hands them over), or all before the clock starts (0, the default).
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    // As ccpn-run does: events share one copy of each name the net reads.
    let parser = LineParser::json(net.space()).with_known_names(net.names_read());
    // The uniform stream, on the net's space.
    let mut gen = match net.space() {
        ccpn::Space::Planar => stream::Gen::uniform(7),
        ccpn::Space::Wgs84 => stream::Gen::uniform_wgs84(7),
    };
    let mut parse = |k: usize| -> Result<Vec<_>, ccpn::io::read::LineError> {
        (0..k)
            .map(|_| parser.parse(gen.next_json().as_bytes()))
            .collect()
    };
    let mut d = Detector::new(&net);
    let mut out = Vec::new();
    let mut found = 0;
    let mut secs = 0.0;
    let mut left = n;
    while left > 0 {
        let k = if batch == 0 { left } else { batch.min(left) };
        let events = parse(k)?;
        left -= k;
        let start = Instant::now();
        for e in events {
            d.push_into(e, &mut out)?;
            found += out.len();
            out.clear();
        }
        secs += start.elapsed().as_secs_f64();
    }
    println!(
        "{n} events, {found} detections, {:.0} events/s, peak live tokens {}",
        n as f64 / secs,
        d.stats().peak_live_tokens
    );
    Ok(())
}
