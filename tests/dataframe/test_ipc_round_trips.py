"""Every DataType through Arrow IPC: ``df.to_arrow()`` written with ``pyarrow.ipc`` (stream and file
formats) and read back through ``ketch.from_arrow``, the Arrow PyCapsule stream, and the sort's
spill files (Arrow IPC runs on disk under a tiny memory budget). Daft has no ``write_ipc``; these
are the IPC paths a Ketch DataFrame's data takes. Values are compared with what pyarrow holds
before the trip."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import numpy as np
import pyarrow as pa
import pytest

import ketch
from image_helpers import image_column
from ketch import DataType
from ketch.errors import KetchIOError
from ketch.io.files import file_array

N = 6


def _image_column(rng: np.random.Generator) -> pa.ExtensionArray:
    """Variable-shape RGB images (row 2 null) through the documented Image extension storage."""
    shapes = [None if i == 2 else (1 + i % 3, 2 + i % 2, 3) for i in range(N)]
    return image_column(
        [None if s is None else rng.integers(0, 256, size=s, dtype=np.uint8) for s in shapes], "RGB"
    )


def _every_type_table() -> pa.Table:
    rng = np.random.default_rng(11)
    fixed_image = DataType.image("L", 2, 3).to_arrow()
    tensor = DataType.tensor(DataType.float32(), (2, 2)).to_arrow()
    emb = DataType.embedding(DataType.float32(), 4).to_arrow()
    uuids = [uuid.UUID(int=int(rng.integers(0, 2**62)) << 64 | i) if i != 1 else None for i in range(N)]
    columns = {
        "i8": pa.array([1, None, -3, 4, 5, 6], pa.int8()),
        "u64": pa.array([2**64 - 1, None, 0, 1, 2, 3], pa.uint64()),
        "f32": pa.array([1.5, None, float("inf"), -0.0, 2.0, 3.0], pa.float32()),
        "b": pa.array([True, None, False, True, False, True]),
        "s": pa.array(["a", None, "ü", "", "e", "f"], pa.large_string()),
        "bin": pa.array([b"\x00", None, b"", b"xy", b"z", b"w"], pa.large_binary()),
        "fsb": pa.array([b"ab", None, b"cd", b"ef", b"gh", b"ij"], pa.binary(2)),
        "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1969, 7, 20)] * 2, pa.date32()),
        "ts": pa.array([0, None, 1_700_000_000_000_000] * 2, pa.timestamp("us", tz="UTC")),
        "t": pa.array([dt.time(1, 2, 3), None, dt.time(23, 59)] * 2, pa.time64("us")),
        "dur": pa.array([dt.timedelta(seconds=5), None, dt.timedelta(days=-1)] * 2, pa.duration("us")),
        "iv": pa.array([pa.MonthDayNano([1, 2, 3]), None] * 3, pa.month_day_nano_interval()),
        "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-0.01")] * 2, pa.decimal128(10, 2)),
        "null": pa.nulls(N),
        "l": pa.array([[1, None], None, [], [4], [5, 6], [7]], pa.large_list(pa.int64())),
        "fsl": pa.array([[1.0, 2.0], None, [3.0, 4.0]] * 2, pa.list_(pa.float32(), 2)),
        "st": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}] * 2),
        "m": pa.array([[("k", 1)], None, []] * 2, pa.map_(pa.large_string(), pa.int64())),
        "uuid": pa.array([None if u is None else u.bytes for u in uuids], pa.uuid()),
        "image": _image_column(rng),
        "fixed_image": pa.ExtensionArray.from_storage(
            fixed_image,
            pa.FixedSizeListArray.from_arrays(
                pa.array(rng.integers(0, 256, size=N * 6, dtype=np.uint8)), 6
            ).cast(fixed_image.storage_type),
        ),
        "tensor": pa.ExtensionArray.from_storage(
            tensor, pa.FixedSizeListArray.from_arrays(pa.array(rng.normal(size=N * 4).astype(np.float32)), 4)
        ),
        "embedding": pa.FixedSizeListArray.from_arrays(
            pa.array(rng.normal(size=N * 4).astype(np.float32)), 4
        ).cast(emb),
        "file": file_array(
            [f"/data/f{i}.bin" if i != 3 else None for i in range(N)], [i * 10 for i in range(N)]
        ),
    }
    table = pa.table(columns)
    # Python objects (cloudpickled in ketch.python) and a variable-shape tensor, as from_pydict makes them
    extra = ketch.from_pydict(
        {
            "py": [{1, 2}, None, complex(1, 2), "s", (1,), frozenset()],
            "vtensor": [np.arange(i + 1, dtype=np.float64).reshape(1, -1) for i in range(N)],
        }
    ).to_arrow()
    for name in extra.column_names:
        table = table.append_column(name, extra.column(name))
    return table


def _ipc_stream(table: pa.Table) -> pa.Table:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=4)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def _ipc_file(table: pa.Table) -> pa.Table:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_file(sink.getvalue()).read_all()


def _assert_same(got: pa.Table, expected: pa.Table) -> None:
    assert got.column_names == expected.column_names
    for name in expected.column_names:
        assert got.schema.field(name).type == expected.schema.field(name).type, name
        if name == "py":  # pickled objects: compare the objects, not the pickles
            assert (
                ketch.from_arrow(got.select([name])).to_pydict()
                == ketch.from_arrow(expected.select([name])).to_pydict()
            )
        elif name == "vtensor":
            assert [
                None if v is None else v.tolist()
                for v in ketch.from_arrow(got.select([name])).to_pydict()[name]
            ] == [v.tolist() for v in ketch.from_arrow(expected.select([name])).to_pydict()[name]]
        else:
            assert got.column(name).combine_chunks().equals(expected.column(name).combine_chunks()), name


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return _every_type_table()


@pytest.mark.parametrize("trip", [_ipc_stream, _ipc_file], ids=["stream", "file"])
def test_every_type_survives_ipc_and_from_arrow(table, trip):
    df = ketch.from_arrow(table)
    out = df.to_arrow()
    _assert_same(out, table)
    back = ketch.from_arrow(trip(out))
    assert back.schema() == df.schema()
    _assert_same(back.to_arrow(), table)
    # and the DataFrame's values (images, tensors, files, UUIDs as Python objects) are unchanged
    assert repr(back.to_pydict()) == repr(df.to_pydict())


def test_every_type_survives_the_pycapsule_stream(table):
    df = ketch.from_arrow(table)
    through_capsule = pa.table(df)  # DataFrame.__arrow_c_stream__
    _assert_same(through_capsule, table)
    _assert_same(ketch.from_arrow(through_capsule).to_arrow(), table)


def test_every_type_survives_sort_spill_files(table, tmp_path):
    big = pa.concat_tables([table] * 400)  # 2400 rows, ~ a few hundred kB
    keys = pa.array(np.random.default_rng(3).permutation(big.num_rows), pa.int64())
    big = big.append_column("key", keys)
    order = np.argsort(keys.to_numpy())
    expected = big.take(pa.array(order))
    config = {"memory_budget_bytes": 20_000, "morsel_size_rows": 100, "spill_dir": str(tmp_path)}
    with ketch.execution_config_ctx(**config):
        got = ketch.from_arrow(big).sort("key").to_arrow()
    _assert_same(got, expected)
    assert list(tmp_path.iterdir()) == []  # spill files are removed
    # the same query with a spill directory that cannot exist fails there: it did spill
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    with ketch.execution_config_ctx(**{**config, "spill_dir": str(blocker / "spill")}):
        with pytest.raises(KetchIOError, match="spill directory"):
            ketch.from_arrow(big).sort("key").collect()
