"""json_array_length / json_object_keys / json_tuple give Daft 0.7.26's values and types (issue
28); the expected values were printed by Daft 0.7.26 (benchmarks/.venv-peers) on the same rows."""

from __future__ import annotations

import json

import pytest

import ketch
from ketch.functions import json_array_length, json_object_keys, json_tuple

ROWS = [
    "[1, 2, 3]",
    "[]",
    '{"b": 1, "a": {"x": [1, 2]}, "c": "s", "d": true, "e": null, "f": 1.50}',
    None,
    "not json",
    '"str"',
    "[1,",
    '{"a": 1e3, "b": false}',
]


def test_values_and_types_match_daft() -> None:
    df = ketch.from_pydict({"c": ROWS})
    out = df.select(
        json_array_length(df["c"]).alias("n"),
        json_object_keys(df["c"]).alias("k"),
        json_tuple(df["c"], "a", "c", "d", "e", "f", "zz").alias("t"),
    )
    assert [str(f.dtype) for f in out.schema()] == [
        "Int32",
        "List[String]",
        "Struct[a: String, c: String, d: String, e: String, f: String, zz: String]",
    ]
    got = out.to_pydict()
    assert got["n"] == [3, 0, None, None, None, None, None, None]
    # An independent check of the keys: Python's own parse, sorted.
    assert got["k"][2] == sorted(json.loads(ROWS[2])) and got["k"][7] == ["a", "b"]
    assert got["k"][:2] == [None, None] and got["k"][3:7] == [None] * 4
    assert got["t"][2] == {"a": '{"x":[1,2]}', "c": "s", "d": "true", "e": "null", "f": "1.5", "zz": None}
    none = dict.fromkeys(["c", "d", "e", "f", "zz"])
    assert got["t"][7] == {"a": "1000.0", **none}
    assert [got["t"][i] for i in (0, 1, 3, 4, 5, 6)] == [None] * 6


def test_json_tuple_needs_distinct_fields() -> None:
    col = ketch.col("c")
    with pytest.raises(ValueError, match="at least one field"):
        json_tuple(col)
    with pytest.raises(ValueError, match="unique"):
        json_tuple(col, "a", "a")
