"""``async def`` and generator methods of a ``@ketch.cls`` class (Daft 0.7): an async method's
rows are awaited together, a generator method's items become rows (the other columns repeat; a
row that yields nothing gives one row with null there). Expected values printed by Daft 0.7.26 on
the same program, in thread and in process mode."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import ketch
from ketch import DataType, col


class Repeater:
    def __init__(self, n: int) -> None:
        self.n = n

    def rep(self, x: int) -> Iterator[int]:  # element type from the annotation
        for i in range(self.n):
            yield x * 10 + i

    async def plus(self, x: int) -> int:
        await asyncio.sleep(0)
        return x + self.n

    @ketch.method(return_dtype=DataType.string())
    def words(self, x: int):  # element type from the mark; x = 0 yields nothing
        for i in range(x):
            yield f"s{i}"


@pytest.mark.parametrize("use_process", [False, True])
def test_generator_and_async_methods_give_daft_values(use_process: bool):
    model = ketch.cls(Repeater, use_process=use_process)(2)
    df = ketch.from_pydict({"x": [1, 2, 0]})
    assert df.select("x", model.rep(col("x")).alias("r")).to_pydict() == {
        "x": [1, 1, 2, 2, 0, 0],
        "r": [10, 11, 20, 21, 0, 1],
    }
    assert df.select(model.plus(col("x"))).to_pydict() == {"x": [3, 4, 2]}
    out = df.select("x", model.words(col("x")).alias("r"))
    assert out.schema()["r"].dtype == DataType.string()
    assert out.to_pydict() == {"x": [1, 2, 2, 0], "r": ["s0", "s0", "s1", None]}
