"""read_lance / write_lance: round trips of every type, versions, pushdowns into Lance's scanner
(proven by the scan's counters), fragment sizing and the atomic commit, on both runners where the
runner matters. pylance is the oracle for what is stored."""

from __future__ import annotations

import datetime as dt
import io
import os

import lance  # noqa: E402
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import DataType, col
from ketch.errors import KetchFileNotFoundError, KetchValueError


def _png(value: int, width: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.full((2, width, 3), value, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def _all_types(rng: np.random.Generator) -> ketch.DataFrame:
    n = 5
    tensor_type = DataType.tensor(DataType.float32(), (2, 3)).to_arrow()
    tensors = pa.ExtensionArray.from_storage(
        tensor_type,
        pa.FixedSizeListArray.from_arrays(pa.array(rng.normal(size=n * 6).astype(np.float32)), 6),
    )
    var_tensor = DataType.tensor(DataType.int64()).to_arrow()
    table = pa.table(
        {
            "i8": pa.array([1, -2, None, 4, 5], pa.int8()),
            "u32": pa.array([1, 2, 3, None, 5], pa.uint32()),
            "i64": pa.array([10, None, 30, 40, 50], pa.int64()),
            "f32": pa.array([1.5, None, -0.0, 2, 3], pa.float32()),
            "f64": pa.array([0.1, 0.2, None, float("inf"), 0.5]),
            "s": pa.array(["a", None, "it's", "ü", ""]),
            "bin": pa.array([b"\x00", None, b"x", b"", b"yy"]),
            "flag": pa.array([True, False, None, True, False]),
            "d": pa.array([dt.date(2024, 1, i + 1) for i in range(n)]),
            "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, i) for i in range(n)], pa.timestamp("us")),
            "tz": pa.array(
                [dt.datetime(2024, 1, 1, 0, 0, i) for i in range(n)], pa.timestamp("ms", tz="UTC")
            ),
            "l": pa.array([[1, 2], None, [], [3], [4, None]], pa.list_(pa.int64())),
            "st": pa.array(
                [{"x": 1, "y": "a"}, None, {"x": None, "y": "b"}, {"x": 3, "y": None}, {"x": 5, "y": "e"}]
            ),
            "nul": pa.nulls(n),
            "png": pa.array([_png(i * 40, 2 + i) for i in range(n)], pa.binary()),
            "emb": pa.array(
                [list(rng.normal(size=4).astype(np.float32)) for _ in range(n)], pa.list_(pa.float32(), 4)
            ),
            "t": tensors,
            "vt": pa.array(
                [{"data": list(range(k * 2)), "shape": [k, 2]} for k in range(1, n + 1)], var_tensor
            ),
        }
    )
    decoded = col("png").image.decode(mode="RGB")
    return ketch.from_arrow(table).with_columns({"img": decoded, "fsi": decoded.image.resize(2, 2)})


@pytest.mark.usefixtures("runner")
def test_every_type_round_trips(tmp_path, rng):
    df = _all_types(rng)
    expected = df.to_arrow()
    uri = str(tmp_path / "types.lance")
    df.write_lance(uri)
    back = ketch.read_lance(uri)
    assert back.schema() == expected.schema
    got = back.to_arrow()
    assert got.schema.equals(expected.schema)
    for name in expected.column_names:
        assert got.column(name).equals(expected.column(name)), name
    # Ketch's types come back as Ketch types, and pylance stores them as extension types.
    assert DataType(got.schema.field("img").type).is_image()
    assert DataType(got.schema.field("fsi").type).is_fixed_shape_image()
    assert lance.dataset(uri).schema.field("fsi").type == expected.schema.field("fsi").type
    np.testing.assert_array_equal(
        got.column("t").combine_chunks().to_numpy_ndarray(),
        expected.column("t").combine_chunks().to_numpy_ndarray(),
    )
    # Image kernels still run on what was read back.
    widths = back.select(col("img").image.resize(3, 1).alias("r")).to_arrow()
    assert DataType(widths.schema.field("r").type).is_fixed_shape_image()


def test_read_a_dataset_pylance_wrote(tmp_path):
    uri = str(tmp_path / "plain.lance")
    table = pa.table({"a": list(range(10)), "s": [f"v{i}" for i in range(10)]})
    lance.write_dataset(table, uri, max_rows_per_file=3)
    df = ketch.read_lance(uri)
    assert df.to_arrow().equals(table)
    assert ketch.read_lance(uri).count_rows() == 10
    assert ketch.io.read_lance is ketch.read_lance


def test_missing_dataset_and_version_errors(tmp_path):
    with pytest.raises(KetchFileNotFoundError, match="no Lance dataset"):
        ketch.read_lance(str(tmp_path / "nothing"))
    uri = str(tmp_path / "one.lance")
    ketch.from_pydict({"a": [1]}).write_lance(uri)
    with pytest.raises(KetchValueError, match="version 5"):
        ketch.read_lance(uri, version=5)
    for bad in (-1, 2**70, True):  # -1 was a bare OverflowError from pylance
        with pytest.raises(KetchValueError, match="version must be a non-negative version number"):
            ketch.read_lance(uri, version=bad)
    with pytest.raises(ValueError, match="mode"):
        ketch.from_pydict({"a": [1]}).write_lance(uri, mode="upsert")


@pytest.mark.usefixtures("runner")
def test_create_append_overwrite_versions_and_asof(tmp_path):
    uri = str(tmp_path / "v.lance")
    first = ketch.from_pydict({"a": [1, 2, 3], "s": ["x", "y", "z"]})
    meta = first.write_lance(uri).to_pydict()
    assert meta["version"] == [1] and meta["num_rows_written"] == [3]
    assert set(meta) >= {"num_fragments", "num_deleted_rows", "num_small_files", "version"}
    with pytest.raises(KetchValueError, match="already exists"):
        first.write_lance(uri)
    created = dt.datetime.now()  # pylance compares naive local times

    meta = ketch.from_pydict({"a": [4], "s": ["w"]}).write_lance(uri, mode="append").to_pydict()
    assert meta["version"] == [2]
    assert sorted(ketch.read_lance(uri).to_pydict()["a"]) == [1, 2, 3, 4]

    meta = ketch.from_pydict({"a": [9], "s": ["o"]}).write_lance(uri, mode="overwrite").to_pydict()
    assert meta["version"] == [3] and meta["num_fragments"] == [1]
    assert ketch.read_lance(uri).to_pydict() == {"a": [9], "s": ["o"]}
    # Older versions stay readable, by number and by time.
    assert sorted(ketch.read_lance(uri, version=2).to_pydict()["a"]) == [1, 2, 3, 4]
    assert ketch.read_lance(uri, version=1).to_pydict() == {"a": [1, 2, 3], "s": ["x", "y", "z"]}
    assert ketch.read_lance(uri, asof=created).to_pydict() == {"a": [1, 2, 3], "s": ["x", "y", "z"]}
    assert [v["version"] for v in lance.dataset(uri).versions()] == [1, 2, 3]


def test_append_creates_when_missing_and_pins_the_version_read(tmp_path):
    uri = str(tmp_path / "a.lance")
    ketch.from_pydict({"a": [1]}).write_lance(uri, mode="append")
    df = ketch.read_lance(uri)  # version 1 pinned here
    ketch.from_pydict({"a": [2]}).write_lance(uri, mode="append")
    assert "Version = 1" in optimized_plan(df)
    assert df.to_pydict() == {"a": [1]}


def test_append_with_another_schema_names_both(tmp_path):
    uri = str(tmp_path / "m.lance")
    ketch.from_pydict({"a": [1], "s": ["x"]}).write_lance(uri)
    with pytest.raises(KetchValueError) as info:
        ketch.from_pydict({"a": [1.5], "s": ["x"]}).write_lance(uri, mode="append")
    text = str(info.value)
    assert "{a: double, s: string}" in text and "{a: int64, s: string}" in text
    assert [v["version"] for v in lance.dataset(uri).versions()] == [1]


def test_schema_argument_casts_before_writing(tmp_path):
    uri = str(tmp_path / "c.lance")
    schema = pa.schema([("a", pa.int32()), ("s", pa.large_string())])
    ketch.from_pydict({"a": [1, 2], "s": ["x", "y"]}).write_lance(uri, schema=schema)
    assert lance.dataset(uri).schema == schema
    assert ketch.read_lance(uri).to_arrow().equals(pa.table({"a": [1, 2], "s": ["x", "y"]}).cast(schema))
    with pytest.raises(KetchValueError, match="columns"):
        ketch.from_pydict({"a": [1]}).write_lance(str(tmp_path / "d.lance"), schema=schema)


@pytest.fixture
def numbers(tmp_path) -> tuple[str, pa.Table]:
    """10,000 rows in 10 fragments written by pylance: a, b (floats with NaN and nulls), s, pad."""
    n = 10_000
    a = np.arange(n)
    b = pa.array([float("nan") if i % 97 == 0 else (None if i % 89 == 0 else i / 10) for i in range(n)])
    table = pa.table(
        {
            "a": a,
            "b": b,
            "s": pa.array([["red", "green", "it's"][i % 3] for i in range(n)]),
            "pad": pa.array([("x" * 200) + str(i) for i in range(n)]),
        }
    )
    uri = str(tmp_path / "n.lance")
    lance.write_dataset(table, uri, max_rows_per_file=1000)
    return uri, table


def test_projection_pushdown_reads_fewer_bytes(numbers):
    uri, table = numbers
    all_columns = scan_stats(ketch.read_lance(uri))
    one = ketch.read_lance(uri).select("a")
    assert "Projection pushdown = [a]" in optimized_plan(one)
    one_column = scan_stats(one)
    assert one_column["rows_read"] == all_columns["rows_read"] == 10_000
    # "pad" alone is about 2 MB; the int64 column 80 kB.
    assert one_column["bytes_read"] < all_columns["bytes_read"] / 10
    assert ketch.read_lance(uri).select("a").to_arrow().column("a").equals(table.column("a"))


def test_limit_pushdown_reads_only_the_limit(numbers):
    uri, table = numbers
    df = ketch.read_lance(uri).limit(1500)
    plan = optimized_plan(df)
    assert "Limit pushdown = 1500" in plan
    assert "8 fragments past the limit not read" in plan
    stats = scan_stats(df)
    assert stats["rows_read"] == 1500 and stats["files_read"] == 2
    assert (
        ketch.read_lance(uri)
        .limit(1500)
        .select("a", "s")
        .to_arrow()
        .equals(table.slice(0, 1500).select(["a", "s"]))
    )


def test_filter_pushdown_reads_only_matching_rows(numbers):
    uri, table = numbers
    df = ketch.read_lance(uri).where((col("a") >= 2000) & (col("a") < 2100) & (col("s") == "it's"))
    plan = optimized_plan(df)
    assert "Lance filter = (`a` >= 2000) AND (`a` < 2100) AND (`s` = 'it''s')" in plan
    assert "Filter after the scan = None" in plan
    stats = scan_stats(df)
    expected = table.filter(
        pc.and_(
            pc.and_(pc.greater_equal(table["a"], 2000), pc.less(table["a"], 2100)),
            pc.equal(table["s"], "it's"),
        )
    )
    assert stats["rows_read"] == expected.num_rows == 34
    assert df.to_arrow().equals(expected)
    # With the whole filter in Lance, the limit goes there too.
    limited = ketch.read_lance(uri).where(col("s") == "red").limit(7)
    assert scan_stats(limited)["rows_read"] == 7
    assert limited.to_pydict()["a"] == [0, 3, 6, 9, 12, 15, 18]


def test_or_not_null_checks_translate(numbers):
    uri, table = numbers
    df = ketch.read_lance(uri).where(
        ((col("a") < 5) | (col("a") > 9995)) & ~(col("s") == "red") & col("b").not_null()
    )
    plan = optimized_plan(df)
    assert "Lance filter = ((`a` < 5) OR (`a` > 9995)) AND (NOT (`s` = 'red')) AND (`b` IS NOT NULL)" in plan
    got = df.to_pydict()["a"]
    a, s, b = table["a"].to_pylist(), table["s"].to_pylist(), table["b"].to_pylist()
    assert got == [
        i for i in range(10_000) if (a[i] < 5 or a[i] > 9995) and s[i] != "red" and b[i] is not None
    ]


def test_float_filters_are_checked_again_by_ketch(numbers):
    """Lance orders NaN above every number (`b > 990` keeps NaN there); Ketch drops NaN like
    Arrow, so the conjunct is pushed (fewer rows read) and evaluated again after the scan."""
    uri, table = numbers
    df = ketch.read_lance(uri).where(col("b") > 990.0)
    plan = optimized_plan(df)
    assert "Lance filter = (`b` > 990.0)" in plan
    assert "Filter after the scan = (col(b) > lit(990" in plan
    got = df.to_pydict()["b"]
    expected = [v for v in table["b"].to_pylist() if v is not None and v == v and v > 990.0]
    assert got == expected
    assert scan_stats(df)["rows_read"] < 10_000
    # Under a NOT, a float comparison stays with Ketch entirely (Lance would drop NaN rows).
    negated = ketch.read_lance(uri).where(~(col("b") > 5.0))
    assert "Lance filter = None" in optimized_plan(negated)
    want = [v for v in table["b"].to_pylist() if v is not None and not (v > 5.0)]
    got = negated.to_pydict()["b"]
    assert len(got) == len(want) and sum(1 for v in got if v != v) == sum(1 for v in want if v != v)


@pytest.mark.usefixtures("runner")
def test_filters_lance_cannot_take_still_give_the_right_rows(numbers):
    uri, table = numbers
    df = ketch.read_lance(uri).where(((col("a") * 3) < 600) & (col("s") == "green"))
    got = df.select("a").to_pydict()["a"]
    a, s = table["a"].to_pylist(), table["s"].to_pylist()
    assert got == [a[i] for i in range(10_000) if a[i] * 3 < 600 and s[i] == "green"]
    plan = optimized_plan(df)
    assert "Lance filter = (`s` = 'green')" in plan
    assert "Filter after the scan = " in plan and "Filter after the scan = None" not in plan


def test_dates_and_timestamps_translate(tmp_path):
    uri = str(tmp_path / "t.lance")
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(40)]
    times = [dt.datetime(2024, 1, 1, 12, 0, 0, 250_000) + dt.timedelta(hours=i) for i in range(40)]
    lance.write_dataset(pa.table({"d": days, "t": pa.array(times, pa.timestamp("us"))}), uri)
    df = ketch.read_lance(uri).where(
        (col("d") >= dt.date(2024, 2, 1)) & (col("t") < dt.datetime(2024, 1, 2, 23))
    )
    plan = optimized_plan(df)
    assert "date '2024-02-01'" in plan and "timestamp '2024-01-02 23:00:00.000000'" in plan
    assert df.to_pydict() == {"d": days[31:35], "t": times[31:35]}
    df = ketch.read_lance(uri).where(col("t") > dt.datetime(2024, 1, 2, 14, 0, 0, 250_000))
    assert scan_stats(df)["rows_read"] == 13
    assert df.to_pydict()["t"] == times[27:]


def test_fragments_become_merged_tasks_and_split_under_udfs(numbers):
    uri, table = numbers
    plain = optimized_plan(ketch.read_lance(uri))
    assert "Scan tasks = 1 (1 task from 10 fragments" in plain

    @ketch.func
    def plus_one(x: int) -> int:
        return x + 1

    one_fragment = str(os.path.dirname(uri)) + "/one.lance"
    lance.write_dataset(table.select(["a"]), one_fragment)
    df = ketch.read_lance(one_fragment).with_column("b", plus_one(col("a")))
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1):
        plan = optimized_plan(df)
        assert "split into" in plan
        assert df.num_partitions() > 1
        got = df.to_arrow()
    assert got.column("a").to_pylist() == list(range(10_000))
    assert got.column("b").to_pylist() == list(range(1, 10_001))


