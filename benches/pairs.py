#!/usr/bin/env python3
"""Two builds of ccpn-run against each other, in interleaved pairs.

    benches/pairs.py [--runs N] [--stdin] BEFORE AFTER NET EVENTS

Runs `BEFORE NET EVENTS --stats` and `AFTER NET EVENTS --stats` N times each (20 by
default), alternating which goes first, and prints each build's `events_per_s`
(ccpn-run's own figure: events processed over the wall time from the start of the
run to the last detection written), the range and median, and the ratio AFTER /
BEFORE within each pair: its median and how many pairs it exceeds 1 in. With
`--stdin` the events are given on standard input (parsed on one thread) rather
than as a file (parsed on two, from 1 MiB).

The host of a shared machine changes speed from minute to minute (the same build's
figure can move 2x within an hour): a pair's two runs are seconds apart, so the
paired ratio is what compares builds; the ranges only say how fast the hour was.
Detections go to /dev/null.
"""

import argparse
import json
import statistics
import subprocess
import sys


def run(binary, net, events, stdin):
    """One run's events/s, from the last line of --stats."""
    if stdin:
        with open(events, "rb") as f:
            p = subprocess.run([binary, net, "-", "--stats"], stdin=f,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    else:
        p = subprocess.run([binary, net, events, "--stats"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"{binary} exited with {p.returncode}: {p.stderr.decode()[-500:]}")
    return json.loads(p.stderr.decode().strip().splitlines()[-1])["events_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--stdin", action="store_true")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("net")
    ap.add_argument("events")
    a = ap.parse_args()
    got = {a.before: [], a.after: []}
    for i in range(a.runs):
        order = (a.before, a.after) if i % 2 == 0 else (a.after, a.before)
        for b in order:
            got[b].append(run(b, a.net, a.events, a.stdin))
    for name, b in (("before", a.before), ("after", a.after)):
        v = sorted(got[b])
        print(f"{name}: {v[0]:,.0f}-{v[-1]:,.0f} events/s, median {statistics.median(v):,.0f}")
    ratios = sorted(y / x for x, y in zip(got[a.before], got[a.after]))
    print(f"after / before in each pair: {ratios[0]:.3f}-{ratios[-1]:.3f}, "
          f"median {statistics.median(ratios):.3f}, above 1 in {sum(r > 1 for r in ratios)} of {a.runs}")


if __name__ == "__main__":
    main()
