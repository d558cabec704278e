#!/bin/sh
# cli.sql-interrupt (issue 35 #12): SIGINT to `quiver sql` while its sort
# spills under a small memory limit, writing -o: exit 130, one line
# "interrupted" on stderr and no error, and nothing left behind: no spill
# directory, no -o temporary file, no output. Prints the bytes on disk
# before and after the signal. First (issue 35 #7), the start-up sweep:
# `quiver sql` removes the spill directory of a dead process and keeps a
# live process's, a look-alike name and an unrelated directory.
# Usage: sql_interrupt_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-sql-interrupt-check-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "sql_interrupt_check: $*"; exit 1; }
bytes() { find "$@" -type f -printf '%s\n' 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }
mkdir -p "$dir/spill" "$dir/out"
"$q" gen tpch --scale 0.05 --format file -o "$dir/tpch" > /dev/null 2>&1 || fail "gen tpch failed"
# The sweep: a pid that has exited (and been waited for) is dead.
sh -c 'exit 0' &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && fail "pid $dead still alive"
mkdir -p "$dir/sweep/quiver-spill-$dead-0/sub" "$dir/sweep/quiver-spill-$$-0" "$dir/sweep/quiver-spill-$dead-0x" \
  "$dir/sweep/unrelated"
printf '%01000d' 0 > "$dir/sweep/quiver-spill-$dead-0/sub/spill-0.arrows"
"$q" sql --tables "$dir/tpch" --spill-directory "$dir/sweep" "SELECT count(*) FROM region" > /dev/null \
  2> "$dir/sweep.err" || fail "quiver sql failed: $(cat "$dir/sweep.err")"
grep -q '^quiver sql: removed 1 spill directories (1000 B) of dead quiver processes$' "$dir/sweep.err" ||
  fail "no sweep line: $(cat "$dir/sweep.err")"
[ -e "$dir/sweep/quiver-spill-$dead-0" ] && fail "the dead process's spill directory is still there"
for kept in "quiver-spill-$$-0" "quiver-spill-$dead-0x" unrelated; do
  [ -d "$dir/sweep/$kept" ] || fail "the sweep removed $kept"
done
# A background command of a script starts with SIGINT ignored (and quiver
# leaves it so): give it the default disposition, as a terminal's would be.
dfl=
if env --default-signal=INT true 2>/dev/null; then dfl="env --default-signal=INT"; fi
[ -n "$dfl" ] || { echo "sql_interrupt_check: skipped: env --default-signal is missing"; exit 77; }
$dfl "$q" sql --tables "$dir/tpch" --threads 1 --statement-memory-limit 4MiB --spill-directory "$dir/spill" \
  -o "$dir/out/sorted.arrow" \
  "SELECT l_comment, l_orderkey, l_linenumber, l_extendedprice FROM lineitem ORDER BY l_comment DESC, l_orderkey" \
  > "$dir/sql.out" 2> "$dir/sql.err" &
pid=$!
# Wait until the sort has spill files on disk (and -o its temporary file).
i=0
while [ "$(bytes "$dir/spill")" -eq 0 ]; do
  i=$((i + 1)); [ $i -gt 400 ] && fail "no spill file after 20 s: $(cat "$dir/sql.err")"
  kill -0 "$pid" 2>/dev/null || fail "quiver sql ended before it spilled: $(cat "$dir/sql.err")"
  sleep 0.05
done
sleep 0.2
spill_before=$(bytes "$dir/spill")
temp_before=$(ls -A "$dir/out" | grep -c '^\.sorted\.arrow\.quiver-tmp-')
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 130 ] || fail "exit status $rc, expected 130: $(cat "$dir/sql.err")"
[ "$(grep -c '' "$dir/sql.err")" -eq 1 ] && [ "$(cat "$dir/sql.err")" = "interrupted" ] ||
  fail "stderr is not one line 'interrupted': $(cat "$dir/sql.err")"
left=$(ls -A "$dir/spill")
[ -z "$left" ] || fail "spill directory left behind: $left ($(bytes "$dir/spill") bytes)"
out_left=$(ls -A "$dir/out")
[ -z "$out_left" ] || fail "-o files left behind: $out_left"
[ "$temp_before" -eq 1 ] || fail "no -o temporary file while the sort ran"
echo "sql_interrupt_check: sweep removed the dead process's directory only;" \
  "before SIGINT ${spill_before} bytes of spill files and 1 -o temporary file;" \
  "after: 0 bytes, no spill directory, no temporary file; exit 130, 'interrupted': ok"
