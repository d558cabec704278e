"""quiver: Apache Arrow data moved and joined with accounted, right-sized memory.

Arrow tables (``quiver.Table``) implement the Arrow PyCapsule interface
(``__arrow_c_schema__``, ``__arrow_c_stream__``): pyarrow, polars, DuckDB and
nanoarrow take them without copying buffers, and ``quiver.from_arrow`` takes
theirs. ``read_ipc``/``write_ipc`` read and write Arrow IPC files and streams
(LZ4_FRAME / ZSTD body compression). ``quiver.connect(...)`` is a PEP 249
connection to a Databricks SQL endpoint (``quiver serve``), fetching results
through quiver's memory-bounded CloudFetch client.

Errors from the native layer are raised as ``quiver.ArrowError`` (a
``ValueError``) with quiver's message (where and what: message, field,
buffer; expected vs actual).
"""

from __future__ import annotations

from . import _quiver
from ._quiver import ArrowError, Table, from_arrow, pool_held_bytes
from .dbapi import (DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
                    NotSupportedError, OperationalError, ProgrammingError, apilevel, connect, paramstyle,
                    threadsafety)

__all__ = [
    "ArrowError",
    "Table",
    "from_arrow",
    "from_pandas",
    "from_numpy",
    "read_ipc",
    "write_ipc",
    "pool_held_bytes",
    "connect",
    "apilevel",
    "threadsafety",
    "paramstyle",
    "Error",
    "InterfaceError",
    "DatabaseError",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "InternalError",
    "ProgrammingError",
    "NotSupportedError",
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
    """This table as a pandas.DataFrame (copies values), column by position.

    Columns keep their order and names, repeated names included (a
    self-join's ``SELECT a.x, b.x``): the frame is built by position, never
    by name. Integers keep their numpy dtype (float64 with NaN when the
    column has nulls, as pandas does), floats and booleans keep theirs,
    decimals of precision <= 15 become float64 (the nearest double), larger
    ones ``decimal.Decimal`` objects, strings ``str`` objects (equal values
    of low-cardinality columns share one object) and binary ``bytes`` (None
    for nulls), dates and timestamps ``datetime64[ns]`` (tz-aware when the
    Arrow type has a time zone; NaT for nulls; values past what nanoseconds
    hold become ``datetime.date``/``datetime`` objects). Other types are
    rendered as text.

    Each numpy block of the frame (one per dtype) is allocated once and
    filled column by column in one pass, so the frame costs about its own
    size (pandas would otherwise copy separate column arrays into blocks).
    """
    import pandas as pd

    names = list(self.column_names)
    n = self.num_rows
    blocks, zones = self._pandas_blocks()
    columns = pd.Index(names, dtype=object)
    try:
        from pandas.core.internals import BlockManager
        from pandas.core.internals.api import make_block

        mgr = BlockManager([make_block(values, placement=positions) for values, positions in blocks],
                           [columns, pd.RangeIndex(n)])
        try:
            df = pd.DataFrame._from_mgr(mgr, axes=mgr.axes)  # pandas >= 2.1
        except TypeError:
            df = pd.DataFrame(mgr)  # pandas 1.x, 2.0
    except (ImportError, TypeError, ValueError, AttributeError):
        # Another pandas: the public constructor, still by position.
        by_position = {}
        for values, positions in blocks:
            for row, pos in enumerate(positions):
                by_position[pos] = values[row]
        df = pd.DataFrame({i: by_position[i] for i in range(len(names))}, index=pd.RangeIndex(n), copy=False)
        df.columns = columns
    for pos, tz in zones:
        df.isetitem(pos, df.iloc[:, pos].dt.tz_localize("UTC").dt.tz_convert(tz))
    return df


Table.to_pandas = _to_pandas


def _column_values(series):
    """(1-D numpy array, time zone or "") of one pandas column for _from_columns."""
    import numpy as np
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        return series.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(), str(dtype.tz)
    if isinstance(dtype, pd.CategoricalDtype):
        return np.asarray(series.astype(object)), ""
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        # Nullable Int64 / boolean / string: Python values with None for missing.
        return series.to_numpy(dtype=object, na_value=None), ""
    return _numpy_column(series.to_numpy()), ""


def _numpy_column(values):
    import numpy as np

    arr = np.asarray(values)
    if arr.dtype.kind in "US":  # fixed-width numpy strings: str / bytes objects
        arr = arr.astype(object)
    if arr.dtype.kind == "M" and np.datetime_data(arr.dtype)[0] not in ("D", "s", "ms", "us", "ns"):
        arr = arr.astype("datetime64[s]")
    return arr


def from_pandas(df) -> Table:
    """A quiver.Table from a pandas.DataFrame, without pyarrow (values copied).

    Columns are taken by position (repeated names are kept; names become
    ``str``); the index is not stored. Types: numpy integers, floats (NaN
    becomes null) and booleans keep their width; ``datetime64`` becomes
    ``timestamp`` in its unit (``date32`` for ``datetime64[D]``; NaT is
    null), tz-aware columns keep their zone, ``timedelta64`` becomes
    ``duration``; object columns of ``str``/``bytes``/``bool``/``int``/
    ``float``/``datetime.date`` become utf8/binary/bool/int64/float64/
    date32 (None, NaN, pd.NA and NaT are nulls); categoricals become their
    values; nullable extension types (``Int64``, ``boolean``, ``string``)
    their Python values. Raises TypeError naming the column for anything
    else (mixed object columns, nested values).
    """
    names, arrays, zones = [], [], []
    for i in range(df.shape[1]):
        values, tz = _column_values(df.iloc[:, i])
        names.append(str(df.columns[i]))
        arrays.append(values)
        zones.append(tz)
    return _quiver._from_columns(names, arrays, zones)


def from_numpy(columns) -> Table:
    """A quiver.Table from a mapping of column name -> 1-D array-like (a
    dict of numpy arrays, lists, ...), without pyarrow or pandas (values
    copied). Types as for from_pandas; all columns must have one length.
    """
    names = [str(k) for k in columns]
    arrays = [_numpy_column(v) for v in columns.values()]
    return _quiver._from_columns(names, arrays, [""] * len(arrays))
