#!/bin/sh
# cli.sql.decimal-sum: sum() of a DECIMAL column without GROUP BY or WHERE
# (the aggregate's one-group path: 64-bit lanes, falling back to 128 bits)
# gives the exact sum when the values fit 64 bits, when their 64-bit sum
# overflows (8 x 2^62), and when a value does not fit 64 bits (10^20);
# negative values and row counts that are not a multiple of the 4 lanes
# included; from VALUES and from a Parquet file, at 1 and 2 threads, and
# equal with a WHERE that keeps every row (the general path).
# Usage: decimal_sum_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-decimal-sum-check-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "decimal_sum_check: $*"; exit 1; }
values() {  # VALUES of DECIMAL(P,S) $1 from the remaining arguments
  t="$1"
  shift
  sep=""
  out=""
  for v in "$@"; do
    out="$out$sep(CAST('$v' AS $t))"
    sep=", "
  done
  echo "(VALUES $out) AS v(x)"
}
check() {  # name, expected "sum,count", decimal type, values...
  name="$1"
  expected="$2"
  shift 2
  from=$(values "$@")
  "$q" sql -o "$dir/$name.parquet" "SELECT x FROM $from" > /dev/null 2>&1 || fail "$name: write failed"
  for threads in 1 2; do
    for source in "$from" "'$dir/$name.parquet'"; do
      for where in "" " WHERE x IS NOT NULL"; do
        got=$("$q" sql --threads "$threads" --format csv "SELECT sum(x), count(*) FROM $source$where" 2> "$dir/err" |
          tail -1) || fail "$name: $(cat "$dir/err")"
        [ "$got" = "$expected" ] || fail "$name (threads $threads, $source$where): $got, expected $expected"
      done
    done
  done
  echo "$name: $expected"
}
check fits "100000000105.25,9" "DECIMAL(15,2)" 1.25 -2.50 3.75 100.00 -0.01 99999999999.99 -5.00 7.77 0.00
check lanes-overflow "36893488147419103232,8" "DECIMAL(38,0)" 4611686018427387904 4611686018427387904 \
  4611686018427387904 4611686018427387904 4611686018427387904 4611686018427387904 4611686018427387904 \
  4611686018427387904
check negative-overflow "-36893488147419103232,8" "DECIMAL(38,0)" -4611686018427387904 -4611686018427387904 \
  -4611686018427387904 -4611686018427387904 -4611686018427387904 -4611686018427387904 -4611686018427387904 \
  -4611686018427387904
check wide "100000000000000000002,5" "DECIMAL(38,0)" 100000000000000000000 1 2 3 -4
echo "decimal sum check: ok"
