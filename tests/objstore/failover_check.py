"""Issue 39, section 3f of tests/objstore/run.sh (failover_cases.sh): the
aggregates of a large result read while the server running its statement is
SIGKILLed, the same ones failover_check.mjs computes with the Node driver:
rows, distinct (distinct values of the first column, the key) and per column
the sum of round(100 x value) for numbers, of days since 1970-01-01 for
dates, of lengths for strings. Prints one JSON line with them and the epoch
ms at which the first row came and reading ended; exit 0 when it read to the end, 1 on an error (in the line).

    python3 failover_check.py client PORT CA_CERT SQL   quiver.connect through PORT
    quiver query ... --format jsonl | python3 failover_check.py jsonl
"""
import datetime
import decimal
import json
import re
import sys
import time

import numpy as np

now_ms = lambda: int(time.time() * 1000)  # noqa: E731
out = {"rows": 0, "distinct": 0, "sums": {}, "exec_ms": 0, "first_row_ms": 0, "end_ms": 0}
key_parts = []
sums = {}


def fold_frame(df):
    """Adds one pandas frame of rows to the aggregates."""
    import pandas as pd

    key_parts.append(df.iloc[:, 0].to_numpy())
    for pos, name in enumerate(df.columns):
        col = df.iloc[:, pos]
        if pd.api.types.is_datetime64_any_dtype(col.dtype):
            v = int(col.to_numpy().astype("datetime64[D]").astype(np.int64).sum())
        elif pd.api.types.is_integer_dtype(col.dtype):
            v = int(col.to_numpy().astype(np.int64).sum()) * 100
        elif pd.api.types.is_float_dtype(col.dtype):
            v = int(np.round(col.to_numpy() * 100).astype(np.int64).sum())
        else:
            v = sum(fold_value(x) for x in col)
        sums[name] = sums.get(name, 0) + v
    out["rows"] += len(df)


DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def fold_value(x):
    if x is None:
        return 0
    if isinstance(x, bool):
        return int(x) * 100
    if isinstance(x, (int, float, decimal.Decimal)):
        return int((decimal.Decimal(str(x)) * 100).to_integral_value(decimal.ROUND_HALF_EVEN))
    if isinstance(x, datetime.date):
        return (x - datetime.date(1970, 1, 1)).days
    s = str(x)
    if DATE.match(s):
        return (datetime.date.fromisoformat(s) - datetime.date(1970, 1, 1)).days
    return len(s)


def fold_text_column(values):
    # jsonl: quoted decimals are numbers, ISO dates are dates, the rest text.
    total = 0
    for x in values:
        if isinstance(x, str) and NUMBER.match(x):
            total += int((decimal.Decimal(x) * 100).to_integral_value(decimal.ROUND_HALF_EVEN))
        else:
            total += fold_value(x)
    return total


def finish():
    out["end_ms"] = now_ms()
    out["distinct"] = int(np.unique(np.concatenate(key_parts)).size) if key_parts else 0
    out["sums"] = {k: str(v) for k, v in sums.items()}


def client(port, ca, sql):
    import quiver

    conn = quiver.connect("127.0.0.1", "/sql/1.0/warehouses/quiver", port=port, ca_cert=ca)
    cur = conn.cursor()
    cur.execute(sql)
    # execute() returns once the statement is FINISHED (here: re-run), so
    # no exec_ms: the caller times the kill from the client's start.
    out["execute_returned_ms"] = now_ms()
    while True:
        table = cur.fetchmany_arrow(200000)
        if table.num_rows == 0:
            break
        if not out["first_row_ms"]:
            out["first_row_ms"] = now_ms()
        fold_frame(table.to_pandas())
    cur.close()
    conn.close()


def jsonl(stream):
    names = None
    batch = []

    def flush():
        if not batch:
            return
        key_parts.append(np.array([r[0] for r in batch], dtype=np.int64))
        for c, name in enumerate(names):
            sums[name] = sums.get(name, 0) + fold_text_column(r[c] for r in batch)
        out["rows"] += len(batch)
        batch.clear()

    for line in stream:
        if not line.strip():
            continue
        if not out["first_row_ms"]:
            out["first_row_ms"] = now_ms()
        row = json.loads(line)
        if names is None:
            names = list(row.keys())
        batch.append(list(row.values()))
        if len(batch) >= 100000:
            flush()
    flush()


try:
    if sys.argv[1] == "client":
        client(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        jsonl(sys.stdin)
except Exception as e:  # noqa: BLE001 (reported in the line)
    out["error"] = f"{type(e).__name__}: {e}"
finish()
print(json.dumps(out))
sys.exit(1 if "error" in out else 0)
