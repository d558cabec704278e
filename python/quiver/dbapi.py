"""PEP 249 (DB-API 2.0) access to a Databricks SQL endpoint — `quiver serve`
or, in principle, a real warehouse — through quiver's fetch client.

The shape follows databricks-sql-connector: ``quiver.connect(server_hostname,
http_path, access_token, ...)`` returns a Connection; ``cursor().execute(sql)``
runs a statement; ``fetchone``/``fetchmany``/``fetchall`` return tuples,
``fetchall_arrow``/``fetchmany_arrow`` return quiver.Table objects (Arrow
PyCapsule interface: ``pyarrow.table(t)``, ``polars.from_arrow(t)``).

Results are downloaded as CloudFetch chunks in parallel, inside a byte window
(``window_bytes``, compressed bytes in flight plus decompressed bytes not yet
consumed), and LZ4-decompressed while downloading into private mappings that
go back to the OS when the batches that use them are released. The GIL is
released during network and decompression work.

Errors are the PEP 249 classes below; each carries ``message`` (the server's
displayMessage or quiver's text) and ``sql_state`` (the server's sqlState, or
None).
"""

from __future__ import annotations

import datetime
import decimal
import math
import os
import re
from collections.abc import Mapping
from typing import Any, Optional, Sequence

from . import _quiver

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections
# Statement parameters: ``:name`` markers bound from a mapping, rendered as
# SQL literals on the client (see bind_parameters).
paramstyle = "named"


