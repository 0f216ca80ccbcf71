#!/usr/bin/env bash
# ccpn against PostgreSQL + PostGIS on the counting rule (n = 3, 500 m, 1 h) over
# 20,000 WGS84 events, both ways PostGIS can do it (a batch over the stored stream,
# and an online replay event by event in PL/pgSQL), and a check that all three give
# the same sets.
#
#   benches/postgis/run.sh [RUNS] [COUNT]
#
# Needs the Debian packages postgresql-15 and postgresql-15-postgis-3 (the script
# starts a throw-away cluster in a temporary directory, on a Unix socket only, as the
# `postgres` user when run as root) and python3. Prints each system's time per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
count=${2:-20000}
pgbin=/usr/lib/postgresql/15/bin
tmp=$(mktemp -d)
chmod 755 "$tmp"
as_pg=()
if [ "$(id -u)" = 0 ]; then
    chown postgres "$tmp"
    as_pg=(runuser -u postgres --)
fi
cleanup() {
    "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/db" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

cargo build --release --quiet --bin ccpn-run
python3 benches/postgis/gen.py "$count" > "$tmp/events.jsonl"
python3 - "$tmp/events.jsonl" > "$tmp/events.csv" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    # Microseconds as integers: the instants ccpn compares.
    print("%d,%d,%r,%r" % (e["id"], round(e["time"] * 1_000_000), e["lon"], e["lat"]))
PY

start_s=$(date +%s.%N)
"${as_pg[@]}" "$pgbin/initdb" -D "$tmp/db" -U ccpn --auth=trust >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/db" -w -l "$tmp/log" \
    -o "-k $tmp -c listen_addresses='' -c shared_buffers=1GB -c work_mem=256MB -c fsync=off -c synchronous_commit=off" start >/dev/null
echo "PostgreSQL cluster started in $(python3 -c "import time,sys; print('%.2f' % (time.time() - float(sys.argv[1])))" "$start_s") s"
psql=(psql -X -q -v ON_ERROR_STOP=1 -h "$tmp" -U ccpn postgres)
"${psql[@]}" -c "CREATE EXTENSION postgis" \
    -c "CREATE TABLE ev_raw (id int, t bigint, lon float8, lat float8)" \
    -c "\\copy ev_raw FROM '$tmp/events.csv' CSV" \
    -c "CREATE TABLE ev AS SELECT id, t, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography AS g FROM ev_raw" \
    -c "CREATE INDEX ev_g ON ev USING gist (g)" -c "ANALYZE ev"
echo "PostgreSQL $("${psql[@]}" -tAc 'SHOW server_version'), PostGIS $("${psql[@]}" -tAc 'SELECT postgis_lib_version()')"

sets() { python3 -c '
import sys
rows = set()
for line in sys.stdin:
    rows.add(tuple(sorted(int(x) for x in line.strip().split(","))))
for r in sorted(rows): print(*r, sep=",")
'; }
for run in $(seq 1 "$runs"); do
    "${psql[@]}" -f benches/postgis/batch.sql 2>&1 | sed -n 's/.*NOTICE:  \(batch:\|online:\)/postgis \1/p'
done
for run in $(seq 1 "$runs"); do
    "${psql[@]}" -f benches/postgis/online.sql 2>&1 | sed -n 's/.*NOTICE:  \(batch:\|online:\)/postgis \1/p'
done
for run in $(seq 1 "$runs"); do
    t0=$(date +%s%N)
    ./target/release/ccpn-run benches/postgis/count.ron "$tmp/events.jsonl" --stats \
        2>"$tmp/stats" >"$tmp/ccpn.jsonl"
    t1=$(date +%s%N)
    tail -n 1 "$tmp/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("ccpn whole process: %d sets in %.3f s; online %.0f events/s (ccpn-run --stats)"
      % (s["detections"], int(sys.argv[1]) / 1e9, s["events_per_s"]))' $((t1 - t0))
done
"${psql[@]}" -tAc "COPY (SELECT a, b, c FROM l3_batch) TO STDOUT WITH CSV" | sets > "$tmp/batch.sets"
"${psql[@]}" -tAc "COPY (SELECT a, b, c FROM l3_online) TO STDOUT WITH CSV" | sets > "$tmp/online.sets"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(",".join(str(i) for i in json.loads(line)["ids"]))' "$tmp/ccpn.jsonl" | sets > "$tmp/ccpn.sets"
if cmp -s "$tmp/batch.sets" "$tmp/ccpn.sets" && cmp -s "$tmp/online.sets" "$tmp/ccpn.sets"; then
    echo "identical sets: $(wc -l < "$tmp/ccpn.sets") (PostGIS batch, PostGIS online, ccpn)"
else
    echo "SETS DIFFER: batch $(wc -l < "$tmp/batch.sets"), online $(wc -l < "$tmp/online.sets"), ccpn $(wc -l < "$tmp/ccpn.sets")"
    diff "$tmp/batch.sets" "$tmp/ccpn.sets" | head -20
    exit 1
fi
