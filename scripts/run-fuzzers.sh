#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz preset (build/fuzz/quiver_*_fuzz,
# clang with ASan + UBSan) for a bounded time each, as part of `make test`
# (issue 10 item 4).
#
#   scripts/run-fuzzers.sh [SECONDS_EACH]        default $FUZZ_SECONDS or 20
#
# Seeds, read-only: fuzz/corpus/<name>/ (committed, small) and, for ipc_read,
# the Arrow IPC streams and files of ../shared/arrow-testing; for
# json_integration, the integration JSON files of arrow-testing (gunzipped,
# those under 64 KiB); for parquet_read, parquet-testing's data/ and
# bad_data/ files under 64 KiB (linked into build/fuzz/corpus-seeds). New inputs go to build/fuzz/corpus-work/<name>/ (kept
# between runs, never committed). A target name without extra seeds uses its
# corpus folder alone, so new targets (thrift_dispatch, link_verify,
# chunk_decode, sql, ...) need nothing here.
#
# Any crash, sanitizer report (UBSan aborts: -fno-sanitize-recover), leak,
# timeout or out-of-memory fails the run: the script prints the target, the
# report's tail and the crashing input (hex dump and base64), and exits 1
# after running the remaining targets. It prints, per target and in total,
# the inputs executed and the coverage reached (libFuzzer's "cov" edges and
# "ft" features), also written to build/fuzz/fuzz-summary.txt.
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build/fuzz}
SECONDS_EACH=${1:-${FUZZ_SECONDS:-20}}
SHARED=${QUIVER_SHARED_DIR:-../shared}
TESTING="$SHARED/arrow-testing/data"
WORK="$BUILD/corpus-work"
SUMMARY="$BUILD/fuzz-summary.txt"

shopt -s nullglob
targets=("$BUILD"/quiver_*_fuzz)
if [ ${#targets[@]} -eq 0 ]; then
  echo "run-fuzzers: no fuzz targets in $BUILD (cmake --preset fuzz && cmake --build $BUILD)" >&2
  exit 1
fi

mkdir -p "$WORK"
: > "$SUMMARY"
failed=0
total_runs=0
# The targets run side by side, up to FUZZ_JOBS at a time (default: the
# machine's cores), each for SECONDS_EACH seconds; their reports follow in
# target order once all have ended.
PARALLEL=${FUZZ_JOBS:-$(nproc)}
names=()
for bin in "${targets[@]}"; do
  name=$(basename "$bin")
  name=${name#quiver_}
  name=${name%_fuzz}
  names+=("$name")
  work="$WORK/$name"
  artifacts="$BUILD/fuzz-artifacts/$name"
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts"
  seeds=()
  [ -d "fuzz/corpus/$name" ] && seeds+=("fuzz/corpus/$name")
  case "$name" in
    ipc_read)
      for d in "$TESTING/arrow-ipc-stream" "$TESTING/arrow-ipc-file" "$SHARED/data/bad-inputs"; do
        [ -d "$d" ] && seeds+=("$d")
      done
      ;;
    json_integration)
      json_seeds="$BUILD/corpus-seeds/json_integration"
      if [ ! -d "$json_seeds" ] && [ -d "$TESTING/arrow-ipc-stream/integration" ]; then
        mkdir -p "$json_seeds"
        for gz in "$TESTING"/arrow-ipc-stream/integration/*/*.json.gz; do
          out="$json_seeds/$(basename "$(dirname "$gz")")_$(basename "$gz" .gz)"
          gzip -dc "$gz" > "$out" 2>/dev/null || rm -f "$out"
          [ -f "$out" ] && [ "$(stat -c %s "$out")" -gt 65536 ] && rm -f "$out"
        done
      fi
      [ -d "$json_seeds" ] && seeds+=("$json_seeds")
      ;;
    parquet_read)
      # parquet-testing's data/ and bad_data/ files under 64 KiB, linked
      # (not copied) into one seed folder.
      pq_seeds="$BUILD/corpus-seeds/parquet_read"
      if [ ! -d "$pq_seeds" ] && [ -d "$SHARED/parquet-testing/data" ]; then
        mkdir -p "$pq_seeds"
        for f in "$SHARED"/parquet-testing/data/*.parquet "$SHARED"/parquet-testing/bad_data/*.parquet; do
          [ "$(stat -c %s "$f")" -le 65536 ] && ln -sf "$(realpath "$f")" "$pq_seeds/$(basename "$(dirname "$f")")_$(basename "$f")"
        done
      fi
      [ -d "$pq_seeds" ] && seeds+=("$pq_seeds")
      ;;
  esac
  log="$BUILD/fuzz-$name.log"
  echo "== fuzz $name: ${SECONDS_EACH}s, seeds: ${seeds[*]:-none}"
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n; done
  # -max_len bounds mutation sizes (the seeds may be larger; they are read
  # whole); -timeout flags a hang; -rss_limit_mb an allocation runaway
  # (the targets read under a 256 MiB pool).
  (
    "$bin" "$work" "${seeds[@]}" -max_total_time="$SECONDS_EACH" -max_len=131072 -timeout=25 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
    echo $? > "$BUILD/fuzz-$name.rc"
  ) &
done
wait
for name in "${names[@]}"; do
  bin="$BUILD/quiver_${name}_fuzz"
  artifacts="$BUILD/fuzz-artifacts/$name"
  log="$BUILD/fuzz-$name.log"
  rc=$(cat "$BUILD/fuzz-$name.rc" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]*' | tail -1 | cut -d' ' -f2)
  ft=$(grep -E '^#[0-9]+' "$log" | grep -o 'ft: [0-9]*' | tail -1 | cut -d' ' -f2)
  corp=$(grep -E '^#[0-9]+' "$log" | grep -o 'corp: [0-9]*' | tail -1 | cut -d' ' -f2)
  runs=${runs:-0}
  total_runs=$((total_runs + runs))
  line="$name: ${runs} inputs in ${SECONDS_EACH}s, cov ${cov:-?} edges, ft ${ft:-?} features, corpus ${corp:-?} inputs, exit $rc"
  echo "$line" | tee -a "$SUMMARY"
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "!! fuzz $name FAILED (exit $rc); report tail ($log):"
    tail -n 60 "$log"
    for a in "$artifacts"/*; do
      echo "!! crashing input: $a ($(stat -c %s "$a") bytes); reproduce: $bin $a"
      od -A x -t x1z -v "$a" | head -n 64
      echo "base64:"
      head -c 65536 "$a" | base64 -w 0
      echo
    done
  fi
done
echo "total: $total_runs inputs over ${#targets[@]} targets" | tee -a "$SUMMARY"
exit $failed
