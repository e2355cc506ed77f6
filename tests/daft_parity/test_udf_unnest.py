"""``unnest=True`` on ``@ketch.func`` / ``@ketch.method`` / ``@ketch.method.batch`` (Daft 0.7's
``unnest``): the struct a UDF returns becomes one column per field. Expected values printed by
Daft 0.7.26 on the same programs."""

from __future__ import annotations

from typing import Any

import pytest

import ketch
from ketch import DataType, col

PAIR = DataType.struct({"int": DataType.int64(), "str": DataType.string()})


@ketch.func(return_dtype=PAIR, unnest=True)
def split(x: int) -> dict[str, Any]:
    return {"int": x * 2, "str": f"v{x}"}


@ketch.cls
class Model:
    def __init__(self, k: int) -> None:
        self.k = k

    @ketch.method(return_dtype=DataType.struct({"a": DataType.int64(), "b": DataType.float64()}), unnest=True)
    def go(self, x: int) -> dict[str, Any]:
        return {"a": x + self.k, "b": x / 2}

    @ketch.method.batch(return_dtype=DataType.struct({"a": DataType.int64()}), unnest=True)
    def go_batch(self, x: Any) -> list[dict[str, int]]:
        return [{"a": v * self.k} for v in x.to_pylist()]


def test_a_function_with_unnest_gives_one_column_per_field():
    df = ketch.from_pydict({"x": [1, 2, 3]})
    assert df.select(split(col("x"))).to_pydict() == {"int": [2, 4, 6], "str": ["v1", "v2", "v3"]}
    assert df.select("x", split(col("x"))).to_pydict() == {
        "x": [1, 2, 3],
        "int": [2, 4, 6],
        "str": ["v1", "v2", "v3"],
    }
    assert split(4) == {"int": 8, "str": "v4"}  # plain values: an ordinary call


def test_class_methods_with_unnest_give_one_column_per_field():
    df = ketch.from_pydict({"x": [1, 2, 3]})
    model = Model(10)
    assert df.select(model.go(col("x"))).to_pydict() == {"a": [11, 12, 13], "b": [0.5, 1.0, 1.5]}
    assert df.select(model.go_batch(col("x"))).to_pydict() == {"a": [10, 20, 30]}


def test_unnest_needs_a_struct_return_dtype():
    message = r"`return_dtype` to be `DataType.struct\(..\)` when `unnest=True`, instead found: Int64"
    with pytest.raises(ValueError, match=message):

        @ketch.func(return_dtype=DataType.int64(), unnest=True)
        def bad(x: int) -> int:
            return x

    with pytest.raises(ValueError, match=message):
        ketch.method(return_dtype=DataType.int64(), unnest=True)
