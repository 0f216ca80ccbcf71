#!/usr/bin/env bash
# Runs the criterion benches (`benches/run.sh --bench detector`, …) with the code
# generation `ccpn-run` ships with.
#
# The release profile aborts on panic (Cargo.toml), but cargo builds benchmarks with
# unwinding whatever the profile says (rust-lang/cargo#11214), and unwinding costs the
# detector 6-15 % of its speed. This passes the flag itself, in a target directory of
# its own so that other builds are not redone. Plain `cargo bench --features bench`
# still works and measures the unwinding build.
#
# `--features bench` opens the crate-private indexes to `benches/count.rs` and
# `benches/zones.rs` (`ccpn::bench`); without it cargo skips those two.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/bench-abort}"
export RUSTFLAGS="${RUSTFLAGS:-} -C panic=abort"
exec cargo bench --features bench "$@"
