"""DataFrame.sort with computed keys (expressions), per-key desc / nulls_first lists and Daft's
defaults (nulls last ascending, first descending), compared with pandas on both runners."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rel_data import morsels

import ketch
from ketch import col

pytestmark = pytest.mark.usefixtures("runner")


def data(seed: int = 0, n: int = 60) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    x = [None if v < 0 else int(v) for v in rng.integers(-3, 10, n)]
    y = [None if v < 0 else int(v) for v in rng.integers(-2, 6, n)]
    return {"x": x, "y": y, "id": list(range(n))}


def pandas_order(
    frame: pd.DataFrame, keys: list[pd.Series], desc: list[bool], nulls_first: list[bool]
) -> list[int]:
    """Row ids in the order of a stable sort by ``keys`` (nulls placed per key)."""
    order = list(frame["id"])
    for key, d, nf in reversed(list(zip(keys, desc, nulls_first, strict=True))):
        values = dict(zip(frame["id"], key, strict=True))
        present = [i for i in order if not pd.isna(values[i])]
        missing = [i for i in order if pd.isna(values[i])]
        present = sorted(present, key=lambda i: values[i], reverse=d)
        if d:  # a stable descending sort keeps ties in their previous order
            groups: dict = {}
            for i in [i for i in order if not pd.isna(values[i])]:
                groups.setdefault(values[i], []).append(i)
            present = [i for v in sorted(groups, reverse=True) for i in groups[v]]
        order = missing + present if nf else present + missing
    return order


@pytest.mark.parametrize("small", [False, True])
def test_sort_by_computed_key(small):
    d = data()
    frame = pd.DataFrame(d).astype({"x": "Float64", "y": "Float64"})
    df = ketch.from_pydict(d)
    with morsels(small):
        got = df.sort(col("x") + col("y")).to_pydict()
    # Daft's default: ascending, nulls last.
    want = pandas_order(frame, [frame["x"] + frame["y"]], [False], [False])
    sums = [None if a is None or b is None else a + b for a, b in zip(got["x"], got["y"], strict=True)]
    expected_sums = [
        None
        if pd.isna(frame.set_index("id").loc[i, "x"] + frame.set_index("id").loc[i, "y"])
        else int(frame.set_index("id").loc[i, "x"] + frame.set_index("id").loc[i, "y"])
        for i in want
    ]
    assert sums == expected_sums
    assert got.keys() == d.keys()  # the computed key is not an output column


@pytest.mark.parametrize(
    "desc,nulls_first",
    [
        (True, None),
        ([True, False], None),
        ([False, True], [True, False]),
        (False, True),
        ([True, True], [False, False]),
    ],
)
def test_sort_by_expressions_with_per_key_flags(desc, nulls_first):
    d = data(1)
    frame = pd.DataFrame(d).astype({"x": "Float64", "y": "Float64"})
    df = ketch.from_pydict(d)
    keys = [col("x") * -1, col("y").alias("yy")]
    got = df.sort(keys, desc=desc, nulls_first=nulls_first).to_pydict()
    dl = desc if isinstance(desc, list) else [desc, desc]
    nl = dl if nulls_first is None else (nulls_first if isinstance(nulls_first, list) else [nulls_first] * 2)
    want = pandas_order(frame, [frame["x"] * -1, frame["y"]], dl, nl)
    by_id = frame.set_index("id")
    got_keys = [(x, y) for x, y in zip(got["x"], got["y"], strict=True)]
    want_keys = [
        tuple(None if pd.isna(by_id.loc[i, c]) else int(by_id.loc[i, c]) for c in ("x", "y")) for i in want
    ]
    assert got_keys == want_keys


def test_sort_mixed_names_and_expressions_and_bad_flags():
    df = ketch.from_pydict({"n": [4, 1, None, 3, 2]})
    got = df.sort([col("n") > 2, "n"], desc=[True, False]).to_pydict()
    assert got["n"] == [None, 3, 4, 1, 2]  # descending key: nulls first by default (Daft)
    with pytest.raises(ValueError):
        df.sort([col("n"), "n"], desc=[True])
