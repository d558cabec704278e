#!/usr/bin/env bash
# Window functions and GROUPING SETS / ROLLUP / CUBE through `quiver sql`
# over `quiver gen tpch --scale S` (default 0.01), each result compared with
# DuckDB's on the same data (tests/window/window_vs_duckdb.mjs): the fixed
# queries (every function, ROWS and RANGE frames, NULL keys, empty input,
# named and several windows, windows over GROUP BY, grouping sets) at the
# thread counts of THREADS (cycled, default "1 2"), each also under
# MEMORY_LIMIT (default 16MiB, spilling) and RANDOM_QUERIES (default 30)
# seeded random ones (RANDOM_SEED, default 11).
# Usage: tests/window/window_vs_duckdb.sh [--scale S]
# Env: QUIVER (the binary), THREADS, MEMORY_LIMIT, RANDOM_QUERIES, RANDOM_SEED
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=${QUIVER:-build/release/quiver}
SCALE=0.01
[ "${1:-}" = "--scale" ] && SCALE=$2
if ! command -v node >/dev/null || [ ! -d bench/node_modules/@duckdb/node-api ]; then
  echo "window vs duckdb: node or @duckdb/node-api (bench/install-duckdb.sh) missing: skipped"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-window-duckdb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$Q" gen tpch --scale "$SCALE" -o "$TMP/tpch" >/dev/null
mkdir -p "$TMP/csv"
for t in orders lineitem; do
  "$Q" cat "$TMP/tpch/$t.arrow" --format csv > "$TMP/csv/$t.csv"
done
node tests/window/window_vs_duckdb.mjs --csv-dir "$TMP/csv" --tables-dir "$TMP/tpch" --quiver "$Q" \
  --threads-cycle "$(echo ${THREADS:-1 2} | tr ' ' ',')" --memory-limit "${MEMORY_LIMIT:-16MiB}" \
  --random "${RANDOM_QUERIES:-30}" --seed "${RANDOM_SEED:-11}"
