#!/usr/bin/env bash
# bench/objstore_parquet_scan.sh — a Parquet table in Ceph RGW scanned by
# `quiver sql` against `curl` of the same bytes (issue 36's S3 measure; a
# benchmark, not a test). One run, side by side, medians of ROUNDS:
#   curl:   GET of every object of the table, one after another, and all at
#           once (`curl --parallel`), to /dev/null (SigV4, HTTPS);
#   quiver: `quiver sql --threads T` reading every column of the table from
#           s3://.../*.parquet (count of each column: all column chunks
#           fetched and decoded), and the same query over the local files;
#   bytes:  what quiver's GETs fetched (its "s3 N GETs, ... bytes" line)
#           against the objects' size.
# The ratio reported is curl seconds / quiver seconds (>= 0.9 is the goal:
# the scan about as fast as moving the bytes).
#
#   bench/objstore_parquet_scan.sh QUIVER_BIN PARQUET_FILE [COPIES] [ROUNDS] [THREADS]
# PARQUET_FILE is uploaded COPIES times (default 5; SF1 lineitem.parquet as
# DuckDB writes it is 224 MB, so 5 copies are ~1.1 GB) as one table.
set -euo pipefail
QUIVER=$(realpath "${1:?usage: objstore_parquet_scan.sh QUIVER_BIN PARQUET_FILE [COPIES] [ROUNDS] [THREADS]}")
FILE=$(realpath "${2:?usage: objstore_parquet_scan.sh QUIVER_BIN PARQUET_FILE [COPIES] [ROUNDS] [THREADS]}")
COPIES=${3:-5}
ROUNDS=${4:-3}
THREADS=${5:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
RGW_SH=$HERE/../tests/objstore/rgw.sh
W=$(mktemp -d /tmp/quiver-pqs3.XXXXXX)
cleanup() {
  "$RGW_SH" stop "$W/rgw" >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT

"$RGW_SH" start "$W/rgw" >"$W/rgw.out" 2>&1 || { cat "$W/rgw.out"; exit 1; }
# shellcheck disable=SC1091
. "$W/rgw/env"
CA=$QUIVER_S3_CA
S3="curl -sS --cacert $CA --aws-sigv4 aws:amz:us-east-1:s3 --user $AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY -H x-amz-content-sha256:UNSIGNED-PAYLOAD"
BUCKET=quiver-bench-tables
$S3 -X PUT "$QUIVER_S3_ENDPOINT/$BUCKET" -o /dev/null
urls=()
for i in $(seq 0 $((COPIES - 1))); do
  $S3 -T "$FILE" "$QUIVER_S3_ENDPOINT/$BUCKET/t/part-$i.parquet" -o /dev/null
  urls+=("$QUIVER_S3_ENDPOINT/$BUCKET/t/part-$i.parquet")
  mkdir -p "$W/local"
  ln -sf "$FILE" "$W/local/part-$i.parquet"
done
size=$(stat -c %s "$FILE")
total=$((size * COPIES))
echo "table: $COPIES x $(basename "$FILE") = $total bytes in RGW at $QUIVER_S3_ENDPOINT; load $(cut -d' ' -f1-3 /proc/loadavg)"

# Every column counted: the query reads (and decodes) every column chunk.
cols=$("$QUIVER" schema "$FILE" 2>/dev/null | sed -n '2,$s/^\([A-Za-z_][A-Za-z_0-9]*\): .*/\1/p' | head -64)
[ -n "$cols" ] || { echo "no columns read from $FILE"; exit 1; }
select=$(printf 'count(%s), ' $cols | sed 's/, $//')
SQL_S3="SELECT $select FROM read_parquet('s3://$BUCKET/t/*.parquet')"
SQL_LOCAL="SELECT $select FROM read_parquet('$W/local/*.parquet')"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
declare -a c_seq c_par q_s3 q_local
for r in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  for u in "${urls[@]}"; do $S3 "$u" -o /dev/null; done
  t1=$(now)
  args=()
  for u in "${urls[@]}"; do args+=("$u" -o /dev/null); done
  $S3 --no-progress-meter --parallel --parallel-max "$COPIES" "${args[@]}"
  t2=$(now)
  "$QUIVER" sql --threads "$THREADS" --s3-endpoint "$QUIVER_S3_ENDPOINT" --s3-ca-cert "$CA" --format csv "$SQL_S3" \
    >"$W/s3.out" 2>"$W/s3.err" || { cat "$W/s3.err"; exit 1; }
  t3=$(now)
  "$QUIVER" sql --threads "$THREADS" --format csv "$SQL_LOCAL" >"$W/local.out" 2>"$W/local.err" ||
    { cat "$W/local.err"; exit 1; }
  t4=$(now)
  cmp -s "$W/s3.out" "$W/local.out" || { echo "answers differ"; head -3 "$W/s3.out" "$W/local.out" "$W/s3.err"; exit 1; }
  c_seq+=("$(echo "$t1 - $t0" | bc)")
  c_par+=("$(echo "$t2 - $t1" | bc)")
  q_s3+=("$(echo "$t3 - $t2" | bc)")
  q_local+=("$(echo "$t4 - $t3" | bc)")
  echo "round $r: curl sequential ${c_seq[-1]} s, curl parallel ${c_par[-1]} s, quiver s3 ${q_s3[-1]} s, quiver local ${q_local[-1]} s"
done
ms=$(printf '%s\n' "${c_seq[@]}" | median)
mp=$(printf '%s\n' "${c_par[@]}" | median)
mq=$(printf '%s\n' "${q_s3[@]}" | median)
ml=$(printf '%s\n' "${q_local[@]}" | median)
echo "medians of $ROUNDS: curl sequential $ms s, curl parallel $mp s, quiver s3 $mq s ($THREADS threads), quiver local $ml s"
echo "ratio curl/quiver: sequential $(echo "scale=2; $ms / $mq" | bc), parallel $(echo "scale=2; $mp / $mq" | bc); MB/s quiver $(echo "$total / $mq / 1000000" | bc)"
grep -o 's3 [0-9]* GETs, [^;]*' "$W/s3.err" | head -1 | sed "s/\$/ (objects: $total bytes)/"
