"""Chained single-instance UDF stages see their batches in source order.

A UDF stage with ``batch_size`` sits behind a re-chunk step; the morsels cut there go on to the
stage's own pool (one thread per instance, first in first out) in the order they were cut, also when
several engine threads deliver at once. Were two batches handed on out of order, the one instance
would run the later batch first, and the next stage would wait, in its re-order buffer, for the
earlier one: the overlap of the two stages would be lost for as many batches as were overtaken.

Each instance numbers its calls; the number it returns for a row says in which of its calls the row
was processed. In source order, row ``i`` is in call ``i // batch_size`` of every stage. A slow
first call (the worker process starting, or a sleep in thread mode) lets the later batches queue up
behind it, which is when the hand-off order matters."""

from __future__ import annotations

import time

import pytest

import ketch
from ketch import col

ROWS, BATCH = 120, 5


class CallNumber:
    """Returns, for each row of a batch, the number of calls this instance made before it."""

    def __init__(self, first_call_s: float = 0.0) -> None:
        self.calls = 0
        self.first_call_s = first_call_s

    def __call__(self, x):
        number = self.calls
        self.calls += 1
        if number == 0 and self.first_call_s:
            time.sleep(self.first_call_s)  # the later batches queue up meanwhile
        return [number] * len(x)


@pytest.mark.parametrize("use_process", [True, False], ids=["process", "thread"])
def test_chained_single_instance_stages_take_batches_in_source_order(use_process: bool) -> None:
    stage = ketch.cls(return_dtype=int, batch_size=BATCH, concurrency=1, use_process=use_process)(CallNumber)
    first = stage(0.0 if use_process else 0.3)
    second = stage()
    out = (
        ketch.from_pydict({"x": list(range(ROWS))})
        .with_column("a", first(col("x")))
        .with_column("b", second(col("a")))
        .to_pydict()
    )
    expected = [i // BATCH for i in range(ROWS)]
    assert out["x"] == list(range(ROWS))
    assert out["a"] == expected
    assert out["b"] == expected


def test_a_single_instance_stage_after_a_filter_takes_batches_in_source_order() -> None:
    """The re-chunk step in front of the stage gathers the filtered rows into batches; they reach
    the instance in the order of the rows."""
    stage = ketch.cls(return_dtype=int, batch_size=BATCH, concurrency=1, use_process=True)(CallNumber)
    out = (
        ketch.from_pydict({"x": list(range(3 * ROWS))})
        .where(col("x") % 3 == 0)
        .with_column("a", stage()(col("x")))
        .to_pydict()
    )
    kept = [v for v in range(3 * ROWS) if v % 3 == 0]
    assert out["x"] == kept
    assert out["a"] == [i // BATCH for i in range(len(kept))]
