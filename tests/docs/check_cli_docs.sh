#!/usr/bin/env bash
# docs.cli: docs/cli.md must be what scripts/gen-cli-docs.sh makes from the
# quiver binary's --help texts, and docs/server.md has a row for every
# `quiver serve` option. Usage: check_cli_docs.sh SOURCE_DIR QUIVER_BINARY
set -euo pipefail
src=$1
bin=$2
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
bash "$src/scripts/gen-cli-docs.sh" "$bin" >"$fresh"
if ! diff -u "$src/docs/cli.md" "$fresh"; then
  echo "docs.cli: docs/cli.md differs from the --help of $bin (above, - is the file, + the binary);"
  echo "regenerate it: scripts/gen-cli-docs.sh $bin > docs/cli.md"
  exit 1
fi
echo "docs.cli: docs/cli.md matches the --help of every subcommand ($(grep -c '^## quiver' "$src/docs/cli.md") commands)"
# Every `quiver serve` option has a row in docs/server.md's options table.
missing=$("$bin" serve --help | grep -o -- '--[a-z0-9-]*' | sort -u | grep -v '^--help$' |
  while read -r opt; do grep -q -- "^| \`$opt[ \`]" "$src/docs/server.md" || echo "$opt"; done)
if [ -n "$missing" ]; then
  echo "docs.cli: quiver serve options without a row in docs/server.md's options table:" $missing
  exit 1
fi
echo "docs.cli: every quiver serve option has a row in docs/server.md"
# docs/functions.md is `quiver functions --format markdown` (the SQL function
# catalogue, sql/expression/function_catalog.cc).
if ! "$bin" functions --format markdown | diff -u "$src/docs/functions.md" -; then
  echo "docs.cli: docs/functions.md differs from \`quiver functions --format markdown\` (above, + the binary);"
  echo "regenerate it: $bin functions --format markdown > docs/functions.md"
  exit 1
fi
echo "docs.cli: docs/functions.md matches quiver functions --format markdown"
