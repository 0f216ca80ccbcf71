#!/usr/bin/env python3
"""The counting comparison's stream: seeded WGS84 point events as JSON Lines.

    gen.py [COUNT] [SEED] > events.jsonl

COUNT events (default 20,000) of type A over two hours, a random gap between
successive events (whole milliseconds, so both systems see the same instants), at
random points of a 0.4° x 0.4° box near Rotterdam (about 28 x 44 km), coordinates
with 6 decimals. The density is chosen so that `Count(n: 3, distance: 500 m,
window: 1 h)` finds about 150,000 sets: each event has ~5 others within 500 m and
one hour.
"""
import json
import random
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
rng = random.Random(seed)
t_ms = 1_767_225_600_000  # 2026-01-01T00:00:00Z
span_ms = 2 * 3600 * 1000
mean_gap = span_ms / count
for i in range(count):
    t_ms += max(1, round(rng.expovariate(1.0 / mean_gap)))
    lon = round(4.0 + rng.random() * 0.4, 6)
    lat = round(51.8 + rng.random() * 0.4, 6)
    print(json.dumps({"id": i + 1, "type": "A", "time": t_ms / 1000, "lon": lon, "lat": lat}))
