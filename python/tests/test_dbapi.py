"""quiver.connect (PEP 249) against `quiver serve` on 127.0.0.1 (TLS with the
server's generated certificate, a token): values equal `quiver cat`, the
Arrow results consumed by quiver's own importer, errors as the PEP 249
classes with the server's message and sqlState, the GIL released while
fetching."""

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

import quiver

QUIVER = os.environ.get("QUIVER_BINARY", "quiver")
TOKEN = "dbapi-test-token"


def quiver_cat_rows(path):
    out = subprocess.run([QUIVER, "cat", "--format", "jsonl", str(path)], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    table = d / "lineitem.arrow"
    subprocess.run([QUIVER, "gen", "lineitem", "--rows", "60000", "-o", str(table)], check=True,
                   capture_output=True)
    env = dict(os.environ, QUIVER_TOKEN=TOKEN)
    # Small chunks and a low inline threshold: the result comes as several
    # CloudFetch links, LZ4-compressed.
    proc = subprocess.Popen([QUIVER, "serve", "--port", "0", "--table", f"lineitem={table}",
                             "--chunk-bytes", "1000000", "--inline-threshold-bytes", "100000",
                             "--cert-dir", str(d)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    info = {}
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.match(r"(port|path|certificate): (.*)", line.strip())
        if m:
            info[m.group(1)] = m.group(2)
        if "ready" in line:
            break
    assert {"port", "path", "certificate"} <= info.keys(), info
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    yield {"table": table, **info}
    proc.terminate()
    proc.wait(timeout=10)


def connect(server, **kw):
    return quiver.connect(server_hostname="127.0.0.1", port=int(server["port"]), http_path=server["path"],
                          access_token=kw.pop("access_token", TOKEN), ca_cert=server["certificate"], **kw)


def test_fetchall_matches_quiver_cat(server):
    expected = quiver_cat_rows(server["table"])
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM lineitem")
        names = [d[0] for d in cur.description]
        assert names == list(expected[0].keys())
        assert all(len(d) == 7 for d in cur.description)
        rows = cur.fetchall()
        assert cur.rowcount == len(expected) == 60000
        assert len(rows) == 60000
        stats = cur.stats()
        assert stats["chunks_consumed"] > 1, stats  # several CloudFetch chunks
    for got, want in zip(rows[:2000], expected[:2000]):
        for value, (name, w) in zip(got, want.items()):
            if isinstance(value, float):
                assert value == pytest.approx(w, rel=0, abs=0), name
            elif hasattr(value, "isoformat") and not isinstance(value, str):
                assert value.isoformat()[:10] == w[:10], name
            elif type(value).__name__ == "Decimal":
                assert str(value) == w, name
            else:
                assert value == w, name


def test_fetchmany_fetchone_and_arrow(server):
    with connect(server, window_bytes=4 << 20, parallel=2) as conn:
        cur = conn.cursor()
        cur.execute("SELECT * FROM lineitem")
        first = cur.fetchone()
        many = cur.fetchmany(999)
        assert len(many) == 999
        part = cur.fetchmany_arrow(5000)
        assert part.num_rows == 5000
        rest = cur.fetchall_arrow()
        assert 1 + 999 + 5000 + rest.num_rows == 60000
        assert cur.fetchone() is None
        # The Arrow result goes through the C Stream Interface into quiver's importer.
        again = quiver.from_arrow(rest)
        assert again.num_rows == rest.num_rows
        assert first is not None
        cur.execute("SELECT * FROM lineitem LIMIT 7")
        assert len(cur.fetchall()) == 7
        cur.close()


def test_policies_give_identical_rows(server):
    results = []
    for policy in ["stream-mmap", "mmap-after", "heap"]:
        with connect(server, policy=policy) as conn, conn.cursor() as cur:
            cur.execute("SELECT * FROM lineitem LIMIT 20000")
            results.append(cur.fetchall())
    assert results[0] == results[1] == results[2]


def test_errors_are_pep249_classes(server):
    with connect(server) as conn, conn.cursor() as cur:
        with pytest.raises(quiver.DatabaseError) as e:
            cur.execute("SELECT * FROM no_such_table")
        assert e.value.sql_state is not None
        assert "no_such_table" in e.value.message
        with pytest.raises(quiver.ProgrammingError):
            cur.execute("SELECT * FROM lineitem WHERE l_orderkey = :k", [1])  # named: a mapping
        with pytest.raises(quiver.ProgrammingError):
            cur.execute("SELECT * FROM lineitem WHERE l_orderkey = :k", {"other": 1})
        with pytest.raises(quiver.NotSupportedError):
            cur.execute("SELECT * FROM lineitem WHERE l_comment = :c", {"c": b"bytes"})
    with pytest.raises(quiver.OperationalError):
        connect(server, access_token="wrong-token")
    with pytest.raises(quiver.InterfaceError):
        quiver.connect(server_hostname="127.0.0.1", http_path="/x", access_token="")
    conn = connect(server)
    conn.close()
    with pytest.raises(quiver.InterfaceError):
        conn.cursor()


def test_gil_is_released_while_fetching(server):
    """A Python thread keeps running while another thread fetches."""
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    t.start()
    try:
        with connect(server) as conn, conn.cursor() as cur:
            start = ticks
            cur.execute("SELECT * FROM lineitem")
            table = cur.fetchall_arrow()
            during = ticks - start
    finally:
        stop.set()
        t.join()
    assert table.num_rows == 60000
    assert during > 5, during


def test_bind_parameters_renders_literals_outside_quotes_and_comments():
    import datetime
    import decimal
    from quiver.dbapi import bind_parameters
    sql = ("SELECT ':k' AS \"x:k\" FROM t -- :k\n"
           "WHERE a = :k AND b = :s AND c IN (:f, :d, :n) AND d = :day AND e = :ts /* :k */ AND f = :b AND g::int = 1")
    out = bind_parameters(sql, {"k": 7, "s": "it's", "f": 1.5, "d": decimal.Decimal("2.50"), "n": None,
                                "day": datetime.date(1995, 3, 15),
                                "ts": datetime.datetime(1995, 3, 15, 1, 2, 3, 400000), "b": True})
    assert out == ("SELECT ':k' AS \"x:k\" FROM t -- :k\n"
                   "WHERE a = 7 AND b = 'it''s' AND c IN (1.5e0, 2.50, NULL) AND d = DATE '1995-03-15' "
                   "AND e = TIMESTAMP '1995-03-15 01:02:03.400000' /* :k */ AND f = TRUE AND g::int = 1")
    # A value cannot end its string literal: every quote is doubled.
    assert bind_parameters("x = :v", {"v": "'; DROP TABLE t; --"}) == "x = " + "'" + "''; DROP TABLE t; --" + "'"
    utc = datetime.timezone.utc
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    assert bind_parameters(":t", {"t": datetime.datetime(2000, 1, 1, 2, 0, tzinfo=plus2)}) == \
        bind_parameters(":t", {"t": datetime.datetime(2000, 1, 1, 0, 0, tzinfo=utc).replace(tzinfo=None)})
    with pytest.raises(quiver.NotSupportedError):
        bind_parameters(":x", {"x": float("nan")})
    with pytest.raises(quiver.ProgrammingError):
        bind_parameters(":missing", {})


def test_named_parameters_select_the_same_rows_as_literals(server):
    import datetime
    import decimal
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("SELECT l_orderkey, l_linenumber, l_shipmode, l_quantity FROM lineitem "
                    "WHERE l_shipmode = 'MAIL' AND l_quantity >= 10.5 AND l_shipdate < DATE '1995-01-01'")
        expected = sorted(cur.fetchall())
        assert expected
        cur.execute("SELECT l_orderkey, l_linenumber, l_shipmode, l_quantity FROM lineitem "
                    "WHERE l_shipmode = :mode AND l_quantity >= :q AND l_shipdate < :day",
                    {"mode": "MAIL", "q": decimal.Decimal("10.5"), "day": datetime.date(1995, 1, 1)})
        assert sorted(cur.fetchall()) == expected
        cur.execute("SELECT l_orderkey FROM lineitem WHERE l_comment = :c", {"c": "it's ' -- not /* a */ comment"})
        assert cur.fetchall() == []
