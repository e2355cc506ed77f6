"""Window functions as Daft 0.7.26 computes them (issue 28): first_value / last_value with
``ignore_nulls`` (and Daft's errors without a frame), count_distinct over a window, and
range_between with timedelta bounds over a timestamp or date order key. Expected values were read
from Daft 0.7.26 (benchmarks/.venv-peers) and are re-derived here from the rows in plain Python."""

from __future__ import annotations

import datetime as dt

import pytest

import ketch
from ketch import Window, col
from ketch import functions as F

ROWS = {
    "g": ["a", "a", "a", "b", "b", "b"],
    "t": [1, 2, 3, 1, 2, 3],
    "v": [None, 2, None, 5, None, 7],
    "ts": [dt.datetime(2024, 1, d) for d in (1, 2, 5, 1, 3, 4)],
}


def _by_row(df: ketch.DataFrame) -> dict[tuple[str, int], object]:
    out = df.to_pydict()
    return {(g, t): x for g, t, x in zip(out["g"], out["t"], out["x"], strict=True)}


def _frame() -> ketch.DataFrame:
    return ketch.from_pydict(ROWS)


def _partition(g: str) -> list[int]:
    return [i for i in range(6) if ROWS["g"][i] == g]


def test_first_and_last_value_ignoring_nulls() -> None:
    w = Window().partition_by("g").order_by("t")
    whole = w.rows_between(Window.unbounded_preceding, Window.unbounded_following)
    running = w.rows_between(Window.unbounded_preceding, Window.current_row)
    df = _frame()
    first = _by_row(df.select("g", "t", F.first_value(col("v"), ignore_nulls=True).over(whole).alias("x")))
    last = _by_row(df.select("g", "t", col("v").last_value(ignore_nulls=True).over(running).alias("x")))
    plain = _by_row(df.select("g", "t", F.last_value(col("v")).over(running).alias("x")))
    for i in range(6):
        key = (ROWS["g"][i], ROWS["t"][i])
        rows = _partition(ROWS["g"][i])
        valid = [ROWS["v"][j] for j in rows if ROWS["v"][j] is not None]
        seen = [ROWS["v"][j] for j in rows if j <= i and ROWS["v"][j] is not None]
        assert first[key] == valid[0]  # Daft: a -> 2, b -> 5
        assert last[key] == (seen[-1] if seen else None)  # Daft: a -> None, 2, 2
        assert plain[key] == ROWS["v"][i]  # without ignore_nulls: the current row's value


@pytest.mark.parametrize(
    ("window", "message"),
    [
        (Window().partition_by("g"), "require an order_by"),
        (Window().partition_by("g").order_by("t"), r"require a frame \(rows_between\)"),
    ],
)
def test_first_and_last_value_without_a_frame_raise_daft_s_error(window, message) -> None:  # type: ignore[no-untyped-def]
    for fn in (F.first_value, F.last_value):
        with pytest.raises(ValueError, match=message):
            _frame().select(fn(col("v")).over(window).alias("x")).collect()


def test_count_distinct_over_whole_and_sliding_frames() -> None:
    data = {"g": ["a"] * 6 + ["b"] * 3, "t": list(range(6)) + [0, 1, 2], "v": [1, 1, 2, None, 2, 3, 4, 4, 4]}
    df = ketch.from_pydict(data)
    whole = df.select("g", "t", col("v").count_distinct().over(Window().partition_by("g")).alias("x"))
    last_three = Window().partition_by("g").order_by("t").rows_between(-2, 0)
    sliding = df.select("g", "t", col("v").count_distinct().over(last_three).alias("x"))
    got_whole, got_sliding = _by_row(whole), _by_row(sliding)
    for i in range(9):
        key = (data["g"][i], data["t"][i])
        same = [j for j in range(9) if data["g"][j] == data["g"][i]]
        assert got_whole[key] == len({data["v"][j] for j in same} - {None})
        frame = [j for j in same if data["t"][i] - 2 <= data["t"][j] <= data["t"][i]]
        assert got_sliding[key] == len({data["v"][j] for j in frame} - {None})


