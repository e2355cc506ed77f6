"""Executor behaviour visible from Python: backpressure bounds, per-operator metrics, progress bars."""

from __future__ import annotations

import io
import time

import pyarrow as pa

import ketch
from ketch import _core, col
from ketch.context import get_execution_config
from ketch.progress import ProgressBars


def _range_df(n: int) -> ketch.DataFrame:
    return ketch.from_arrow(pa.table({"x": pa.array(range(n), pa.int64())}))


def test_slow_sink_keeps_morsels_in_flight_within_the_channel_bound():
    @ketch.udf(return_dtype=ketch.DataType.int64(), batch_size=10, concurrency=1)
    def slow_identity(x):
        time.sleep(0.002)  # a slow stage downstream of a fast source (not a timing assertion)
        return x.to_arrow()

    df = _range_df(2_000).with_column("y", slow_identity(col("x")))
    with ketch.execution_config_ctx(morsel_size_rows=10, max_morsels_in_flight=4):
        stats = df.explain_analyze(file=io.StringIO())
    assert stats.morsels_emitted == 200
    assert 1 <= stats.max_morsels_in_flight <= 4
    assert df.to_pydict()["y"] == list(range(2_000))


def test_explain_analyze_counts_rows_per_operator():
    df = _range_df(10_000).where(col("x") >= 2_500).groupby("x").agg(col("x").count().alias("n"))
    out = io.StringIO()
    with ketch.execution_config_ctx(morsel_size_rows=1_000):
        stats = df.explain_analyze(file=out)
    ops = {(op["pipeline"], op["name"]): op for op in stats.operators()}
    assert ops[(0, "InMemoryScan")]["rows_out"] == 10_000
    assert ops[(0, "Filter")]["rows_in"] == 10_000
    assert ops[(0, "Filter")]["rows_out"] == 7_500
    assert ops[(0, "AggregatePartial")]["rows_in"] == 7_500
    assert ops[(0, "AggregateFinal")]["rows_in"] > 0
    assert ops[(1, "AggregateFinalOutput")]["rows_out"] == 7_500
    assert all(op["cpu_seconds"] >= 0 for op in ops.values())
    text = out.getvalue()
    assert "== Physical Plan ==" in text and "AggregatePartial" in text and "peak RSS" in text
    assert df.count_rows() == 7_500  # the result was kept


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bars_draw_on_a_terminal_and_stay_off_otherwise():
    config = get_execution_config()
    plan = _range_df(50_000).where(col("x") > 10)._plan.optimize()

    terminal = _FakeTerminal()
    stats = _core.ExecutionStats()
    from dataclasses import replace

    with ProgressBars(stats, replace(config, progress_bar_delay_seconds=0.0), stream=terminal) as bars:
        plan.execute(config.to_native(), stats)[1].read_all()
        # Let the poller draw at least once while the bars are open.
        deadline = time.monotonic() + 5
        while "rows" not in terminal.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bars is not None
    drawn = terminal.getvalue()
    assert "[0] In-memory source → Filter" in drawn  # one bar per stage, user-facing names
    assert "rows/s" in drawn  # with tqdm's rate

    pipe = io.StringIO()  # not a terminal
    with ProgressBars(_core.ExecutionStats(), replace(config, progress_bar_delay_seconds=0.0), stream=pipe):
        plan.execute(config.to_native())[1].read_all()
    assert pipe.getvalue() == ""
