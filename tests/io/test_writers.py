"""write_parquet, write_csv and write_json: round trips through read_*, the NDJSON encoding, hive
partitioning (escaped values, nulls, expressions), Parquet compression, write modes, atomicity under a
failing query (local and S3, no staging or ``.tmp`` left), S3 through the moto server, and error
messages (path and OS reason; never a credential). Tests taking ``runner`` run on both runners."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import KetchIOError, KetchTypeError, UDFError
from ketch.io import IOConfig, S3Config

FORMATS = ["parquet", "csv", "json"]
READ = {"parquet": ketch.read_parquet, "csv": ketch.read_csv, "json": ketch.read_json}


def _write(df: Any, fmt: str, root: Any, **kwargs: Any) -> Any:
    return getattr(df, f"write_{fmt}")(root if isinstance(root, str) else str(root), **kwargs)


def _files(root: Path) -> list[str]:
    """Every file and directory below ``root`` (hidden ones too), relative, sorted."""
    out = []
    for directory, dirs, files in os.walk(root):
        rel = os.path.relpath(directory, root)
        out += [os.path.normpath(os.path.join(rel, name)) for name in dirs + files]
    return sorted(out)


def _rows(table: pa.Table, key: str = "id") -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda row: row[key])


def _flat_table() -> pa.Table:
    """Columns every format holds: ints, floats, strings (quotes, commas, newlines, non-ASCII),
    bools, nulls."""
    return pa.table(
        {
            "id": pa.array(range(6), pa.int64()),
            "x": pa.array([1.5, -2.25, None, 1e300, 0.1, 3.0], pa.float64()),
            "s": pa.array(["plain", 'a "quoted", comma', "two\nlines", None, "héllo ☃", ""], pa.string()),
            "b": pa.array([True, False, None, True, False, True], pa.bool_()),
        }
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_round_trips_through_its_reader(runner: str, fmt: str, tmp_path: Path) -> None:
    table = _flat_table()
    written = _write(ketch.from_arrow(table).into_partitions(2), fmt, tmp_path / "out")
    assert written.column_names == ["path"]
    paths = written.to_pydict()["path"]
    assert len(paths) == 2 and all(p.endswith(f".{fmt}") and os.path.isfile(p) for p in paths)
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.path.basename(p) for p in paths)
    back = READ[fmt](str(tmp_path / "out")).to_arrow()
    expected = table.to_pylist()
    if fmt == "csv":  # CSV has no null string: a null is written empty and read back as "" (Daft too)
        expected = [{**row, "s": row["s"] or ""} for row in expected]
    assert _rows(back) == expected


def test_json_lines_escape_strings_and_encode_nested_values_dates_and_timestamps(tmp_path: Path) -> None:
    ts = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)
    table = pa.table(
        {
            "s": pa.array(['q"b\\s', "nl\ncr\rtab\tbell\x07nul\x00", "日本 ☃ é", None]),
            "f": pa.array([float("nan"), float("inf"), 0.1, 2.0]),
            "f32": pa.array([0.1, None, 1.5, -0.0], pa.float32()),
            "l": pa.array([[1, None], [], None, [3]], pa.list_(pa.int64())),
            "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 4, "b": None}]),
            "t": pa.array([ts, None, ts, ts], pa.timestamp("us")),
            "tz": pa.array([ts, ts, None, ts], pa.timestamp("ms", tz="UTC")),
            "d": pa.array([datetime.date(2024, 1, 2), None, datetime.date(1969, 12, 31), None], pa.date32()),
            "u": pa.array([2**64 - 1, 0, None, 7], pa.uint64()),
        }
    )
    (path,) = ketch.from_arrow(table).write_json(str(tmp_path)).to_pydict()["path"]
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == 5  # one line per row, each ended by "\n"
    rows = [json.loads(line) for line in lines[:-1]]
    assert [r["s"] for r in rows] == table.column("s").to_pylist()  # escapes decode to the same text
    assert "\\u0007" in text and "\\u0000" in text and "日本 ☃ é" in text  # UTF-8 kept, controls escaped
    assert [r["f"] for r in rows] == [None, None, 0.1, 2.0]  # JSON has no NaN / Infinity
    assert lines[3].startswith('{"s":null,"f":2.0,"f32":-0.0,')  # a float stays a float
    assert [r["f32"] for r in rows] == [0.1, None, 1.5, -0.0]  # shortest form of the float32
    assert [r["l"] for r in rows] == [[1, None], [], None, [3]]
    assert [r["st"] for r in rows] == [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 4, "b": None}]
    assert [r["t"] for r in rows] == [
        "2024-05-06T07:08:09.123456",
        None,
        "2024-05-06T07:08:09.123456",
    ] * 1 + ["2024-05-06T07:08:09.123456"]
    assert rows[0]["tz"] == "2024-05-06T07:08:09.123Z"
    assert [r["d"] for r in rows] == ["2024-01-02", None, "1969-12-31", None]
    assert [r["u"] for r in rows] == [2**64 - 1, 0, None, 7]
    # Read back by Ketch's JSON reader (timestamps with a schema hint: ISO strings with fractions
    # are not inferred as timestamps by Arrow's reader).
    hints = {"t": ketch.DataType.from_arrow_type(pa.timestamp("us"))}
    back = ketch.read_json(path, schema_hints=hints).to_arrow()
    assert back.column("s").to_pylist() == table.column("s").to_pylist()
    assert back.column("t").to_pylist() == table.column("t").to_pylist()
    assert back.column("l").to_pylist() == table.column("l").to_pylist()
    assert back.column("st").to_pylist() == table.column("st").to_pylist()


def test_json_refuses_binary_and_csv_refuses_nested_columns_naming_them(tmp_path: Path) -> None:
    blobs = ketch.from_pydict({"id": [1], "payload": [b"\x00\xff"]})
    with pytest.raises(KetchTypeError, match="write_json: column 'payload' has type binary"):
        blobs.write_json(str(tmp_path / "j"))
    nested = ketch.from_pydict({"id": [1], "tags": [["a", "b"]]})
    with pytest.raises(KetchTypeError, match="write_csv: column 'tags' has type list<item: string>"):
        nested.write_csv(str(tmp_path / "c"))
    assert not (tmp_path / "j").exists() or _files(tmp_path / "j") == []
    assert not (tmp_path / "c").exists() or _files(tmp_path / "c") == []
    # A partition column is left out of the files: binary rows are fine in JSON when not written.
    assert nested.write_json(str(tmp_path / "ok")).to_pydict()["path"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_partitioned_writes_round_trip_through_hive_partitioning(
    runner: str, fmt: str, tmp_path: Path
) -> None:
    table = pa.table(
        {
            "id": pa.array(range(12), pa.int64()),
            "year": pa.array([2023, 2024, None] * 4, pa.int64()),
            "kind": pa.array(["a", "b"] * 6, pa.string()),
            "v": pa.array([i * 0.5 for i in range(12)], pa.float64()),
        }
    )
    out = tmp_path / fmt
    written = _write(ketch.from_arrow(table).into_partitions(2), fmt, out, partition_cols=["year", "kind"])
    assert written.column_names == ["path", "year", "kind"]
    assert written.schema().field("year").type == pa.int64()
    result = written.to_pydict()
    for path, year, kind in zip(result["path"], result["year"], result["kind"], strict=True):
        shown = "__HIVE_DEFAULT_PARTITION__" if year is None else str(year)
        assert os.path.dirname(path) == str(out / f"year={shown}" / f"kind={kind}")
    assert {(y, k) for y, k in zip(result["year"], result["kind"], strict=True)} == {
        (y, k) for y in (2023, 2024, None) for k in ("a", "b")
    }
    # The partition columns are in the directory names, not in the files.
    some_file = result["path"][0]
    inner = READ[fmt](some_file).to_arrow()
    assert inner.column_names == ["id", "v"]
    # (CSV: Arrow's writer puts 1.0 as "1", and the reader infers types from the first file.)
    hints = {"v": ketch.DataType.from_arrow_type(pa.float64())} if fmt == "csv" else None
    back = READ[fmt](str(out), hive_partitioning=True, schema_hints=hints).to_arrow()
    assert _rows(back.select(["id", "year", "kind", "v"])) == table.to_pylist()


def test_partition_values_are_escaped_and_never_leave_the_root(tmp_path: Path) -> None:
    hostile = [
        "../../etc",
        "a/b",
        "..",
        ".",
        "",
        None,
        "100%",
        "x=y",
        "sp ace",
        "back\\slash",
        "é/ü",
        "\x00nul",
    ]
    table = pa.table({"id": pa.array(range(len(hostile)), pa.int64()), "p": pa.array(hostile, pa.string())})
    root = tmp_path / "data"
    before = sorted(os.listdir(tmp_path))
    written = ketch.from_arrow(table).write_parquet(str(root), partition_cols=["p"]).to_pydict()
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["data"])  # nothing beside the root
    dirs = {os.path.relpath(os.path.dirname(p), root) for p in written["path"]}
    assert all(os.sep not in d and d.startswith("p=") for d in dirs)  # one level, inside the root
    assert {"p=..%2F..%2Fetc", "p=a%2Fb", "p=..", "p=.", "p=__HIVE_DEFAULT_PARTITION__", "p=100%25"} <= dirs
    assert "p=%C3%A9%2F%C3%BC" in dirs and "p=%00nul" in dirs and "p=back%5Cslash" in dirs
    for path in written["path"]:
        assert os.path.realpath(path).startswith(str(root.resolve()) + os.sep)
    back = ketch.read_parquet(str(root), hive_partitioning=True).to_arrow()
    expected = {i: (v if v != "" else None) for i, v in enumerate(hostile)}  # "" reads back as null (Hive)
    assert {r["id"]: r["p"] for r in back.to_pylist()} == expected
    assert written["p"] == [v for v in hostile]  # the returned values are the real ones


def test_partition_cols_take_expressions_and_reject_unusable_columns(tmp_path: Path) -> None:
    df = ketch.from_pydict({"id": list(range(6)), "tags": [["a"]] * 6})
    written = df.write_json(str(tmp_path / "e"), partition_cols=[(col("id") > 2).alias("big")]).to_pydict()
    assert sorted(set(written["big"])) == [False, True]
    back = ketch.read_json(str(tmp_path / "e"), hive_partitioning=True).to_pydict()
    # Booleans are written as Arrow casts them ("true"/"false"); the reader keeps them strings.
    assert sorted(zip(back["id"], back["big"], strict=True)) == [
        (i, "true" if i > 2 else "false") for i in range(6)
    ]
    with pytest.raises(ketch.errors.KetchValueError, match="partition column 'tags' has type list"):
        df.write_parquet(str(tmp_path / "l"), partition_cols=["tags"])
    with pytest.raises(ketch.errors.ColumnNotFoundError, match="partition column 'nope' not found"):
        df.write_parquet(str(tmp_path / "n"), partition_cols=["nope"])
    with pytest.raises(ketch.errors.KetchValueError, match="every column is a partition column"):
        df.select("id").write_parquet(str(tmp_path / "all"), partition_cols=["id"])


def test_many_partition_values_bound_the_open_files_and_keep_every_row(tmp_path: Path) -> None:
    n = 2000  # 500 distinct values, over several morsels: past 128 open files the oldest is finished
    table = pa.table(
        {"id": pa.array(range(n), pa.int64()), "k": pa.array([i % 500 for i in range(n)], pa.int64())}
    )
    with ketch.execution_config_ctx(morsel_size_rows=400):
        written = ketch.from_arrow(table).write_parquet(str(tmp_path), partition_cols=["k"]).to_pydict()
    assert len(set(written["k"])) == 500 and len(written["path"]) > 500  # values reopened after eviction
    assert len(os.listdir(tmp_path)) == 500
    back = ketch.read_parquet(str(tmp_path), hive_partitioning=True).to_arrow()
    assert sorted((r["id"], r["k"]) for r in back.to_pylist()) == [(i, i % 500) for i in range(n)]


@pytest.mark.parametrize("codec", ["snappy", "zstd", "gzip", "lz4", "none", "brotli"])
def test_write_parquet_compression_is_in_the_file_metadata(codec: str, tmp_path: Path) -> None:
    table = pa.table(
        {"id": pa.array(range(1000), pa.int64()), "s": pa.array([f"v{i % 7}" for i in range(1000)])}
    )
    kwargs = {} if codec == "snappy" else {"compression": codec}
    (path,) = ketch.from_arrow(table).write_parquet(str(tmp_path), **kwargs).to_pydict()["path"]
    meta = pq.ParquetFile(path).metadata
    expected = {"none": "UNCOMPRESSED", "lz4": "LZ4"}.get(codec, codec.upper())
    codecs = {meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
    assert codecs == {expected} or (codec == "lz4" and codecs == {"LZ4_RAW"})
    assert pq.read_table(path).equals(table)


def test_write_modes(runner: str, tmp_path: Path) -> None:
    out = tmp_path / "t"
    first = ketch.from_pydict({"id": [1, 2], "p": ["a", "b"]}).write_csv(str(out), partition_cols=["p"])
    second = ketch.from_pydict({"id": [3], "p": ["a"]}).write_csv(str(out), partition_cols=["p"])
    # append: new unique names, nothing replaced
    assert set(first.to_pydict()["path"]).isdisjoint(second.to_pydict()["path"])
    assert sorted(ketch.read_csv(str(out)).to_pydict()["id"]) == [1, 2, 3]
    # overwrite-partitions: only p=a is replaced; p=b stays
    third = ketch.from_pydict({"id": [4], "p": ["a"]}).write_csv(
        str(out), write_mode="overwrite-partitions", partition_cols=["p"]
    )
    back = ketch.read_csv(str(out), hive_partitioning=True).to_pydict()
    assert sorted(zip(back["id"], back["p"], strict=True)) == [(2, "b"), (4, "a")]
    assert len(os.listdir(out / "p=a")) == 1 and third.to_pydict()["p"] == ["a"]
    # overwrite: everything else goes, empty partition directories too
    fourth = ketch.from_pydict({"id": [5], "p": ["c"]}).write_csv(
        str(out), write_mode="overwrite", partition_cols=["p"]
    )
    assert _files(out) == ["p=c", os.path.join("p=c", os.path.basename(fourth.to_pydict()["path"][0]))]
    with pytest.raises(ValueError, match="Partition columns must be specified"):
        ketch.from_pydict({"id": [1]}).write_csv(str(out), write_mode="overwrite-partitions")
    with pytest.raises(ValueError, match="upsert is unsupported"):
        ketch.from_pydict({"id": [1]}).write_json(str(out), write_mode="upsert")


@ketch.func(return_dtype=pa.int64())
def _fail_on_last(x: int) -> int:
    if x == 399:
        raise ValueError("row 399 is bad")
    return x


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("partitioned", [False, True])
def test_a_failing_query_leaves_no_file_and_keeps_the_old_dataset(
    runner: str, fmt: str, partitioned: bool, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    old = _write(ketch.from_pydict({"id": [-1], "p": [0]}), fmt, out).to_pydict()["path"]
    before = _files(out)
    df = ketch.from_pydict({"id": list(range(400)), "p": [i % 3 for i in range(400)]}).into_partitions(4)
    failing = df.with_column("y", _fail_on_last(col("id")))
    kwargs: dict[str, Any] = {"partition_cols": ["p"]} if partitioned else {}
    with pytest.raises(UDFError, match="row 399 is bad"):
        _write(failing, fmt, out, write_mode="overwrite", **kwargs)
    assert _files(out) == before  # no new file, no .tmp, no staging directory, old file kept
    assert os.path.isfile(old[0])


def test_empty_results(tmp_path: Path) -> None:
    empty = ketch.from_pydict({"id": [1, 2], "p": ["a", "b"]}).where(col("id") > 5)
    (path,) = empty.write_parquet(str(tmp_path / "flat")).to_pydict()["path"]
    assert pq.read_table(path).schema.names == ["id", "p"]  # one empty file keeps the schema
    none = empty.write_json(str(tmp_path / "parts"), partition_cols=["p"])
    assert none.column_names == ["path", "p"] and none.to_pydict() == {"path": [], "p": []}


def test_writes_below_a_file_name_the_path_and_the_os_reason(runner: str, tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    df = ketch.from_pydict({"id": [1], "p": ["a"]})
    for fmt in FORMATS:
        with pytest.raises(KetchIOError) as info:
            _write(df, fmt, blocker / "out")
        message = str(info.value)
        assert message.startswith(f"write_{fmt}: cannot ")
        assert str(blocker / "out") in message and message.endswith("Not a directory")
    assert os.listdir(tmp_path) == ["file.txt"]


# -- S3 (moto's server on loopback) ---------------------------------------------------------------


def _objects(client: Any, bucket: str) -> list[str]:
    """The bucket's objects, without the empty "dir/" markers Arrow's S3 filesystem leaves when it
    deletes the last object under a prefix (readers never list those as files)."""
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    assert all(o["Size"] == 0 for o in listed if o["Key"].endswith("/"))
    return sorted(o["Key"] for o in listed if not o["Key"].endswith("/"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_s3_writes_round_trip_partitioned_and_leave_no_staging(
    runner: str, fmt: str, moto_s3: Any, request: pytest.FixtureRequest
) -> None:
    io_config, client = moto_s3
    bucket = f"writers-{fmt}-{request.node.callspec.params['runner']}"
    client.create_bucket(Bucket=bucket)
    table = pa.table({"id": pa.array(range(9), pa.int64()), "p": pa.array(["x", "y/z", None] * 3)})
    root = f"s3://{bucket}/data"
    written = _write(
        ketch.from_arrow(table).into_partitions(3), fmt, root, partition_cols=["p"], io_config=io_config
    )
    result = written.to_pydict()
    assert all(p.startswith(f"{root}/p=") for p in result["path"])
    keys = _objects(client, bucket)
    assert keys == sorted(p[len(f"s3://{bucket}/") :] for p in result["path"])  # no staging objects left
    assert {k.split("/")[1] for k in keys} == {"p=x", "p=y%2Fz", "p=__HIVE_DEFAULT_PARTITION__"}
    back = READ[fmt](f"{root}/", io_config=io_config, hive_partitioning=True).to_arrow()
    assert _rows(back.select(["id", "p"])) == table.to_pylist()
    # A failing overwrite leaves the objects as they were.
    failing = (
        ketch.from_pydict({"id": list(range(400))})
        .into_partitions(4)
        .with_column("y", _fail_on_last(col("id")))
    )
    with pytest.raises(UDFError):
        _write(failing, fmt, root, write_mode="overwrite", io_config=io_config)
    assert _objects(client, bucket) == keys
    # An overwrite that succeeds replaces them.
    fresh = _write(ketch.from_pydict({"id": [100]}), fmt, root, write_mode="overwrite", io_config=io_config)
    assert _objects(client, bucket) == [fresh.to_pydict()["path"][0][len(f"s3://{bucket}/") :]]


def test_s3_write_errors_never_show_credentials(moto_s3: Any) -> None:
    io_config, _ = moto_s3
    secret = "wr1ter-Secret-Access-Key-42"
    config = IOConfig(
        s3=S3Config(
            region_name="us-east-1",
            endpoint_url=io_config.s3.endpoint_url,
            key_id="AKIAWRITERKEYID42",
            access_key=secret,
            session_token="wr1ter-session-token-42",
        )
    )
    df = ketch.from_pydict({"id": [1, 2]})
    with pytest.raises(KetchIOError) as info:
        df.write_parquet("s3://no-such-writers-bucket/out", io_config=config)
    message = str(info.value)
    assert message.startswith("write_parquet: cannot write 's3://no-such-writers-bucket/out/")
    assert ".ketch-staging-" not in message  # the user's destination, not the staging prefix
    for s in (secret, "AKIAWRITERKEYID42", "wr1ter-session-token-42"):
        assert s not in message and s not in repr(config)


def test_written_paths_come_back_as_a_materialized_dataframe(tmp_path: Path) -> None:
    written = ketch.from_pydict({"id": [1, 2, 3]}).into_partitions(3).write_json(str(tmp_path))
    assert "(Showing first 3 of 3 rows)" in repr(written)  # materialized: rows shown
    assert written.count_rows() == 3 and written.column_names == ["path"]
    assert len(written) == 3
