//! Fuzz target: see `harness::net_loader`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::net_loader(data));
