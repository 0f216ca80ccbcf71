#!/usr/bin/env bash
# End-to-end throughput of ccpn-run: JSON Lines in, JSON Lines out, through a file.
#
#   benches/e2e.sh [NET] [EVENTS_COUNT]
#
# Generates the seeded `uniform` stream (once, cached in $TMPDIR), runs ccpn-run on it
# three times with --stats, and prints events/s of each run (the figure ccpn-run
# itself reports: events processed / wall time from start to the last detection
# written). Detections go to /dev/null so the terminal is not measured.
set -euo pipefail
cd "$(dirname "$0")/.."
net=${1:-benches/nets/twenty.ron}
count=${2:-1000000}
tmp=${TMPDIR:-/tmp}
events="$tmp/ccpn-uniform-$count.jsonl"
cargo build --release --quiet --bin ccpn-run --features bench --example gen_events
if [ ! -s "$events" ]; then
    ./target/release/examples/gen_events uniform "$count" > "$events"
fi
echo "net: $net   events: $count ($(du -h "$events" | cut -f1))"
for run in 1 2 3; do
    ./target/release/ccpn-run "$net" "$events" --stats 2>&1 >/dev/null | tail -n 1 |
        python3 -c 'import json,sys; s=json.load(sys.stdin); print("run %s: %12.0f events/s  %9d detections  %.2f s" % (sys.argv[1], s["events_per_s"], s["detections"], s["elapsed_s"]))' "$run"
done