@pytest.mark.parametrize("as_date", [False, True], ids=["timestamp", "date"])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_range_between_with_timedelta_bounds(as_date: bool, descending: bool) -> None:
    df = _frame()
    key = col("ts").cast(ketch.DataType.date()).alias("d") if as_date else col("ts").alias("d")
    df = df.with_column("d", key)
    ordered = Window().partition_by("g").order_by("d", desc=descending)
    w = ordered.range_between(dt.timedelta(days=-2), Window.current_row)
    got = _by_row(df.select("g", "t", col("t").sum().over(w).alias("x")))
    # The bounds are offsets in values whatever the order (Daft's rule for numbers; Daft 0.7.26
    # refuses timedelta bounds under a descending order with "Negative frame size").
    # Daft, ascending: a -> 1, 3, 3 and b -> 1, 3, 5.
    for i in range(6):
        day = ROWS["ts"][i]
        inside = [j for j in _partition(ROWS["g"][i]) if day - dt.timedelta(days=2) <= ROWS["ts"][j] <= day]
        assert got[(ROWS["g"][i], ROWS["t"][i])] == sum(ROWS["t"][j] for j in inside)


def test_timedelta_bounds_need_a_temporal_order_key() -> None:
    w = Window().partition_by("g").order_by("t").range_between(dt.timedelta(days=-1), Window.current_row)
    with pytest.raises(TypeError, match="timedelta bounds need a timestamp"):
        _frame().select(col("t").sum().over(w).alias("x")).collect()
    with pytest.raises(TypeError, match="mix of timedelta and number"):
        Window().order_by("ts").range_between(dt.timedelta(days=-1), 3)


@pytest.mark.parametrize(("start", "end"), [(-2, 0), (0, 2), (-1, 1), (-3, -1), (1, 3)])
def test_numeric_range_bounds_under_a_descending_order_are_value_offsets(start: int, end: int) -> None:
    # Daft 0.7.26 for (-2, 0): {8: 11000, 7: 1000, 4: 110, 2: 11, 1: 1}.
    t, v = [1, 2, 4, 7, 8], [1, 10, 100, 1000, 10000]
    w = Window().partition_by("g").order_by("t", desc=True).range_between(start, end)
    df = ketch.from_pydict({"g": ["a"] * 5, "t": t, "v": v})
    out = df.select("t", col("v").sum().over(w).alias("x")).to_pydict()
    for x, total in zip(out["t"], out["x"], strict=True):
        inside = [b for a, b in zip(t, v, strict=True) if x + start <= a <= x + end]
        assert total == (sum(inside) if inside else None)


def _nan_rows() -> ketch.DataFrame:
    inf = float("inf")
    return ketch.from_pydict(
        {
            "g": ["a"] * 6 + ["b"] * 4,
            "o": list(range(6)) + list(range(4)),
            "x": [1.0, float("nan"), 2.0, 3.0, None, 4.0, inf, 1.0, -inf, 5.0],
        }
    )


def _same(got: list, want: list) -> bool:
    return all((g != g and w != w) or g == w for g, w in zip(got, want, strict=True))


def test_a_nan_in_one_partition_stays_there() -> None:
    """A NaN in partition "a" used to make every later partition's window sum NaN (one prefix sum
    over all rows). Daft 0.7.26 printed these values for partition_by + order_by (whole partition,
    Daft's rule without a frame), a sliding 2-row frame and a running frame."""
    nan = float("nan")
    inf = float("inf")
    w = Window().partition_by("g").order_by("o")
    single = ketch.from_pydict({"g": ["a", "a", "a", "b"], "o": [1, 2, 3, 1], "x": [1.0, None, nan, 2.0]})
    out = single.select("g", "o", col("x").sum().over(w).alias("s")).sort(["g", "o"]).to_pydict()
    assert _same(out["s"], [nan, nan, nan, 2.0])
    out = (
        _nan_rows()
        .select(
            "g",
            "o",
            col("x").sum().over(w.rows_between(-1, 0)).alias("s2"),
            col("x").mean().over(w.rows_between(-1, 0)).alias("m2"),
            col("x").sum().over(w.rows_between(Window.unbounded_preceding, Window.current_row)).alias("run"),
            col("x").stddev().over(w.rows_between(-1, 0)).alias("sd2"),
            col("x").sum().over(Window().partition_by("g")).alias("tot"),
        )
        .sort(["g", "o"])
        .to_pydict()
    )
    # Partition "a" (NaN at row 1) as Daft; in "b" the frames [1.0, -inf] and [-inf, 5.0] sum to
    # -inf, where Daft's sliding sum gives NaN (it subtracts the +inf that left the frame: inf - inf).
    assert _same(out["s2"], [1.0, nan, nan, 5.0, 3.0, 4.0, inf, inf, -inf, -inf])
    assert _same(out["m2"], [1.0, nan, nan, 2.5, 3.0, 4.0, inf, inf, -inf, -inf])
    assert _same(out["run"], [1.0, nan, nan, nan, nan, nan, inf, inf, nan, nan])
    assert _same(out["sd2"], [None, nan, nan, 0.7071067811865476, None, None, None, nan, nan, nan])
    assert _same(out["tot"], [nan] * 10)
