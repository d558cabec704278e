#!/usr/bin/env bash
# Installs the pinned DuckDB Node.js client (bench/package.json) into
# bench/node_modules, once, for `quiver bench join` and
# bench/compare_duckdb.sh. No lock file is written (it would record
# registry addresses). Without npm the benchmark runs quiver's side only.
set -euo pipefail
cd "$(dirname "$0")"
if [ -f node_modules/.quiver-installed ] && cmp -s package.json node_modules/.quiver-installed; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: quiver bench join will skip the DuckDB side" >&2
  exit 0
fi
npm install --no-package-lock --no-audit --no-fund --loglevel=error
cp package.json node_modules/.quiver-installed
