"""Calls per second of the Python package (docs/PERFORMANCE.md; scripts/bindings_bench.sh runs
it beside the Rust and C figures): the calls of capi/examples/bench_calls.rs from Python."""

import time

import numpy as np

import commcost


def report(label, calls, seconds):
    print(f"py   {label:<34} {calls / seconds:12.3e} calls/s")


def main():
    m = commcost.Model.preset("open-mpi-openib")
    sizes = [(i * 7919) % (1 << 22) for i in range(4096)]
    rounds = 50
    t0 = time.perf_counter()
    for _ in range(rounds):
        for s in sizes:
            m.p2p(s)
    report("p2p (one call per size)", rounds * len(sizes), time.perf_counter() - t0)

    many = (np.arange(10_000_000, dtype=np.uint64) * 7919) % (1 << 22)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        m.p2p(many)
        best = min(best, time.perf_counter() - t0)
    report("p2p(array of 10 M sizes)", len(many), best)

    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        commcost.select(m, "bcast", 64, 65536, as_frame=False)
    report("select bcast (all ranked, P=64)", n, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
