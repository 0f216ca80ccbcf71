#!/usr/bin/env python3
"""Throughput of `ccpn-run` against workers, and the copies space partitioning makes.

    python3 benches/scale_out.py [--events N] [--runs K] [--workers 1,2,4] [--nets keyed]

For a keyed net (split by ship), the counting net (split by space) and the
twenty-composite net (not split), runs ccpn-run on the seeded `uniform` stream:
single-threaded, with --workers W for each W, and as a two-process cluster on
127.0.0.1 (one worker each). Each configuration runs K times; the table shows the
best events/s (ccpn-run's own --stats figure: events processed / wall time),
the CPU time all its threads used per million events (user + system, from
wait4), and the partitions each event was sent to (copies_per_event). Every run
must give the single-threaded run's number of detections.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "ccpn-run")
NETS = [
    ("benches/nets/keyed.ron", "by key"),
    ("benches/nets/count.ron", "by space"),
    ("benches/nets/twenty.ron", "global"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_one(cmds, events):
    """Runs the commands (the first reads `events`); returns (stats, cpu seconds)."""
    procs = []
    for i, cmd in enumerate(cmds):
        stdin = open(events, "rb") if i == 0 else subprocess.DEVNULL
        procs.append(
            subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        )
    cpu = 0.0
    stats = None
    for i, p in enumerate(procs):
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"{' '.join(cmds[i])} failed: {err.decode(errors='replace')}")
        cpu += usage.ru_utime + usage.ru_stime
        if i == 0:
            stats = json.loads(err.decode().strip().splitlines()[-1])
    return stats, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--nets", default="", help="only the nets whose file name contains this")
    args = ap.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "ccpn-run", "--example", "gen_events"],
        cwd=ROOT,
        check=True,
    )
    events = os.path.join(tempfile.gettempdir(), f"ccpn-uniform-{args.events}.jsonl")
    if not os.path.exists(events) or os.path.getsize(events) == 0:
        with open(events, "wb") as f:
            gen = os.path.join(ROOT, "target", "release", "examples", "gen_events")
            subprocess.run([gen, "uniform", str(args.events)], stdout=f, check=True)
    workers = [int(w) for w in args.workers.split(",")]
    print(f"events: {args.events}, best of {args.runs} runs, {os.cpu_count()} cores\n")
    print("| net (plan) | run | events/s | CPU s per 1M events | copies per event |")
    print("|---|---|---:|---:|---:|")
    for net, plan in NETS:
        if args.nets not in net:
            continue
        net_path = os.path.join(ROOT, net)
        configs = [("single-threaded", lambda: [[BIN, net_path, "--stats"]])]
        for w in workers:
            configs.append(
                (f"--workers {w}", lambda w=w: [[BIN, net_path, "--stats", "--workers", str(w)]])
            )

        def cluster():
            hosts = os.path.join(tempfile.gettempdir(), "ccpn-scale-out-hosts.txt")
            with open(hosts, "w") as f:
                f.write(f"127.0.0.1:{free_port()}\n127.0.0.1:{free_port()}\n")
            base = [BIN, net_path, "-n", "2", "-h", hosts, "-w", "1"]
            return [base + ["-p", "0", "--stats"], base + ["-p", "1"]]

        configs.append(("2 processes × 1 worker", cluster))
        expected = None
        for name, make in configs:
            best, best_cpu, copies = 0.0, None, None
            for _ in range(args.runs):
                stats, cpu = run_one(make(), events)
                if expected is None:
                    expected = stats["detections"]
                if stats["detections"] != expected:
                    sys.exit(f"{net} {name}: {stats['detections']} detections, not {expected}")
                per_m = cpu / stats["processed"] * 1e6
                best = max(best, stats["events_per_s"])
                best_cpu = per_m if best_cpu is None else min(best_cpu, per_m)
                copies = stats.get("copies_per_event")
            copies = "–" if copies is None else f"{copies:.2f}"
            print(f"| {os.path.basename(net)} ({plan}) | {name} | {best:,.0f} | {best_cpu:.2f} | {copies} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
