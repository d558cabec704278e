#!/usr/bin/env bash
# The differential fuzzer (issue 38): tests/slt/fuzz_vs_duckdb.mjs writes
# COUNT random queries (seed SEED) over small random tables with DuckDB's
# answers as a sqllogictest script, and quiver's runner
# (quiver_sql_tests --gtest_filter=SltExternal.File) checks every one.
# In `make test`: COUNT=300 at one seed. As a benchmark (longer):
#   COUNT=20000 SEED=$RANDOM QUIVER_SQL_TESTS=build/release/quiver_sql_tests \
#     tests/slt/fuzz_vs_duckdb.sh
# Env: QUIVER_SQL_TESTS (the test binary), COUNT (default 300), SEED
# (default 38), CONSTRUCT (default all), THREADS (default 2), KEEP (a path
# to keep the script at). Exit 77 (skipped) without node or @duckdb/node-api.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${QUIVER_SQL_TESTS:-build/release/quiver_sql_tests}
if ! command -v node >/dev/null || [ ! -d bench/node_modules/@duckdb/node-api ]; then
  echo "fuzz vs duckdb: node or @duckdb/node-api (bench/install-duckdb.sh) missing: skipped"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-slt-fuzz.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SCRIPT=${KEEP:-$TMP/fuzz.slt}
node tests/slt/fuzz_vs_duckdb.mjs --seed "${SEED:-38}" --count "${COUNT:-300}" --construct "${CONSTRUCT:-all}" \
  --out "$SCRIPT"
QUIVER_SLT_FILE="$SCRIPT" QUIVER_SLT_THREADS="${THREADS:-2}" "$BIN" --gtest_filter=SltExternal.File
