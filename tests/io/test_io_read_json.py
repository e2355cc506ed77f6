"""read_json (newline-delimited): type inference including nested lists and structs, nulls and
missing keys, schemas and hints, several files, pushdowns and limits. Values are checked against
pyarrow.json reading the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pajson
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import col

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")
ROWS = [
    {"i": 1, "f": 1.5, "b": True, "s": "x", "l": [1, 2], "st": {"p": 1, "q": "a"}, "n": None},
    {"i": 2, "f": 2.0, "b": False, "s": "y", "l": [], "st": {"p": 2, "q": None}, "n": None},
    {"i": None, "s": "z"},
    {"i": -4, "f": -0.25, "b": True, "s": "w", "l": [7], "st": {"p": None, "q": "d"}, "n": None},
]


def write_jsonl(path: Path, rows: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def rows_path(tmp_path) -> str:
    return write_jsonl(tmp_path / "rows.jsonl", ROWS)


def test_inferred_types(rows_path):
    schema = ketch.read_json(rows_path).schema()
    assert schema.names == ["i", "f", "b", "s", "l", "st", "n"]
    assert schema.field("i").type == pa.int64()
    assert schema.field("f").type == pa.float64()
    assert schema.field("b").type == pa.bool_()
    assert pa.types.is_string(schema.field("s").type) or pa.types.is_large_string(schema.field("s").type)
    assert pa.types.is_list(schema.field("l").type) or pa.types.is_large_list(schema.field("l").type)
    assert schema.field("l").type.value_type == pa.int64()
    st = schema.field("st").type
    assert pa.types.is_struct(st)
    assert [st.field(k).name for k in range(st.num_fields)] == ["p", "q"]
    assert st.field("p").type == pa.int64()
    assert schema.field("n").type == pa.null()


def test_values_with_nulls_and_missing_keys(rows_path):
    assert ketch.read_json(rows_path).to_pydict() == {
        "i": [1, 2, None, -4],
        "f": [1.5, 2.0, None, -0.25],
        "b": [True, False, None, True],
        "s": ["x", "y", "z", "w"],
        "l": [[1, 2], [], None, [7]],
        "st": [{"p": 1, "q": "a"}, {"p": 2, "q": None}, None, {"p": None, "q": "d"}],
        "n": [None, None, None, None],
    }


def test_matches_pyarrow_json(rows_path):
    got = ketch.read_json(rows_path).to_arrow()
    expected = pajson.read_json(rows_path)
    assert got.schema == expected.schema
    assert got.to_pydict() == expected.to_pydict()


def test_int_and_float_in_one_column_become_float(tmp_path):
    path = write_jsonl(tmp_path / "mix.jsonl", [{"a": 1}, {"a": 2.5}, {"a": None}, {}])
    table = ketch.read_json(path).to_arrow()
    assert table.schema.field("a").type == pa.float64()
    assert table.column("a").to_pylist() == [1.0, 2.5, None, None]
    assert table.equals(pajson.read_json(path))


def test_key_missing_from_early_lines_is_null_there(tmp_path):
    path = write_jsonl(tmp_path / "late.jsonl", [{"a": 1}, {"a": 2}, {"a": 3, "b": "late"}])
    assert ketch.read_json(path).to_pydict() == {"a": [1, 2, 3], "b": [None, None, "late"]}


def test_nested_struct_field_access_and_list_select(rows_path):
    df = ketch.read_json(rows_path).select("l", "st")
    assert "Projection pushdown = [l, st]" in optimized_plan(df)
    got = df.to_pydict()
    assert got["l"] == [[1, 2], [], None, [7]]
    assert [None if v is None else v["q"] for v in got["st"]] == ["a", None, None, "d"]


def test_schema_hints_numeric(rows_path):
    df = ketch.read_json(
        rows_path, schema_hints={"i": ketch.DataType.float64(), "f": ketch.DataType.float32()}
    )
    table = df.to_arrow()
    assert table.schema.field("i").type == pa.float64()
    assert table.schema.field("f").type == pa.float32()
    assert table.schema.field("b").type == pa.bool_()  # not hinted
    assert table.column("i").to_pylist() == [1.0, 2.0, None, -4.0]
    assert table.column("f").to_pylist() == [1.5, 2.0, None, -0.25]
    narrow = ketch.read_json(rows_path, schema_hints={"i": ketch.DataType.int32()}).to_arrow()
    assert narrow.schema.field("i").type == pa.int32()
    assert narrow.column("i").to_pylist() == [1, 2, None, -4]


def test_schema_hint_to_string_casts_numbers_and_bools(rows_path):
    df = ketch.read_json(rows_path, schema_hints={"i": ketch.DataType.string(), "b": ketch.DataType.string()})
    got = df.to_pydict()
    assert got["i"] == ["1", "2", None, "-4"]
    assert got["b"] == ["true", "false", None, "true"]


def test_schema_without_inference_selects_and_orders_fields(rows_path):
    df = ketch.read_json(
        rows_path,
        infer_schema=False,
        schema={"s": ketch.DataType.string(), "i": ketch.DataType.int32()},
    )
    table = df.to_arrow()
    assert table.schema.names == ["s", "i"]
    assert table.schema.field("i").type == pa.int32()
    assert table.to_pydict() == {"s": ["x", "y", "z", "w"], "i": [1, 2, None, -4]}


def test_multiple_files_in_list_order_with_schema_of_first(tmp_path):
    first = write_jsonl(tmp_path / "b.jsonl", [{"i": 10, "s": "p", "extra": 1}])
    second = write_jsonl(tmp_path / "a.jsonl", [{"i": 20, "s": "q"}, {"i": 30, "s": "r", "other": 5}])
    got = ketch.read_json([first, second]).to_pydict()
    # Keys of later files that the first file lacks are ignored; missing ones are null.
    assert got == {"i": [10, 20, 30], "s": ["p", "q", "r"], "extra": [1, None, None]}


def test_directory_and_glob(tmp_path):
    root = tmp_path / "data"
    write_jsonl(root / "2.jsonl", [{"v": 2}])
    write_jsonl(root / "1.json", [{"v": 1}])
    write_jsonl(root / "sub" / "3.ndjson", [{"v": 3}])
    (root / "readme.txt").write_text("not json\n")
    assert ketch.read_json(str(root)).to_pydict() == {"v": [1, 2, 3]}
    assert ketch.read_json(str(root / "*.jsonl")).to_pydict() == {"v": [2]}
    # "**/" also matches no directory at all.
    assert ketch.read_json(str(root / "**" / "*.*json")).to_pydict() == {"v": [1, 3]}
    assert ketch.read_json(str(root / "*" / "*.ndjson")).to_pydict() == {"v": [3]}


def test_filter_and_select_pushdown(rows_path):
    df = ketch.read_json(rows_path).where(col("i") >= 2).select("s", "l")
    plan = optimized_plan(df)
    assert "ScanJSON" in plan
    assert "Filter pushdown = (col(i) >= lit(2))" in plan
    assert "Projection pushdown = [s, l]" in plan
    assert "* Filter:" not in plan
    assert df.to_pydict() == {"s": ["y"], "l": [[]]}


def test_filter_on_nulls_and_booleans(rows_path):
    assert ketch.read_json(rows_path).where(col("i").is_null()).to_pydict()["s"] == ["z"]
    assert ketch.read_json(rows_path).where(col("b")).to_pydict()["s"] == ["x", "w"]


def test_filter_matches_pandas(tmp_path):
    rows = [{"k": i, "v": (i * 37) % 101, "name": f"n{i % 7}"} for i in range(300)]
    path = write_jsonl(tmp_path / "nums.jsonl", rows)
    expected = pajson.read_json(path).to_pandas()
    expected = expected[(expected.v > 50) & (expected.name != "n3")]
    df = ketch.read_json(path).where((col("v") > 50) & (col("name") != "n3")).select("k")
    assert df.to_pydict()["k"] == expected.k.tolist()


def test_limit(rows_path):
    df = ketch.read_json(rows_path).limit(2)
    assert "Limit pushdown = 2" in optimized_plan(df)
    assert df.to_pydict()["s"] == ["x", "y"]
    assert ketch.read_json(rows_path).limit(0).to_pydict()["s"] == []
    assert ketch.read_json(rows_path).limit(50).to_pydict()["s"] == ["x", "y", "z", "w"]


def test_limit_across_files(tmp_path):
    paths = [write_jsonl(tmp_path / f"{k}.jsonl", [{"v": k * 10 + j} for j in range(3)]) for k in range(4)]
    assert ketch.read_json(paths).limit(5).to_pydict()["v"] == [0, 1, 2, 10, 11]
    assert ketch.read_json(paths).where(col("v") > 11).limit(3).to_pydict()["v"] == [12, 20, 21]


def test_scan_metrics_and_count(rows_path):
    df = ketch.read_json(rows_path).where(col("s") != "z")
    stats = scan_stats(df)
    assert stats["scan_tasks"] == 1
    assert stats["files_read"] == 1
    assert stats["files_pruned"] == 0
    assert stats["rows_read"] == 4
    assert stats["bytes_read"] == Path(rows_path).stat().st_size
    assert df.to_pydict()["s"] == ["x", "y", "w"]
    assert ketch.read_json(rows_path).count_rows() == 4
