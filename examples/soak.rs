//! Streams many events through a net with windows and checks that the tokens it
//! holds stay bounded: the windows, not the stream's length, bound its memory.
//!
//! ```text
//! cargo run --release --features bench --example soak -- [EVENTS] [MAX_PEAK] [NET]
//! ```
//! defaults: 10,000,000 events, a peak of 5,000 live tokens, the benchmark net. Prints
//! the detector's statistics and exits non-zero if the peak exceeds `MAX_PEAK`. CI runs
//! it after the tests.

use std::process::ExitCode;

use ccpn::io::read::LineParser;
use ccpn::{Detector, Net};

use ccpn::bench::stream;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let events: u64 = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let max_peak: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5_000);
    let path = args
        .get(2)
        .map(String::as_str)
        .unwrap_or("benches/nets/twenty.ron");
    let net = match Net::from_file(path) {
        Ok(net) => net,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::from(2);
        }
    };
    let parser = LineParser::json(net.space()).with_known_names(net.names_read());
    let mut detector = Detector::new(&net);
    let mut gen = stream::Gen::uniform(7);
    let mut out = Vec::new();
    let mut detections = 0u64;
    for i in 0..events {
        let event = match parser.parse(gen.next_json().as_bytes()) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("soak: generated event {i}: {e}");
                return ExitCode::from(1);
            }
        };
        if let Err(e) = detector.push_into(event, &mut out) {
            eprintln!("soak: {e}");
            return ExitCode::from(1);
        }
        detections += out.len() as u64;
        out.clear();
    }
    let s = detector.stats();
    println!(
        "soak: {events} events, {detections} detections, live tokens {} (peak {}), evicted {}",
        s.live_tokens, s.peak_live_tokens, s.evicted
    );
    if s.peak_live_tokens > max_peak || s.evicted > 0 {
        eprintln!(
            "soak: the peak of live tokens {} exceeds {max_peak}",
            s.peak_live_tokens
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
