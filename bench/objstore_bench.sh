#!/usr/bin/env bash
# bench/objstore_bench.sh — results in Ceph RGW vs the local store (issue 20;
# a benchmark, not a test). One run, side by side:
#   download: `quiver query --format none` of one large result from RGW
#     presigned links (--chunk-store s3://...) vs from the local store, and
#     `curl --parallel` of presigned GETs of the same RGW objects;
#   server CPU seconds per GB served in both modes (/proc/PID/stat);
#   upload: the S3 server's producer (scan -> IPC -> LZ4 -> PUT) until the
#     statement is FINISHED (all chunks in RGW) vs `curl --aws-sigv4` PUT of
#     the same objects, one after another (the producer uploads one at a time);
#   peak RSS of each server while 4 clients fetch at once.
#
#   bench/objstore_bench.sh QUIVER_BIN [ROWS] [ROUNDS]
# Default 6600000 lineitem rows (~1.05 GiB decoded), 3 rounds (medians).
set -euo pipefail
QUIVER=$(realpath "${1:?usage: objstore_bench.sh QUIVER_BIN [ROWS] [ROUNDS]}")
ROWS=${2:-6600000}
ROUNDS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
RGW_SH=$HERE/../tests/objstore/rgw.sh
W=$(mktemp -d /tmp/quiver-objbench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.5
  "$RGW_SH" stop "$W/rgw" >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
anon_kib() { awk '/RssAnon/{print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

"$RGW_SH" start "$W/rgw" >/dev/null 2>&1
. "$W/rgw/env"
CA=$QUIVER_S3_CA
S3="curl -sS --cacert $CA --aws-sigv4 aws:amz:us-east-1:s3 --user $AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY -H x-amz-content-sha256:UNSIGNED-PAYLOAD"
$S3 -X PUT "$QUIVER_S3_ENDPOINT/bench" >/dev/null
"$QUIVER" gen lineitem --rows "$ROWS" --max-bytes-per-batch 16MiB -o "$W/lineitem.arrows" >/dev/null
export QUIVER_TOKEN=bench
SQL="SELECT * FROM lineitem"
start() {  # name port extra...
  local name=$1 port=$2
  shift 2
  "$QUIVER" serve --port "$port" --cert "$W/rgw/rgw.crt" --key "$W/rgw/rgw.key" --token bench \
    --table lineitem="$W/lineitem.arrows" "$@" >"$W/$name.out" 2>&1 &
  PIDS+=("$!")
  eval "PID_$name=$!"
  until grep -q '^ready$' "$W/$name.out"; do sleep 0.2; done
}
PS=$(free_port); PL=$(free_port)
start s3 "$PS" --chunk-store s3://bench/r --s3-endpoint "$QUIVER_S3_ENDPOINT" --s3-ca-cert "$CA"
start local "$PL" --store-budget 4GiB
url() { echo "https://127.0.0.1:$1/sql/1.0/warehouses/quiver"; }
# query PORT -> "seconds decoded_MiB downloaded_MiB"
query() {
  "$QUIVER" query --server "$(url "$1")" --ca-cert "$CA" --format none "$SQL" 2>"$W/q.err" >/dev/null
  # "quiver query: N rows, K chunks, X MiB downloaded, Y GiB decoded, ..., T s (R MB/s)" -> "T Y_MiB X_MiB"
  awk '/^quiver query:/ {
    for (i = 1; i <= NF; i++) {
      v = $i; u = $(i + 1); f = (u == "GiB") ? 1024 : (u == "KiB") ? 1 / 1024 : 1
      if ($(i + 2) ~ /^downloaded/) dl = v * f
      if ($(i + 2) ~ /^decoded/) dec = v * f
      if (u == "s" && $(i + 2) ~ /^\(/) t = v
    }
    print t, dec, dl }' "$W/q.err"
}
echo "rows $ROWS; rounds $ROUNDS; machine: $(nproc) cores (RGW, OSD, servers and clients share them)"
: >"$W/s3.txt"; : >"$W/local.txt"
for _ in $(seq 1 "$ROUNDS"); do
  for mode in s3 local; do
    port=$([ $mode = s3 ] && echo "$PS" || echo "$PL")
    pid=$(eval echo "\$PID_$mode")
    c0=$(cpu_ticks "$pid")
    r=$(query "$port")
    c1=$(cpu_ticks "$pid")
    echo "$r $(( c1 - c0 ))" >>"$W/$mode.txt"
  done
done
for mode in s3 local; do
  s=$(awk '{print $1}' "$W/$mode.txt" | median)
  dec=$(awk '{print $2}' "$W/$mode.txt" | median)
  dl=$(awk '{print $3}' "$W/$mode.txt" | median)
  cpu=$(awk '{print $4 / 100}' "$W/$mode.txt" | median)
  printf '%-6s query: %6.2f s  %7.1f MiB/s decoded (%6.1f MiB downloaded)  server CPU %5.2f s = %5.2f s/GB decoded\n' \
    "$mode" "$s" "$(echo "$dec / $s" | bc -l)" "$dl" "$cpu" "$(echo "$cpu / ($dec / 1024)" | bc -l)"
  eval "S_$mode=$s DEC_$mode=$dec DL_$mode=$dl"
done

# Keep one result in RGW (the driver fetches one page and leaves it open),
# timing ExecuteStatement .. FINISHED .. first page: the producer's upload.
t=$(now)
node "$HERE/../tests/objstore/driver_check.mjs" --port "$PS" --path /sql/1.0/warehouses/quiver --ca "$CA" \
  --token bench --sql "$SQL" --expected /dev/null --no-close 1 >/dev/null 2>&1 || true
t_up=$(echo "$(now) - $t" | bc)
$S3 "$QUIVER_S3_ENDPOINT/bench?list-type=2&prefix=r%2Fchunks%2F" >"$W/list.xml"
grep -o '<Key>[^<]*</Key>' "$W/list.xml" | sed 's/<[^>]*>//g' >"$W/keys.txt"
obj_bytes=$(grep -o '<Size>[0-9]*</Size>' "$W/list.xml" | sed 's/<[^>]*>//g' | paste -sd+ | bc)
n=$(wc -l <"$W/keys.txt")
printf 'upload: producer into RGW %d objects, %.1f MiB in %.2f s = %.1f MiB/s (scan + IPC + LZ4 + PUT)\n' \
  "$n" "$(echo "$obj_bytes / 1048576" | bc -l)" "$t_up" "$(echo "$obj_bytes / 1048576 / $t_up" | bc -l)"
# Presigned GETs of the same objects, signed here (SigV4 query, the same
# algorithm as quiver's; Python's hmac), through curl --parallel.
python3 - "$QUIVER_S3_ENDPOINT" "$W/keys.txt" "$W" >"$W/curl.cfg" <<'PY'
import hashlib, hmac, os, sys, time, urllib.parse
ep, keys, w = sys.argv[1], sys.argv[2], sys.argv[3]
host = ep.split("://")[1]
key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
amz = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()); day = amz[:8]
scope = f"{day}/us-east-1/s3/aws4_request"
h = lambda k, m: hmac.new(k, m.encode(), hashlib.sha256).digest()
sk = h(h(h(h(("AWS4" + secret).encode(), day), "us-east-1"), "s3"), "aws4_request")
for i, obj in enumerate(open(keys).read().split()):
    path = "/bench/" + obj
    q = ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + urllib.parse.quote(key + "/" + scope, safe="") +
         f"&X-Amz-Date={amz}&X-Amz-Expires=3600&X-Amz-SignedHeaders=host")
    sts = f"AWS4-HMAC-SHA256\n{amz}\n{scope}\n" + hashlib.sha256(f"GET\n{path}\n{q}\nhost:{host}\n\nhost\nUNSIGNED-PAYLOAD".encode()).hexdigest()
    print(f'url = "{ep}{path}?{q}&X-Amz-Signature={hmac.new(sk, sts.encode(), hashlib.sha256).hexdigest()}"')
    print(f'output = "{w}/obj{i}"')
