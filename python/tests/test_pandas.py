"""Table.to_pandas() by position (repeated names keep their own data), its
dtypes, and quiver.from_pandas / quiver.from_numpy making Tables without
pyarrow, round-tripped through write_ipc / read_ipc (issue 21 item 2)."""

import datetime
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

import quiver

QUIVER = os.environ.get("QUIVER_BINARY", "quiver")


def test_repeated_column_names_keep_their_own_data(tmp_path):
    # The case: a self-join selecting n.n_name and m.n_name.
    tpch = tmp_path / "tpch"
    subprocess.run([QUIVER, "gen", "tpch", "--scale", "0.001", "-o", str(tpch)], check=True, capture_output=True)
    out = tmp_path / "pairs.arrow"
    subprocess.run([QUIVER, "sql", "--tables", str(tpch), "-o", str(out),
                    "SELECT n.n_name, m.n_name, n.n_nationkey FROM nation n JOIN nation m "
                    "ON n.n_regionkey = m.n_regionkey WHERE n.n_nationkey = 0 AND m.n_nationkey = 16"],
                   check=True, capture_output=True)
    t = quiver.read_ipc(out)
    assert t.to_pylist() == [("ALGERIA", "MOZAMBIQUE", 0)]
    df = t.to_pandas()
    assert list(df.columns) == ["n_name", "n_name", "n_nationkey"]
    assert df.iloc[0].tolist() == ["ALGERIA", "MOZAMBIQUE", 0]


def test_repeated_names_of_every_dtype():
    df = pd.DataFrame([[1, 2.5, "a", 3, 4.5, "b"], [5, 6.5, None, 7, np.nan, "c"]],
                      columns=["k", "v", "s", "k", "v", "s"])
    back = quiver.from_pandas(df).to_pandas()
    assert list(back.columns) == list(df.columns)
    assert back.iloc[:, 0].tolist() == [1, 5] and back.iloc[:, 3].tolist() == [3, 7]
    assert back.iloc[:, 1].tolist() == [2.5, 6.5]
    assert back.iloc[0, 4] == 4.5 and np.isnan(back.iloc[1, 4])
    assert back.iloc[:, 2].tolist() == ["a", None] and back.iloc[:, 5].tolist() == ["b", "c"]


def test_lineitem_dtypes(tmp_path):
    path = tmp_path / "tpch"
    subprocess.run([QUIVER, "gen", "tpch", "--scale", "0.001", "-o", str(path)], check=True, capture_output=True)
    t = quiver.read_ipc(path / "lineitem.arrow")
    df = t.to_pandas()
    assert df.shape == (t.num_rows, 16)
    assert df["l_orderkey"].dtype == np.int64
    assert df["l_linenumber"].dtype == np.int32
    assert df["l_extendedprice"].dtype == np.float64  # decimal(15, 2)
    assert df["l_shipdate"].dtype == "datetime64[ns]"
    assert df["l_shipmode"].dtype == object
    rows = t.to_pylist()
    for i in (0, len(rows) // 2, len(rows) - 1):
        r = rows[i]
        assert df["l_orderkey"].iloc[i] == r[0]
        assert df["l_extendedprice"].iloc[i] == float(r[5])
        assert df["l_shipdate"].iloc[i].date() == r[10]
        assert df["l_comment"].iloc[i] == r[15]
    # Low-cardinality strings share their objects; the values are right.
    modes = df["l_shipmode"]
    assert modes.nunique() <= 7
    assert len({id(x) for x in modes}) == modes.nunique()


def test_from_numpy_and_round_trip(tmp_path):
    cols = {
        "i8": np.array([1, -2, 3], dtype=np.int8),
        "u32": np.array([1, 2, 4000000000], dtype=np.uint32),
        "f": np.array([1.5, np.nan, -0.25]),
        "b": np.array([True, False, True]),
        "ts": np.array(["2024-01-02T03:04:05", "NaT", "1999-12-31T23:59:59"], dtype="datetime64[us]"),
        "d": np.array(["2024-01-02", "1970-01-01", "NaT"], dtype="datetime64[D]"),
        "s": np.array(["x", None, "zz"], dtype=object),
        "u": np.array(["fixed", "width", "str"]),
        "by": np.array([b"\x00\x01", None, b""], dtype=object),
        "o": [7, None, 9],
    }
    t = quiver.from_numpy(cols)
    assert t.num_rows == 3 and t.column_names == list(cols)
    assert "uint32" in t.schema_text and "timestamp" in t.schema_text and "date32" in t.schema_text
    out = tmp_path / "t.arrow"
    quiver.write_ipc(t, out, compression="zstd")
    back = quiver.read_ipc(out)
    assert back.to_pylist() == t.to_pylist()
    rows = back.to_pylist()
    assert rows[0] == (1, 1, 1.5, True, datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.date(2024, 1, 2), "x",
                       "fixed", b"\x00\x01", 7)
    assert rows[1][2] is None and rows[1][4] is None and rows[1][6] is None and rows[1][9] is None
    assert rows[2][5] is None
    df = back.to_pandas()
    assert df["u32"].tolist() == [1, 2, 4000000000]
    assert df["s"].tolist() == ["x", None, "zz"]
    assert pd.isna(df["ts"].iloc[1]) and df["ts"].iloc[2] == pd.Timestamp("1999-12-31T23:59:59")


def test_from_pandas_round_trip(tmp_path):
    df = pd.DataFrame({
        "id": np.arange(1000, dtype=np.int64),
        "price": np.linspace(0, 1, 1000),
        "name": [f"n{i % 13}" if i % 7 else None for i in range(1000)],
        "when": pd.date_range("2020-01-01", periods=1000, freq="h"),
        "zoned": pd.date_range("2020-01-01", periods=1000, freq="h", tz="Europe/Paris"),
        "cat": pd.Categorical([["a", "b", "c"][i % 3] for i in range(1000)]),
        "maybe": pd.array([i if i % 5 else None for i in range(1000)], dtype="Int64"),
        "flag": np.arange(1000) % 2 == 0,
    })
    t = quiver.from_pandas(df)
    out = tmp_path / "df.arrows"
    quiver.write_ipc(t, out, compression="lz4", format="stream")
    back = quiver.read_ipc(out).to_pandas()
    assert list(back.columns) == list(df.columns)
    assert back["id"].tolist() == df["id"].tolist()
    np.testing.assert_array_equal(back["price"].to_numpy(), df["price"].to_numpy())
    assert back["name"].tolist() == df["name"].tolist()
    assert (back["when"] == df["when"]).all()
    assert str(back["zoned"].dt.tz) == "Europe/Paris" and (back["zoned"] == df["zoned"]).all()
    assert back["cat"].tolist() == df["cat"].astype(object).tolist()
    assert back["maybe"].isna().sum() == 200 and back["maybe"].iloc[1] == 1
    assert back["flag"].dtype == bool and back["flag"].tolist() == df["flag"].tolist()


def test_from_pandas_errors_name_the_column():
    with pytest.raises(TypeError, match="column 'mixed'"):
        quiver.from_pandas(pd.DataFrame({"mixed": ["a", 1]}))
    with pytest.raises(TypeError, match="column 'nested'"):
        quiver.from_numpy({"nested": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="rows"):
        quiver.from_numpy({"a": [1, 2], "b": [1]})


def test_empty_table():
    t = quiver.from_numpy({"a": np.array([], dtype=np.int64), "s": np.array([], dtype=object)})
    df = t.to_pandas()
    assert df.shape == (0, 2) and list(df.columns) == ["a", "s"]
