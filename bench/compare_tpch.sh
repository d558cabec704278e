#!/usr/bin/env bash
# TPC-H-style joins, quiver end to end versus DuckDB in process, same SQL on
# the same data, in one run:
#   1. `quiver gen tpch --scale S` writes the Arrow IPC tables into a temp dir;
#   2. `quiver cat --format csv` exports customer, orders and lineitem for
#      DuckDB (it can't read the IPC files without its arrow extension);
#   3. `quiver serve --table NAME=FILE ...` on 127.0.0.1:0 with a random token;
#      each query runs `quiver query ... --format none` R times (default 3)
#      and the median of the client's reported time is taken;
#   4. bench/tpch_duckdb.mjs loads the CSVs (typed, untimed) and times each
#      query plus reading its whole result, median of R, at threads=1 and 2.
# Row counts must agree between the engines, or the script fails.
#
# NOTE: the two times are not the same thing. quiver's time is end to end
# through the Databricks SQL protocol: statement submission to last row
# fetched by the client, so it includes the HTTPS/TLS round trips, the
# CloudFetch (or inline) result transfer, LZ4 compression and decompression
# and Arrow IPC decode. DuckDB's time is in process (no transport, no
# serialization). ratio = DuckDB time / quiver time, so > 1 means quiver is
# faster. The quiver server is multithreaded as built; DuckDB is pinned with
# SET threads = 1 and 2. quiver's client polls GetOperationStatus with a
# backoff (50 ms doubling to 1 s, fetch/protocol_client.h), so its end-to-end
# times come in steps (about 1.05 s or 1.85 s at scale 1): the moment a
# statement is seen finished, not when it finished. The quiver side reports
# the client's summary time, which has 10 ms resolution.
#
# Usage: bench/compare_tpch.sh [--scale 1] [--rounds 3]
# Env: QUIVER (default build/release/quiver).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QUIVER:-build/release/quiver}
SCALE=1
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "usage: $0 [--scale S] [--rounds R]" >&2; exit 2 ;;
  esac
done
./bench/install-duckdb.sh >/dev/null

