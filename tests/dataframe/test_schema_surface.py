"""Daft's schema, type names, context and exception names: ``df.schema()`` is a ketch.Schema,
types print as Daft prints them whichever reader made a column, ``ketch.context.get_context()``
and every knob of Daft's ``set_execution_config``, ``ketch.exceptions`` / ``ketch.errors``."""

from __future__ import annotations

import pickle
import re
import warnings

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import DataType, col
from ketch.context import ExecutionConfig


# -- Schema ----------------------------------------------------------------------------------------
def test_schema_is_daft_like():
    df = ketch.from_pydict({"x": [1, 2], "s": ["a", "b"], "f": [[1.0], [2.0]]})
    schema = df.schema()
    assert isinstance(schema, ketch.Schema)
    assert schema["x"].dtype == DataType.int64() and schema["x"].name == "x"
    assert schema.column_names() == ["x", "s", "f"]
    assert len(schema) == 3
    names = [(f.name, str(f.dtype)) for f in schema]
    assert names == [("x", "Int64"), ("s", "String"), ("f", "List[Float64]")]
    arrow = schema.to_pyarrow_schema()
    assert isinstance(arrow, pa.Schema) and arrow.names == ["x", "s", "f"]
    assert arrow.field("x").type == pa.int64()
    assert schema == ketch.from_pydict({"x": [9], "s": ["z"], "f": [[0.0]]}).schema()
    assert schema != df.select("x").schema()
    assert pickle.loads(pickle.dumps(schema)) == schema
    assert "x" in schema and "nope" not in schema
    with pytest.raises(ValueError, match="nope was not found in Schema"):
        schema["nope"]


def test_schema_repr_is_daft_table():
    text = repr(ketch.from_pydict({"x": [1], "s": ["a"]}).schema())
    assert text.splitlines() == [  # Daft 0.7.26's text, byte for byte (and a trailing newline)
        "╭─────────────┬────────╮",
        "│ Column Name ┆ DType  │",
        "╞═════════════╪════════╡",
        "│ x           ┆ Int64  │",
        "├╌╌╌╌╌╌╌╌╌╌╌╌╌┼╌╌╌╌╌╌╌╌┤",
        "│ s           ┆ String │",
        "╰─────────────┴────────╯",
    ]
    assert text.endswith("╯\n")


def test_schema_constructors_and_union():
    a = ketch.Schema.from_pydict({"x": DataType.int64()})
    b = ketch.Schema.from_pyarrow_schema(pa.schema([("y", pa.string())]))
    assert a.union(b).column_names() == ["x", "y"]
    with pytest.raises(ValueError, match="both"):
        a.union(a)


# -- type names ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "name"),
    [
        (DataType.int8(), "Int8"),
        (DataType.uint64(), "UInt64"),
        (DataType.float32(), "Float32"),
        (DataType.bool(), "Bool"),
        (DataType.string(), "String"),
        (DataType.binary(), "Binary"),
        (DataType.list(DataType.int64()), "List[Int64]"),
        (DataType.image("RGB", 224, 224), "Image[RGB; 224 x 224]"),
        (DataType.image("L"), "Image[L]"),
        (DataType.image(), "Image[MIXED]"),
        (DataType.embedding(DataType.float32(), 384), "Embedding[Float32; 384]"),
        (DataType.tensor(DataType.float32()), "Tensor[Float32]"),
        (DataType.tensor(DataType.uint8(), (2, 3)), "Tensor[UInt8; [2, 3]]"),
        (DataType.python(), "Python"),
        (DataType(pa.struct([("a", pa.int64()), ("b", pa.string())])), "Struct[a: Int64, b: String]"),
        (DataType(pa.map_(pa.string(), pa.int32())), "Map[String: Int32]"),
        (DataType(pa.timestamp("us", "UTC")), "Timestamp[us; UTC]"),
        (DataType(pa.date32()), "Date"),
        (DataType(pa.null()), "Null"),
    ],
)
def test_type_names_as_daft_prints_them(dtype, name):
    assert repr(dtype) == name and str(dtype) == name


def test_type_names_do_not_depend_on_the_reader(tmp_path):
    table = pa.table({"i": [1, 2], "s": ["a", "b"], "f": [0.5, 1.5]})
    pq.write_table(table, tmp_path / "t.parquet")
    pacsv.write_csv(table, tmp_path / "t.csv")
    (tmp_path / "t.jsonl").write_text('{"i": 1, "s": "a", "f": 0.5}\n{"i": 2, "s": "b", "f": 1.5}\n')
    frames = [
        ketch.read_parquet(str(tmp_path / "t.parquet")),
        ketch.read_csv(str(tmp_path / "t.csv")),
        ketch.read_json(str(tmp_path / "t.jsonl")),
        ketch.from_arrow(table),
        ketch.from_pydict(table.to_pydict()),
    ]
    for df in frames:
        assert {f.name: str(f.dtype) for f in df.schema()} == {"i": "Int64", "s": "String", "f": "Float64"}


