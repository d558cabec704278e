#!/usr/bin/env bash
# docs.cli: docs/cli.md must be what scripts/gen-cli-docs.sh makes from the
# quiver binary's --help texts. Usage: check_cli_docs.sh SOURCE_DIR QUIVER_BINARY
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
