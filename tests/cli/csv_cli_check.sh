#!/bin/sh
# cli.csv (issue 36 §2): CSV files through the CLI, each answer the one
# DuckDB's read_csv gives for the same bytes: a blank line in a table of
# one column is a NULL row; a value starting with an apostrophe ('90s)
# does not make ' the quote; a header-only file is its columns (VARCHAR)
# with no rows, and a 0-byte one is one VARCHAR column "column0" with no
# rows (both once "SELECT * with no tables"); `quiver cat --limit 3` stops
# after 3 rows (a file whose last row is malformed still prints them);
# `quiver convert x.csv out.parquet` and `out.arrow` write the same rows;
# a file of blank lines only is NULL rows of column0; a .csv.zst of many
# zstd frames (parsed in ranges of frames) gives the plain file's answers.
# Usage: csv_cli_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-csv-cli-check-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "csv_cli_check: $*"; exit 1; }
nl='
'

printf 'v\n1\n\n3\n' > "$dir/one.csv"
out=$("$q" sql --table t="$dir/one.csv" --format csv "SELECT count(*) AS n, count(v) AS nv, sum(v) AS s FROM t" 2> "$dir/err") ||
  fail "one column: $(cat "$dir/err")"
[ "$out" = "n,nv,s${nl}3,2,4" ] || fail "one column with a blank line: got '$out', want 3 rows, 2 values"

printf "id,era\n1,'90s\n2,'80s\n3,modern\n" > "$dir/apos.csv"
out=$("$q" sql --table t="$dir/apos.csv" --format csv "SELECT era FROM t ORDER BY id" 2> "$dir/err") ||
  fail "'90s: $(cat "$dir/err")"
[ "$out" = "era${nl}'90s${nl}'80s${nl}modern" ] || fail "'90s: got '$out'"

printf 'a,b,c\n' > "$dir/header.csv"
out=$("$q" sql --table t="$dir/header.csv" --format csv "SELECT * FROM t" 2> "$dir/err") ||
  fail "header only: $(cat "$dir/err")"
[ "$out" = "a,b,c" ] || fail "header only: got '$out', want the header and no rows"
: > "$dir/empty.csv"
out=$("$q" sql --table t="$dir/empty.csv" --format csv "SELECT *, (SELECT count(*) FROM t) AS n FROM t" 2> "$dir/err") ||
  fail "0 bytes: $(cat "$dir/err")"
[ "$out" = "column0,n" ] || fail "0 bytes: got '$out', want column0 and no rows"
out=$("$q" sql --table t="$dir/empty.csv" --format csv "SELECT count(*) AS n FROM t" 2> "$dir/err") ||
  fail "0 bytes: $(cat "$dir/err")"
[ "$out" = "n${nl}0" ] || fail "0 bytes count: got '$out'"

# 1.5 million rows (about 20 MB, past the 8 MiB head and a 4 MiB block),
# the last one malformed: `cat` fails on it, `cat --limit 3` never gets there.
awk 'BEGIN { print "k,s"; for (i = 1; i <= 1500000; i++) print i ",x" i }' > "$dir/big.csv"
printf '0,"unclosed\n' >> "$dir/big.csv"
out=$("$q" cat "$dir/big.csv" --format csv --limit 3 2> "$dir/err") ||
  fail "cat --limit 3: $(cat "$dir/err")"
[ "$out" = "k,s${nl}1,x1${nl}2,x2${nl}3,x3" ] || fail "cat --limit 3: got '$out'"
"$q" cat "$dir/big.csv" --format csv > /dev/null 2> "$dir/cat.err" && fail "cat of the malformed file succeeded"
grep -q "big.csv: line 1500002, column 2: quoted field not closed" "$dir/cat.err" ||
  fail "cat error: $(cat "$dir/cat.err")"

head -n 100001 "$dir/big.csv" > "$dir/part.csv"
"$q" cat "$dir/part.csv" --format csv > "$dir/part.txt" 2> "$dir/cat.err" || fail "cat: $(cat "$dir/cat.err")"
for out in part.parquet part.arrow; do
  "$q" convert "$dir/part.csv" "$dir/$out" > /dev/null 2> "$dir/convert.err" ||
    fail "convert to $out: $(cat "$dir/convert.err")"
  "$q" cat "$dir/$out" --format csv > "$dir/back.txt" 2> "$dir/err" || fail "cat $out: $(cat "$dir/err")"
  cmp -s "$dir/part.txt" "$dir/back.txt" || fail "$out differs from the CSV: $(diff "$dir/part.txt" "$dir/back.txt" | head -5)"
done
out=$("$q" schema "$dir/part.arrow" 2> "$dir/err") || fail "schema: $(cat "$dir/err")"
case "$out" in *"k: int64"*"s: utf8"*) ;; *) fail "schema of part.arrow: $out" ;; esac
# Blank lines only (DuckDB v1.5.6): column0 VARCHAR, the first blank line the
# header: '\n\n\n' is 2 NULL rows, 3 with header => false.
printf '\n\n\n' > "$dir/blank.csv"
out=$("$q" sql --table t="$dir/blank.csv" --format csv "SELECT count(*) AS n, count(column0) AS nv FROM t" 2> "$dir/err") ||
  fail "blank lines: $(cat "$dir/err")"
[ "$out" = "n,nv${nl}2,0" ] || fail "blank lines: got '$out', want 2 NULL rows"
out=$("$q" sql --format csv "SELECT count(*) AS n FROM read_csv('$dir/blank.csv', header => false)" 2> "$dir/err") ||
  fail "blank lines, header => false: $(cat "$dir/err")"
[ "$out" = "n${nl}3" ] || fail "blank lines, header => false: got '$out', want 3 rows"

# A .csv.zst of many zstd frames (the text cut every 1 MiB, mid-row, each
# piece compressed alone and the frames concatenated): parsed in ranges of
# frames on 2 threads, the same answers as the plain file.
head -n 1500001 "$dir/big.csv" > "$dir/rows.csv"
(cd "$dir" && split -b 1048576 rows.csv piece. && for p in piece.*; do zstd -q -c "$p"; done > rows.csv.zst && rm piece.*)
sql="SELECT count(*) AS n, sum(k) AS s, min(s) AS lo, max(s) AS hi, count(DISTINCT s) AS d FROM t"
want=$("$q" sql --table t="$dir/rows.csv" --format csv "$sql" 2> "$dir/err") || fail "plain rows: $(cat "$dir/err")"
[ "$want" = "n,s,lo,hi,d${nl}1500000,1125000750000,x1,x999999,1500000" ] || fail "plain rows: got '$want'"
for threads in 1 2; do
  out=$("$q" sql --threads $threads --table t="$dir/rows.csv.zst" --format csv "$sql" 2> "$dir/err") ||
    fail "zstd frames: $(cat "$dir/err")"
  [ "$out" = "$want" ] || fail "zstd frames, $threads threads: got '$out', want '$want'"
done
echo "csv cli check: ok"
