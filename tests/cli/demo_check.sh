#!/bin/sh
# cli.demo: runs `quiver demo ARGS...` and passes only when it exits 0 AND
# printed "verified" for every result, the headline (decoded size, client
# peak, ratio, heap policy's cost) and the final "all results verified".
# Usage: demo_check.sh QUIVER [ARGS...]
q="$1"; shift
out=$("$q" demo "$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then echo "demo_check: quiver demo exited $rc"; exit 1; fi
n=$(printf '%s\n' "$out" | grep -c ': verified$')
if [ "$n" -ne 4 ]; then echo "demo_check: expected 4 verified results, got $n"; exit 1; fi
printf '%s\n' "$out" | grep -q '^== headline: query (a) decodes to .* the client.s peak' || { echo "demo_check: no headline"; exit 1; }
printf '%s\n' "$out" | grep -q '^all results verified' || { echo "demo_check: no final verification line"; exit 1; }
echo "demo_check: ok"
