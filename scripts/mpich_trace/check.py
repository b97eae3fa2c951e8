#!/usr/bin/env python3
"""Check MPICH call traces against a collective selection JSON file.

Usage: check.py FILE.json TRACE...

FILE.json is evaluated here, independently of commcost, as MPICH 4.0 - 4.2 evaluate it
(src/mpi/coll/src/csel.c): keys of an object are conditions tried in order; the first that
holds is descended into (without backtracking); `algorithm=NAME` is a leaf; `comm_size<N` is
`<=` where MPICH evaluates it while searching rather than when it prunes the tree for a new
communicator. A file with a key
twice in one object is refused (MPICH's JSON reader keeps one of them).

A trace (written by scripts/mpich_check.sh, one per rank, named trace.npN.rankR) has lines
`MARK <collective> comm_size=P count=C type_size=T op=builtin|user|none inplace=yes|no` before
each call of the test program and `CALL MPIR_<Coll>_<kind>_<algorithm>` for each MPICH algorithm
function entered. For each marked collective the first algorithm of that collective that ran
must be the file's choice for the call's attributes; algorithms that ran inside MPI_Comm_dup,
MPI_Comm_split or nested in another algorithm (on a sub-communicator) must be leaves the file
has for that collective. `comm_hierarchy=parent` holds from 2 ranks on (every rank runs on this node). A call whose
decision depends on a key this script cannot evaluate (`is_node_consecutive`, ...) fails as
undecided, and so does a trace without
the program's final mark (an abort, a crash).
Exit status: 0 obeyed, 1 not, 2 usage error.
"""
import json
import re
import sys
from collections import Counter


class Undecided(Exception):
    pass


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = [k for k, n in Counter(keys).items() if n > 1]
    if dup:
        raise ValueError(f"key {dup[0]!r} appears twice in one object")
    return pairs  # a list of (key, value) pairs, in file order


def pof2(p):
    x = 1
    while x * 2 <= p:
        x *= 2
    return x


def holds(key, a):
    """Whether condition `key` holds for call attributes `a` (Undecided if unknowable here)."""
    name, op, value = re.match(r"^([a-z_]+)(<=|<|=)(.*)$", key).groups()
    if name == "collective":
        return value == a["collective"]
    if name == "comm_type":
        return value == "intra"
    if name == "is_multi_threaded":
        return value == "no"
    if value == "any":
        return True
    if name in ("comm_size", "count", "avg_msg_size", "total_msg_size"):
        if name == "comm_size" and value == "pow2":
            return a["p"] & (a["p"] - 1) == 0
        if name == "count" and op == "<" and value == "pow2":
            return a["count"] < pof2(a["p"])
        if not value.isdigit():
            raise Undecided(key)
        x = {"comm_size": lambda: a["p"], "count": lambda: a["count"],
             "avg_msg_size": a["avg"], "total_msg_size": a["total"]}[name]()
        return x <= int(value) if op == "<=" else x < int(value)
    if name == "is_commutative":
        return value == "yes"  # built-in reductions and the program's user op commute
    if name == "is_op_built_in":
        return (a["op"] == "builtin") == (value == "yes")
    if name == "is_sendbuf_inplace":
        return a["inplace"] == value
    if name == "comm_hierarchy" and value in ("parent", "flat"):
        # mpich_check.sh runs every rank on this one node: MPICH gives a communicator a node
        # hierarchy ("parent") unless every rank is on a node of its own
        # (MPIR_Comm_create_subcomms, src/mpi/comm/commutil.c), i.e. from 2 ranks on
        return (value == "parent") == (a["p"] >= 2)
    raise Undecided(key)


# Keys MPICH decides once per communicator when it creates it ("pruning", csel.c prune_tree):
# from the top of a collective's tree, as long as only these were met (in the order MPICH walks:
# a key's successors on a match, its next sibling otherwise).
PRUNED = ("comm_type=", "comm_size", "comm_hierarchy=", "is_node_consecutive=", "comm_avg_ppn")


def decide(node, a, pruning=True):
    for key, child in node:
        if key.startswith("algorithm=") or key.startswith("composition="):
            return key.split("=", 1)[1]
        pruning = pruning and key.startswith(PRUNED)
        # MPICH 4.0 - 4.2 evaluate `comm_size<N` as `<=` while searching (csel.c), as `<` when
        # pruning
        k = key
        if not pruning and re.match(r"^comm_size<[0-9]+$", key):
            k = key.replace("<", "<=", 1)
        if holds(k, a):
            return decide(child, a, pruning)
    return None


def leaves(node, out):
    for key, child in node:
        if key.startswith("algorithm="):
            out.add(key.split("=", 1)[1])
        else:
            leaves(child, out)
    return out


def attributes(desc):
    f = desc.split()
    kv = dict(x.split("=", 1) for x in f[1:])
    coll, p, count, t = f[0], int(kv["comm_size"]), int(kv["count"]), int(kv["type_size"])
    inplace = kv["inplace"]

    def avg():
        if coll in ("bcast", "reduce", "allreduce"):
            return count * t
        if coll == "alltoall":  # MPICH reads the send count, 0 with MPI_IN_PLACE
            return 0 if inplace == "yes" else count * t
        raise Undecided("avg_msg_size of " + coll)

    def total():
        if coll == "alltoall" and inplace == "yes":
            return 0
        # gather, scatter: MPICH 4.0 - 4.2 multiply the count (not bytes) by P
        return count * (1 if coll in ("gather", "scatter") else t) * p

    return {"collective": coll, "p": p, "count": count, "op": kv["op"], "inplace": inplace,
            "avg": avg, "total": total}


CALL = re.compile(r"^CALL (MPIR_([A-Za-z]+)_(?:intra|inter|allcomm)_\w+)$")


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        table = json.load(open(sys.argv[1]), object_pairs_hook=no_duplicates)
    except (OSError, ValueError) as e:
        print(f"FAILED: {sys.argv[1]}: {e}")
        return 1
    trees = {k.split("=", 1)[1]: v for k, v in table}
    checked, bad, undecided, loose = 0, 0, 0, 0
    for path in sys.argv[2:]:
        label = path.rsplit("/", 1)[-1].replace("trace.", "")
        region, seen, ended = None, False, False
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            if line.startswith("MARK "):
                if line == "MARK end":
                    ended = True
                    region = None
                    continue
                region, seen = line[5:], False
                continue
            m = CALL.match(line)
            if not m or region is None:
                continue
            fn, coll = m.group(1), m.group(2).lower()
            own = region.split()[0]
            if own == coll and not seen:
                seen = True
                try:
                    want = decide(trees.get(coll, []), attributes(region))
                except Undecided as e:
                    undecided += 1
                    print(f"UNDECIDED {label}: {region}: the file tests {e}")
                    continue
                checked += 1
                if want != fn:
                    bad += 1
                    print(f"MISMATCH {label}: {region}: the file selects {want}, MPICH ran {fn}")
            else:
                loose += 1
                allowed = leaves(trees.get(coll, []), set())
                if fn not in allowed:
                    bad += 1
                    print(f"MISMATCH {label}: {region}: {fn} ran inside, not a leaf the file has for {coll}")
        if not ended:
            bad += 1
            print(f"FAILED {label}: the program did not reach its end (abort or crash); last lines:")
            print("".join(open(path, errors="replace").readlines()[-15:]))
    print(f"{checked} calls checked against the file's decision, {loose} inner calls against "
          f"its leaves, {undecided} undecided, {bad} failures")
    if bad or undecided or checked == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