TMP=$(mktemp -d "${TMPDIR:-/tmp}/quiver-tpch-cmp.XXXXXX")
SERVE_PID=
cleanup() {
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$Q" gen tpch --scale "$SCALE" -o "$TMP/tpch" >/dev/null
echo "gen tpch scale $SCALE: $(since "$t") s ($(du -sh "$TMP/tpch" | cut -f1))"

mkdir -p "$TMP/csv"
t=$(now)
for tb in customer orders lineitem; do
  "$Q" cat --format csv "$TMP/tpch/$tb.arrow" > "$TMP/csv/$tb.csv"
done
echo "csv export (customer, orders, lineitem): $(since "$t") s ($(du -sh "$TMP/csv" | cut -f1))"

# Same SQL for both engines, one NAME<TAB>SQL line each.
cat > "$TMP/queries.tsv" <<'EOF'
Q1	SELECT o.o_orderkey, o.o_orderdate, l.l_linenumber, l.l_extendedprice, l.l_discount FROM orders o JOIN lineitem l ON o.o_orderkey = l.l_orderkey WHERE o.o_orderdate >= DATE '1995-01-01' AND o.o_orderdate < DATE '1995-04-01'
Q2	SELECT c.c_name, o.o_orderkey, o.o_totalprice, l.l_quantity FROM customer c JOIN orders o ON c.c_custkey = o.o_custkey JOIN lineitem l ON o.o_orderkey = l.l_orderkey WHERE c.c_mktsegment = 'BUILDING' AND o.o_orderdate < DATE '1995-03-15' AND l.l_shipdate > DATE '1995-03-15'
EOF

# quiver serve with every generated table.
QUIVER_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export QUIVER_TOKEN
tables=()
for f in "$TMP"/tpch/*.arrow; do tables+=(--table "$(basename "$f" .arrow)=$f"); done
"$Q" serve --host 127.0.0.1 --port 0 --cert-dir "$TMP" "${tables[@]}" > "$TMP/serve.out" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 600); do
  grep -q '^ready' "$TMP/serve.out" 2>/dev/null && break
  kill -0 "$SERVE_PID" 2>/dev/null || { cat "$TMP/serve.out" >&2; echo "quiver serve exited" >&2; exit 1; }
  sleep 0.1
done
grep -q '^ready' "$TMP/serve.out" || { cat "$TMP/serve.out" >&2; echo "quiver serve not ready" >&2; exit 1; }
URL=$(sed -n 's/^quiver serve: listening on //p' "$TMP/serve.out")
CERT=$(sed -n 's/^certificate: //p' "$TMP/serve.out")

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: > "$TMP/quiver.tsv"
while IFS=$'\t' read -r name sql; do
  : > "$TMP/times"
  rows=
  for _ in $(seq 1 "$ROUNDS"); do
    # Summary on stderr: "quiver query: N rows, ..., R refreshes, T s (X MB/s)"
    "$Q" query --server "$URL" --ca-cert "$CERT" --format none "$sql" 2> "$TMP/q.err" > /dev/null \
      || { cat "$TMP/q.err" >&2; exit 1; }
    line=$(grep '^quiver query: ' "$TMP/q.err")
    n=$(sed -E 's/^quiver query: ([0-9]+) rows,.*/\1/' <<< "$line")
    s=$(sed -E 's/.* refreshes, ([0-9.]+) s( .*)?$/\1/' <<< "$line")
    [[ "$n" =~ ^[0-9]+$ && "$s" =~ ^[0-9.]+$ ]] || { echo "cannot parse: $line" >&2; exit 1; }
    if [ -n "$rows" ] && [ "$rows" != "$n" ]; then echo "$name: quiver row counts differ between rounds" >&2; exit 1; fi
    rows=$n
    echo "$s" >> "$TMP/times"
  done
  printf '%s\t%s\t%s\t%s\n' "$name" "$rows" "$(median < "$TMP/times")" "$(paste -sd, "$TMP/times")" >> "$TMP/quiver.tsv"
  echo "quiver $name: $rows rows, times $(paste -sd' ' "$TMP/times") s"
done < "$TMP/queries.tsv"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=

node bench/tpch_duckdb.mjs --csv-dir "$TMP/csv" --queries "$TMP/queries.tsv" \
  --threads 1,2 --rounds "$ROUNDS" > "$TMP/duckdb.jsonl"
cat "$TMP/duckdb.jsonl"

node - "$TMP/quiver.tsv" "$TMP/duckdb.jsonl" "$SCALE" <<'EOF'
const fs = require('node:fs');
const [qf, df, scale] = process.argv.slice(2);
const quiver = fs.readFileSync(qf, 'utf8').trim().split('\n').map((l) => l.split('\t'));
const duck = fs.readFileSync(df, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.query);
let bad = false;
const f3 = (x) => x.toFixed(3);
const lines = [['query', 'rows quiver', 'rows duckdb', 'quiver e2e s', 'duckdb t1 s', 'duckdb t2 s', 't1/quiver', 't2/quiver']];
for (const [name, rows, med] of quiver) {
  const q = Number(med);
  const d1 = duck.find((o) => o.query === name && o.threads === 1);
  const d2 = duck.find((o) => o.query === name && o.threads === 2);
  for (const d of [d1, d2]) if (String(d.rows) !== rows) { bad = true; console.error(`${name}: rows differ: quiver ${rows}, duckdb (threads=${d.threads}) ${d.rows}`); }
  lines.push([name, rows, String(d1.rows), f3(q), f3(d1.median_s), f3(d2.median_s), (d1.median_s / q).toFixed(2), (d2.median_s / q).toFixed(2)]);
}
const w = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
console.log(`\nTPC-H scale ${scale}, medians; ratio = DuckDB time / quiver time (quiver: end to end over TLS incl. transfer, LZ4, decode; DuckDB: in process)`);
for (const l of lines) console.log(l.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
if (bad) { console.error('row counts differ'); process.exit(1); }
EOF
