//! Fuzz target: see `harness::event_reader`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::event_reader(data));