def test_plan_with_a_lance_scan_round_trips_serde(numbers):
    from ketch import _core

    uri, _ = numbers
    df = ketch.read_lance(uri).where(col("a") < 10).select("a", "s")
    optimized = df._plan.optimize(config=ketch.get_execution_config().to_native())
    back = _core.PyPlan.from_bytes(optimized.to_bytes())
    assert repr(back) == repr(optimized)


@pytest.mark.usefixtures("runner")
def test_small_udf_batches_do_not_make_small_fragments(tmp_path):
    @ketch.func(batch_size=2)
    def double(x: int) -> int:
        return 2 * x

    uri = str(tmp_path / "f.lance")
    df = ketch.from_pydict({"a": list(range(500))}).with_column("b", double(col("a")))
    meta = df.write_lance(uri).to_pydict()
    fragments = lance.dataset(uri).get_fragments()
    # One fragment per partition of the input (one here), not one per UDF batch.
    assert len(fragments) == meta["num_fragments"][0] == 1
    assert sorted(ketch.read_lance(uri).to_pydict()["b"]) == [2 * i for i in range(500)]
    uri2 = str(tmp_path / "g.lance")
    df.write_lance(uri2, max_rows_per_file=120)
    assert [f.count_rows() for f in lance.dataset(uri2).get_fragments()] == [120, 120, 120, 120, 20]


