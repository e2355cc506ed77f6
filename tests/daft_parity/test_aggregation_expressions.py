"""``agg`` of any expression over aggregations and ``groupby`` of any key expression, as Daft
0.7.26 does them (issue 28). Expected values were read from Daft 0.7.26 (benchmarks/.venv-peers)
running the same queries and are re-derived here from the input rows in plain Python."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

import ketch
from ketch import col

ROWS = {"g": ["a", "a", "b", "b", "b"], "a": [1, 2, 3, 4, 5], "b": [1.5, None, 2.0, 0.5, None]}


def _frame() -> ketch.DataFrame:
    return ketch.from_pydict(ROWS)


def _groups(key) -> dict:  # type: ignore[no-untyped-def]
    out: dict = defaultdict(list)
    for i in range(len(ROWS["a"])):
        out[key(i)].append(i)
    return dict(sorted(out.items()))


def test_arithmetic_over_global_aggregations() -> None:
    got = _frame().agg(col("a").sum() + 1, (col("a").mean() + col("b").mean()).alias("x")).to_pydict()
    # Daft: {'a': [16], 'x': [...]} -- the output is named by the expression's first column.
    assert list(got) == ["a", "x"]
    assert got["a"] == [sum(ROWS["a"]) + 1]
    b = [v for v in ROWS["b"] if v is not None]
    assert math.isclose(got["x"][0], sum(ROWS["a"]) / 5 + sum(b) / len(b))


def test_arithmetic_over_grouped_aggregations_and_key_expressions() -> None:
    got = (
        _frame()
        .groupby("g")
        .agg((col("a").sum() + col("a").max()).alias("s"), (col("g") + "_x").alias("h"), col("a").count())
        .sort("g")
        .to_pydict()
    )
    groups = _groups(lambda i: ROWS["g"][i])
    assert got["g"] == list(groups)
    values = [[ROWS["a"][i] for i in rows] for rows in groups.values()]
    assert got["s"] == [sum(v) + max(v) for v in values]
    assert got["h"] == [g + "_x" for g in groups]
    assert got["a"] == [len(rows) for rows in groups.values()]


@pytest.mark.parametrize(
    ("keys", "names", "key_of"),
    [
        (["g", "a"], ["g", "a"], lambda i: (ROWS["g"][i], ROWS["a"][i])),
        ([["g", "a"]], ["g", "a"], lambda i: (ROWS["g"][i], ROWS["a"][i])),
        ([col("g").alias("x")], ["x"], lambda i: (ROWS["g"][i],)),
        ([col("a") % 2], ["a"], lambda i: (ROWS["a"][i] % 2,)),
        ([col("a") % 2, "g"], ["a", "g"], lambda i: (ROWS["a"][i] % 2, ROWS["g"][i])),
    ],
)
def test_groupby_key_expressions(keys, names, key_of) -> None:  # type: ignore[no-untyped-def]
    # The aggregation reads the input column `b`; a computed key named `a` does not hide the input
    # column `a` from an aggregation (Daft: groupby(col("a") % 2).agg(col("b").sum()) -> a: [0, 1]).
    aggs = [col("b").sum().alias("sb"), col("a").sum().alias("sa")]
    got = _frame().groupby(*keys).agg(*aggs).sort(names).to_pydict()
    assert list(got) == [*names, "sb", "sa"]
    groups = _groups(key_of)
    assert [tuple(got[n][j] for n in names) for j in range(len(got["sb"]))] == list(groups)
    for j, rows in enumerate(groups.values()):
        b = [ROWS["b"][i] for i in rows if ROWS["b"][i] is not None]
        assert got["sb"][j] == (sum(b) if b else None)
        assert got["sa"][j] == sum(ROWS["a"][i] for i in rows)


def test_shorthands_skip_computed_keys_by_output_name() -> None:
    got = _frame().groupby(col("a") % 2).sum("b").sort("a").to_pydict()
    assert got == {"a": [0, 1], "b": [0.5, 1.5 + 2.0]}  # a even: b None, 0.5; a odd: 1.5, 2.0, None
    counts = _frame().groupby(col("a") % 2).count().sort("a").to_pydict()
    assert list(counts) == ["a", "g", "b"] and counts["g"] == [2, 3] and counts["b"] == [1, 2]


def test_select_of_aggregations_is_a_global_aggregation() -> None:
    assert _frame().select(col("a").sum(), (col("a").max() - col("a").min()).alias("r")).to_pydict() == {
        "a": [15],
        "r": [4],
    }
    # A window aggregation in a select stays a projection (one value per row).
    window = ketch.Window().partition_by("g")
    assert _frame().select(col("a").sum().over(window).alias("w")).to_pydict()["w"] == [3, 3, 12, 12, 12]


@pytest.mark.parametrize(
    "bad",
    [col("a"), col("a") + col("a").sum(), col("a").sum().sum(), ketch.lit(1)],
    ids=["column", "column-plus-aggregation", "nested", "literal"],
)
def test_entries_that_are_not_aggregations_raise_daft_s_value_error(bad) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="must be composed of non-nested aggregation expressions"):
        _frame().groupby("g").agg(bad)
    with pytest.raises(ValueError, match="must be composed of non-nested aggregation expressions"):
        _frame().agg(bad)


def test_duplicate_output_names_raise_where_daft_drops_a_column() -> None:
    # Daft 0.7.26 keeps the last column of a repeated name ({'a': [2, 4]} here, the key lost);
    # Ketch refuses rather than drop a column silently.
    with pytest.raises(ValueError, match="duplicate output column 'a'"):
        _frame().groupby(col("a") % 2).agg(col("a").sum())
