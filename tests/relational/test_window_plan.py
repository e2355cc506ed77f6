"""Window plans: errors at plan-build time (Daft's error classes, naming the offending part),
explain output, shared sorts, and a spill under a small memory budget (native runner)."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ketch
from ketch import Window, col
from ketch.functions import dense_rank, rank, row_number


@pytest.fixture
def df() -> ketch.DataFrame:
    return ketch.from_pydict(
        {"g": ["a", "a", "b"], "t": [1, 2, 3], "s": ["x", "y", "z"], "v": [1.0, 2.0, 3.0]}
    )


def test_ranking_without_order_by_is_refused(df):
    with pytest.raises(ValueError, match="rank.*order_by"):
        df.with_column("r", rank().over(Window().partition_by("g")))
    with pytest.raises(ValueError, match="lag.*order_by"):
        df.with_column("r", col("v").lag().over(Window().partition_by("g")))


def test_invalid_frames_are_refused(df):
    w = Window().partition_by("g").order_by("t")
    with pytest.raises(ValueError, match=r"start \(2\) is after the end \(1\)"):
        df.with_column("r", col("v").sum().over(w.rows_between(2, 1)))
    with pytest.raises(ValueError, match="unbounded_following"):
        w.rows_between(Window.unbounded_following, 0)
    with pytest.raises(ValueError, match="unbounded_preceding"):
        w.range_between(0, Window.unbounded_preceding)
    with pytest.raises(ValueError, match="exactly one order_by key"):
        df.with_column("r", col("v").sum().over(Window().order_by("t", "v").range_between(-1, 1)))
    with pytest.raises(TypeError, match="numeric order_by key.*'s'"):
        df.with_column("r", col("v").sum().over(Window().order_by("s").range_between(-1, 1)))
    with pytest.raises(ValueError, match="min_periods"):
        w.rows_between(-1, 0, min_periods=0)
    with pytest.raises(TypeError, match="integers"):
        w.rows_between(-1.5, 0)
    with pytest.raises(ValueError, match="offset must be >= 0"):
        col("v").lag(-1)


def test_window_expressions_outside_projections_are_refused(df):
    w = Window().partition_by("g")
    with pytest.raises(ValueError, match="filter"):
        df.where(col("v").sum().over(w) > 1)
    with pytest.raises(ValueError, match="aggregation"):
        df.groupby("g").agg(col("v").sum().over(w).alias("x"))
    with pytest.raises(ValueError, match="not a window function"):
        df.with_column("r", (col("v") + 1).over(w))
    with pytest.raises(ValueError, match="unknown_col|not found"):
        df.with_column("r", col("v").sum().over(Window().partition_by("unknown_col")))


def test_explain_shows_one_window_node_per_window(df):
    w = Window().partition_by("g").order_by("t")
    out = df.with_columns(
        {"r": rank().over(w), "d": dense_rank().over(w), "c": col("v").sum().over(Window().partition_by("g"))}
    )
    buf = io.StringIO()
    out.explain(show_all=True, file=buf)
    text = buf.getvalue()
    physical = text[text.rfind("Physical") :] if "Physical" in text else text
    assert physical.count("Window (blocking)") == 2  # rank and dense_rank share one sort
    assert "Window:" in text
    got = out.to_pydict()
    assert sorted(zip(got["t"], got["r"], got["d"], got["c"], strict=True)) == [
        (1, 1, 1, 3.0),
        (2, 2, 2, 3.0),
        (3, 1, 1, 3.0),
    ]


def test_computed_keys_and_arguments(df):
    w = Window().partition_by(col("g") == "a").order_by(-col("t"))
    got = (
        df.with_column("r", row_number().over(w))
        .with_column("s2", (col("v") * 2).sum().over(Window().partition_by(col("g"))))
        .to_pydict()
    )
    rows = sorted(zip(got["t"], got["r"], got["s2"], strict=True))
    assert rows == [(1, 2, 6.0), (2, 1, 6.0), (3, 1, 6.0)]
    assert set(got) == {"g", "t", "s", "v", "r", "s2"}


def test_window_spills_under_small_budget_and_matches_pandas(tmp_path):
    rng = np.random.default_rng(11)
    n = 120_000
    table = pa.table(
        {
            "id": pa.array(np.arange(n), pa.int64()),
            "k": pa.array(rng.integers(0, 3_000, n), pa.int64()),
            "t": pa.array(rng.permutation(n), pa.int64()),
            "v": pa.array(rng.integers(0, 1000, n), pa.int64()),
        }
    )
    w = Window().partition_by("k").order_by("t")
    with ketch.execution_config_ctx(
        memory_budget_bytes=400_000, morsel_size_rows=5_000, spill_dir=str(tmp_path)
    ):
        df = ketch.from_arrow(table).with_columns(
            {
                "run": col("v").sum().over(w.rows_between(Window.unbounded_preceding, Window.current_row)),
                "rn": row_number().over(w),
                "tot": col("v").sum().over(w.rows_between()),
            }
        )
        stats = df.explain_analyze(file=open(os.devnull, "w"))
        got = df.to_pandas().sort_values("id").reset_index(drop=True)
    pdf = table.to_pandas().sort_values(["k", "t"])
    pdf["run"] = pdf.groupby("k")["v"].cumsum()
    pdf["rn"] = pdf.groupby("k").cumcount() + 1
    pdf["tot"] = pdf.groupby("k")["v"].transform("sum")
    pdf = pdf.sort_values("id").reset_index(drop=True)
    pd.testing.assert_series_equal(got["run"], pdf["run"], check_dtype=False)
    pd.testing.assert_series_equal(got["rn"], pdf["rn"], check_dtype=False)
    pd.testing.assert_series_equal(got["tot"], pdf["tot"], check_dtype=False)
    assert stats.peak_memory_bytes < table.nbytes
    assert os.listdir(tmp_path) == []


def test_window_plan_round_trips_through_serde(df):
    from ketch import _core
    from ketch.functions import lead

    config = ketch.get_execution_config().to_native()
    w = Window().partition_by("g").order_by("t", desc=True).range_between(-1.5, Window.current_row)
    out = df.with_columns(
        {
            "s1": col("v").sum().over(w),
            "nx": lead(col("v"), 1, default=0.0).over(Window().partition_by("g").order_by("t")),
            "rn": row_number().over(Window().order_by("t").rows_between(-1, 1, min_periods=2)),
        }
    )
    optimized = out._plan.optimize(config=config)
    copy = _core.PyPlan.from_bytes(optimized.to_bytes())
    assert repr(copy) == repr(optimized)
    assert copy.physical_repr(config) == optimized.physical_repr(config)
    assert "Window" in repr(copy)
    raw = _core.PyPlan.from_bytes(out._plan.to_bytes())
    assert repr(raw) == repr(out._plan)
    expected = out.to_pydict()
    # s1: the values of t in [t - 1.5, t] (range bounds are value offsets under desc too, Daft's rule).
    assert sorted(zip(expected["t"], expected["s1"], expected["nx"], expected["rn"], strict=True)) == [
        (1, 1.0, 2.0, 1),
        (2, 3.0, 0.0, 2),
        (3, 3.0, 0.0, 3),
    ]


def test_aliased_function_inside_over(df):
    got = df.select(
        "t", col("v").sum().alias("inner").over(Window().partition_by("g")).alias("total")
    ).to_pydict()
    assert sorted(zip(got["t"], got["total"], strict=True)) == [(1, 3.0), (2, 3.0), (3, 3.0)]


def test_string_min_max_and_count_modes_over_frames():
    data = {
        "g": ["a", "a", "a", "a", "b", "b"],
        "t": [1, 2, 3, 4, 1, 2],
        "s": ["m", None, "c", "x", "q", "b"],
    }
    # Running frames are asked for (a frame-less ordered window is the whole partition, as Daft).
    w = Window().partition_by("g").order_by("t")
    running = w.rows_between(Window.unbounded_preceding, Window.current_row)
    got = (
        ketch.from_pydict(data)
        .with_columns(
            {
                "mn": col("s").min().over(running),
                "mx": col("s").max().over(w.rows_between(-1, 1)),
                "all": col("s").count("all").over(running),
                "nulls": col("s").count("null").over(Window().partition_by("g")),
            }
        )
        .sort(["g", "t"])
        .to_pydict()
    )
    assert got["mn"] == ["m", "m", "c", "c", "q", "b"]
    assert got["mx"] == ["m", "m", "x", "x", "q", "q"]
    assert got["all"] == [1, 2, 3, 4, 1, 2]
    assert got["nulls"] == [1, 1, 1, 1, 0, 0]
