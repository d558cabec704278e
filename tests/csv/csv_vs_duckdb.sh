#!/usr/bin/env bash
# The CSV reader (issue 36 §2) against DuckDB's read_csv: TPC-H lineitem and
# orders at scale S (default 0.01) written as CSV by `quiver cat --format
# csv`, lineitem read by quiver gzip-compressed and orders zstd-compressed;
# the inferred column types and a few queries' answers (row counts, sums
# per column, grouped aggregates, a join) must equal DuckDB's over the same
# text (tests/csv/csv_vs_duckdb.mjs).
# Usage: tests/csv/csv_vs_duckdb.sh [--scale S]   Env: QUIVER (the binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=${QUIVER:-build/release/quiver}
SCALE=0.01
[ "${1:-}" = "--scale" ] && SCALE=$2
if ! command -v node >/dev/null || [ ! -d bench/node_modules/@duckdb/node-api ] || ! command -v zstd >/dev/null; then
  echo "csv vs duckdb: node, zstd or @duckdb/node-api (bench/install-duckdb.sh) missing: skipped"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-csv-duckdb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$Q" gen tpch --scale "$SCALE" -o "$TMP/tpch" >/dev/null 2>&1
for t in orders lineitem; do
  "$Q" cat "$TMP/tpch/$t.arrow" --format csv > "$TMP/$t.csv"
done
gzip -c "$TMP/lineitem.csv" > "$TMP/lineitem.csv.gz"
zstd -q -c "$TMP/orders.csv" > "$TMP/orders.csv.zst"
node tests/csv/csv_vs_duckdb.mjs --dir "$TMP" --quiver "$Q"
