#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 300), then minimises its corpus.
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# A crash is saved under fuzz/artifacts/<target>/: copy it to
# fuzz/regressions/<target>/ with a name saying what it found, so that
# `cargo test --test fuzz_corpus` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-300}
status=0
for target in ${TARGETS:-net_loader event_reader detector states cluster_handshake stream_bounds net_shapes}; do
    echo "== $target: ${seconds}s"
    if ! cargo +nightly fuzz run -O "$target" -- \
        -max_total_time="$seconds" -max_len=4096 -print_final_stats=1; then
        echo "== $target: crash, see fuzz/artifacts/$target/"
        status=1
        continue
    fi
    cargo +nightly fuzz cmin -O "$target" -- -max_len=4096 -use_counters=0
done
exit $status
