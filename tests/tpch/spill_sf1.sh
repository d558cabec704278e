#!/usr/bin/env bash
# Issue 18, out of core: TPC-H Q9, Q18 and Q21 at scale 1 under a 64 MiB
# statement memory limit (hash aggregates and hash joins spill) give the
# same rows as without a limit, on-heap and off-heap, at 2 threads; each
# limited run reports what it spilled and leaves its spill directory empty.
# Usage: tests/tpch/spill_sf1.sh [--scale S]   Env: QUIVER (the binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=${QUIVER:-build/release/quiver}
SCALE=1
[ "${1:-}" = "--scale" ] && SCALE=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-spill-sf1.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$Q" gen tpch --scale "$SCALE" -o "$TMP/tpch" >/dev/null 2>&1
mkdir -p "$TMP/spill"
ok=0
for q in 9 18 21; do
  "$Q" sql --tables "$TMP/tpch" --threads 2 --tpch-query "$q" --format csv > "$TMP/q$q.csv" 2>/dev/null
  for mode in on-heap off-heap; do
    if ! "$Q" sql --tables "$TMP/tpch" --threads 2 --memory-mode "$mode" --statement-memory-limit 64MiB \
        --spill-directory "$TMP/spill" --tpch-query "$q" --format csv > "$TMP/q$q.$mode.csv" 2> "$TMP/err"; then
      echo "Q$q $mode: FAIL $(tail -1 "$TMP/err")"
      continue
    fi
    summary=$(tail -1 "$TMP/err")
    left=$(find "$TMP/spill" -mindepth 1 | wc -l)
    if ! cmp -s "$TMP/q$q.csv" "$TMP/q$q.$mode.csv"; then
      echo "Q$q $mode: FAIL rows differ from the unlimited run"
    elif [ "$left" -ne 0 ]; then
      echo "Q$q $mode: FAIL $left spill files left behind"
    else
      echo "Q$q $mode: ok ($summary)"
      ok=$((ok + 1))
    fi
  done
done
echo "$ok/6 limited runs equal the unlimited answers"
[ "$ok" -eq 6 ]
