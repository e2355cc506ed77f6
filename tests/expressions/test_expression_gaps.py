"""Small Expression methods from Daft's list: dot_product and pearson_correlation (row-wise over
embeddings / numeric lists, checked against numpy), unnest (struct fields as columns), is_literal
and as_py."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import DataType, col, lit
from ketch.errors import KetchError
from ketch.functions import dot_product, pearson_correlation, unnest


def _vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return rng.normal(size=(n, dim)).astype(np.float32)


def test_dot_product_and_pearson_match_numpy(rng):
    a, b = _vectors(rng, 200, 16), _vectors(rng, 200, 16)
    emb = DataType.embedding(DataType.float32(), 16).to_arrow()
    table = pa.table(
        {
            "a": pa.FixedSizeListArray.from_arrays(pa.array(a.reshape(-1)), 16).cast(emb),
            "b": pa.FixedSizeListArray.from_arrays(pa.array(b.reshape(-1)), 16).cast(emb),
        }
    )
    out = (
        ketch.from_arrow(table)
        .select(
            col("a").dot_product(col("b")).alias("dot"),
            pearson_correlation(col("a"), col("b")).alias("r"),
            dot_product(col("a"), [1.0] * 16).alias("sum"),
        )
        .to_pydict()
    )
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(out["dot"], (a64 * b64).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(
        out["r"], [np.corrcoef(x, y)[0, 1] for x, y in zip(a64, b64, strict=True)], rtol=1e-10
    )
    np.testing.assert_allclose(out["sum"], a64.sum(axis=1), rtol=1e-12)


def test_dot_and_pearson_nulls_and_degenerate_rows():
    df = ketch.from_pydict(
        {"x": [[1, 2, 3], None, [1, 1, 1], [], [1, None, 2]], "y": [[4, 5, 6], [1], [1, 2, 3], [], [1, 2, 3]]}
    )
    out = df.select(
        col("x").dot_product(col("y")).alias("d"), col("x").pearson_correlation(col("y")).alias("r")
    )
    got = out.to_pydict()
    assert got["d"] == [32.0, None, 6.0, 0.0, None]
    assert got["r"][0] == pytest.approx(1.0) and got["r"][1:] == [
        None,
        None,
        None,
        None,
    ]  # constant side: null
    with pytest.raises(KetchError, match="dot_product .*expects Embedding"):
        df.select(col("x").list_count().dot_product(col("y"))).collect()


def test_unnest_expands_struct_fields_into_columns():
    rows = [{"x": 1, "y": "a"}, None, {"x": 3, "y": None}]
    df = ketch.from_pydict({"id": [1, 2, 3], "s": rows})
    out = df.select(col("id"), unnest(col("s"))).to_pydict()
    assert out == {"id": [1, 2, 3], "x": [1, None, 3], "y": ["a", None, None]}
    assert df.select(col("s").unnest()).column_names == ["x", "y"]
    with pytest.raises(KetchError, match="unnest expects a struct"):
        df.select(col("id").unnest())


def test_is_literal_and_as_py():
    assert lit(3).is_literal() and not col("a").is_literal() and not (lit(1) + 1).is_literal()
    assert lit(3).as_py() == 3
    assert lit("héllo").as_py() == "héllo"
    assert lit(None).as_py() is None
    assert lit(dt.date(2024, 2, 29)).as_py() == dt.date(2024, 2, 29)
    assert lit([1, 2]).as_py() == [1, 2]
    with pytest.raises(ValueError, match="literal"):
        col("a").as_py()
