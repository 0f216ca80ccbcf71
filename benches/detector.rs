//! Benchmarks of `Detector::push` on the 20-composite benchmark net over the seeded
//! `uniform` stream, and of the reader on the same stream.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use ccpn::io::read::LineParser;
use ccpn::{Detector, Event, Net};

#[path = "../examples/common/stream.rs"]
mod stream;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EVENTS: usize = 1_000_000;

fn net() -> Net {
    Net::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/nets/twenty.ron"
    ))
    .expect("bench net")
}

fn lines(n: usize) -> Vec<String> {
    let mut gen = stream::Gen::uniform(7);
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
    let net = net();
    let lines = lines(EVENTS);
    let events = events(&net, &lines);
    let mut g = c.benchmark_group("detector");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("push/net=twenty/events=1e6", |b| {
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
