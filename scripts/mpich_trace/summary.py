#!/usr/bin/env python3
"""Summarise scripts/mpich_osu_compare.sh output: MPICH's default against a selection file.

Usage: summary.py RESULTS.csv [BASELINE [CANDIDATE]]

Per collective and message size: CANDIDATE's latency (default config `file`) over BASELINE's
(default `default`), the median of the repeats' ratios, and the verdict — `faster` or `slower`
only when CANDIDATE is faster (slower) than BASELINE in every repeat, else `=`. Prints a
Markdown table and a count per collective.
"""
import csv
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.stderr.write(__doc__)
        return 2
    base = sys.argv[2] if len(sys.argv) > 2 else "default"
    cand = sys.argv[3] if len(sys.argv) > 3 else "file"
    t = defaultdict(dict)  # (collective, bytes) -> repeat -> {config: latency}
    for row in csv.reader(open(sys.argv[1])):
        if len(row) != 5:
            continue
        r, c, k, b, lat = row
        t[(c, int(b))].setdefault(int(r), {})[k] = float(lat)
    order = ["bcast", "allreduce", "reduce", "allgather", "alltoall", "gather", "scatter", "barrier"]
    counts = defaultdict(lambda: [0, 0, 0])
    repeats = set()
    print(f"| collective | bytes | {base} µs (median) | {cand} µs (median) | {cand} / {base} | verdict |")
    print("|---|---:|---:|---:|---:|---|")
    for (c, b) in sorted(t, key=lambda cb: (order.index(cb[0]) if cb[0] in order else 99, cb[1])):
        reps = [{"default": v[base], "file": v[cand]} for v in t[(c, b)].values()
                if base in v and cand in v]
        if not reps:
            continue
        repeats.add(len(reps))
        ratios = [v["file"] / v["default"] for v in reps if v["default"] > 0]
        if not ratios:
            continue
        if all(v["file"] < v["default"] for v in reps):
            verdict, i = "faster", 0
        elif all(v["file"] > v["default"] for v in reps):
            verdict, i = "slower", 2
        else:
            verdict, i = "=", 1
        counts[c][i] += 1
        d = statistics.median(v["default"] for v in reps)
        f = statistics.median(v["file"] for v in reps)
        print(f"| {c} | {b} | {d:.2f} | {f:.2f} | {statistics.median(ratios):.2f} | {verdict} |")
    print()
    print(f"repeats per cell: {sorted(repeats)}")
    print()
    print("| collective | faster | = | slower |")
    print("|---|---:|---:|---:|")
    for c in order:
        if c in counts:
            print(f"| {c} | {counts[c][0]} | {counts[c][1]} | {counts[c][2]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
