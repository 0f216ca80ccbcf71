//! The fuzz targets' corpora and found crashes, replayed on stable Rust: each file
//! under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes through the
//! same checks as `cargo fuzz run <target>` (see `fuzz/harness.rs`).

use std::fs;
use std::path::Path;

#[path = "../fuzz/harness.rs"]
mod harness;

fn replay(target: &str, check: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut ran = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.expect("entry").path()).collect();
        files.sort();
        for file in files {
            let data = fs::read(&file).expect("read corpus file");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails", file.display());
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} inputs for {target}");
}

#[test]
fn net_loader_corpus() {
    replay("net_loader", harness::net_loader);
}

#[test]
fn event_reader_corpus() {
    replay("event_reader", harness::event_reader);
}

#[test]
fn detector_corpus() {
    replay("detector", harness::detector);
}

#[test]
fn states_corpus() {
    replay("states", harness::states);
}

#[test]
fn cluster_handshake_corpus() {
    replay("cluster_handshake", harness::cluster_handshake);
}

#[test]
fn stream_bounds_corpus() {
    replay("stream_bounds", harness::stream_bounds);
}

#[test]
fn net_shapes_corpus() {
    replay("net_shapes", harness::net_shapes);
}
