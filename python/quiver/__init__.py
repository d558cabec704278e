"""quiver: Apache Arrow data moved and joined with accounted, right-sized memory.

Arrow tables (``quiver.Table``) implement the Arrow PyCapsule interface
(``__arrow_c_schema__``, ``__arrow_c_stream__``): pyarrow, polars, DuckDB and
nanoarrow take them without copying buffers, and ``quiver.from_arrow`` takes
theirs. ``read_ipc``/``write_ipc`` read and write Arrow IPC files and streams
(LZ4_FRAME / ZSTD body compression).

Errors from the native layer are raised as ``quiver.ArrowError`` (a
``ValueError``) with quiver's message (where and what: message, field,
buffer; expected vs actual).
"""

from __future__ import annotations

from . import _quiver
from ._quiver import ArrowError, Table, from_arrow, pool_held_bytes

__all__ = [
    "ArrowError",
    "Table",
    "from_arrow",
    "read_ipc",
    "write_ipc",
    "pool_held_bytes",
]

__version__ = "0.1.0"


def read_ipc(path) -> Table:
    """Read an Arrow IPC file or stream (format detected from the content).

    Files are memory-mapped and decoded zero-copy where buffers allow
    (uncompressed, aligned); compressed buffers are decompressed into
    memory accounted by quiver's pool. Raises ArrowError on malformed data
    and OSError-like ArrowError on I/O failure. The GIL is released while
    reading.
    """
    return _quiver.read_ipc(str(path))


def write_ipc(obj, path, compression: str = "none", format: str = "file") -> None:
    """Write ``obj`` as an Arrow IPC file (``format="file"``) or stream.

    ``obj`` is a quiver.Table or any object implementing
    ``__arrow_c_stream__`` (a pyarrow Table, a polars DataFrame, ...).
    ``compression`` is ``"none"``, ``"lz4"`` (LZ4_FRAME) or ``"zstd"``.
    The file is written beside ``path`` and renamed into place only on
    success: a failed write leaves nothing behind. The GIL is released
    while writing.
    """
    _quiver.write_ipc(obj, str(path), compression, format)


def _to_pandas(self):
    """This table as a pandas.DataFrame (copies values).

    Integers become int64-like numpy columns (float64 with NaN when the
    column has nulls, as pandas does), floats and booleans keep their dtype,
    strings and binary become object columns (None for nulls), dates
    ``datetime64``, timestamps ``datetime64`` in their unit (tz-aware when
    the Arrow type has a time zone; NaT for nulls). Other types are
    rendered as text.
    """
    import pandas as pd

    data = {}
    for i, name in enumerate(self.column_names):
        values, tz = self._column_numpy(i)
        series = pd.Series(values, name=name, copy=False)
        if tz is not None:
            series = series.dt.tz_localize("UTC").dt.tz_convert(tz)
        data[name] = series
    return pd.DataFrame(data, columns=list(self.column_names))


Table.to_pandas = _to_pandas
