"""Generator UDFs are pulled lazily (thread mode): the engine takes their items in chunks bounded
by the morsel size and the memory budget, and sends each chunk on before it pulls the next, so an
endless generator under a filter and a limit stops once the limit is reached, and the items alive
at once stay bounded whatever one row yields. Counts, not timings, prove it."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import ketch
from ketch import col
from ketch.errors import UDFError


def _endless(x: int) -> Iterator[int]:
    i = 0
    while True:  # never ends: only the query needing no more rows can stop it
        yield x * 1000 + i
        i += 1


@pytest.mark.parametrize("use_process", [False, True])
def test_an_endless_generator_under_a_filter_and_a_limit_stops(use_process):
    gen = ketch.func(return_dtype=int, use_process=use_process)(_endless)
    df = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", gen(col("x"))).where(col("y") >= 1040).limit(3)
    assert df.to_pydict() == {"x": [1, 1, 1], "y": [1040, 1041, 1042]}


def test_an_endless_generator_under_a_filter_on_another_udf_and_a_limit_stops():
    gen = ketch.func(return_dtype=int)(_endless)

    @ketch.func(return_dtype=bool)
    def keep(y: int) -> bool:
        return y % 1000 == 999  # the 1000th item of a row: past any first chunk

    df = ketch.from_pydict({"x": [4, 5]}).with_column("y", gen(col("x")))
    out = df.where(keep(col("y"))).limit(1).to_pydict()
    assert out == {"x": [4], "y": [4999]}


def test_rows_keep_their_order_and_values_across_chunks():
    @ketch.func(return_dtype=int)
    def upto(n: int) -> Iterator[int]:
        yield from range(n)

    sizes = [0, 5000, 3, 0, 20_000, 1]
    with ketch.execution_config_ctx(morsel_size_rows=1000):
        out = ketch.from_pydict({"n": sizes}).with_column("i", upto(col("n"))).to_pydict()
    # A row whose generator yields nothing gives one null row (Daft's rule).
    assert out["n"] == [n for n in sizes for _ in range(max(n, 1))]
    assert out["i"] == [i for n in sizes for i in (range(n) if n else [None])]


class InFlight:
    """Counts items yielded but not yet seen by the next UDF (the items alive at once)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.alive = 0
        self.most = 0
        self.yielded = 0

    def made(self) -> None:
        with self.lock:
            self.alive += 1
            self.yielded += 1
            self.most = max(self.most, self.alive)

    def seen(self) -> None:
        with self.lock:
            self.alive -= 1


def test_items_alive_at_once_stay_bounded_by_the_budget():
    items, item_bytes = 1000, 256 << 10  # 250 MiB from one row, under a 32 MiB budget
    counter = InFlight()

    @ketch.func(return_dtype=bytes)
    def blobs(n: int) -> Iterator[bytes]:
        for k in range(n):
            counter.made()
            yield bytes([k % 251]) * item_bytes

    @ketch.func(return_dtype=int)
    def size(b: bytes) -> int:
        counter.seen()
        return len(b)

    with ketch.execution_config_ctx(memory_budget_bytes=32 << 20):
        df = ketch.from_pydict({"n": [items]}).select(blobs(col("n")).alias("b"))
        out = df.select(size(col("b")).alias("s")).agg(col("s").sum()).to_pydict()
    assert out == {"s": [items * item_bytes]}
    assert counter.yielded == items
    # Pulled all at once, every item would be alive before the first is seen (1000).
    assert counter.most <= 300, counter.most


def test_a_generator_failing_mid_row_keeps_the_items_it_yielded():
    @ketch.func(return_dtype=int, on_error="ignore")
    def flaky(x: int) -> Iterator[int]:
        yield x
        if x == 2:
            raise ValueError("broken after one item")
        yield x * 10

    out = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", flaky(col("x"))).to_pydict()
    assert out == {"x": [1, 1, 2, 3, 3], "y": [1, 10, 2, 3, 30]}


def test_a_generator_failing_mid_row_with_on_error_raise_names_the_udf_and_rows():
    @ketch.func(return_dtype=int)
    def breaks(x: int) -> Iterator[int]:
        yield x
        if x == 2:
            raise ValueError("broken after one item")

    with pytest.raises(UDFError, match="breaks") as info:
        ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", breaks(col("x"))).to_pydict()
    assert "broken after one item" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
