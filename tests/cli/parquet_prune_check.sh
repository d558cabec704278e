#!/bin/sh
# cli.sql.parquet-prune (issue 36 "Scans"): a Parquet table's row groups
# whose l_shipdate statistics exclude the WHERE range are not read. TPC-H
# lineitem at scale 0.01 (60,036 rows), sorted by l_shipdate, written by
# `quiver sql -o` in row groups of 10,000 rows (7 of them); a full scan
# reads all 7, a one-month range reads only the row group that holds it
# (the stderr summary "parquet R row groups read, P pruned"), and both
# answers equal the in-memory table's. The same for tables named by path
# (FROM 'x.parquet', read_parquet), and their pages pruned by the page
# index unless --no-page-index.
# Usage: parquet_prune_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-parquet-prune-check-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "parquet_prune_check: $*"; exit 1; }
"$q" gen tpch --scale 0.01 --format file -o "$dir/tpch" > /dev/null 2>&1 || fail "gen tpch failed"
"$q" sql --tables "$dir/tpch" --row-group-rows 10000 -o "$dir/l.parquet" \
  "SELECT l_shipdate, l_extendedprice FROM lineitem ORDER BY l_shipdate" 2> "$dir/write.err" ||
  fail "write failed: $(cat "$dir/write.err")"
grep -q '60036 rows written .*7 row groups' "$dir/write.err" || fail "unexpected write: $(cat "$dir/write.err")"
range="l_shipdate >= DATE '1992-03-01' AND l_shipdate < DATE '1992-04-01'"
for query in "SELECT count(*), sum(l_extendedprice) FROM l" \
             "SELECT count(*), sum(l_extendedprice) FROM l WHERE $range"; do
  expected=$("$q" sql --tables "$dir/tpch" --format csv "$(echo "$query" | sed 's/FROM l/FROM lineitem/')" 2>/dev/null)
  actual=$("$q" sql --table "l=$dir/l.parquet" --format csv "$query" 2> "$dir/read.err") ||
    fail "read failed: $(cat "$dir/read.err")"
  [ "$actual" = "$expected" ] || fail "$query: $actual, expected $expected"
  case "$query" in
    *WHERE*) want='parquet 1 row groups read, 6 pruned' ;;
    *) want='parquet 7 row groups read, 0 pruned' ;;
  esac
  grep -q "$want" "$dir/read.err" || fail "$query: expected '$want' in: $(cat "$dir/read.err")"
  echo "$query: $(echo "$actual" | tail -1); $want"
done
# Tables named by path (FROM 'x.parquet', read_parquet) are pruned and
# counted as --table tables are, and follow --no-page-index: lineitem in
# one row group of 4 pages a column (20,000 rows a page), the month's rows
# in the first page of each of the 2 columns.
"$q" sql --tables "$dir/tpch" --row-group-rows 100000 -o "$dir/one.parquet" \
  "SELECT l_shipdate, l_extendedprice FROM lineitem ORDER BY l_shipdate" 2> "$dir/write.err" ||
  fail "write failed: $(cat "$dir/write.err")"
query="SELECT count(*), sum(l_extendedprice) FROM l WHERE $range"
expected=$("$q" sql --tables "$dir/tpch" --format csv "$(echo "$query" | sed 's/FROM l/FROM lineitem/')" 2>/dev/null)
for from in "l" "'$dir/l.parquet'" "read_parquet('$dir/l.parquet')" "'$dir/one.parquet'" \
            "read_parquet('$dir/one.parquet')" "--no-page-index '$dir/one.parquet'" "--no-page-index l1"; do
  flags=""
  case "$from" in --no-page-index*) flags="--no-page-index"; from=${from#--no-page-index } ;; esac
  text=$(echo "$query" | sed "s|FROM l|FROM $from|")
  actual=$("$q" sql --table "l=$dir/l.parquet" --table "l1=$dir/one.parquet" $flags --format csv "$text" \
    2> "$dir/read.err") || fail "read failed: $(cat "$dir/read.err")"
  [ "$actual" = "$expected" ] || fail "$flags $text: $actual, expected $expected"
  case "$flags $from" in
    *one.parquet*|*l1*)
      if [ -n "$flags" ]; then want='parquet 1 row groups read, 0 pruned ('; else
        want='parquet 1 row groups read, 0 pruned, pages 2 read, 6 pruned'; fi ;;
    *) want='parquet 1 row groups read, 6 pruned (' ;;
  esac
  grep -qF "$want" "$dir/read.err" || fail "$flags $text: expected '$want' in: $(cat "$dir/read.err")"
  echo "$flags FROM $from: $want"
done
echo "parquet prune check: ok"
