"""pivot against pandas' pivot_table, and any_value / agg_list on nested and image columns (which
Arrow's hash kernels cannot take: they aggregate row positions, then gather)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from rel_data import SEEDS, morsels, norm

import ketch
from ketch import col

# Each test runs on the native runner and, for seed 0 (every shape, kind and morsel size), on the Ray
# runner too (tests/conftest.py: runner, ray_subset).
pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(seed=[0])]


def _data(seed: int, n: int = 300) -> dict:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=n).round(3)
    v[rng.random(n) < 0.15] = np.nan
    return {
        "k": rng.integers(0, 12, n),
        "p": rng.choice(["red", "green", "blue", "teal"], n),
        "v": [None if np.isnan(x) else float(x) for x in v],
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("agg_fn", ["sum", "mean", "min", "max", "count"])
@pytest.mark.parametrize("small", [False, True])
def test_pivot_matches_pandas(seed, agg_fn, small):
    data = _data(seed)
    with morsels(small):
        out = ketch.from_pydict(data).pivot("k", "p", "v", agg_fn).sort("k").to_pydict()
    pdf = pd.DataFrame(data)
    expected = pdf.pivot_table(index="k", columns="p", values="v", aggfunc=agg_fn, dropna=False)
    # pandas' sum of an all-null group is 0 and count 0 where Ketch has no value only when the
    # (key, pivot value) pair never occurs; compare against the pairs that occur.
    present = pdf.groupby(["k", "p"]).size()
    assert sorted(out) == sorted(["k", *sorted(set(data["p"]))])
    assert list(out.keys())[1:] == sorted(set(data["p"]))  # pivot columns in sorted order
    assert out["k"] == sorted(set(data["k"].tolist()))
    for i, k in enumerate(out["k"]):
        for p in sorted(set(data["p"])):
            got = out[p][i]
            if (k, p) not in present.index:
                assert got is None
                continue
            want = norm(expected.loc[k, p])
            if agg_fn == "sum" and pdf[(pdf.k == k) & (pdf.p == p)].v.isna().all():
                want = None  # Ketch (like Daft and SQL) sums an all-null group to null
            if want is None or got is None:
                assert got == want, (k, p, got, want)
            else:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (k, p)


def test_pivot_with_names_selects_and_orders_columns():
    data = {"k": [1, 1, 2, 2, 3], "p": ["a", "b", "a", "a", None], "v": [1.5, 2.0, None, 4.0, 7.0]}
    df = ketch.from_pydict(data)
    out = df.pivot("k", "p", "v", "list", names=["b", "a"]).sort("k").to_pydict()
    assert out == {"k": [1, 2, 3], "b": [[2.0], None, None], "a": [[1.5], [None, 4.0], None]}


def test_pivot_on_integer_column_names_by_string():
    df = ketch.from_pydict({"g": ["x", "x", "y"], "year": [2020, 2021, 2020], "v": [1, 2, 3]})
    out = df.pivot("g", "year", "v", "sum").sort("g").to_pydict()
    assert out == {"g": ["x", "y"], "2020": [1, 3], "2021": [2, None]}


def test_pivot_unknown_agg_fn():
    df = ketch.from_pydict({"g": [1], "p": ["a"], "v": [1]})
    with pytest.raises(ValueError, match="agg_fn must be one of"):
        df.pivot("g", "p", "v", "not_an_aggregation")


def test_any_value_ignore_nulls():
    df = ketch.from_pydict({"k": [1, 1, 2, 2, 3], "v": [None, 3, None, None, 5]})
    out = df.groupby("k").agg(col("v").any_value(ignore_nulls=True)).sort("k").to_pydict()
    assert out == {"k": [1, 2, 3], "v": [3, None, 5]}


@pytest.mark.parametrize("small", [False, True])
def test_any_value_and_list_on_list_column(small):
    lists = [[i, i + 1] if i % 4 else None for i in range(40)]
    keys = [i % 3 for i in range(40)]
    df = ketch.from_pydict({"k": keys, "l": lists})
    with morsels(small):
        out = (
            df.groupby("k")
            .agg(col("l").agg_list().alias("all"), col("l").any_value(ignore_nulls=True).alias("one"))
            .sort("k")
            .to_pydict()
        )
    for i, k in enumerate(out["k"]):
        group = [lst for key, lst in zip(keys, lists, strict=True) if key == k]
        assert out["all"][i] == group  # order within the group kept
        assert out["one"][i] in [g for g in group if g is not None]


def test_any_value_and_list_on_image_column():
    from PIL import Image

    def png(v: int) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (3, 2), (v, v, v)).save(buf, format="PNG")
        return buf.getvalue()

    df = ketch.from_pydict({"g": [0, 1, 0, 1], "b": [png(i * 10) for i in range(4)]})
    df = df.with_column("img", col("b").image.decode())
    out = df.groupby("g").agg(col("img").any_value(), col("img").agg_list().alias("imgs")).sort("g")
    table = out.to_arrow()
    assert str(table.schema.field("imgs").type.value_type) == str(table.schema.field("img").type)
    firsts = [[im["data"][0] for im in group] for group in table.column("imgs").to_pylist()]
    assert firsts == [[0, 20], [10, 30]]
    one = [im["data"][0] for im in table.column("img").to_pylist()]
    assert one[0] in (0, 20) and one[1] in (10, 30)


def test_pivot_names_given_as_values():
    df = ketch.from_pydict({"g": [1, 1, 2], "p": [True, False, True], "f": [1.0, 2.5, 1.0], "v": [1, 2, 3]})
    assert df.pivot("g", "p", "v", "sum", names=[True]).sort("g").to_pydict() == {"g": [1, 2], "true": [1, 3]}
    out = df.pivot("g", "f", "v", "sum", names=[1.0, 2.5]).sort("g").to_pydict()
    assert out == {"g": [1, 2], "1.0": [1, 3], "2.5": [2, None]}  # a float's text: 1.0, as Daft's
    with pytest.raises(ValueError, match="distinct"):
        df.pivot("g", "f", "v", "sum", names=[1.0, 1.0])


@pytest.mark.parametrize("seed", SEEDS)
def test_agg_list_and_concat_keep_input_order_within_groups(seed):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 5, 3000).tolist()
    values = rng.permutation(3000).tolist()
    df = ketch.from_pydict({"k": keys, "v": values, "s": [str(v) for v in values]})
    with morsels(True):
        out = (
            df.groupby("k")
            .agg(col("v").agg_list().alias("l"), col("s").agg_concat().alias("c"))
            .sort("k")
            .to_pydict()
        )
    for i, k in enumerate(out["k"]):
        group = [v for key, v in zip(keys, values, strict=True) if key == k]
        assert out["l"][i] == group
        assert out["c"][i] == "".join(str(v) for v in group)
