#!/usr/bin/env python3
"""Repeat spread of OSU sweeps written by scripts/selection_sweep.sh.

For every configuration (platform, collective, procs, config, bytes) measured in at least two
repeats, the spread is (max - min) / median of OSU's avg_us over the repeats. Prints, per file
and size band (< 4 KiB, 4-8 KiB i.e. 4096 <= bytes < 8192, >= 8 KiB), the number of
configurations and the median and p90 of their spreads (p90: linear interpolation between
order statistics, as numpy's default). --by-collective adds one line per collective and band.

Usage: scripts/repeat_spread.py [--by-collective] [--markdown] CSV...
Python 3 standard library only.
"""
import csv
import statistics
import sys
from collections import defaultdict

BANDS = [("< 4 KiB", 0, 4096), ("4-8 KiB", 4096, 8192), (">= 8 KiB", 8192, float("inf"))]


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def band_of(nbytes):
    for name, lo, hi in BANDS:
        if lo <= nbytes < hi:
            return name
    raise ValueError(nbytes)


def spreads(path):
    """{(collective, bytes, config): spread} of one file"""
    groups = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["platform"], row["collective"], row["procs"], row["config"], int(row["bytes"]))
            groups[key].append(float(row["avg_us"]))
    out = {}
    for key, vals in groups.items():
        if len(vals) < 2:
            continue
        med = statistics.median(vals)
        out[key] = (max(vals) - min(vals)) / med if med > 0 else float("nan")
    return out, {k: len(v) for k, v in groups.items()}


def main(argv):
    by_coll = "--by-collective" in argv
    md = "--markdown" in argv
    files = [a for a in argv if not a.startswith("--")]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    if md:
        print("| file | collective | band | configurations | repeats | median spread | p90 spread |")
        print("|---|---|---|---|---|---|---|")
    for path in files:
        sp, counts = spreads(path)
        rows = []
        for coll in [None] + (sorted({k[1] for k in sp}) if by_coll else []):
            for name, _, _ in BANDS:
                keys = [k for k in sp if band_of(k[4]) == name and (coll is None or k[1] == coll)]
                if not keys:
                    continue
                xs = [sp[k] for k in keys]
                reps = sorted({counts[k] for k in keys})
                rep = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]}-{reps[-1]}"
                rows.append((coll or "all", name, len(xs), rep, statistics.median(xs), quantile(xs, 0.9)))
        for coll, name, n, rep, med, p90 in rows:
            if md:
                print(f"| {path.split('/')[-1]} | {coll} | {name} | {n} | {rep} | {med * 100:.1f} % | {p90 * 100:.1f} % |")
            else:
                print(f"{path}\t{coll}\t{name}\tconfigurations {n}\trepeats {rep}\t"
                      f"median {med * 100:.1f} %\tp90 {p90 * 100:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
