"""Window functions against pandas (groupby rank / cumsum / rolling / shift / transform) on data
with null values, ties in the order key and several partitions (one of them a null key), on both
runners. Results are aligned by an ``id`` column: Ketch emits rows grouped by partition."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ketch
from ketch import Window, col
from ketch.functions import dense_rank, first_value, lag, last_value, lead, rank, row_number

pytestmark = pytest.mark.usefixtures("runner")

N = 300


def make_table(seed: int = 0, unique_order: bool = False) -> pa.Table:
    rng = np.random.default_rng(seed)
    groups = rng.choice(["a", "b", "c", "d", None], N).tolist()
    if unique_order:
        t = rng.permutation(N).astype(np.int64)
    else:
        t = rng.integers(0, 40, N).astype(np.int64)  # many ties
    v = rng.normal(size=N).round(3)
    v_mask = rng.random(N) < 0.1
    return pa.table(
        {
            "id": pa.array(np.arange(N), pa.int64()),
            "g": pa.array(groups, pa.large_string()),
            "t": pa.array(t, pa.int64()),
            "v": pa.array(v, pa.float64(), mask=v_mask),
            "i": pa.array(rng.integers(-50, 50, N), pa.int64()),
        }
    )


def frame(table: pa.Table) -> pd.DataFrame:
    pdf = table.to_pandas()
    pdf["g"] = pdf["g"].fillna("<null>")  # pandas groupby drops null keys; Ketch keeps them as a group
    return pdf


def result(df: ketch.DataFrame) -> pd.DataFrame:
    return df.to_pandas().sort_values("id").reset_index(drop=True)


def assert_close(got: pd.Series, expected: pd.Series) -> None:
    got = got.reset_index(drop=True)
    expected = expected.reset_index(drop=True)
    assert len(got) == len(expected)
    for a, b in zip(got.tolist(), expected.tolist(), strict=True):
        if b is None or (isinstance(b, float) and math.isnan(b)):
            assert a is None or (isinstance(a, float) and math.isnan(a)), (a, b)
        else:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-9), (a, b)


def test_ranking_matches_pandas_rank():
    table = make_table(1)
    w = Window().partition_by("g").order_by("t")
    df = ketch.from_arrow(table).with_columns(
        {"rk": rank().over(w), "drk": dense_rank().over(w), "rn": row_number().over(w)}
    )
    got = result(df)
    pdf = frame(table).sort_values("id").reset_index(drop=True)
    expected_rank = pdf.groupby("g")["t"].rank(method="min").astype("int64")
    expected_dense = pdf.groupby("g")["t"].rank(method="dense").astype("int64")
    assert got["rk"].tolist() == expected_rank.tolist()
    assert got["drk"].tolist() == expected_dense.tolist()
    assert df.to_arrow().schema.field("rk").type == pa.uint64()
    # row_number: a permutation of 1..n within each partition, ordered by t
    for _, part in got.assign(g=got["g"].fillna("<null>")).groupby("g"):
        assert sorted(part["rn"]) == list(range(1, len(part) + 1))
        assert part.sort_values("rn")["t"].is_monotonic_increasing


def test_rank_descending_with_null_order_keys():
    table = make_table(2)
    t = table.column("t").to_pylist()
    t = [None if i % 17 == 0 else x for i, x in enumerate(t)]
    table = table.set_column(2, "t", pa.array(t, pa.int64()))
    w = Window().partition_by("g").order_by("t", desc=True, nulls_first=False)
    got = result(ketch.from_arrow(table).with_column("rk", rank().over(w)))
    pdf = frame(table).sort_values("id").reset_index(drop=True)
    expected = pdf.groupby("g")["t"].rank(method="min", ascending=False, na_option="bottom").astype("int64")
    assert got["rk"].tolist() == expected.tolist()


def test_whole_partition_aggregates_match_transform():
    table = make_table(3)
    w = Window().partition_by("g")
    df = ketch.from_arrow(table).select(
        "id",
        col("v").sum().over(w).alias("sum"),
        col("v").mean().over(w).alias("mean"),
        col("v").min().over(w).alias("min"),
        col("v").max().over(w).alias("max"),
        col("v").count().over(w).alias("count"),
        col("v").stddev().over(w).alias("std"),
        col("i").sum().over(w).alias("isum"),
        (col("v") - col("v").mean().over(w)).alias("centered"),
    )
    got = result(df)
    pdf = frame(table).sort_values("id").reset_index(drop=True)
    grouped = pdf.groupby("g")["v"]
    assert_close(got["sum"], grouped.transform("sum"))
    assert_close(got["mean"], grouped.transform("mean"))
    assert_close(got["min"], grouped.transform("min"))
    assert_close(got["max"], grouped.transform("max"))
    assert got["count"].tolist() == grouped.transform("count").tolist()
    assert_close(got["std"], grouped.transform(lambda s: s.std(ddof=1)))
    assert got["isum"].tolist() == pdf.groupby("g")["i"].transform("sum").tolist()
    assert_close(got["centered"], pdf["v"] - grouped.transform("mean"))
    arrow = df.to_arrow()
    assert arrow.schema.field("isum").type == pa.int64()
    assert arrow.schema.field("count").type == pa.uint64()


def test_running_sum_includes_peers_like_sql():
    table = make_table(4)
    w = Window().partition_by("g").order_by("t").range_between(Window.unbounded_preceding, Window.current_row)
    got = result(ketch.from_arrow(table).with_column("run", col("i").sum().over(w)))
    pdf = frame(table)
    # range frame up to the current row: up to the current row's last peer (equal t)
    per_t = pdf.groupby(["g", "t"])["i"].sum().groupby(level=0).cumsum().rename("run").reset_index()
    expected = pdf.merge(per_t, on=["g", "t"]).sort_values("id")["run"]
    assert got["run"].tolist() == expected.tolist()


def test_an_ordered_window_without_a_frame_is_the_whole_partition_as_in_daft():
    # Daft 0.7.26 (and its SQL): sum / min / count / mean over partition_by + order_by with no
    # frame give the whole partition's value, not a running one.
    df = ketch.from_pydict({"g": [1, 1, 1, 2, 2], "o": [1, 2, 2, 1, 2], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    w = Window().partition_by("g").order_by("o")
    got = df.select(
        "g", "o", "x",
        col("x").sum().over(w).alias("s"), col("x").min().over(w).alias("mn"),
        col("x").count().over(w).alias("c"), col("x").mean().over(w).alias("m"),
    ).sort(["g", "o", "x"]).to_pydict()  # fmt: skip
    assert got["s"] == [6.0, 6.0, 6.0, 9.0, 9.0]
    assert got["mn"] == [1.0, 1.0, 1.0, 4.0, 4.0]
    assert got["c"] == [3, 3, 3, 2, 2]
    assert got["m"] == [2.0, 2.0, 2.0, 4.5, 4.5]
    frame_ = df  # noqa: F841 (read by name in SQL)
    sql = ketch.sql("SELECT sum(x) OVER (PARTITION BY g ORDER BY o) AS s FROM frame_ ORDER BY g, o, x")
    assert sql.to_pydict()["s"] == [6.0, 6.0, 6.0, 9.0, 9.0]  # Daft's SQL too


def test_rows_between_matches_rolling():
    table = make_table(5, unique_order=True)
    pdf = frame(table).sort_values(["g", "t"])
    w = Window().partition_by("g").order_by("t")
    df = ketch.from_arrow(table).with_columns(
        {
            "trail3": col("v").sum().over(w.rows_between(-2, Window.current_row)),
            "center_min": col("v").min().over(w.rows_between(-1, 1)),
            "center_max": col("v").max().over(w.rows_between(-1, 1)),
            "mean_mp2": col("v").mean().over(w.rows_between(-2, 0, min_periods=2)),
            "to_end": col("v").count().over(w.rows_between(0, Window.unbounded_following)),
        }
    )
    got = result(df)
    g = pdf.groupby("g")["v"]
    pdf["trail3"] = g.transform(lambda s: s.rolling(3, min_periods=1).sum())
    pdf["center_min"] = g.transform(lambda s: s.rolling(3, center=True, min_periods=1).min())
    pdf["center_max"] = g.transform(lambda s: s.rolling(3, center=True, min_periods=1).max())
    pdf["mean_mp2"] = g.transform(lambda s: s.rolling(3, min_periods=2).mean())
    pdf["to_end"] = g.transform(lambda s: s[::-1].notna().cumsum()[::-1])
    pdf = pdf.sort_values("id")
    # pandas sums an all-null window to 0 with min_periods=1 only when a value exists: same as ours
    assert_close(got["trail3"], pdf["trail3"])
    assert_close(got["center_min"], pdf["center_min"])
    assert_close(got["center_max"], pdf["center_max"])
    assert_close(got["mean_mp2"], pdf["mean_mp2"])
    assert got["to_end"].tolist() == pdf["to_end"].astype("int64").tolist()


def range_reference(pdf: pd.DataFrame, lo: float, hi: float) -> list:
    """The frame holds the order values in [t + lo, t + hi] under either order direction: Daft's
    rule (Daft 0.7.26, desc, range_between(-2, 0) over t = 1, 2, 4, 7, 8: t = 8 sums 7 and 8)."""
    out = {}
    for _, part in pdf.groupby("g"):
        ts = part["t"].to_numpy()
        vs = part["i"].to_numpy()
        for row_id, t in zip(part["id"], ts, strict=True):
            mask = (ts >= t + lo) & (ts <= t + hi)
            out[row_id] = int(vs[mask].sum())
    return [out[i] for i in sorted(out)]


@pytest.mark.parametrize("desc", [False, True])
def test_range_between_matches_reference(desc):
    table = make_table(6)
    w = Window().partition_by("g").order_by("t", desc=desc).range_between(-3, 1)
    got = result(ketch.from_arrow(table).with_column("s", col("i").sum().over(w)))
    assert got["s"].tolist() == range_reference(frame(table), -3, 1)


def test_lag_lead_with_defaults_match_shift():
    table = make_table(7, unique_order=True)
    w = Window().partition_by("g").order_by("t")
    df = ketch.from_arrow(table).with_columns(
        {
            "prev": col("i").lag().over(w),
            "next2": lead(col("i"), 2, default=-1).over(w),
            "prev_or_self": lag(col("i"), 1, default=col("id")).over(w),
            "first": first_value(col("i")).over(w.rows_between(Window.unbounded_preceding, 0)),
            "last": last_value(col("i")).over(w.rows_between(0, Window.unbounded_following)),
        }
    )
    got = result(df)
    pdf = frame(table).sort_values(["g", "t"])
    g = pdf.groupby("g")["i"]
    pdf["prev"] = g.shift(1)
    pdf["next2"] = g.shift(-2).fillna(-1)
    pdf["prev_or_self"] = g.shift(1).fillna(pdf["id"])
    pdf["first"] = g.transform("first")
    pdf["last"] = g.transform("last")
    pdf = pdf.sort_values("id")
    assert_close(got["prev"].astype("float64"), pdf["prev"])
    assert got["next2"].tolist() == pdf["next2"].astype("int64").tolist()
    assert got["prev_or_self"].tolist() == pdf["prev_or_self"].astype("int64").tolist()
    assert got["first"].tolist() == pdf["first"].tolist()
    assert got["last"].tolist() == pdf["last"].tolist()


def test_window_without_partition_by():
    table = make_table(8, unique_order=True)
    w = Window().order_by("t")
    got = result(ketch.from_arrow(table).with_column("rn", row_number().over(w)))
    expected = table.to_pandas()["t"].rank(method="first").astype("int64")
    assert got["rn"].tolist() == expected.tolist()


def test_distributed_plan_shuffles_on_partition_keys(runner):
    import io

    table = make_table(9)
    w = Window().partition_by("g").order_by("t")
    df = ketch.from_arrow(table).into_partitions(3).with_column("rk", rank().over(w))
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    assert "Window (blocking)" in text
    if runner == "ray":
        distributed = text[text.index("== Distributed Plan ==") :]
        assert "Window" in distributed and "g" in distributed
        assert "shuffle" in distributed.lower()
    got = result(df)
    pdf = frame(table).sort_values("id").reset_index(drop=True)
    assert got["rk"].tolist() == pdf.groupby("g")["t"].rank(method="min").astype("int64").tolist()
