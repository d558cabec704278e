"""quiver.connect (the Python DB-API module) through HAProxy in front of the
stateless servers (tests/objstore/run.sh): fetches SQL in pages, SIGKILLs
one server after the first page (when a pid is given) and requires every row
exactly once, equal to `quiver sql --format jsonl` (str() of each value).

    python3 python_check.py PORT CA_CERT EXPECTED_JSONL SQL [KILL_PID]
"""
import json
import os
import signal
import sys

import quiver

port, ca, expected_path, sql = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
kill_pid = int(sys.argv[5]) if len(sys.argv) > 5 else 0
with open(expected_path) as f:
    expected = [json.loads(line) for line in f if line.strip()]
conn = quiver.connect("127.0.0.1", "/sql/1.0/warehouses/quiver", port=port, ca_cert=ca)
cur = conn.cursor()
cur.execute(sql)
rows = []
while True:
    page = cur.fetchmany(5000)
    if not page:
        break
    rows.extend(page)
    if kill_pid:
        os.kill(kill_pid, signal.SIGKILL)
        kill_pid = 0
cur.close()
conn.close()
bad = ""
if len(rows) != len(expected):
    bad = f"rows: got {len(rows)}, expected {len(expected)}"
for i, (got, want) in enumerate(zip(rows, expected)):
    if bad:
        break
    for j, (k, v) in enumerate(want.items()):
        g = got[j]
        if str(g) != str(v) and not (hasattr(g, "isoformat") and g.isoformat() == v):
            bad = f"row {i} column {k}: got {g!r}, expected {v!r}"
            break
print(json.dumps({"rows": len(rows), "ok": not bad, "error": bad or None}))
sys.exit(1 if bad else 0)
