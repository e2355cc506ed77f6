"""Daft's UDF argument binding and the legacy ``@daft.udf`` object's methods: expressions are the
columns, other arguments (positional or keyword) reach the function unchanged on every call;
``override_options``, ``with_concurrency``, ``run_on_process`` and ``with_init_args`` give a
changed copy. Expected values are what Daft 0.7.26 printed for its docstring examples."""

from __future__ import annotations

import pytest

import ketch
from ketch import col


def test_constants_and_keywords_reach_the_function_unchanged():
    seen: list[tuple[type, type]] = []

    @ketch.udf(return_dtype=ketch.DataType.float64())
    def multiply_and_add(x: ketch.Series, y: float, z: float):
        seen.append((type(y), type(z)))
        return x.to_arrow().to_numpy() * y + z

    df = ketch.from_pydict({"x": [1, 2, 3]})
    out = df.with_column("result", multiply_and_add(df["x"], 2.0, z=1.5)).to_pydict()
    assert out == {"x": [1, 2, 3], "result": [3.5, 5.5, 7.5]}
    assert set(seen) == {(float, float)}  # Python floats, not Series

    @ketch.udf(return_dtype=ketch.DataType.int64())
    def add_constant(x: ketch.Series, c=10):
        return [v + c for v in x]

    assert df.with_column("new_x", add_constant(df["x"], c=20)).to_pydict()["new_x"] == [21, 22, 23]
    assert df.with_column("new_x", add_constant(df["x"])).to_pydict()["new_x"] == [11, 12, 13]
    with pytest.raises(TypeError, match="unexpected keyword argument 'd'"):
        add_constant(df["x"], d=3)

    # A column passed by keyword is a column (a Series in a batch UDF).
    @ketch.udf(return_dtype=ketch.DataType.int64())
    def add_columns(x: ketch.Series, scale: int, other: ketch.Series | None = None):
        return [v * scale + w for v, w in zip(x.to_pylist(), other.to_pylist(), strict=True)]

    both = ketch.from_pydict({"x": [1, 2], "y": [10, 20]})
    assert both.select(add_columns(col("x"), 3, other=col("y")).alias("s")).to_pydict() == {"s": [13, 26]}

    @ketch.func.batch(return_dtype=int)
    def my_sum_with_scalar(a: ketch.Series, b: int):
        assert isinstance(b, int)
        return [v + b for v in a.to_pylist()]

    assert df.select(my_sum_with_scalar(col("x"), 10)).to_pydict() == {"x": [11, 12, 13]}


def test_legacy_udf_objects_give_changed_copies():
    calls: list[int] = []

    @ketch.udf(return_dtype=ketch.DataType.int64())
    def count_batches(x: ketch.Series):
        calls.append(len(x))
        return x

    df = ketch.from_pydict({"x": list(range(10))})
    small = count_batches.override_options(batch_size=3)
    assert df.select(small(col("x"))).to_pydict() == {"x": list(range(10))}
    assert calls == [3, 3, 3, 1]
    assert small.options.batch_size == 3 and count_batches.options.batch_size is None

    @ketch.udf(return_dtype=ketch.DataType.string())
    class MyUdfWithInit:
        def __init__(self, text=" world"):
            self.text = text

        def __call__(self, data):
            return [x + self.text for x in data]

    words = ketch.from_pydict({"s": ["hello", "hi"]})
    assert words.with_column("o", MyUdfWithInit(col("s"))).to_pydict()["o"] == ["hello world", "hi world"]
    there = MyUdfWithInit.with_init_args(text=" there")
    assert words.with_column("o", there(col("s"))).to_pydict()["o"] == ["hello there", "hi there"]
    threaded = MyUdfWithInit.with_concurrency(2).run_on_process(False)
    assert threaded._spec.options.concurrency == 2 and threaded._spec.options.use_process is False
    assert words.with_column("o", threaded(col("s"))).to_pydict()["o"] == ["hello world", "hi world"]
