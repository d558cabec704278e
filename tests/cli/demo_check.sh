#!/bin/sh
# cli.demo: runs `quiver demo ARGS...` and passes only when it exits 0 AND
# printed "matches the in-process engine" for every result, the client runs
# of (a) in their own processes (streaming and each policy holding it all),
# the headline and the final "all 4 results match the in-process engine".
# Usage: demo_check.sh QUIVER [ARGS...]
q="$1"; shift
out=$("$q" demo "$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then echo "demo_check: quiver demo exited $rc"; exit 1; fi
n=$(printf '%s\n' "$out" | grep -c '^   matches the in-process engine (')
if [ "$n" -ne 4 ]; then echo "demo_check: expected 4 results matching the in-process engine, got $n"; exit 1; fi
printf '%s\n' "$out" | grep -q "^   the client fetching (a), each run in its own process" || { echo "demo_check: no client runs"; exit 1; }
for run in 'streaming (each batch dropped once read)' 'holding every batch, policy stream-mmap' \
           'holding every batch, policy mmap-after' 'holding every batch, policy heap'; do
  printf '%s\n' "$out" | grep -q "^     $run  *[0-9.]* [KMG]*i*B  *[0-9.]*x the decoded size" ||
    { echo "demo_check: no client run '$run'"; exit 1; }
done
printf '%s\n' "$out" | grep -q '^== headline: streaming query (a), .* the client.s peak was .* of RSS' || { echo "demo_check: no headline"; exit 1; }
printf '%s\n' "$out" | grep -q '^all 4 results match the in-process engine' || { echo "demo_check: no final line"; exit 1; }
echo "demo_check: ok"
