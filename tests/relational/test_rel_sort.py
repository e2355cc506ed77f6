"""Property tests: DataFrame.sort against pandas sort_values(kind="stable") on randomized inputs.
Row order is checked exactly, so stability (equal keys keep input order) and null placement are
checked too; an ``id`` column records the input position."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from rel_data import KEY_TYPES, KINDS, SEEDS, N, key_values, morsels, norm, seed_shape_cases, with_nulls

import ketch
from ketch import col

# Each test runs on the native runner and, for seed 0 (every shape, kind and morsel size), on the Ray
# runner too (tests/conftest.py: runner, ray_subset).
pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(seed=[0])]

SHAPES = ["empty", "dup", "skewed", "distinct", "nullkeys"]
CASES = seed_shape_cases(SHAPES)
# (desc, nulls_first); None = the default (nulls first iff descending)
ORDERS = [(d, nf) for d in (False, True) for nf in (None, True, False)]


def make_data(seed, shape, kind, n=N):
    rng = np.random.default_rng(seed)
    keys = key_values(rng, n, shape, kind)
    n = len(keys)
    # few distinct floats (many ties), including negatives and a large magnitude
    floats = with_nulls(rng, [float(x) for x in rng.choice([-2.5, -1.0, 0.0, 0.5, 3.25, 1e300], n)])
    data = {"id": list(range(n)), "k": keys, "f": floats}
    table = pa.table(
        {
            "id": pa.array(data["id"], pa.int64()),
            "k": pa.array(data["k"], KEY_TYPES[kind]),
            "f": pa.array(data["f"], pa.float64()),
        }
    )
    pdf = pd.DataFrame(
        {
            "id": pd.Series(data["id"], dtype="int64"),
            "k": pd.Series(data["k"], dtype="Int64" if kind == "int" else object),
            "f": pd.Series(data["f"], dtype="Float64"),
        }
    )
    return table, pdf


def rows_of_pandas(pdf: pd.DataFrame) -> dict:
    return {c: [norm(v) for v in pdf[c]] for c in pdf.columns}


def expected_multi(pdf, keys, desc, nulls_first):
    """pandas has one na_position for all keys: emulate per-key null placement with an is-null
    column sorted before each key (nulls replaced by a placeholder so they tie)."""
    work = pdf.copy()
    by, ascending = [], []
    for i, (k, d, nf) in enumerate(zip(keys, desc, nulls_first, strict=True)):
        isnull = work[k].isna()
        placeholder = "" if work[k].dtype == object else 0
        work[f"__n{i}"] = isnull
        work[f"__v{i}"] = work[k].astype(object).where(~isnull, placeholder)
        if work[k].dtype != object:
            work[f"__v{i}"] = work[f"__v{i}"].astype("float64" if work[k].dtype == "Float64" else "int64")
        by += [f"__n{i}", f"__v{i}"]
        ascending += [not nf, not d]
    out = work.sort_values(by=by, ascending=ascending, kind="stable")
    return rows_of_pandas(out[list(pdf.columns)])


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed,shape", CASES)
def test_sort_single_key_matches_pandas(seed, shape, kind, small):
    table, pdf = make_data(seed, shape, kind)
    df = ketch.from_arrow(table)
    for desc, nulls_first in ORDERS:
        nf = desc if nulls_first is None else nulls_first
        with morsels(small):
            got = df.sort("k", desc=desc, nulls_first=nulls_first).to_pydict()
        exp = rows_of_pandas(
            pdf.sort_values("k", ascending=not desc, na_position="first" if nf else "last", kind="stable")
        )
        assert got["id"] == exp["id"], (desc, nulls_first)
        assert got == exp


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed,shape", CASES)
def test_sort_two_keys_mixed_directions(seed, shape, kind, small):
    table, pdf = make_data(seed, shape, kind)
    df = ketch.from_arrow(table)
    rng = np.random.default_rng(seed + 100)
    for _ in range(2):
        desc = [bool(x) for x in rng.integers(0, 2, 2)]
        nulls_first = [bool(x) for x in rng.integers(0, 2, 2)]
        with morsels(small):
            got = df.sort(["f", "k"], desc=desc, nulls_first=nulls_first).to_pydict()
        exp = expected_multi(pdf, ["f", "k"], desc, nulls_first)
        assert got["id"] == exp["id"], (desc, nulls_first)
        assert got == exp


@pytest.mark.parametrize("seed", SEEDS)
def test_sort_default_nulls_per_key(seed):
    """nulls_first=None means per key: first for descending keys, last for ascending ones."""
    table, pdf = make_data(seed, "nullkeys", "int")
    got = ketch.from_arrow(table).sort(["k", "f"], desc=[True, False]).to_pydict()
    assert got == expected_multi(pdf, ["k", "f"], [True, False], [True, False])


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_sort_by_expression_and_after_filter(seed):
    table, pdf = make_data(seed, "skewed", "int")
    with morsels(True):
        got = (
            ketch.from_arrow(table)
            .where((col("id") > 40) & (col("f") != 0.5))  # null f -> null -> row dropped
            .sort(col("k"), desc=True, nulls_first=False)
            .to_pydict()
        )
    sub = pdf[(pdf["id"] > 40) & (pdf["f"] != 0.5).fillna(False)]
    exp = rows_of_pandas(sub.sort_values("k", ascending=False, na_position="last", kind="stable"))
    assert got == exp


def test_sort_argument_errors():
    df = ketch.from_pydict({"a": [1, 2]})
    with pytest.raises(ValueError):
        df.sort([])
    with pytest.raises(ValueError):
        df.sort(["a"], desc=[True, False])
    with pytest.raises(ketch.errors.ColumnNotFoundError):
        df.sort("nope")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_sort_then_limit_and_filter(seed, kind):
    """sort().limit(n) is the first n rows of the full sort; a filter above a sort (pushed below it
    by the optimizer) keeps the sorted order."""
    table, pdf = make_data(seed, "nullkeys", kind)
    df = ketch.from_arrow(table)
    full = rows_of_pandas(pdf.sort_values("k", ascending=False, na_position="last", kind="stable"))
    for n in (0, 1, 10, 199, 1000):
        with morsels(True):
            got = df.sort("k", desc=True, nulls_first=False).limit(n).to_pydict()
        assert got == {c: v[:n] for c, v in full.items()}, n
    with morsels(True):
        got = df.sort("k", desc=True, nulls_first=False).where(col("f") > 0.0).to_pydict()
    keep = [i for i, f in enumerate(full["f"]) if f is not None and f > 0.0]
    assert got == {c: [v[i] for i in keep] for c, v in full.items()}
