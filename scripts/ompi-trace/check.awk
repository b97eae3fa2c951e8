# Compare the algorithms Open MPI ran (trace lines of trace.c) with those a rules file selects.
# Input: first the rule table printed by rules.awk (6 fields), then the trace files (9 fields:
# collective algorithm_id function comm_size rank lookup_bytes segsize fanout depth).
# Open MPI's lookup: the block that applies is the last one whose comm size is <= the
# communicator's; the rule, the last one whose msg_size is <= the lookup size; algorithm 0
# defers to the fixed decision. A call at depth 0 is the tuned component's choice and must be
# the selected algorithm (and, where the function takes them, with the file's segment size and
# chain fan-out). A call nested directly inside a call of the same collective is an internal
# fallback of Open MPI 4.1.4 and must be one of the known ones (ALLOWED below). Calls nested
# inside another collective's algorithm are reported but not checked (some go through the
# tuned decision, some call coll_base directly).
BEGIN {
  split("allgather:0 allreduce:2 alltoall:3 barrier:6 bcast:7 gather:9 reduce:11 reduce_scatter:12 reduce_scatter_block:13 scatter:15", m, " ")
  for (i in m) { split(m[i], kv, ":"); ID[kv[1]] = kv[2]; NAME[kv[2]] = kv[1] }
  # internal fallbacks seen in Open MPI 4.1.4's coll_base (parent algorithm > nested algorithm):
  # allreduce ring > recursive doubling (count < comm size), segmented ring > ring,
  # Rabenseifner > basic linear (count < largest power of two <= comm size),
  # bcast split binary tree > chain (too small to split), scatter-allgather (ring) > basic
  # linear (count < comm size), reduce Rabenseifner > basic linear (as allreduce), allgather
  # recursive doubling > bruck (comm size not a power of two)
  split("allreduce:4>3 allreduce:5>4 allreduce:6>1 bcast:4>2 bcast:8>1 bcast:9>1 reduce:7>1 allgather:3>2", a, " ")
  for (i in a) ALLOWED[a[i]] = 1
  SEG["bcast"] = "2 3 4 5 6 7 8 9"; SEG["reduce"] = "2 3 4 5 6"; SEG["allreduce"] = "5"
  FAN["bcast"] = "2"; FAN["reduce"] = "2"
  shown = 0; bad = 0; nr = 0
}
function has(list, x,    parts, i, n) { n = split(list, parts, " "); for (i = 1; i <= n; i++) if (parts[i] == x) return 1; return 0 }
function complain(msg) { bad++; if (shown++ < 25) print "MISMATCH " msg }
function lookup(id, p, bytes,    i, best_cs, best_ms, k) {
  best_cs = -1
  for (i = 0; i < nr; i++) if (rid[i] == id && rcs[i] <= p && rcs[i] > best_cs) best_cs = rcs[i]
  if (best_cs < 0) return -1
  best_ms = -1; k = -1
  for (i = 0; i < nr; i++) if (rid[i] == id && rcs[i] == best_cs && rms[i] <= bytes && rms[i] > best_ms) { best_ms = rms[i]; k = i }
  return k
}
FNR == 1 { file_no++; delete last }
file_no == 1 { rid[nr] = $1; rcs[nr] = $2; rms[nr] = $3; ralg[nr] = $4; rfan[nr] = $5; rseg[nr] = $6; ruled[$1] = 1; nr++; next }
NF != 9 { complain("malformed trace line in " FILENAME ": " $0); next }
{
  coll = $1; alg = $2; p = $4; bytes = $6; seg = $7; fan = $8; d = $9
  last[d] = coll ":" alg
  key = coll " P=" p
  if (d > 0) {
    split(last[d - 1], par, ":")
    if (par[1] == coll) {
      if ((coll ":" par[2] ">" alg) in ALLOWED) { fallback[key] = fallback[key] " " par[2] ">" alg; nfall++ }
      else complain(coll " P=" p " " bytes " B: " $3 " (" alg ") ran inside algorithm " par[2] ", not a known fallback")
    } else nested++
    next
  }
  if (!(coll in ID)) { complain("unknown collective " coll); next }
  id = ID[coll]
  if (!(id in ruled)) { unruled[coll]++; next }
  k = lookup(id, p, bytes)
  if (k < 0) { noblock[key]++; next }
  if (ralg[k] == 0) { deferred[key]++; next }
  checked[key]++; checked_any++
  if (alg != ralg[k]) { complain(coll " P=" p " " bytes " B (rank " $5 "): ran " $3 " (" alg "), the file selects " ralg[k] " (rule msg_size " rms[k] ", comm size " rcs[k] ")"); next }
  if (has(SEG[coll], alg) && seg != rseg[k]) { complain(coll " P=" p " " bytes " B: " $3 " ran with segment size " seg ", the file says " rseg[k]); next }
  if (has(FAN[coll], alg) && rfan[k] != 0 && fan != rfan[k]) { complain(coll " P=" p " " bytes " B: " $3 " ran with fan-out " fan ", the file says " rfan[k]); next }
  ok[key]++; seen[key] = seen[key] (index(" " seen[key] " ", " " alg " ") ? "" : " " alg)
}
END {
  printf "%-20s %-5s %8s %8s %9s %s\n", "collective", "P", "checked", "obeyed", "deferred", "algorithms run (ids)"
  n = 0
  for (key in checked) keys[n++] = key
  for (key in deferred) if (!(key in checked)) keys[n++] = key
  # insertion sort for a stable report
  for (i = 1; i < n; i++) { v = keys[i]; for (j = i - 1; j >= 0 && keys[j] > v; j--) keys[j + 1] = keys[j]; keys[j + 1] = v }
  for (i = 0; i < n; i++) { split(keys[i], kp, " "); printf "%-20s %-5s %8d %8d %9d %s\n", kp[1], substr(kp[2], 3), checked[keys[i]], ok[keys[i]], deferred[keys[i]], seen[keys[i]] }
  for (key in fallback) { split(fallback[key], fl, " "); delete u; s = ""; for (i in fl) if (!(fl[i] in u)) { u[fl[i]] = 1; s = s " " fl[i] }; print "internal fallbacks (allowed) " key ":" s }
  for (key in noblock) print "no comm-size block applies (fixed decision): " key " (" noblock[key] " calls)"
  for (c in unruled) print "not in the file (fixed decision): " c " (" unruled[c] " calls)"
  if (nested) print nested " calls nested in another collective's algorithm (not checked)"
  if (!checked_any) { print "FAIL: no call was decided by the file"; exit 1 }
  if (bad) { print "FAIL: " bad " call(s) did not run what the file selects"; exit 1 }
  print "OK: every call the file decides ran the algorithm it selects"
}
