"""Daft's flat Expression methods (``col("t").year()``) and the multimodal free functions
(``decode_image(col("b"))``) give exactly what their other spelling gives, on data with nulls."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import Window, col

T0 = dt.datetime(2024, 2, 29, 13, 45, 30, 123456)


def _table() -> pa.Table:
    return pa.table(
        {
            "t": pa.array([T0, None, dt.datetime(1999, 12, 31, 23, 59, 59, 999)], pa.timestamp("us")),
            "tz": pa.array([T0, None, dt.datetime(2021, 7, 4, 1, 2, 3)], pa.timestamp("us", tz="UTC")),
            "d": pa.array([dt.timedelta(days=2, hours=3, seconds=7, microseconds=5), None, dt.timedelta(0)]),
            "x": pa.array([-3, None, 5], pa.int64()),
            "y": pa.array([2.0, None, -1.5]),
            "l": pa.array([[3, None, 1, 3], None, []], pa.list_(pa.int64())),
            "ll": pa.array([[[1, 2], [3]], None, [[]]], pa.list_(pa.list_(pa.int64()))),
            "lb": pa.array([[True, None, False], None, [True]], pa.list_(pa.bool_())),
            "ls": pa.array([["a", "b"], None, ["c", None]], pa.list_(pa.string())),
            "m": pa.array([[("k1", 1), ("k2", 2)], None, [("k2", 5)]], pa.map_(pa.string(), pa.int64())),
            "s": pa.array(["hello", None, "ab"]),
        }
    )


# (flat method, its arguments, input column, the other spelling of the same expression)
CASES: list[tuple[str, tuple[Any, ...], str, Callable[[Any], Any]]] = [
    ("year", (), "t", F.year),
    ("quarter", (), "t", F.quarter),
    ("month", (), "t", F.month),
    ("day", (), "t", F.day),
    ("day_of_month", (), "t", lambda e: e.dt.day_of_month()),
    ("day_of_week", (), "t", lambda e: e.dt.day_of_week()),
    ("day_of_year", (), "t", F.day_of_year),
    ("week_of_year", (), "t", F.week_of_year),
    ("hour", (), "t", F.hour),
    ("minute", (), "t", lambda e: e.dt.minute()),
    ("second", (), "t", F.second),
    ("millisecond", (), "t", F.millisecond),
    ("microsecond", (), "t", lambda e: e.dt.microsecond()),
    ("nanosecond", (), "t", F.nanosecond),
    ("date", (), "t", lambda e: e.dt.date()),
    ("time", (), "t", F.time),
    ("unix_date", (), "t", F.unix_date),
    ("strftime", ("%Y/%m/%d %H",), "t", lambda e: F.strftime(e, "%Y/%m/%d %H")),
    ("to_unix_epoch", ("ms",), "t", lambda e: e.dt.to_unix_epoch("ms")),
    ("date_trunc", ("1 hour",), "t", lambda e: F.date_trunc("1 hour", e)),
    ("convert_time_zone", ("Asia/Tokyo",), "tz", lambda e: e.dt.convert_time_zone("Asia/Tokyo")),
    ("replace_time_zone", ("Europe/Paris",), "t", lambda e: F.replace_time_zone(e, "Europe/Paris")),
    ("total_days", (), "d", F.total_days),
    ("total_hours", (), "d", lambda e: e.dt.total_hours()),
    ("total_minutes", (), "d", F.total_minutes),
    ("total_seconds", (), "d", F.total_seconds),
    ("total_milliseconds", (), "d", F.total_milliseconds),
    ("total_microseconds", (), "d", lambda e: e.dt.total_microseconds()),
    ("total_nanoseconds", (), "d", F.total_nanoseconds),
    ("abs", (), "x", F.abs),
    ("coalesce", (col("y"), 7), "x", lambda e: F.coalesce(e, col("y"), 7)),
    ("pow", (2,), "x", lambda e: F.pow(e, 2)),
    ("power", (3,), "y", lambda e: F.power(e, 3)),
    ("eq_null_safe", (5,), "x", lambda e: F.eq_null_safe(e, 5)),
    ("slice", (1, 3), "l", lambda e: e.list.slice(1, 3)),
    ("slice", (-2,), "l", lambda e: F.slice(e, -2)),
    ("chunk", (2,), "l", lambda e: e.list.chunk(2)),
    ("value_counts", (), "l", lambda e: e.list.value_counts()),
    ("list_sum", (), "l", lambda e: e.list.sum()),
    ("list_mean", (), "l", lambda e: e.list.mean()),
    ("list_min", (), "l", lambda e: e.list.min()),
    ("list_max", (), "l", F.list_max),
    ("list_count", (), "l", lambda e: e.list.count()),
    ("list_count", ("all",), "l", lambda e: F.list_count(e, "all")),
    ("list_sort", (True,), "l", lambda e: e.list.sort(True)),
    ("list_distinct", (), "l", lambda e: e.list.distinct()),
    ("list_join", ("-",), "ls", lambda e: e.list.join("-")),
    ("list_contains", (3,), "l", lambda e: e.list.contains(3)),
    ("list_append", (9,), "l", lambda e: e.list.append(9)),
    ("list_flatten", (), "ll", lambda e: e.list.flatten()),
    ("list_bool_and", (), "lb", lambda e: e.list.bool_and()),
    ("list_bool_or", (), "lb", F.list_bool_or),
    ("map_get", ("k2",), "m", lambda e: e.map.get("k2")),
    ("map_keys", (), "m", lambda e: e.map.keys()),
]


@pytest.mark.parametrize(("method", "args", "column", "other"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_flat_method_equals_other_spelling(method: str, args: tuple, column: str, other: Callable) -> None:
    df = ketch.from_arrow(_table())
    got = df.select(getattr(col(column), method)(*args).alias("v")).to_arrow().column("v")
    want = df.select(other(col(column)).alias("v")).to_arrow().column("v")
    assert got.type == want.type
    assert got.to_pylist() == want.to_pylist()
    assert got.null_count < len(got)  # the method computed something, not only nulls
    assert got[1].as_py() is None or method in ("coalesce", "eq_null_safe")  # null row


def test_flat_methods_real_values() -> None:
    df = ketch.from_arrow(_table())
    out = df.select(
        col("t").year().alias("year"),
        col("t").day_of_year().alias("doy"),
        col("t").strftime("%Y-%m-%d").alias("f"),
        col("x").abs().alias("abs"),
        col("x").coalesce(col("y"), 7).alias("co"),
        col("x").eq_null_safe(None).alias("ens"),
        col("l").list_sum().alias("ls"),
        col("l").list_sort().alias("sorted"),
        col("m").map_get("k2").alias("mg"),
        col("d").total_seconds().alias("secs"),
        col("l").slice(1, 3).alias("sl"),
    ).to_pydict()
    assert out["year"] == [2024, None, 1999]
    assert out["doy"] == [60, None, 365]
    assert out["f"] == ["2024-02-29", None, "1999-12-31"]
    assert out["abs"] == [3, None, 5]
    assert out["co"] == [-3, 7, 5]
    assert out["ens"] == [False, True, False]
    assert out["ls"] == [7, None, None]  # an empty list sums to null
    assert out["sorted"][0] == [1, 3, 3, None]
    assert out["mg"] == [2, None, 5]
    assert out["secs"] == [2 * 86400 + 3 * 3600 + 7, None, 0]
    assert out["sl"] == [[None, 1], None, []]


def test_first_and_last_value_over_a_window() -> None:
    df = ketch.from_pydict({"g": [1, 1, 1, 2, 2], "o": [3, 1, 2, 5, 4], "v": [30, 10, None, 50, 40]})
    w = (
        Window()
        .partition_by("g")
        .order_by("o")
        .rows_between(Window.unbounded_preceding, Window.unbounded_following)
    )
    got = (
        df.select(
            col("o"), col("v").first_value().over(w).alias("f"), col("v").last_value().over(w).alias("l")
        )
        .sort("o")
        .to_pydict()
    )
    want = (
        df.select(
            col("o"), F.first_value(col("v")).over(w).alias("f"), F.last_value(col("v")).over(w).alias("l")
        )
        .sort("o")
        .to_pydict()
    )
    assert got == want
    assert got["f"] == [10, 10, 10, 40, 40]
    assert got["l"] == [30, 30, 30, 50, 50]
    # ignore_nulls: the frame's first / last non-null value (o = 1, 2, 3 hold v = 10, None, 30).
    running = Window().partition_by("g").order_by("o").rows_between(Window.unbounded_preceding, 0)
    skipped = df.select(col("o"), col("v").last_value(ignore_nulls=True).over(running).alias("l")).sort("o")
    assert skipped.to_pydict()["l"] == [10, 10, 30, 40, 50]


def _png(array: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def images(rng: np.random.Generator) -> ketch.DataFrame:
    a = rng.integers(0, 256, size=(6, 9, 3), dtype=np.uint8)
    b = rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    return ketch.from_pydict({"b": [_png(a), None, _png(b)]}).with_column("i", col("b").decode_image())


def test_image_flat_methods(images: ketch.DataFrame) -> None:
    i = col("i")
    got = images.select(
        i.image_width().alias("w"),
        i.image_height().alias("h"),
        i.image_mode().alias("m"),
        i.image_channel().alias("c"),
        i.image_hash(method="ahash").alias("ah"),
        i.image_hash(method="dhash", hash_size=4).alias("dh"),
        i.image_attribute("width").alias("aw"),
        F.image_attribute(i, "mode").alias("am"),
    ).to_pydict()
    want = images.select(
        F.image_width(i).alias("w"),
        F.image_height(i).alias("h"),
        F.image_mode(i).alias("m"),
        F.image_channel(i).alias("c"),
        F.image_hash(i, method="ahash").alias("ah"),
        F.image_hash(i, method="dhash", hash_size=4).alias("dh"),
        i.image.width().alias("aw"),
        i.image.mode().alias("am"),
    ).to_pydict()
    assert got == want
    assert got["w"] == [9, None, 5]
    assert got["h"] == [6, None, 4]
    assert got["m"] == ["RGB", None, "RGB"]
    assert got["c"] == [3, None, 3]
    with pytest.raises(ValueError, match="image_attribute"):
        i.image_attribute("depth")
    with pytest.raises(ValueError, match="method must be one of"):
        i.image_hash(method="median")  # type: ignore[arg-type]


def test_image_free_functions(images: ketch.DataFrame) -> None:
    b, i = col("b"), col("i")
    got = images.select(
        F.decode_image(b, mode="L").image_mode().alias("dec"),
        F.resize(i, 3, 2).image_width().alias("rw"),
        F.crop(i, (1, 1, 2, 3)).image_height().alias("ch"),
        F.convert_image(i, "L").image_channel().alias("cv"),
        F.decode_image(F.encode_image(i, "png")).image_width().alias("rt"),
    ).to_pydict()
    want = images.select(
        b.decode_image(mode="L").image.mode().alias("dec"),
        i.resize(3, 2).image.width().alias("rw"),
        i.crop((1, 1, 2, 3)).image.height().alias("ch"),
        i.convert_image("L").image.channels().alias("cv"),
        i.encode_image("png").decode_image().image.width().alias("rt"),
    ).to_pydict()
    assert got == want
    assert got == {
        "dec": ["L", None, "L"],
        "rw": [3, None, 3],
        "ch": [3, None, 3],
        "cv": [1, None, 1],
        "rt": [9, None, 5],
    }


def test_predicate_free_functions() -> None:
    df = ketch.from_pydict({"x": [1, None, 5, 3]})
    got = df.select(F.is_in(col("x"), [1, 3]).alias("in"), F.between(col("x"), 2, 5).alias("bt")).to_pydict()
    want = df.select(col("x").is_in([1, 3]).alias("in"), col("x").between(2, 5).alias("bt")).to_pydict()
    assert got == want == {"in": [True, None, False, True], "bt": [False, None, True, True]}


def test_embedding_distances_all_spellings() -> None:
    a = pa.FixedSizeListArray.from_arrays(pa.array([1.0, 0.0, 3.0, 4.0, 0.0, 0.0], pa.float32()), 2)
    b = pa.FixedSizeListArray.from_arrays(pa.array([0.0, 1.0, 3.0, 4.0, 1.0, 1.0], pa.float32()), 2)
    df = ketch.from_arrow(pa.table({"a": a, "b": b}))
    out = df.select(
        col("a").cosine_distance(col("b")).alias("c1"),
        F.cosine_distance(col("a"), col("b")).alias("c2"),
        col("a").embedding.cosine_distance(col("b")).alias("c3"),
        col("a").euclidean_distance(col("b")).alias("e1"),
        F.euclidean_distance(col("a"), col("b")).alias("e2"),
        col("a").embedding.euclidean_distance(col("b")).alias("e3"),
    ).to_pydict()
    assert out["c1"] == out["c2"] == out["c3"]
    sim = df.select(
        col("a").cosine_similarity(col("b")).alias("s"), F.cosine_similarity(col("a"), col("b")).alias("t")
    )
    sims = sim.to_pydict()
    assert sims["s"] == sims["t"]
    assert sims["s"][2] is None and out["c1"][2] is None  # a zero vector has no direction
    assert sims["s"][:2] == [pytest.approx(0.0), pytest.approx(1.0)]
    assert out["e1"] == out["e2"] == out["e3"]
    assert out["c1"][0] == pytest.approx(1.0)
    assert out["c1"][1] == pytest.approx(0.0, abs=1e-6)
    assert out["e1"][:2] == [pytest.approx(2**0.5), pytest.approx(0.0)]
    assert out["e1"][2] == pytest.approx(2**0.5)


def test_download_upload_file_free_functions(tmp_path: Path) -> None:
    sources = []
    for n, payload in enumerate([b"abc", b"hello world"]):
        path = tmp_path / f"in{n}.bin"
        path.write_bytes(payload)
        sources.append(str(path))
    df = ketch.from_pydict({"u": [sources[0], None, sources[1]]})
    got = df.select(F.download(col("u")).alias("d")).to_pydict()["d"]
    assert got == df.select(col("u").download().alias("d")).to_pydict()["d"] == [b"abc", None, b"hello world"]
    target = tmp_path / "out"
    paths = df.select(F.upload(F.download(col("u")), str(target)).alias("p")).to_pydict()["p"]
    flat = df.select(col("u").download().upload(str(tmp_path / "out2")).alias("p")).to_pydict()["p"]
    assert sorted(Path(p.removeprefix("file://")).read_bytes() for p in flat if p) == [b"abc", b"hello world"]
    assert paths[1] is None
    assert sorted(Path(p.removeprefix("file://")).read_bytes() for p in paths if p) == [
        b"abc",
        b"hello world",
    ]
    f = col("u").url.to_file()
    sizes = df.select(F.file_size(f).alias("s"), F.file_path(f).alias("p")).to_pydict()
    assert sizes == df.select(f.file_size().alias("s"), f.file_path().alias("p")).to_pydict()
    assert sizes["s"] == [3, None, 11]


def test_is_column_and_column_name() -> None:
    assert col("x").is_column() and col("x").column_name() == "x"
    assert not (col("x") + 1).is_column() and (col("x") + 1).column_name() is None
    assert col("x").alias("y").column_name() is None
    assert not ketch.lit(1).is_column()


def test_columns_row_wise_reductions() -> None:
    df = ketch.from_pydict({"a": [1, None, None, 4], "b": [2, 5, None, -1], "c": [1.5, 0.5, None, 2.0]})
    out = df.select(
        F.columns_sum("a", "b"),
        F.columns_mean("a", col("b")),
        F.columns_min("a", "b"),
        F.columns_max(col("a"), "b"),
        F.columns_avg("c", "c"),
    ).to_pydict()
    assert out == {
        "columns_sum": [3, 5, None, 3],
        "columns_mean": [1.5, 5.0, None, 1.5],
        "columns_min": [1, 5, None, -1],
        "columns_max": [2, 5, None, 4],
        "columns_avg": [1.5, 0.5, None, 2.0],
    }
    with pytest.raises(ValueError, match="at least one"):
        F.columns_sum()
