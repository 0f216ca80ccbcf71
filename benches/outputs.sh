#!/usr/bin/env bash
# Writes what a `ccpn-run` binary detects on every shipped net and bench net, so that
# two builds can be compared byte for byte (a change meant to be faster must not
# change a single detection):
#
#   benches/outputs.sh BIN DIR          # e.g. target/release/ccpn-run /tmp/before
#   benches/outputs.sh BIN2 DIR2 && diff -r DIR DIR2
#
# Each run leaves DIR/NAME.out (standard output, then the exit status). The seeded
# streams are generated once into $TMPDIR; the December AIS week is included when
# $CCPN_WEEK names its CSV (examples/ais/README.md makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
dir=$2
tmp=${TMPDIR:-/tmp}
mkdir -p "$dir"
cargo build --release --quiet --features bench --example gen_events --example gen_targets --example gen_zone_net
ex=target/release/examples
uniform="$tmp/ccpn-outputs-uniform-200000.jsonl"
[ -s "$uniform" ] || "$ex/gen_events" uniform 200000 > "$uniform"
uniform_wgs84="$tmp/ccpn-outputs-uniform_wgs84-200000.jsonl"
[ -s "$uniform_wgs84" ] || "$ex/gen_events" uniform_wgs84 200000 > "$uniform_wgs84"
threat="$tmp/ccpn-outputs-threat-500.jsonl"
[ -s "$threat" ] || "$ex/gen_targets" --objects 500 --duration 3600 > "$threat"
zones="$tmp/ccpn-outputs-zones-10000.ron"
[ -s "$zones" ] || "$ex/gen_zone_net" 10000 100 > "$zones"

ais=(--field time=BaseDateTime --field id=MMSI --field MMSI=MMSI --default-type ais)
run() {
    local name=$1
    shift
    local status=0
    "$bin" "$@" > "$dir/$name.out" 2> /dev/null || status=$?
    echo "exit $status" >> "$dir/$name.out"
}

run threat nets/threat.ron examples/targets.jsonl
run threat-geojson nets/threat.ron examples/targets.jsonl --output geojson
run threat-500 nets/threat.ron "$threat"
run harbour nets/harbour.ron examples/harbour.jsonl
run hotspots nets/hotspots.ron examples/incidents.csv
run hotspots-geojson nets/hotspots.ron examples/incidents.csv --output geojson
run geofence nets/geofence.ron examples/geofence.jsonl
run maritime-hour nets/maritime.ron examples/ais/ny_harbor_2020-06-30.csv "${ais[@]}"
run maritime-hour-geojson nets/maritime.ron examples/ais/ny_harbor_2020-06-30.csv "${ais[@]}" --output geojson
if [ -n "${CCPN_WEEK:-}" ]; then
    run maritime-week nets/maritime.ron "$CCPN_WEEK" "${ais[@]}"
fi
for net in benches/nets/*.ron; do
    case $net in
    *wgs84*) run "bench-$(basename "$net" .ron)" "$net" "$uniform_wgs84" ;;
    *) run "bench-$(basename "$net" .ron)" "$net" "$uniform" ;;
    esac
done
run zones-10000 "$zones" "$uniform"
echo "$(ls "$dir" | wc -l) outputs in $dir"
