"""DataFrame.offset and the top-N operator (``sort(...).limit(n)``, with or without an offset),
checked against pandas' stable sort and ``iloc`` on randomized inputs with ties and nulls, on both
runners. Row order is compared exactly, so the top-N must give the stable sort's first rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from rel_data import morsels, norm

import ketch
from ketch import col

pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(small=[True])]


def make_table(seed: int, n: int = 300) -> tuple[pa.Table, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    keys = [None if rng.random() < 0.1 else int(x) for x in rng.integers(0, 20, n)]  # many ties
    names = [f"s{int(x)}" for x in rng.integers(0, 7, n)]
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "k": pa.array(keys, pa.int64()),
            "s": pa.array(names),
            "v": pa.array([[float(i)] * 4 for i in range(n)], pa.list_(pa.float32())),
        }
    )
    pdf = pd.DataFrame({"id": range(n), "k": pd.Series(keys, dtype="Int64"), "s": names})
    return table, pdf


def ids(pdf: pd.DataFrame) -> list[int]:
    return [norm(v) for v in pdf["id"]]


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_n_matches_stable_sort_then_slice(seed, small):
    table, pdf = make_table(seed)
    df = ketch.from_arrow(table)
    cases = [(0, 5), (0, 1), (3, 10), (0, 0), (290, 50), (400, 5), (17, 283)]
    for desc in (False, True):
        exp_all = pdf.sort_values(
            "k", ascending=not desc, na_position="first" if desc else "last", kind="stable"
        )
        for offset, n in cases:
            q = df.sort("k", desc=desc)
            if offset:
                q = q.offset(offset)
            with morsels(small):
                got = q.limit(n).to_pydict()
            assert got["id"] == ids(exp_all.iloc[offset : offset + n]), (desc, offset, n)
            # the wide column travels with its row
            assert [v[0] for v in got["v"]] == [float(i) for i in got["id"]]


@pytest.mark.parametrize("seed", [0, 3])
def test_top_n_two_keys_and_string_key(seed):
    table, pdf = make_table(seed)
    with morsels(True):
        got = ketch.from_arrow(table).sort(["s", "k"], desc=[True, False]).limit(12).to_pydict()
    exp = pdf.assign(kn=pdf["k"].isna(), kv=pdf["k"].fillna(0)).sort_values(
        ["s", "kn", "kv"], ascending=[False, True, True], kind="stable"
    )
    assert got["id"] == ids(exp.iloc[:12])


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
def test_offset_without_sort_keeps_source_order(small):
    table, _ = make_table(5, n=100)
    df = ketch.from_arrow(table)
    with morsels(small):
        assert df.offset(0).to_pydict()["id"] == list(range(100))
        assert df.offset(37).to_pydict()["id"] == list(range(37, 100))
        assert df.offset(37).limit(5).to_pydict()["id"] == [37, 38, 39, 40, 41]
        assert df.limit(10).offset(7).to_pydict()["id"] == [7, 8, 9]
        assert df.offset(5).offset(10).limit(3).to_pydict()["id"] == [15, 16, 17]
        assert df.limit(20).offset(30).to_pydict()["id"] == []
        assert df.offset(1000).to_pydict()["id"] == []
        # with a filter and a projection between
        got = df.where(col("id") > 9).select("id").offset(10).limit(4).to_pydict()
    assert got == {"id": [20, 21, 22, 23]}


def test_offset_on_parquet_scan_pushes_offset_plus_limit(tmp_path):
    import io

    ketch.from_pydict({"a": list(range(1000))}).write_parquet(str(tmp_path / "t"))
    df = ketch.read_parquet(str(tmp_path / "t" / "*.parquet")).offset(990).limit(5)
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    assert "Limit pushdown = 995" in buf.getvalue()  # the scan's limit counts the offset's rows
    assert df.to_pydict() == {"a": [990, 991, 992, 993, 994]}


@pytest.mark.native_only
def test_explain_shows_top_n_with_offset(capsys):
    df = ketch.from_pydict({"a": [3, 1, 2]}).sort("a").offset(1).limit(1)
    df.explain(show_all=True)
    out = capsys.readouterr().out
    assert "TopN (blocking)" in out and "Limit = 1, Offset = 1" in out
    assert "Limit: 1, offset 1" in out
    assert df.to_pydict() == {"a": [2]}
    big = ketch.from_pydict({"a": [3, 1, 2]}).sort("a").limit(200_000)
    big.explain(show_all=True)
    assert "TopN" not in capsys.readouterr().out  # past the top-N bound: sort, then limit
    assert big.to_pydict() == {"a": [1, 2, 3]}


def test_offset_argument_errors():
    df = ketch.from_pydict({"a": [1, 2]})
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="offset"):
            df.offset(bad)
