//! Benchmarks of `Detector::push` over the seeded `uniform` stream: on the 20-composite
//! benchmark net, and on the counting nets (`Count` n = 3, ~5 neighbours in the
//! window, planar and WGS84, the stream then in lon/lat); and of the reader.
//!
//! Run with `benches/run.sh --bench detector` to measure the build `ccpn-run` ships
//! (no unwinding); `cargo bench` builds benchmarks with unwinding.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use ccpn::io::read::LineParser;
use ccpn::{Detector, Event, Net};

use ccpn::bench::stream;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EVENTS: usize = 1_000_000;

fn net(name: &str) -> Net {
    let path = format!("{}/benches/nets/{name}.ron", env!("CARGO_MANIFEST_DIR"));
    Net::from_file(&path).expect("bench net")
}

/// The uniform stream on the net's space.
fn lines(net: &Net, n: usize) -> Vec<String> {
    let mut gen = match net.space() {
        ccpn::Space::Planar => stream::Gen::uniform(7),
        ccpn::Space::Wgs84 => stream::Gen::uniform_wgs84(7),
    };
    (0..n).map(|_| gen.next_json()).collect()
}

fn parser(net: &Net) -> LineParser {
    // As ccpn-run does: events share one copy of each name the net reads.
    LineParser::json(net.space()).with_known_names(net.names_read())
}

fn events(net: &Net, lines: &[String]) -> Vec<Event> {
    let parser = parser(net);
    lines
        .iter()
        .map(|l| parser.parse(l.as_bytes()).expect("generated line"))
        .collect()
}

fn push(c: &mut Criterion) {
    let mut g = c.benchmark_group("detector");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    for name in ["twenty", "count", "count_wgs84"] {
        let net = net(name);
        let events = events(&net, &lines(&net, EVENTS));
        g.bench_function(format!("push/net={name}/events=1e6"), |b| {
            b.iter_batched(
                || events.clone(),
                |events| {
                    let mut d = Detector::new(&net);
                    let mut out = Vec::new();
                    let mut found = 0usize;
                    for e in events {
                        d.push_into(e, &mut out).expect("in order");
                        found += out.len();
                        out.clear();
                    }
                    black_box(found)
                },
                BatchSize::PerIteration,
            )
        });
    }
    let net = net("twenty");
    let lines = lines(&net, EVENTS);
    g.bench_function("parse_json/events=1e6", |b| {
        let parser = parser(&net);
        b.iter(|| {
            let mut n = 0usize;
            for l in &lines {
                n += parser
                    .parse(l.as_bytes())
                    .map(|e| e.attrs.len())
                    .unwrap_or(0);
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, push);
criterion_main!(benches);
