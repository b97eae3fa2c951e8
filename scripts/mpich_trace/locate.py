#!/usr/bin/env python3
"""Locate MPICH's collective algorithm functions in a stripped libmpich.

Usage: locate.py LIBMPICH NAME...   (prints `0xOFFSET NAME` per function found; offsets are
virtual addresses in the library file, to be added to its load base)

Debian's libmpich.so.12 is stripped and its algorithm functions (MPIR_Bcast_intra_binomial, ...)
are not exported. Each of them passes its own name (`__func__`) to MPICH's error handler, so:
the name is a NUL-terminated string in .rodata; the instructions that load its address
(`lea OFF(%rip)` in `objdump -d`) lie inside the function; the .eh_frame FDE (`readelf -wf`)
that covers those instructions starts at the function's entry. A name is reported only when all
its references lie in one FDE and that FDE's start is the target of a direct call or jump
somewhere in the library (an entry, not a split-off cold part); others go to stderr.
"""
import bisect
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    lib, names = sys.argv[1], sys.argv[2:]
    data = open(lib, "rb").read()
    fdes = []
    out = subprocess.run(["readelf", "-wf", lib], capture_output=True, text=True).stdout
    for m in re.finditer(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out):
        fdes.append((int(m.group(1), 16), int(m.group(2), 16)))
    fdes.sort()
    starts = [f[0] for f in fdes]
    wanted = {}
    for n in names:
        i = data.find(b"\0" + n.encode() + b"\0")
        if i >= 0:
            wanted[i + 1] = n
    refs = {}
    targets = set()
    lea = re.compile(r"^\s*([0-9a-f]+):\s+lea\s+\S+\(%rip\),%\w+\s+# ([0-9a-f]+)")
    branch = re.compile(r"^\s*[0-9a-f]+:\s+(?:call|jmp)\S*\s+([0-9a-f]+) ")
    dis = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", lib],
                           stdout=subprocess.PIPE, text=True)
    for line in dis.stdout:
        m = lea.match(line)
        if m:
            target = int(m.group(2), 16)
            if target in wanted:
                refs.setdefault(target, []).append(int(m.group(1), 16))
            continue
        m = branch.match(line)
        if m:
            targets.add(int(m.group(1), 16))
    if dis.wait() != 0:
        sys.stderr.write("objdump failed\n")
        return 2
    found = 0
    for addr, n in sorted(wanted.items(), key=lambda kv: kv[1]):
        entries = set()
        for x in refs.get(addr, []):
            k = bisect.bisect_right(starts, x) - 1
            if k >= 0 and fdes[k][0] <= x < fdes[k][1]:
                entries.add(fdes[k][0])
        if len(entries) != 1:
            sys.stderr.write(f"not located: {n} ({len(entries)} candidate entries)\n")
            continue
        entry = entries.pop()
        if entry not in targets:
            sys.stderr.write(f"not located: {n} (0x{entry:x} is not a call target)\n")
            continue
        print(f"0x{entry:x} {n}")
        found += 1
    for n in names:
        if n not in wanted.values():
            sys.stderr.write(f"not in the library: {n}\n")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