PY
: >"$W/curl.txt"
for _ in $(seq 1 "$ROUNDS"); do
  rm -f "$W"/obj*
  t=$(now)
  curl -sS --no-progress-meter --cacert "$CA" --parallel --parallel-max 8 -K "$W/curl.cfg" 2>/dev/null
  echo "$(now) - $t" | bc >>"$W/curl.txt"
done
tc=$(median <"$W/curl.txt")
printf 'curl --parallel (8) presigned GETs: %.2f s = %.1f MiB/s of objects; quiver query from RGW: %.1f MiB/s of objects (%.2fx curl), local store: %.1f MiB/s\n' \
  "$tc" "$(echo "$obj_bytes / 1048576 / $tc" | bc -l)" "$(echo "$DL_s3 / $S_s3" | bc -l)" \
  "$(echo "($DL_s3 / $S_s3) / ($obj_bytes / 1048576 / $tc)" | bc -l)" "$(echo "$DL_local / $S_local" | bc -l)"
# The same bytes PUT by curl one after another (one connection).
: >"$W/put.txt"
for _ in $(seq 1 "$ROUNDS"); do
  files=$(ls "$W"/obj* | paste -sd, )
  t=$(now)
  $S3 -T "{$files}" "$QUIVER_S3_ENDPOINT/bench/curlput/" -o /dev/null
  echo "$(now) - $t" | bc >>"$W/put.txt"
done
tp=$(median <"$W/put.txt")
printf 'curl --aws-sigv4 PUT of the same objects: %.2f s = %.1f MiB/s (producer: %.2fx of curl)\n' \
  "$tp" "$(echo "$obj_bytes / 1048576 / $tp" | bc -l)" "$(echo "$tp / $t_up" | bc -l)"
rm -f "$W"/obj*
# Peak RSS of each server while 4 clients fetch at once.
for mode in s3 local; do
  port=$([ $mode = s3 ] && echo "$PS" || echo "$PL")
  pid=$(eval echo "\$PID_$mode")
  base=$(rss_kib "$pid")
  cpids=()
  for _ in 1 2 3 4; do
    "$QUIVER" query --server "$(url "$port")" --ca-cert "$CA" --format none -q "$SQL" >/dev/null 2>&1 &
    cpids+=("$!")
  done
  peak=$base
  abase=$(anon_kib "$pid")
  apeak=$abase
  t=$(now)
  while kill -0 "${cpids[@]}" 2>/dev/null; do
    r=$(rss_kib "$pid"); [ "$r" -gt "$peak" ] && peak=$r
    r=$(anon_kib "$pid"); [ "$r" -gt "$apeak" ] && apeak=$r
    sleep 0.1
  done
  wait "${cpids[@]}" || true
  # RssAnon: the heap; the rest of RSS is file pages (each scan maps the
  # table file, and RSS counts every mapping of a page).
  printf '%-6s 4 clients: %.2f s, server RSS before %d MiB, peak %d MiB (+%d MiB); anonymous (heap) peak %d MiB (+%d MiB)\n' \
    "$mode" "$(echo "$(now) - $t" | bc)" $((base / 1024)) $((peak / 1024)) $(((peak - base) / 1024)) \
    $((apeak / 1024)) $(((apeak - abase) / 1024))
done
