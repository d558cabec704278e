#!/usr/bin/env bash
# Formats every C++ file git tracks or would track (new files not yet added
# included; ignored ones not) with .clang-format (clang-format 14, Debian
# 12's). `--check` changes nothing: it lists the files that would change and
# exits 1 when there are any.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
mapfile -t listed < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' | sort -u)
files=()
for f in "${listed[@]}"; do [[ -f "$f" ]] && files+=("$f"); done  # not one deleted in the work tree
if [[ "${1:-}" == "--check" ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CLANG_FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1; then
      echo "not formatted: $f"
      bad=1
    fi
  done
  exit "$bad"
fi
"$CLANG_FORMAT" -i "${files[@]}"
