//! Benchmarks of the reader on ccpn's lines: the uniform stream (85-byte lines, the
//! benchmark net's names) and the threat sample (`examples/targets.jsonl`, 150-200
//! byte lines, `nets/threat.ron`'s names), each read three ways: split into lines
//! only ([`Lines`]), parsed by serde_json into nothing (`IgnoredAny`, the JSON
//! parser's own cost), and parsed into events as `ccpn-run` parses them.
//!
//! `cargo bench --features bench --bench read`; docs/performance.md (*The reading
//! floor*) has the figures and the other JSON parsers measured against serde_json.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use ccpn::bench::stream;
use ccpn::io::read::{LineParser, Lines};
use ccpn::Net;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn net(path: &str) -> Net {
    Net::from_file(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).expect("net")
}

/// The streams: name, lines, and the net whose names the parser is given.
fn streams() -> Vec<(&'static str, Vec<String>, Net)> {
    let mut uniform = stream::Gen::uniform(7);
    let uniform = (0..100_000).map(|_| uniform.next_json()).collect();
    let path = format!("{}/examples/targets.jsonl", env!("CARGO_MANIFEST_DIR"));
    let threat = std::fs::read_to_string(path).expect("the threat sample");
    let threat = threat.lines().map(str::to_owned).collect();
    vec![
        ("uniform", uniform, net("benches/nets/twenty.ron")),
        ("threat", threat, net("nets/threat.ron")),
    ]
}

fn read(c: &mut Criterion) {
    let mut g = c.benchmark_group("read");
    g.sample_size(20);
    for (name, lines, net) in streams() {
        g.throughput(Throughput::Elements(lines.len() as u64));
        let text = lines.join("\n") + "\n";
        g.bench_function(format!("lines/{name}"), |b| {
            b.iter(|| {
                let mut lines = Lines::new(text.as_bytes(), 1 << 20);
                let mut bytes = 0;
                while let Some(Ok((_, Ok(line)))) = lines.next_line() {
                    bytes += line.len();
                }
                black_box(bytes)
            })
        });
        g.bench_function(format!("serde_json/{name}"), |b| {
            b.iter(|| {
                for l in &lines {
                    let v: serde::de::IgnoredAny = serde_json::from_str(l).expect("JSON");
                    black_box(v);
                }
            })
        });
        let parser = LineParser::json(net.space()).with_read_names(net.names_read());
        g.bench_function(format!("events/{name}"), |b| {
            b.iter(|| {
                let mut n = 0usize;
                for l in &lines {
                    n += parser.parse(l.as_bytes()).map_or(0, |e| e.attrs.len());
                }
                black_box(n)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