# -- context and execution knobs --------------------------------------------------------------------
def test_get_context_holds_the_execution_config():
    ctx = ketch.context.get_context()
    assert ctx.daft_execution_config == ketch.get_execution_config()
    with ketch.execution_config_ctx(default_morsel_size=4096):
        assert ctx.daft_execution_config.morsel_size_rows == 4096
        assert ctx.daft_execution_config.default_morsel_size == 4096
    assert ctx.daft_execution_config.morsel_size_rows == ExecutionConfig().morsel_size_rows


def test_default_morsel_size_is_honoured():
    with ketch.execution_config_ctx(default_morsel_size=7):
        df = ketch.from_pydict({"x": list(range(20))})
        batches = list(df.iter_partitions())
        assert sum(len(b) for b in batches) == 20
        assert ketch.get_execution_config().to_native().morsel_size_rows == 7


# Every keyword of Daft's set_execution_config (current and recent releases).
DAFT_KNOBS = {
    "enable_scan_task_split_and_merge": False,
    "scan_tasks_min_size_bytes": 1024,
    "scan_tasks_max_size_bytes": 4096,
    "max_sources_per_scan_task": 3,
    "broadcast_join_size_bytes_threshold": 1,
    "parquet_split_row_groups_max_files": 2,
    "hash_join_partition_size_leniency": 0.7,
    "sample_size_for_sort": 5,
    "num_preview_rows": 4,
    "parquet_target_filesize": 1,
    "parquet_target_row_group_size": 1,
    "parquet_inflation_factor": 1.0,
    "csv_target_filesize": 1,
    "csv_inflation_factor": 1.0,
    "json_target_filesize": 1,
    "json_inflation_factor": 1.0,
    "text_inflation_factor": 1.0,
    "shuffle_aggregation_default_partitions": 4,
    "partial_aggregation_threshold": 4,
    "high_cardinality_aggregation_threshold": 0.5,
    "read_sql_partition_size_bytes": 1,
    "default_morsel_size": 1000,
    "shuffle_algorithm": "flight",
    "pre_shuffle_merge": "always",
    "pre_shuffle_merge_threshold": 1 << 20,
    "pre_shuffle_merge_partition_threshold": 50,
    "scantask_max_parallel": 2,
    "native_parquet_writer": False,
    "min_cpu_per_task": 1.0,
    "actor_udf_ready_timeout": 30,
    "worker_startup_timeout": 30,
    "maintain_order": False,
    "enable_dynamic_batching": True,
    "dynamic_batching_strategy": "auto",
    "flight_shuffle_dirs": ["/tmp/x"],
    "flight_shuffle_size_threshold_bytes": 1,
    "flight_shuffle_compression": "zstd",
    "flight_shuffle_seal": "never",
    "flight_shuffle_seal_partition_threshold": 10,
    "enable_multi_glob_path_tasks": True,
}


def test_every_daft_knob_is_accepted_honoured_or_warned_once():
    from ketch import execution_knobs

    execution_knobs._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ketch.execution_config_ctx(**DAFT_KNOBS):
            config = ketch.get_execution_config()
            assert config.morsel_size_rows == 1000
            assert config.shuffle_algorithm == "flight_shuffle"  # explicit shuffle_algorithm wins
            assert config.scan_tasks_max_size_bytes == 4096 and config.flight_shuffle_compression == "zstd"
            assert config.enable_dynamic_batching is True and config.maintain_order is False
            assert config.num_preview_rows == 4
        with ketch.execution_config_ctx(enable_dynamic_batching=False):  # second time: no warning
            pass
    ignored = sorted(
        re.search(r"Daft's '(\w+)'", str(w.message)).group(1) for w in caught if w.category is UserWarning
    )
    assert ignored == sorted(execution_knobs.IGNORED.keys() & DAFT_KNOBS.keys())
    assert ketch.get_execution_config().enable_dynamic_batching is False  # restored: Daft's default


def test_pre_shuffle_merge_maps_onto_shuffle_algorithm():
    with ketch.execution_config_ctx(pre_shuffle_merge="always"):
        assert ketch.get_execution_config().shuffle_algorithm == "pre_shuffle_merge"
    with ketch.execution_config_ctx(pre_shuffle_merge="never"):
        assert ketch.get_execution_config().shuffle_algorithm == "map_reduce"
    with pytest.raises(ValueError, match="pre_shuffle_merge"):
        ketch.set_execution_config(pre_shuffle_merge="sometimes")


def test_unknown_knob_raises_like_daft():
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_knob'"):
        ketch.set_execution_config(no_such_knob=1)
    with pytest.raises(ValueError, match="num_preview_rows"):
        ketch.set_execution_config(num_preview_rows=-1)


# -- exceptions ------------------------------------------------------------------------------------
def test_daft_exception_names_catch_ketch_errors():
    from ketch.exceptions import DaftCoreException, DaftTransientError, DaftTypeError

    df = ketch.from_pydict({"a": [1], "s": ["x"]})
    with pytest.raises(DaftCoreException, match="'b' not found"):
        df.select(col("b")).collect()
    with pytest.raises(DaftTypeError):
        df.select(col("s").image.resize(2, 2))
    assert issubclass(DaftTransientError, ketch.errors.KetchIOError)
    assert ketch.errors.UDFException is ketch.errors.UDFError
