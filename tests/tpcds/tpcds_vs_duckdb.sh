#!/usr/bin/env bash
# The 99 TPC-DS queries (tests/tpcds/queries, DuckDB's texts) through
# `quiver sql` over `quiver gen tpcds --scale S` (default 0.1), each result
# compared with DuckDB's on the same data (tests/tpcds/duckdb_compare.mjs).
# Every query in tests/tpcds/expected_equal.txt must equal DuckDB's answer;
# the others are reported (not-implemented, differs, slow) and do not fail
# the run. A query quiver has not answered in TIMEOUT_S (default 10;
# 120 for the listed ones) seconds is 'slow'.
# Usage: tests/tpcds/tpcds_vs_duckdb.sh [--scale S]
# Env: QUIVER (the binary), THREADS (quiver's --threads), TIMEOUT_S, ONLY
# (comma-separated query numbers)
# (scale 1, the benchmark: TIMEOUT_S=60 tests/tpcds/tpcds_vs_duckdb.sh --scale 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=${QUIVER:-build/release/quiver}
SCALE=0.1
[ "${1:-}" = "--scale" ] && SCALE=$2
if ! command -v node >/dev/null || [ ! -d bench/node_modules/@duckdb/node-api ]; then
  echo "tpcds vs duckdb: node or @duckdb/node-api (bench/install-duckdb.sh) missing: skipped"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-tpcds-duckdb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
start_ns=$(date +%s%N)
"$Q" gen tpcds --scale "$SCALE" -o "$TMP/tpcds" 2>/dev/null
echo "gen tpcds --scale $SCALE: $((($(date +%s%N) - start_ns) / 1000000)) ms"
mkdir -p "$TMP/csv"
for f in "$TMP"/tpcds/*.arrow; do
  t=$(basename "$f" .arrow)
  "$Q" cat "$f" --format csv > "$TMP/csv/$t.csv"
done
args=(--quiver "$Q" --tables-dir "$TMP/tpcds" --csv-dir "$TMP/csv" --queries-dir tests/tpcds/queries
      --expect tests/tpcds/expected_equal.txt --timeout-s "${TIMEOUT_S:-10}")
[ -n "${THREADS:-}" ] && args+=(--threads "$THREADS")
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
node tests/tpcds/duckdb_compare.mjs "${args[@]}"
