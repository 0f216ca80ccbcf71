//! Fuzz target: see `harness::cluster_handshake`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::cluster_handshake(data));
