#!/usr/bin/env bash
# The body of `make test` after the release build (Makefile): the release
# tests and, side by side at the lowest CPU priority (nice 19), the
# sanitizer build (preset fuzz: clang, ASan + UBSan, libFuzzer coverage);
# then the sanitizer tests and the fuzz targets. Each unit test runs once,
# where it checks the most: the layers' unit tests under ASan + UBSan; in
# Release the SQL engine's, memory's and server's unit tests, the fuzz
# corpus sweeps and every test that needs an optimized build or other tools
# (interop, bench, install, Python, scale, objstore, CLI, style).
#
# Why side by side: about half of the release tests' time leaves a core
# idle (servers waiting on sockets and deadlines, the Node.js peers, the
# Ceph cluster, tests marked RUN_SERIAL); niced, the compiler takes only
# that idle CPU, so the tests run as they would alone and the sanitizer
# build is partly done when they end. `make test` stays within its
# 30-minute budget on two cores that way.
#
# The sanitizer build's output goes to build/fuzz-build.log (its tail is
# printed when it fails). Exit status: 0 when every step passed, 1
# otherwise; every step runs even after a failure of the release tests.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
MAKE=${MAKE:-make}
mkdir -p build
san_log=build/fuzz-build.log
rm -f build/fuzz-build.rc
(
  nice -n 19 "$MAKE" --no-print-directory build-san JOBS="$JOBS" >"$san_log" 2>&1
  echo $? >build/fuzz-build.rc
) &
san=$!
rc=0
# Repeats the names of the tests that failed at the very end, where a
# reader of only the output's tail (CI's summary) sees them.
failed_tests() {
  for d in build/release build/fuzz; do
    local f="$d/Testing/Temporary/LastTestsFailed.log"
    if [ -s "$f" ]; then
      echo "!! make test: tests that failed in $d:"
      sed 's/^/!!   /' "$f"
    fi
  done
}
# Release: what needs an optimized build, other tools or no sanitizer. The
# executables of QUIVER_SANITIZER_ONLY_LABELS (CMakeLists.txt) are not
# built here: CMake lists each as one placeholder test <target>_NOT_BUILT,
# left out with -E. The fetch unit tests run under the sanitizers only
# (their binary is built for the objstore test).
rm -f build/release/Testing/Temporary/LastTestsFailed.log build/fuzz/Testing/Temporary/LastTestsFailed.log
(cd build/release && ctest --output-on-failure -j"$JOBS" --timeout 600 -LE "^fetch$" -E "_NOT_BUILT$") || rc=1
echo "== make test: waiting for the sanitizer build ($san_log)"
wait "$san"
if [ "$(cat build/fuzz-build.rc 2>/dev/null)" != 0 ]; then
  tail -n 100 "$san_log"
  echo "!! make test: the sanitizer build failed (whole log: $san_log)"
  failed_tests
  exit 1
fi
echo "== make test: sanitizer build done"
"$MAKE" --no-print-directory asan-test JOBS="$JOBS" || rc=1
"$MAKE" --no-print-directory fuzz-test JOBS="$JOBS" || rc=1
failed_tests
[ "$rc" = 0 ] || echo "!! make test: failed (the tests above; the fuzzers' report is before them)"
exit $rc
