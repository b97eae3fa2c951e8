# Parse an Open MPI (4.x) coll_tuned dynamic rules file into one line per rule:
#   collective_id comm_size msg_size algorithm faninout segsize
# The file is a stream of decimal integers (Open MPI reads it with fscanf "%li"); '#' starts a
# comment that runs to the end of the line. Layout: number of collectives; per collective: its
# id and number of comm-size blocks; per block: comm size and number of rules; per rule:
# msg_size algorithm faninout segsize. Open MPI rejects the whole file (silently, falling back
# to its fixed decisions) when a block's first msg_size is not 0; that is an error here.
# Numbers with a leading 0 (octal to %li) or a sign are errors too: an exporter never writes one.
function fail(msg) { print "rules file: " msg > "/dev/stderr"; bad = 1; exit 2 }
function next_int(what,    v) {
  if (pos >= ntok) fail("ends early, expected " what)
  v = tok[pos++]
  if (v !~ /^(0|[1-9][0-9]*)$/) fail("'" v "' is not a plain decimal integer (" what ")")
  return v + 0
}
{
  sub(/#.*/, "")
  n = split($0, f, /[ \t\r]+/)
  for (i = 1; i <= n; i++) if (f[i] != "") tok[ntok++] = f[i]
}
END {
  if (bad) exit 2
  pos = 0
  ncoll = next_int("the number of collectives")
  for (c = 0; c < ncoll; c++) {
    id = next_int("a collective id")
    nblock = next_int("the number of comm-size blocks of collective " id)
    for (b = 0; b < nblock; b++) {
      cs = next_int("a comm size (collective " id ")")
      nrule = next_int("the number of rules (collective " id ", comm size " cs ")")
      for (r = 0; r < nrule; r++) {
        ms = next_int("a message size (collective " id ", comm size " cs ")")
        if (r == 0 && ms != 0) fail("collective " id ", comm size " cs ": first message size is " ms ", not 0 (Open MPI rejects the whole file)")
        alg = next_int("an algorithm"); fan = next_int("a fan-in/out"); seg = next_int("a segment size")
        print id, cs, ms, alg, fan, seg
      }
    }
  }
  if (pos != ntok) fail((ntok - pos) " numbers after the last rule")
}
