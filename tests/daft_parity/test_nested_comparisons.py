"""`==`, `!=`, `<`, `<=`, `>`, `>=` between list columns and between struct columns (Arrow's
kernels have none): lexicographic, null rows null, and a null element met before the values
differ makes the row null. Expected values printed by Daft 0.7.26 on the same frames."""

from __future__ import annotations

import ketch
from ketch import col


def _compare(df: ketch.DataFrame, ops: dict) -> dict:
    return df.select(*[op(col("a"), col("b")).alias(name) for name, op in ops.items()]).to_pydict()


ALL = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def test_lists_compare_lexicographically_as_daft():
    df = ketch.from_pydict(
        {
            "a": [[1, 2], [3], [1, 2, 3], [], None, [1, None], [2]],
            "b": [[1, 2], [2], [1, 2], [], [1], [1, None], [1, 5]],
        }
    )
    assert _compare(df, ALL) == {
        "eq": [True, False, False, True, None, None, False],
        "ne": [False, True, True, False, None, None, True],
        "lt": [False, False, False, False, None, None, False],
        "le": [True, False, False, True, None, None, False],
        "gt": [False, True, True, False, None, None, True],
        "ge": [True, True, True, True, None, None, True],
    }
    assert df.where(col("a") == col("b")).to_pydict() == {"a": [[1, 2], []], "b": [[1, 2], []]}


def test_a_null_element_decides_only_when_reached_first():
    df = ketch.from_pydict({"a": [[1, None], [None], [1, None], [2, None]], "b": [[2], [], [1], [1, 5]]})
    ops = {"eq": ALL["eq"], "lt": ALL["lt"]}
    assert _compare(df, ops) == {"eq": [False, False, False, False], "lt": [True, False, False, False]}


def test_structs_compare_field_by_field_as_daft():
    df = ketch.from_pydict(
        {
            "a": [{"x": 1, "y": "b"}, {"x": 2, "y": "a"}, {"x": 1, "y": "a"}, None],
            "b": [{"x": 1, "y": "b"}, {"x": 1, "y": "z"}, {"x": 1, "y": "b"}, {"x": 0, "y": "a"}],
        }
    )
    ops = {"eq": ALL["eq"], "lt": ALL["lt"], "gt": ALL["gt"]}
    assert _compare(df, ops) == {
        "eq": [True, False, False, None],
        "lt": [False, False, True, None],
        "gt": [False, True, False, None],
    }
    nulls = ketch.from_pydict(
        {"a": [{"x": None, "y": 1}, {"x": 1, "y": None}], "b": [{"x": 2, "y": 1}, {"x": 2, "y": 1}]}
    )
    assert _compare(nulls, {"eq": ALL["eq"], "lt": ALL["lt"]}) == {"eq": [None, False], "lt": [None, True]}
