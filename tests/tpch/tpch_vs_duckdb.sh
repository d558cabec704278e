#!/usr/bin/env bash
# The 22 TPC-H queries (validation parameters) through `quiver sql` over
# `quiver gen tpch --scale S` (default 0.01), each result compared row by
# row with DuckDB's on the same data (tests/tpch/duckdb_compare.mjs); then
# RANDOM_QUERIES (default 60) random queries over the schema the same way.
# The 22 run at every thread count of THREADS (default "1 2 4": parallel
# results must equal the one-thread ones and DuckDB's; 4 threads on 2 cores
# exercises interleavings); the random queries cycle through them.
# Usage: tests/tpch/tpch_vs_duckdb.sh [--scale S]
# Env: QUIVER (the binary), THREADS, RANDOM_QUERIES, RANDOM_SEED, FORMAT
# (arrow, the default, or parquet: DuckDB writes the tables as Parquet,
# zstd, row groups of 100,000 rows, and quiver scans those files in place)
# (scale 1, the 22 only: THREADS="1 2" RANDOM_QUERIES=0 ... --scale 1)
# Exits 0 when all 22 agree at every thread count; one line per query.
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=${QUIVER:-build/release/quiver}
SCALE=0.01
[ "${1:-}" = "--scale" ] && SCALE=$2
if ! command -v node >/dev/null || [ ! -d bench/node_modules/@duckdb/node-api ]; then
  echo "tpch vs duckdb: node or @duckdb/node-api (bench/install-duckdb.sh) missing: skipped"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-tpch-duckdb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$Q" gen tpch --scale "$SCALE" -o "$TMP/tpch" >/dev/null
mkdir -p "$TMP/csv"
THREADS=${THREADS:-1 2 4}
args=()
for t in region nation supplier customer part partsupp orders lineitem; do
  "$Q" cat "$TMP/tpch/$t.arrow" --format csv > "$TMP/csv/$t.csv"
  args+=(--table "$t=$TMP/tpch/$t.arrow")
done
if [ "${FORMAT:-arrow}" = parquet ]; then
  mkdir -p "$TMP/parquet"
  node tests/tpch/duckdb_compare.mjs --csv-dir "$TMP/csv" --write-parquet "$TMP/parquet"
  args=()
  for t in region nation supplier customer part partsupp orders lineitem; do
    args+=(--table "$t=$TMP/parquet/$t.parquet")
  done
fi
for th in $THREADS; do
  R="$TMP/res-$th"
  mkdir -p "$R"
  for n in $(seq 1 22); do
    f=$(printf "q%02d" "$n")
    "$Q" sql --tpch-query "$n" --print-sql > "$R/$f.sql"
    if ! "$Q" sql "${args[@]}" --threads "$th" --tpch-query "$n" --format csv > "$R/$f.csv" 2> "$R/$f.err"; then
      echo "$f (threads=$th): quiver failed: $(cat "$R/$f.err")"
      rm -f "$R/$f.csv"
    fi
  done
  echo "threads=$th:"
  node tests/tpch/duckdb_compare.mjs --csv-dir "$TMP/csv" --results-dir "$R"
done
# Random queries over the same schema (RANDOM_QUERIES, default 60; 0: none).
if [ "${RANDOM_QUERIES:-60}" != 0 ]; then
  node tests/tpch/duckdb_compare.mjs --csv-dir "$TMP/csv" --random "${RANDOM_QUERIES:-60}" --seed "${RANDOM_SEED:-7}" \
    --quiver "$Q" --tables-dir "$TMP/tpch" --threads-cycle "$(echo $THREADS | tr ' ' ',')"
fi
