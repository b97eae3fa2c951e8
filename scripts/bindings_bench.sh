#!/usr/bin/env bash
# Calls per second of the Rust API, the C ABI and the Python package, in one run
# (docs/PERFORMANCE.md, section "Bindings"). Builds first (release), then runs the three.
#   scripts/bindings_bench.sh            build and run
#   scripts/bindings_bench.sh --build    build only;  --run: run only
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
venv="target/py-venv"
if [ "$mode" != "--run" ]; then
  cargo build --release --quiet -p commcost-capi --example bench_calls
  cc -O2 -std=c99 -D_POSIX_C_SOURCE=199309L -Icapi/include capi/examples/bench_calls.c \
    target/release/libcommcost_capi.a -lpthread -ldl -lm -o target/release/bench_calls_c
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q maturin numpy
  (cd python && VIRTUAL_ENV="$PWD/../$venv" PATH="$PWD/../$venv/bin:$PATH" \
    maturin develop --release --quiet)
fi
if [ "$mode" != "--build" ]; then
  target/release/examples/bench_calls
  target/release/bench_calls_c
  "$venv/bin/python" python/examples/bench_calls.py
fi
