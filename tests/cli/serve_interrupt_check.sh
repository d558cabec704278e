#!/bin/sh
# cli.serve-interrupt (issue 35 #7): `quiver serve --tpch` removes its
# generated TPC-H directory on every exit it can see. SIGINT while it is
# still generating: exit 130 within seconds, "interrupted", the directory
# gone; at start-up it removes the spill and TPC-H directories of dead
# processes; SIGTERM once it is ready: a normal stop (exit 0), the
# directory gone.
# Usage: serve_interrupt_check.sh QUIVER
set -u
q="$1"
dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-serve-interrupt-check-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "serve_interrupt_check: $*"; exit 1; }
dfl=
if env --default-signal=INT true 2>/dev/null; then dfl="env --default-signal=INT"; fi
[ -n "$dfl" ] || { echo "serve_interrupt_check: skipped: env --default-signal is missing"; exit 77; }
mkdir -p "$dir/tmp"
export QUIVER_TOKEN="check-$$-token"
# 1. SIGINT while generating scale 0.5 (several seconds of work).
TMPDIR="$dir/tmp" $dfl "$q" serve --port 0 --cert-dir "$dir" --tpch 0.5 > "$dir/serve1.out" 2> "$dir/serve1.err" &
pid=$!
i=0
while ! ls "$dir/tmp/quiver-serve-tpch-$pid" 2>/dev/null | grep -q arrow; do
  i=$((i + 1)); [ $i -gt 400 ] && fail "no TPC-H file after 20 s: $(cat "$dir/serve1.err")"
  kill -0 "$pid" 2>/dev/null || fail "serve ended before generating: $(cat "$dir/serve1.err")"
  sleep 0.05
done
grep -q '^ready$' "$dir/serve1.out" && fail "scale 0.5 generated too fast to test"
gen_bytes=$(du -sb "$dir/tmp/quiver-serve-tpch-$pid" | cut -f1)
start=$(date +%s)
kill -INT "$pid"
wait "$pid"
rc=$?
took=$(($(date +%s) - start))
[ "$rc" -eq 130 ] || fail "exit status $rc after SIGINT while generating, expected 130: $(cat "$dir/serve1.err")"
[ "$took" -le 4 ] || fail "took $took s to exit"
grep -qx 'interrupted' "$dir/serve1.err" || fail "no 'interrupted' line: $(cat "$dir/serve1.err")"
[ -e "$dir/tmp/quiver-serve-tpch-$pid" ] && fail "TPC-H directory left behind after SIGINT: $(ls "$dir/tmp")"
pid=
# 2. At start-up the server removes what dead quiver processes left in its
# temp directory (a spill directory, generated TPC-H data of `quiver serve`
# and of `quiver sql`) and keeps a live process's and look-alikes.
sh -c 'exit 0' &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && fail "pid $dead still alive"
mkdir -p "$dir/tmp/quiver-serve-tpch-$dead" "$dir/tmp/quiver-tpch-$dead" "$dir/tmp/quiver-spill-$dead-0" \
  "$dir/tmp/quiver-serve-tpch-$$" "$dir/tmp/quiver-serve-tpch-${dead}x"
printf '%01000d' 0 > "$dir/tmp/quiver-serve-tpch-$dead/lineitem.arrow"
printf '%0500d' 0 > "$dir/tmp/quiver-tpch-$dead/orders.arrow"
printf '%0100d' 0 > "$dir/tmp/quiver-spill-$dead-0/spill-0.arrows"
# SIGTERM once ready: the usual stop, exit 0, nothing of its own left.
TMPDIR="$dir/tmp" $dfl "$q" serve --port 0 --cert-dir "$dir" --tpch 0.01 > "$dir/serve2.out" 2> "$dir/serve2.err" &
pid=$!
i=0
while ! grep -q '^ready$' "$dir/serve2.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "server did not start: $(cat "$dir/serve2.err")"
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$dir/serve2.err")"
  sleep 0.05
done
grep -q '^disk: spill limit 8.00 GiB, per statement 2.00 GiB$' "$dir/serve2.out" || fail "no disk line: $(cat "$dir/serve2.out")"
[ -d "$dir/tmp/quiver-serve-tpch-$pid" ] || fail "no TPC-H directory while serving"
grep -q "^spill: removed 1 directories (100 B) of dead quiver processes under $dir/tmp\$" "$dir/serve2.out" ||
  fail "no spill sweep line: $(cat "$dir/serve2.out")"
grep -q "^tpch: removed 2 generated directories (1.5 KiB) of dead quiver processes under $dir/tmp\$" \
  "$dir/serve2.out" || fail "no TPC-H sweep line: $(cat "$dir/serve2.out")"
for gone in "quiver-serve-tpch-$dead" "quiver-tpch-$dead" "quiver-spill-$dead-0"; do
  [ -e "$dir/tmp/$gone" ] && fail "the sweep left $gone"
done
for kept in "quiver-serve-tpch-$$" "quiver-serve-tpch-${dead}x"; do
  [ -d "$dir/tmp/$kept" ] || fail "the sweep removed $kept"
  rmdir "$dir/tmp/$kept"
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM once ready: $(cat "$dir/serve2.err")"
[ -z "$(ls -A "$dir/tmp")" ] || fail "left behind after SIGTERM: $(ls -A "$dir/tmp")"
pid=
echo "serve_interrupt_check: SIGINT while generating: exit 130 in ${took} s, ${gen_bytes} bytes of TPC-H data removed;" \
  "dead processes' directories swept at start-up; SIGTERM when ready: exit 0, nothing left: ok"
