#!/usr/bin/env bash
# Side-by-side IPC write/read throughput: quiver vs nodejs-polars on the same
# file, codec and format, in one run, alternating the two so that machine
# drift hits both. Prints medians and ratios (polars time / quiver time).
# Usage: bench/compare_polars.sh [FILE] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-../shared/data/real-world/vega-datasets-3.2.1/flights-200k.arrow}
ROUNDS=${2:-15}
Q=${QUIVER:-build/release/quiver}
printf '%-6s %-6s %10s %10s %10s %10s %10s %10s %8s %8s\n' codec format q_bytes pl_bytes q_write_ms pl_write_ms q_read_ms pl_read_ms w_ratio r_ratio
for codec in none lz4 zstd; do
  for format in stream file; do
    q=$($Q bench ipc "$FILE" --codec $codec --format $format --rounds "$ROUNDS" --json)
    p=$(node bench/polars_ipc.mjs "$FILE" $codec $format "$ROUNDS")
    python3 - "$q" "$p" <<'PY'
import json, sys
q, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert q["rows"] == p["rows"], (q["rows"], p["rows"])
print(f'{q["codec"]:<6} {q["format"]:<6} {q["ipc_bytes"]:>10} {p["ipc_bytes"]:>10} '
      f'{q["write_median_s"]*1e3:>10.3f} {p["write_median_s"]*1e3:>10.3f} '
      f'{q["read_median_s"]*1e3:>10.3f} {p["read_median_s"]*1e3:>10.3f} '
      f'{p["write_median_s"]/q["write_median_s"]:>8.2f} {p["read_median_s"]/q["read_median_s"]:>8.2f}')
PY
  done
done
