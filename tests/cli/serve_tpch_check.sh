#!/bin/sh
# cli.serve-tpch: `quiver serve --tpch 0.01` answers a TPC-H join through
# `quiver query` (CloudFetch, several LZ4 chunks) with exactly the rows of
# `quiver sql --tpch 0.01` run in-process (sorted CSV compared byte for
# byte), and an unsupported statement fails the client with the engine's
# message and sqlState 0A000; with --no-lz4-checksums the same rows, every
# chunk reported decoded without its LZ4 checksums; -o FILE.parquet writes
# the same rows as Parquet, -o FILE.csv.gz as gzip-compressed CSV.
# Usage: serve_tpch_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-serve-tpch-check-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "serve_tpch_check: $*"; exit 1; }
export QUIVER_TOKEN="check-$$-token"
"$q" serve --port 0 --cert-dir "$dir" --tpch 0.01 --tpch-dir "$dir/tpch" --chunk-bytes 65536 \
  --inline-threshold-bytes 16384 --memory-mode off-heap > "$dir/serve.out" 2> "$dir/serve.err" &
pid=$!
i=0
while ! grep -q '^ready$' "$dir/serve.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "server did not start: $(cat "$dir/serve.err")"
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$dir/serve.err")"
  sleep 0.1
done
grep -q "$QUIVER_TOKEN" "$dir/serve.out" && fail "serve printed the token"
url=$(sed -n 's/^quiver serve: listening on //p' "$dir/serve.out")
cert=$(sed -n 's/^certificate: //p' "$dir/serve.out")
grep -q '^table: lineitem (60036 rows)$' "$dir/serve.out" || fail "no lineitem table: $(cat "$dir/serve.out")"
grep -q -- "quiver query --server $url --ca-cert $cert" "$dir/serve.out" || fail "no query hint"
sql="SELECT o.o_orderkey, o.o_orderdate, o.o_totalprice, l.l_linenumber, l.l_extendedprice, l.l_shipdate FROM orders o JOIN lineitem l ON o.o_orderkey = l.l_orderkey WHERE o.o_orderdate < DATE '1993-01-01'"
"$q" query --server "$url" --ca-cert "$cert" --format csv "$sql" > "$dir/remote.csv" 2> "$dir/query.err" || fail "query failed: $(cat "$dir/query.err")"
"$q" sql --tpch 0.01 --format csv "$sql" > "$dir/local.csv" 2>/dev/null || fail "quiver sql failed"
sort "$dir/remote.csv" > "$dir/remote.sorted"; sort "$dir/local.csv" > "$dir/local.sorted"
rows=$(($(wc -l < "$dir/local.sorted") - 1))
[ "$rows" -gt 1000 ] || fail "only $rows rows"
cmp -s "$dir/remote.sorted" "$dir/local.sorted" || fail "served rows differ from the in-process rows"
grep -Eq ' [2-9][0-9]* chunks| [1-9][0-9]+ chunks' "$dir/query.err" || fail "expected several chunks: $(cat "$dir/query.err")"
# -o FILE.parquet (issue 36): the same rows written as Parquet (ZSTD, row
# groups of 1000 rows) and read back by quiver.
"$q" query --server "$url" --ca-cert "$cert" -q -o "$dir/remote.parquet" --parquet-compression zstd \
  --row-group-rows 1000 "$sql" 2> "$dir/parquet.err" || fail "query -o .parquet failed: $(cat "$dir/parquet.err")"
"$q" schema "$dir/remote.parquet" | grep -q '^format: Parquet' || fail "-o .parquet did not write Parquet"
"$q" sql --table r="$dir/remote.parquet" --format csv "SELECT * FROM r" 2>/dev/null | sort |
  cmp -s - "$dir/local.sorted" || fail "rows read back from query -o .parquet differ"
# -o FILE.csv.gz: the same rows as CSV text (one gzip member), the bytes
# of --format csv once decompressed.
"$q" query --server "$url" --ca-cert "$cert" -q -o "$dir/remote.csv.gz" "$sql" 2> "$dir/csv.err" ||
  fail "query -o .csv.gz failed: $(cat "$dir/csv.err")"
gzip -dc "$dir/remote.csv.gz" | sort | cmp -s - "$dir/local.sorted" || fail "rows of query -o .csv.gz differ"
grep -q 'checksums skipped' "$dir/query.err" && fail "checksums skipped by default: $(cat "$dir/query.err")"
# --no-lz4-checksums: the same rows, every chunk (LZ4, over TLS) decoded unchecked.
"$q" query --server "$url" --ca-cert "$cert" --format csv --no-lz4-checksums "$sql" > "$dir/unchecked.csv" \
  2> "$dir/unchecked.err" || fail "query --no-lz4-checksums failed: $(cat "$dir/unchecked.err")"
sort "$dir/unchecked.csv" | cmp -s - "$dir/local.sorted" || fail "--no-lz4-checksums rows differ"
chunks=$(sed -n 's/^quiver query: [0-9]* rows, \([0-9]*\) chunks.*/\1/p' "$dir/unchecked.err")
grep -q "; LZ4 checksums skipped on $chunks chunks (TLS)" "$dir/unchecked.err" ||
  fail "expected all $chunks chunks unchecked: $(cat "$dir/unchecked.err")"
if "$q" query --server "$url" --ca-cert "$cert" "WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r" > /dev/null 2> "$dir/err.txt"; then
  fail "WITH RECURSIVE succeeded"
fi
grep -q 'WITH RECURSIVE is not supported (line 1, column' "$dir/err.txt" || fail "error message: $(cat "$dir/err.txt")"
grep -q 'sqlState 0A000' "$dir/err.txt" || fail "no sqlState: $(cat "$dir/err.txt")"
echo "serve_tpch_check: $rows rows equal (also unchecked, $chunks chunks, as Parquet and as CSV); errors carry sqlState: ok"