@pytest.mark.usefixtures("runner")
def test_failed_write_leaves_the_dataset_unchanged(tmp_path):
    uri = str(tmp_path / "atomic.lance")
    ketch.from_pydict({"a": [1, 2, 3]}).write_lance(uri)

    @ketch.func(batch_size=10)
    def fail_on_last(x: int) -> int:
        if x == 999:
            raise RuntimeError("boom on the last row")
        return x

    df = ketch.from_pydict({"a": list(range(1000))}).into_partitions(4)
    df = df.with_column("a", fail_on_last(col("a")))
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match="boom on the last row"):
            df.write_lance(uri, mode=mode, max_rows_per_file=100)
        ds = lance.dataset(uri)
        assert ds.version == 1
        assert [v["version"] for v in ds.versions()] == [1]
        assert ketch.read_lance(uri).to_pydict() == {"a": [1, 2, 3]}
    with pytest.raises(Exception, match="boom"):
        df.write_lance(str(tmp_path / "new.lance"))
    with pytest.raises(KetchFileNotFoundError):
        ketch.read_lance(str(tmp_path / "new.lance"))


@pytest.mark.usefixtures("runner")
def test_lance_scan_runs_distributed_with_pushdowns(numbers):
    uri, table = numbers
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1):
        df = ketch.read_lance(uri).where((col("a") * 2) > 5000).select("a", "s")
        assert df.num_partitions() == 10
        got = df.to_arrow()
    expected = table.filter(pc.greater(pc.multiply(table["a"], 2), 5000)).select(["a", "s"])
    assert got.sort_by("a").equals(expected)
    assert ketch.read_lance(uri).limit(3).to_pydict()["a"] == [0, 1, 2]


