"""Re-chunking between operators: UDF batch sizes are honoured exactly after any operator, heavy
kernels get small morsels after a UDF, rows keep their order and their source row numbers."""

from __future__ import annotations

import io
import threading

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import KetchError


def _batch_recorder(batch_size: int):
    sizes: list[int] = []
    lock = threading.Lock()

    @ketch.udf(return_dtype=ketch.DataType.int64(), batch_size=batch_size, concurrency=2)
    def record(x):
        with lock:
            sizes.append(len(x))
        return x.to_arrow()

    return record, sizes


@pytest.mark.parametrize("morsel_rows", [7, 100, 4096])
def test_udf_gets_exact_batch_size_after_filter(morsel_rows, rng):
    record, sizes = _batch_recorder(50)
    values = rng.integers(0, 1000, 5_000)
    keep = values % 3 == 0
    df = ketch.from_pydict({"x": values, "keep": keep}).where(col("keep")).with_column("y", record(col("x")))
    with ketch.execution_config_ctx(morsel_size_rows=morsel_rows):
        out = df.to_pydict()
    expected = [int(v) for v in values if v % 3 == 0]
    assert out["x"] == expected and out["y"] == expected  # order and values kept
    assert sum(sizes) == len(expected)
    # Every call but the last has exactly batch_size rows, whatever the filter left per morsel.
    assert sorted(sizes)[1:] == [50] * (len(sizes) - 1)
    assert len(sizes) == -(-len(expected) // 50)


def test_udf_batch_size_larger_than_source_morsels(rng):
    record, sizes = _batch_recorder(300)
    df = ketch.from_pydict({"x": np.arange(1000)}).with_column("y", record(col("x")))
    with ketch.execution_config_ctx(morsel_size_rows=64):
        out = df.to_pydict()
    assert out["y"] == list(range(1000))
    assert sorted(sizes) == [100, 300, 300, 300]


def test_rechunk_shows_in_explain_analyze_with_peak_memory():
    record, _ = _batch_recorder(40)
    df = ketch.from_pydict({"x": np.arange(1000)}).where(col("x") > 10).with_column("y", record(col("x")))
    out = io.StringIO()
    with ketch.execution_config_ctx(morsel_size_rows=25):
        stats = df.explain_analyze(file=out)
    ops = {op["name"]: op for op in stats.operators()}
    assert "Rechunk[40, 40]" in ops, list(ops)
    rechunk = ops["Rechunk[40, 40]"]
    assert rechunk["rows_in"] == 989 and rechunk["rows_out"] == 989
    assert rechunk["morsels"] == 25  # ceil(989 / 40) morsels sent on
    assert ops["InMemoryScan"]["peak_memory_bytes"] >= 25 * 8
    assert "peak MB" in out.getvalue()


def test_explode_then_udf_is_rechunked(rng):
    record, sizes = _batch_recorder(16)
    lists = [list(range(int(n))) for n in rng.integers(0, 40, 200)]
    df = ketch.from_pydict({"l": lists}).explode("l").with_column("y", record(col("l")))
    with ketch.execution_config_ctx(morsel_size_rows=5):
        out = df.to_pydict()
    flat = [v for lst in lists for v in (lst or [None])]  # an empty list explodes to one null
    assert out["y"] == flat
    assert sorted(sizes)[1:] == [16] * (len(sizes) - 1)


def test_udf_error_after_coalescing_filtered_morsels():
    # 777 is the 112th multiple of 7: in exact 32-row batches it sits at index 111 - 3 * 32 = 15.
    @ketch.udf(return_dtype=ketch.DataType.int64(), batch_size=32)
    def fail_on_777(x):
        values = x.to_pylist()
        if 777 in values:
            raise ValueError(f"bad value at batch index {values.index(777)}")
        return x.to_arrow()

    x = np.arange(2000)
    df = ketch.from_pydict({"x": x, "keep": x % 7 == 0}).where(col("keep"))
    df = df.with_column("y", fail_on_777(col("x")))
    with ketch.execution_config_ctx(morsel_size_rows=10), pytest.raises(KetchError) as info:
        df.collect()
    assert "fail_on_777" in str(info.value) and "batch index 15" in str(info.value)


def test_corrupt_image_after_udf_names_its_source_row():
    from PIL import Image

    def png(value: int) -> bytes:
        buf = io.BytesIO()
        Image.new("L", (4, 4), value).save(buf, format="PNG")
        return buf.getvalue()

    blobs = [png(i % 256) for i in range(300)]
    blobs[211] = b"not an image"

    @ketch.udf(return_dtype=ketch.DataType.binary(), batch_size=100)
    def passthrough(b):
        return b.to_arrow()

    df = ketch.from_arrow(pa.table({"b": pa.array(blobs, pa.binary()), "i": pa.array(range(300))}))
    df = df.where(col("i") != 5).with_column("b2", passthrough(col("b")))
    df = df.with_column("img", col("b2").image.decode())
    with pytest.raises(KetchError) as info:
        df.collect()
    assert "row 211" in str(info.value), str(info.value)
