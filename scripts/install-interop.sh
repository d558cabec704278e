#!/usr/bin/env bash
# Installs the pinned npm packages the interop tests use (versions from
# ../shared/data/README.md) into tests/interop/node_modules, once.
# No lock file is written (it would record registry addresses).
set -euo pipefail
cd "$(dirname "$0")/../tests/interop"
if [ -f node_modules/.quiver-installed ] && cmp -s package.json node_modules/.quiver-installed; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: interop tests will be skipped" >&2
  exit 0
fi
npm install --no-package-lock --no-audit --no-fund --loglevel=error
cp package.json node_modules/.quiver-installed
