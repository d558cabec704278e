#!/usr/bin/env bash
# Side-by-side hash joins, quiver vs DuckDB (threads=1), on identical
# generated data (same splitmix64-based formulas in C++ and in DuckDB SQL,
# generated outside the timing), checked by row count and checksum; plus the
# hashed relation micro-benchmarks. Prints the table of `quiver bench join`
# and, with --json, one JSON object per case.
# Usage: bench/compare_duckdb.sh [--scale small|full] [--rounds N] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QUIVER:-build/release/quiver}
./bench/install-duckdb.sh
if [ $# -eq 0 ]; then set -- --scale full; fi
exec "$Q" bench join --require-duckdb "$@"
