#!/bin/sh
# cli.sql.timing (issue 36 "Measure"): `quiver sql --timing` prints one
# stderr line with the statement's wall and CPU time in milliseconds (from
# opening its tables to the last row out, without the process's start-up),
# after the answer and the usual summary; without --timing there is none.
# The statement here sums TPC-H lineitem at scale 0.01 (60,036 rows) from a
# Parquet file at two threads (the answer equal to the Arrow table's) and
# must take a positive time, no more than the whole process's CPU time
# (/usr/bin/time) and under a minute.
# Usage: sql_timing_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-sql-timing-check-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "sql_timing_check: $*"; exit 1; }
"$q" gen tpch --scale 0.01 --format file -o "$dir/tpch" > /dev/null 2>&1 || fail "gen tpch failed"
"$q" sql --tables "$dir/tpch" --row-group-rows 10000 -o "$dir/t.parquet" "SELECT * FROM lineitem" 2> "$dir/write.err" ||
  fail "write failed: $(cat "$dir/write.err")"
query="SELECT count(*), sum(l_quantity), sum(l_extendedprice), sum(l_discount), sum(l_tax) FROM t"
expected=$("$q" sql --table "t=$dir/tpch/lineitem.arrow" --format csv "$query" 2>/dev/null) || fail "arrow query failed"
out=$("$q" sql --table "t=$dir/t.parquet" --threads 2 --format csv --timing "$query" 2> "$dir/err") ||
  fail "query failed: $(cat "$dir/err")"
[ "$out" = "$expected" ] || fail "answer: $out, expected $expected"
case "$out" in *60036,*) ;; *) fail "answer: $out (60036 rows expected)" ;; esac
line=$(grep '^quiver sql: timing: ' "$dir/err") || fail "no timing line in: $(cat "$dir/err")"
echo "$line" | grep -Eq '^quiver sql: timing: wall [0-9]+\.[0-9] ms, cpu [0-9]+\.[0-9] ms \(from opening the tables to the last row out\)$' ||
  fail "unexpected timing line: $line"
[ "$(tail -1 "$dir/err")" = "$line" ] || fail "the timing line is not the last: $(cat "$dir/err")"
wall=$(echo "$line" | sed -E 's/.*wall ([0-9.]+) ms.*/\1/')
cpu=$(echo "$line" | sed -E 's/.*cpu ([0-9.]+) ms.*/\1/')
awk -v w="$wall" -v c="$cpu" 'BEGIN { exit !(w > 0 && w < 60000 && c > 0 && c < 60000) }' ||
  fail "implausible times: wall $wall ms, cpu $cpu ms"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f 'process cpu %U %S' "$q" sql --table "t=$dir/t.parquet" --timing \
    "$query" > /dev/null 2> "$dir/err2" || fail "timed query failed"
  stmt=$(sed -nE 's/^quiver sql: timing: wall [0-9.]+ ms, cpu ([0-9.]+) ms.*/\1/p' "$dir/err2")
  proc=$(sed -nE 's/^process cpu ([0-9.]+) ([0-9.]+)$/\1 \2/p' "$dir/err2")
  # The statement's CPU is part of the process's (time counts in 10 ms steps).
  echo "$proc" | awk -v s="$stmt" '{ exit !(s <= 1000 * ($1 + $2) + 10) }' ||
    fail "statement cpu $stmt ms above the process's ($proc s)"
fi
"$q" sql --table "t=$dir/t.parquet" "SELECT count(*) FROM t" > /dev/null 2> "$dir/err3" || fail "plain query failed"
grep -q 'timing' "$dir/err3" && fail "a timing line without --timing: $(cat "$dir/err3")"
echo "$line"
echo "sql timing check: ok"
