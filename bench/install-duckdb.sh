#!/usr/bin/env bash
# The pinned DuckDB Node.js client (bench/package.json), into
# bench/node_modules, for `quiver bench join` and bench/compare_duckdb.sh.
# Without npm the benchmark runs quiver's side only.
exec "$(dirname "$0")/../scripts/install-npm-peers.sh" "$(dirname "$0")" "the DuckDB side of quiver bench join"
