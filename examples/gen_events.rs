//! Writes a seeded stream of events as JSON Lines on stdout.
//!
//! ```text
//! cargo run --release --features bench --example gen_events -- uniform 1000000 > /tmp/uniform.jsonl
//! cargo run --release --features bench --example gen_events -- uniform_wgs84 1000000 > /tmp/uniform_wgs84.jsonl
//! cargo run --release --features bench --example gen_events -- harbour 3000 [objects] [seed]
//! ```

use std::io::{self, BufWriter, Write};

use ccpn::bench::stream;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().map(String::as_str).unwrap_or("uniform");
    let count: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let objects: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(30);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(7);
    let mut gen = match scenario {
        "uniform" => stream::Gen::uniform(seed),
        "uniform_wgs84" => stream::Gen::uniform_wgs84(seed),
        "harbour" => stream::Gen::harbour(seed, objects.max(1)),
        other => {
            eprintln!("gen_events: unknown scenario {other:?} (uniform, uniform_wgs84 or harbour)");
            std::process::exit(2);
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    for _ in 0..count {
        if let Err(e) = writeln!(out, "{}", gen.next_json()) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e);
        }
    }
    out.flush()
}
