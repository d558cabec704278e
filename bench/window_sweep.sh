#!/bin/sh
# window_sweep.sh — how the download window and parallelism of `quiver query`
# trade memory for speed (issue 21 item 3: the default is chosen from this).
#
#   bench/window_sweep.sh [QUIVER] [SCALE] [WINDOWS] [PARALLELS] [RUNS]
#   e.g. bench/window_sweep.sh build/release/quiver 1 "16MiB 32MiB 64MiB 128MiB 256MiB" "4 8 16" 3
#
# Generates TPC-H at SCALE, serves it with `quiver serve --tables` on
# 127.0.0.1 (20 MiB chunks, LZ4), and fetches `SELECT * FROM lineitem`
# streaming (--format none) for every window x parallel, RUNS times, printing
# the median seconds, MB/s and peak RSS increase of each pair.
set -eu
Q=${1:-build/release/quiver}
SCALE=${2:-1}
WINDOWS=${3:-"16MiB 32MiB 64MiB 128MiB 256MiB"}
PARALLELS=${4:-"4 8 16"}
RUNS=${5:-3}
DIR=$(mktemp -d /tmp/quiver-window-sweep-XXXXXX)
trap 'kill $SERVE 2>/dev/null || true; rm -rf "$DIR"' EXIT INT TERM
"$Q" gen tpch --scale "$SCALE" -o "$DIR/tpch" >/dev/null
export QUIVER_TOKEN=sweep-token
"$Q" serve --port 0 --tables "$DIR/tpch" --cert-dir "$DIR" >"$DIR/serve.log" 2>&1 &
SERVE=$!
i=0
while ! grep -q '^port: ' "$DIR/serve.log" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 300 ] && { cat "$DIR/serve.log"; exit 1; }; sleep 0.1
done
PORT=$(sed -n 's/^port: //p' "$DIR/serve.log" | head -1)
URL="https://127.0.0.1:$PORT/sql/1.0/warehouses/quiver"
CERT=$(sed -n "s/^certificate: //p" "$DIR/serve.log" | head -1)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-8s %-8s %8s %8s %12s %12s\n' window parallel seconds MB/s "peak RSS+" decoded
for W in $WINDOWS; do
  for P in $PARALLELS; do
    : >"$DIR/runs"
    r=0
    while [ $r -lt "$RUNS" ]; do
      "$Q" query --server "$URL" --ca-cert "$CERT" --format none --window "$W" --parallel "$P" \
        "SELECT * FROM lineitem" 2>"$DIR/q.err" >/dev/null
      # "quiver query: N rows, ..., 12.34 s (56.7 MB/s)" and "memory: peak RSS increase X MiB for Y MiB decoded = ..."
      s=$(sed -n 's/.* \([0-9.]*\) s (\([0-9.]*\) MB\/s).*/\1 \2/p' "$DIR/q.err")
      m=$(sed -n 's/^memory: peak RSS increase \([0-9.]*\) \([KMG]i\?B\) for \([0-9.]*\) \([KMG]i\?B\) decoded.*/\1 \2 \3 \4/p' "$DIR/q.err")
      echo "$s $m" >>"$DIR/runs"
      r=$((r + 1))
    done
    secs=$(awk '{print $1}' "$DIR/runs" | median)
    mbs=$(awk '{print $2}' "$DIR/runs" | median)
    rss=$(awk '{v=$3; if ($4=="GiB") v*=1024; if ($4=="KiB") v/=1024; print v}' "$DIR/runs" | median)
    dec=$(awk '{v=$5; if ($6=="GiB") v*=1024; print v}' "$DIR/runs" | median)
    printf '%-8s %-8s %8s %8s %9.1f MiB %8.0f MiB\n' "$W" "$P" "$secs" "$mbs" "$rss" "$dec"
  done
done
