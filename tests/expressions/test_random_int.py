"""random_int (Daft's ``daft.functions.random_int``) and the lazy ``DataFrame.shuffle`` built on it."""

from __future__ import annotations

import io

import pytest
from scipy import stats

import ketch
from ketch import col
from ketch.functions import random_int


def test_values_lie_in_the_closed_interval_and_cover_it() -> None:
    df = ketch.from_pydict({"a": list(range(5000))}).with_column("r", random_int(10, 20, seed=7))
    assert df.schema()["r"].dtype == ketch.DataType.int64()
    values = df.to_pydict()["r"]
    assert min(values) == 10 and max(values) == 20
    assert set(values) == set(range(10, 21))


def test_values_are_uniform_by_a_chi_square_test() -> None:
    n, k = 110_000, 11
    values = (
        ketch.from_pydict({"a": list(range(n))})
        .select(random_int(0, k - 1, seed=3).alias("r"))
        .to_pydict()["r"]
    )
    counts = [values.count(v) for v in range(k)]
    assert stats.chisquare(counts).pvalue > 1e-4, counts


def test_a_seed_gives_the_same_values_and_another_seed_others() -> None:
    df = ketch.from_pydict({"a": list(range(1000))}).into_partitions(3)
    first = df.select(random_int(0, 10**9, seed=1).alias("r")).to_pydict()["r"]
    again = df.select(random_int(0, 10**9, seed=1).alias("r")).to_pydict()["r"]
    other = df.select(random_int(0, 10**9, seed=2).alias("r")).to_pydict()["r"]
    assert first == again
    assert sum(a == b for a, b in zip(first, other, strict=True)) < 5
    assert len(set(first)) > 990  # rows get distinct values, not one per morsel


def test_the_full_int64_range_and_a_single_value() -> None:
    df = ketch.from_pydict({"a": list(range(2000))})
    wide = df.select(random_int(-(2**63), 2**63 - 1, seed=5).alias("r")).to_pydict()["r"]
    assert any(v < 0 for v in wide) and any(v > 0 for v in wide)
    assert df.select(random_int(4, 4).alias("r")).to_pydict()["r"] == [4] * 2000


def test_rows_after_a_filter_still_get_distinct_values() -> None:
    df = ketch.from_pydict({"a": list(range(4000))}).where(col("a") % 3 == 0)
    values = df.select(random_int(0, 2**62, seed=9).alias("r")).to_pydict()["r"]
    assert len(values) == 1334 and len(set(values)) == 1334


@pytest.mark.parametrize(
    ("args", "match"),
    [((5, 1), "low"), ((1.5, 3), "low must be an int"), ((0, 3, "x"), "seed")],
)
def test_bad_arguments_are_refused(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        random_int(*args)


def test_shuffle_is_lazy_and_a_global_sort_in_the_plan() -> None:
    df = ketch.from_pydict({"i": list(range(100))}).shuffle(seed=1)
    plan = io.StringIO()
    df.explain(file=plan)
    assert "Sort" in plan.getvalue() and "random_int" in plan.getvalue(), plan.getvalue()
    out = df.to_pydict()["i"]
    assert sorted(out) == list(range(100)) and out != list(range(100))