def test_empty_dataset_reads_as_an_empty_frame(tmp_path):
    uri = str(tmp_path / "e.lance")
    ketch.from_pydict({"a": [1]}).where(col("a") > 5).write_lance(uri)
    df = ketch.read_lance(uri)
    assert df.to_pydict() == {"a": []}
    assert df.schema() == pa.schema([("a", pa.int64())])


def test_write_and_read_on_s3_through_io_config(moto_s3):
    io_config, client = moto_s3
    client.create_bucket(Bucket="lance-bucket")
    uri = "s3://lance-bucket/data/t.lance"
    df = ketch.from_pydict({"a": list(range(50)), "s": [str(i) for i in range(50)]})
    meta = df.write_lance(uri, io_config=io_config, max_rows_per_file=20).to_pydict()
    assert meta["version"] == [1] and meta["num_fragments"] == [3]
    back = ketch.read_lance(uri, io_config=io_config).where(col("a") >= 45)
    assert back.to_pydict() == {"a": [45, 46, 47, 48, 49], "s": ["45", "46", "47", "48", "49"]}
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="lance-bucket")["Contents"]]
    assert any(k.startswith("data/t.lance/_versions/") for k in keys)


def test_is_in_and_between_translate_to_lance_sql(numbers):
    uri, table = numbers
    df = ketch.read_lance(uri).where(
        col("s").is_in(["it's", "green"]) & col("a").between(100, 130) & ~col("a").is_in([103, 104])
    )
    plan = optimized_plan(df)
    assert (
        "Lance filter = (`s` IN ('it''s', 'green')) AND (`a` >= 100) AND (`a` <= 130) "
        "AND (NOT (`a` IN (103, 104)))" in plan
    )
    assert "Filter after the scan = None" in plan
    stats = scan_stats(df)
    a, s = table["a"].to_pylist(), table["s"].to_pylist()
    want = [
        i
        for i in range(10_000)
        if s[i] in ("it's", "green") and 100 <= a[i] <= 130 and a[i] not in (103, 104)
    ]
    assert stats["rows_read"] == len(want)
    assert (
        ketch.read_lance(uri)
        .where(col("s").is_in(["it's", "green"]) & col("a").between(100, 130) & ~col("a").is_in([103, 104]))
        .to_pydict()["a"]
        == want
    )


def test_is_in_semantics_in_memory():
    df = ketch.from_pydict({"a": [1, None, 3, 4]})
    got = df.select(
        col("a").is_in([1, 4]).alias("x"), col("a").is_in([]).alias("y"), col("a").between(2, 4).alias("z")
    ).to_pydict()
    assert got == {
        "x": [True, None, False, True],
        "y": [False, False, False, False],
        "z": [False, None, True, True],
    }
    with pytest.raises(TypeError):
        col("a").is_in(3)


def test_default_fragment_rows_follow_the_row_width():
    from ketch.io.lance_write import default_rows_per_file

    emb = pa.schema([("id", pa.int64()), ("e", pa.list_(pa.float32(), 384))])
    assert default_rows_per_file(emb) == (256 << 20) // (8 + 384 * 4)
    assert default_rows_per_file(pa.schema([("id", pa.int64())])) == 1024 * 1024
    fixed = DataType.image("RGB", 224, 224).to_arrow()
    assert default_rows_per_file(pa.schema([("img", fixed)])) == (256 << 20) // (224 * 224 * 3)
