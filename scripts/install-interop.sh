#!/usr/bin/env bash
# The pinned npm packages of the interop tests (versions from
# ../shared/data/README.md), into tests/interop/node_modules.
exec "$(dirname "$0")/install-npm-peers.sh" "$(dirname "$0")/../tests/interop" "the interop tests"
