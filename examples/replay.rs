//! Replays a file of events through a net in memory, as a database replays a stored
//! table through an online algorithm: every line is parsed before the clock starts,
//! the detections are kept in memory, and only the pushes are timed.
//!
//! ```text
//! cargo run --release --example replay -- NET EVENTS.jsonl [RUNS] [SETS.csv]
//! ```
//!
//! Prints, for each of RUNS runs (1 by default) on a new detector, the events, the
//! detections, the seconds and the events per second. With SETS.csv, writes each
//! detection of the last run as one line of its constituents' ids, comma-separated
//! (after the clock), for comparing the sets with another system's. On the stream of
//! `benches/postgis/run.sh` it is the like of PostgreSQL's online replay in PL/pgSQL
//! (docs/performance.md, *How far the targets are*).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use ccpn::io::read::LineParser;
use ccpn::{Detection, Detector, Event, Net};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(net), Some(events)) = (args.first(), args.get(1)) else {
        return Err("usage: replay NET EVENTS.jsonl [RUNS] [SETS.csv]".into());
    };
    let runs: usize = match args.get(2) {
        Some(n) => n.parse().map_err(|e| format!("RUNS {n}: {e}"))?,
        None => 1,
    };
    let net = Net::from_file(net)?;
    // As ccpn-run reads: events share one copy of each name the net reads.
    let parser = LineParser::json(net.space()).with_known_names(net.names_read());
    let mut stream: Vec<Event> = Vec::new();
    for (i, line) in BufReader::new(File::open(events)?).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        stream.push(
            parser
                .parse(line.as_bytes())
                .map_err(|e| format!("{events}:{}: {e}", i + 1))?,
        );
    }
    let mut last: Vec<Detection> = Vec::new();
    for _ in 0..runs.max(1) {
        let events = stream.clone();
        let mut detector = Detector::new(&net);
        let mut found = Vec::new();
        let start = Instant::now();
        for e in events {
            detector.push_into(e, &mut found)?;
        }
        found.extend(detector.finish());
        let secs = start.elapsed().as_secs_f64();
        println!(
            "ccpn replay: {} events, {} detections in {secs:.4} s ({:.0} events/s)",
            stream.len(),
            found.len(),
            stream.len() as f64 / secs
        );
        last = found;
    }
    if let Some(path) = args.get(3) {
        let mut out = BufWriter::new(File::create(path)?);
        for d in &last {
            let ids: Vec<String> = d.ids().map(ToString::to_string).collect();
            writeln!(out, "{}", ids.join(","))?;
        }
        out.flush()?;
    }
    Ok(())
}
