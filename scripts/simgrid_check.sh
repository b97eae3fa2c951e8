#!/usr/bin/env bash
# `commcost export simgrid` drives SimGrid: a ping-pong (scripts/smpi_pingpong.c) simulated by
# smpirun on the exported platform reproduces the model's end-to-end time
#   LogGP L = 5 us, o = 1 us, g = 2 us, G = 1 ns/B:   T(s) = 2o + L + (s - 1) G
#   open-mpi-openib (Hoefler, Lichei & Rehm, IPDPS 2007, Table 2): 5.96 us + (s - 1) G,
#     G = 0.00073 us/B below 12289 bytes, 0.00103 us/B from 12289 on
# within 0.5 % at sizes away from the protocol switch. Needs SimGrid's smpicc and smpirun
# (Debian: libsimgrid-dev). Exits non-zero on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/simgrid-check
mkdir -p "$out"
commcost=(cargo run --release --quiet -p commcost-cli --)
smpicc -O1 scripts/smpi_pingpong.c -o "$out/pingpong" 2>/dev/null
printf '%s' '{"model":"loggp","latency":5e-6,"overhead":1e-6,"gap":2e-6,"gap_per_byte":1e-9,"processors":2}' \
  > "$out/loggp.json"
"${commcost[@]}" export simgrid --model "$out/loggp.json" --procs 2 -o "$out/loggp.xml" >/dev/null
"${commcost[@]}" export simgrid --preset open-mpi-openib --procs 2 -o "$out/openib.xml" >/dev/null
sizes="1 8 1000 4096 12000 12289 65536 1048576"
for m in loggp openib; do
  smpirun -platform "$out/$m.xml" -np 2 --cfg=smpi/simulate-computation:no \
    "$out/pingpong" $sizes 2>/dev/null > "$out/$m.txt"
done
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
models = {
    "loggp": lambda s: 7e-6 + (s - 1) * 1e-9,
    "openib": lambda s: (5.96 + (s - 1) * (0.00073 if s < 12289 else 0.00103)) * 1e-6,
}
worst = 0.0
for name, model in models.items():
    rows = [line.split() for line in open(f"{out}/{name}.txt") if line.strip()]
    if len(rows) != 8:
        sys.exit(f"{name}: {len(rows)} sizes simulated, expected 8")
    for size, seconds in rows:
        s, t = int(size), float(seconds)
        error = abs(t - model(s)) / model(s)
        worst = max(worst, error)
        print(f"{name:7} {s:>8} B  SMPI {t * 1e6:10.4f} us  model {model(s) * 1e6:10.4f} us  {error * 100:6.3f} %")
print(f"largest relative difference {worst * 100:.3f} %")
sys.exit(0 if worst < 0.005 else 1)
PY