class Error(Exception):
    """Base of the PEP 249 errors. ``message``: text; ``sql_state``: SQLSTATE or None."""

    def __init__(self, message: str, sql_state: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.sql_state = sql_state


class Warning(Exception):  # noqa: A001 (PEP 249 name)
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


_SQLSTATE = re.compile(r"\(sqlState ([0-9A-Z]{5})\)")


def _translate(exc: BaseException) -> Error:
    text = str(exc)
    m = _SQLSTATE.search(text)
    state = m.group(1) if m else None
    if "server error" in text or state is not None:
        if state and state.startswith("0A"):
            return NotSupportedError(text, state)
        if state and state.startswith("42"):
            return ProgrammingError(text, state)
        if state and state.startswith("22"):
            return DataError(text, state)
        if state and (state.startswith("53") or state.startswith("57")):
            return OperationalError(text, state)
        return DatabaseError(text, state)
    if text.startswith("Invalid:") and ("chunk" in text or "row" in text):
        return DataError(text, state)
    if text.startswith("Invalid:"):
        return InterfaceError(text, state)
    return OperationalError(text, state)


def _call(fn, *args):
    try:
        return fn(*args)
    except _quiver.ArrowError as e:
        raise _translate(e) from e


class Connection:
    """A session on the server. Use as a context manager or call close()."""

    def __init__(self, url: str, token: str, ca_cert: str, insecure: bool, window_bytes: int,
                 parallel: int, policy: str, connect_timeout_s: float):
        self._conn = _call(_quiver._connect, url, token, ca_cert, insecure, int(window_bytes), int(parallel),
                           policy, int(connect_timeout_s * 1000))
        self._cursors: list[Cursor] = []

    def cursor(self) -> "Cursor":
        self._check()
        c = Cursor(self)
        self._cursors.append(c)
        return c

    def close(self) -> None:
        for c in self._cursors:
            c.close()
        self._cursors.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def commit(self) -> None:
        """No transactions: a no-op (PEP 249 requires the method)."""

    def rollback(self) -> None:
        raise NotSupportedError("transactions are not supported")

    @property
    def open(self) -> bool:
        return self._conn is not None and not self._conn.closed

    def _check(self):
        if self._conn is None:
            raise InterfaceError("the connection is closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _literal(name: str, value: Any) -> str:
    """The SQL literal for one parameter value (the types quiver's SQL has literals for)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotSupportedError(f"parameter :{name}: {value!r} has no SQL literal")
        text = repr(value)
        return text if ("e" in text or "E" in text) else text + "e0"  # a float literal, not an exact decimal
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise NotSupportedError(f"parameter :{name}: {value!r} has no SQL literal")
        return format(value, "f")
    if isinstance(value, str):
        if "\0" in value:
            raise DataError(f"parameter :{name}: a string with a NUL character")
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return "TIMESTAMP '" + value.isoformat(sep=" ") + "'"
    if isinstance(value, datetime.date):
        return "DATE '" + value.isoformat() + "'"
    raise NotSupportedError(f"parameter :{name}: values of type {type(value).__name__} are not supported "
                            "(None, bool, int, float, Decimal, str, date, datetime are)")


def bind_parameters(operation: str, parameters: Mapping) -> str:
    """``operation`` with each ``:name`` marker replaced by the SQL literal of
    ``parameters[name]`` (paramstyle "named"). Markers inside string literals,
    quoted identifiers and comments, and ``::`` casts, are left alone. Strings
    are quoted with ``'`` doubled, so a value can never end its literal.
    Errors: ProgrammingError for a marker without a value or parameters that
    are not a mapping; NotSupportedError for a value without a SQL literal."""
    if not isinstance(parameters, Mapping):
        raise ProgrammingError("paramstyle is 'named': pass parameters as a mapping, e.g. {'k': 1} for :k")
    out = []
    i, n = 0, len(operation)
    while i < n:
        c = operation[i]
        if c in "'\"":  # string literal or quoted identifier ('' / "" escape themselves)
            j = i + 1
            while j < n:
                if operation[j] == c:
                    if j + 1 < n and operation[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append(operation[i:j + 1])
            i = j + 1
        elif operation.startswith("--", i):
            j = operation.find("\n", i)
            j = n if j < 0 else j
            out.append(operation[i:j])
            i = j
        elif operation.startswith("/*", i):
            j = operation.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(operation[i:j])
            i = j
        elif operation.startswith("::", i):
            out.append("::")
            i += 2
        elif c == ":" and i + 1 < n and (operation[i + 1].isalpha() or operation[i + 1] == "_"):
            j = i + 1
            while j < n and (operation[j].isalnum() or operation[j] == "_"):
                j += 1
            name = operation[i + 1:j]
            if name not in parameters:
                raise ProgrammingError(f"no value for parameter :{name}")
            out.append(_literal(name, parameters[name]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Cursor:
    """Runs statements and fetches their results (PEP 249 cursor)."""

    arraysize = 10000

    def __init__(self, connection: Connection):
        self.connection = connection
        self._result = None
        self.description: Optional[list[tuple]] = None
        self.rowcount = -1
        self._closed = False

    def execute(self, operation: str, parameters: Optional[Any] = None) -> "Cursor":
        """Runs ``operation`` (one SQL statement). ``parameters``: a mapping
        bound to ``:name`` markers as SQL literals (see bind_parameters)."""
        self._check()
        if parameters is not None:
            operation = bind_parameters(operation, parameters)
        self._close_result()
        self.connection._check()
        self._result = _call(_quiver._execute, self.connection._conn, operation)
        self.description = [(name, type_code, None, None, precision, scale, null_ok)
                            for (name, type_code, precision, scale, null_ok) in self._result.description()] or None
        self.rowcount = -1
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Any]) -> None:
        raise NotSupportedError("executemany is not supported")

    def fetchmany_arrow(self, size: Optional[int] = None) -> "_quiver.Table":
        """The next ``size`` rows (default ``arraysize``) as a quiver.Table."""
        n = self.arraysize if size is None else int(size)
        if n < 0:
            raise InterfaceError("size must be >= 0")
        return self._fetch(n)

    def fetchall_arrow(self) -> "_quiver.Table":
        """Every remaining row as a quiver.Table (zero-copy over the downloaded chunks)."""
        return self._fetch(-1)

    def fetchone(self) -> Optional[tuple]:
        rows = self._fetch(1).to_pylist()
        return rows[0] if rows else None

    def fetchmany(self, size: Optional[int] = None) -> list[tuple]:
        return self.fetchmany_arrow(size).to_pylist()

    def fetchall(self) -> list[tuple]:
        return self.fetchall_arrow().to_pylist()

    def cancel(self) -> None:
        """Cancels the running fetch and the operation on the server."""
        if self._result is not None:
            self._result.cancel()

    def stats(self) -> dict:
        """Fetch counters: rows delivered/dropped, chunks, bytes downloaded, pool held/peak."""
        self._require_result()
        return self._result.stats()

    def close(self) -> None:
        self._close_result()
        self._closed = True

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def __iter__(self):
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _fetch(self, n: int):
        self._require_result()
        table = _call(self._result.fetch, n)
        if self._result.done:
            self.rowcount = self._result.rows_returned
        return table

    def _require_result(self):
        self._check()
        if self._result is None:
            raise InterfaceError("no statement has been executed")

    def _close_result(self):
        if self._result is not None:
            self._result.close()
            self._result = None

    def _check(self):
        if self._closed:
            raise InterfaceError("the cursor is closed")


def connect(server_hostname: str, http_path: str, access_token: Optional[str] = None, *,
            port: Optional[int] = None, ca_cert: Optional[str] = None, insecure: bool = False,
            window_bytes: int = 64 << 20, parallel: int = 8, policy: str = "stream-mmap",
            connect_timeout_s: float = 10.0) -> Connection:
    """Opens a session on ``https://server_hostname[:port]/http_path``.

    ``access_token`` defaults to the ``QUIVER_TOKEN`` environment variable; it
    is only sent in the Authorization header. ``ca_cert``: a PEM file to trust
    (``quiver serve`` prints the path of its generated certificate).
    ``insecure=True`` turns TLS verification off (dangerous). Fetch options:
    ``window_bytes`` (bytes in flight + decoded and not yet consumed),
    ``parallel`` (downloads at once), ``policy`` ("stream-mmap", the default;
    "mmap-after" and "heap", the seed's two designs, for comparison).
    Raises OperationalError when the server cannot be reached or refuses the
    token, InterfaceError for bad arguments.
    """
    if policy not in ("stream-mmap", "mmap-after", "heap"):
        raise InterfaceError(f"unknown policy {policy!r} (expected stream-mmap, mmap-after or heap)")
    token = access_token if access_token is not None else os.environ.get("QUIVER_TOKEN", "")
    if not token:
        raise InterfaceError("no access token: pass access_token or set QUIVER_TOKEN")
    host = server_hostname
    if host.startswith("https://"):
        host = host[len("https://"):]
    if port is not None:
        host = f"{host}:{port}"
    path = http_path if http_path.startswith("/") else "/" + http_path
    return Connection(f"https://{host}{path}", token, ca_cert or "", insecure, window_bytes, parallel, policy,
                      connect_timeout_s)
