#!/usr/bin/env bash
# Installs the pinned npm packages of DIR/package.json into DIR/node_modules,
# once (a stamp records which package.json was installed). No lock file is
# written: it would record registry addresses. Without npm it prints why and
# exits 0; the tests and benchmarks that need the packages then say so.
# Usage: scripts/install-npm-peers.sh DIR WHAT-NEEDS-IT
set -euo pipefail
dir=$1
what=${2:-"the npm peers"}
cd "$dir"
if [ -f node_modules/.quiver-installed ] && cmp -s package.json node_modules/.quiver-installed; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: $what will be skipped" >&2
  exit 0
fi
npm install --no-package-lock --no-audit --no-fund --loglevel=error
cp package.json node_modules/.quiver-installed
