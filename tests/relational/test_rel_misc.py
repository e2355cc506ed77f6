"""Property tests: explode, concat and sample against pandas / plain Python on randomized inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from rel_data import SEEDS, morsels, norm

import ketch
from ketch import col

# Each test runs on the native runner and, for seed 0 (every shape, kind and morsel size), on the Ray
# runner too (tests/conftest.py: runner, ray_subset).
pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(seed=[0])]


def random_lists(rng, n, make_value, null_frac=0.15, empty_frac=0.15, max_len=5):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < null_frac:
            out.append(None)
        elif r < null_frac + empty_frac:
            out.append([])
        else:
            out.append([make_value() for _ in range(int(rng.integers(1, max_len + 1)))])
    return out


# -- explode -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("n", [0, 1, 150])
@pytest.mark.parametrize("seed", SEEDS)
def test_explode_matches_pandas(seed, n, small):
    rng = np.random.default_rng(seed)
    ints = random_lists(rng, n, lambda: None if rng.random() < 0.1 else int(rng.integers(-9, 9)))
    wide = "w" * 1000
    strs = random_lists(rng, n, lambda: wide + str(int(rng.integers(0, 5))) if rng.random() < 0.5 else "s")
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "l": pa.array(ints, pa.list_(pa.int64())),
            "t": pa.array(strs, pa.list_(pa.string())),
        }
    )
    pdf = pd.DataFrame(
        {"id": range(n), "l": pd.Series(ints, dtype=object), "t": pd.Series(strs, dtype=object)}
    )
    df = ketch.from_arrow(table)
    with morsels(small):
        got_l = df.explode("l").to_pydict()
        got_t = df.select("t", "id").explode(col("t")).to_pydict()
    exp_l = pdf.explode("l")
    exp_t = pdf[["t", "id"]].explode("t")
    # row order: explode is a streaming operator, it keeps the input order
    assert got_l["id"] == [int(v) for v in exp_l["id"]]
    assert got_l["l"] == [norm(v) for v in exp_l["l"]]
    assert [v is None or isinstance(v, list) for v in got_l["t"]] == [True] * len(got_l["t"])
    assert got_l["t"] == [
        None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in exp_l["t"]
    ]
    assert got_t == {"t": [norm(v) for v in exp_t["t"]], "id": [int(v) for v in exp_t["id"]]}
    assert sum(max(1, len(x or [])) for x in ints) == len(got_l["id"])


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("seed", SEEDS)
def test_explode_two_columns_matches_pandas(seed, small):
    rng = np.random.default_rng(seed)
    n = 120
    lengths = [None if rng.random() < 0.15 else int(rng.integers(0, 5)) for _ in range(n)]
    a = [None if ln is None else [int(x) for x in rng.integers(0, 100, ln)] for ln in lengths]
    b = [None if ln is None else [f"v{x}" for x in rng.integers(0, 100, ln)] for ln in lengths]
    table = pa.table(
        {"id": range(n), "a": pa.array(a, pa.list_(pa.int64())), "b": pa.array(b, pa.list_(pa.string()))}
    )
    with morsels(small):
        got = ketch.from_arrow(table).explode("a", "b").to_pydict()
    exp = pd.DataFrame(
        {"id": range(n), "a": pd.Series(a, dtype=object), "b": pd.Series(b, dtype=object)}
    ).explode(["a", "b"])
    assert got == {c: [norm(v) for v in exp[c]] for c in ("id", "a", "b")}


def test_explode_then_groupby_roundtrip():
    """agg_list after explode gives back the original lists (as multisets; null/empty -> [None])."""
    rng = np.random.default_rng(3)
    lists = random_lists(rng, 80, lambda: int(rng.integers(0, 50)), null_frac=0.1, empty_frac=0.1)
    df = ketch.from_pydict({"id": list(range(80)), "l": pa.array(lists, pa.list_(pa.int64()))})
    with morsels(True):
        back = df.explode("l").groupby("id").agg(col("l").agg_list()).sort("id").to_pydict()
    assert back["id"] == list(range(80))
    for orig, got in zip(lists, back["l"], strict=True):
        expected = sorted(orig) if orig else [None]
        assert sorted(got, key=lambda v: (v is None, v)) == expected


# -- concat ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("sizes", [(0, 0), (0, 30), (30, 0), (57, 101)])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_concat_keeps_order(seed, sizes, small):
    rng = np.random.default_rng(seed)

    def part(n, base):
        return pa.table(
            {
                "id": pa.array(range(base, base + n), pa.int64()),
                "s": pa.array(
                    [None if rng.random() < 0.2 else "x" * int(rng.integers(0, 1000)) for _ in range(n)],
                    pa.string(),
                ),
                "f": pa.array(
                    [None if rng.random() < 0.2 else float(rng.normal()) for _ in range(n)], pa.float64()
                ),
            }
        )

    a, b = part(sizes[0], 0), part(sizes[1], 10_000)
    with morsels(small):
        got = ketch.from_arrow(a).concat(ketch.from_arrow(b)).to_pydict()
        chained = ketch.from_arrow(a).concat(ketch.from_arrow(b)).concat(ketch.from_arrow(a)).count_rows()
    exp = pd.concat([a.to_pandas(), b.to_pandas()], ignore_index=True)
    assert got == {c: [norm(v) for v in exp[c]] for c in ("id", "s", "f")}
    assert chained == 2 * sizes[0] + sizes[1]


def test_concat_schema_mismatch_fails_at_plan_time():
    a = ketch.from_pydict({"x": [1]})
    b = ketch.from_pydict({"x": ["1"]})
    with pytest.raises(ketch.errors.KetchError):
        a.concat(b)


# -- sample ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_sample_without_replacement(seed, fraction, small):
    n = 2000
    df = ketch.from_pydict({"id": list(range(n)), "v": [i * 2 for i in range(n)]})
    with morsels(small):
        got = df.sample(fraction, seed=seed).to_pydict()
        again = df.sample(fraction, seed=seed).to_pydict()
    ids = got["id"]
    assert len(ids) == len(set(ids)) and set(ids) <= set(range(n))
    assert got["v"] == [i * 2 for i in ids]  # rows stay whole
    assert sorted(again["id"]) == sorted(ids)  # reproducible for a seed
    if fraction in (0.0, 1.0):
        assert len(ids) == int(n * fraction)
    else:
        sd = math.sqrt(n * fraction * (1 - fraction))
        assert abs(len(ids) - n * fraction) < 6 * sd, len(ids)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_sample_with_replacement(seed):
    n = 2000
    df = ketch.from_pydict({"id": list(range(n))})
    got = df.sample(0.5, with_replacement=True, seed=seed).to_pydict()["id"]
    again = df.sample(0.5, with_replacement=True, seed=seed).to_pydict()["id"]
    assert sorted(got) == sorted(again)
    assert set(got) <= set(range(n))
    assert abs(len(got) - n * 0.5) < 6 * math.sqrt(n * 0.5)  # Poisson(0.5) copies per row
    assert len(got) > len(set(got))  # some row drawn more than once (P(no repeat) ~ 0)


def test_sample_different_seeds_differ():
    df = ketch.from_pydict({"id": list(range(1000))})
    a = sorted(df.sample(0.5, seed=1).to_pydict()["id"])
    b = sorted(df.sample(0.5, seed=2).to_pydict()["id"])
    assert a != b
