"""UDF results over 2 GiB in one call (video frames, large blobs): binary / string values past
32-bit offsets come back as one large_binary / large_string / large_list array (pyarrow's
ChunkedArray for them is combined), in thread and process mode and through a generator's explode;
a 32-bit-offset return_dtype that cannot hold them fails with an error naming the UDF.

Each test makes a bit more than 2 GiB (bytes multiplication: cheap) and checks lengths and a few
bytes through a batch UDF over pyarrow compute, so no copy of the data comes back to Python. Peak
memory stays near 3 x the data (about 6.5 GiB); the tests skip on machines with less memory
available than they need."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import DataType, Series, col

MIB = 1 << 20
ROW_BYTES = 740 * MIB  # three rows: 2.17 GiB, past 2 GiB (2**31 - 1 bytes)
FRAME_BYTES = 1 * MIB
FRAMES = 2100  # one row in, 2.05 GiB of frames out


def _available_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")) if hasattr(os, "sysconf") else 0


needs_memory = pytest.mark.skipif(
    _available_bytes() < 9 * (1 << 30), reason="needs about 9 GiB of available memory (2 GiB+ UDF results)"
)


@pytest.fixture(autouse=True)
def _release_memory() -> Iterator[None]:
    """Each test's gigabytes go back to the system before the next test (the allocator keeps
    freed pages a while): the suite's peak is one test's."""
    yield
    pa.default_memory_pool().release_unused()


@ketch.func.batch(return_dtype=DataType.string())
def summary(values: Series) -> pa.Array:
    """'<length>:<first 2 bytes hex>:<last byte hex>' per row, computed on the Arrow buffers."""
    array = values.to_arrow()
    lengths = pc.binary_length(array).to_pylist()
    heads = pc.binary_slice(array, 0, 2).to_pylist()
    tails = pc.binary_slice(array, -1).to_pylist()
    return pa.array(
        [f"{n}:{h.hex()}:{t.hex()}" for n, h, t in zip(lengths, heads, tails, strict=True)],
        type=pa.large_string(),
    )


def _blob(i: int) -> bytes:
    return bytes([0x41 + i]) * (ROW_BYTES - 1) + bytes([0x61 + i])  # "AAAA...a", "BBBB...b", ...


def _expected_rows(n: int) -> list[str]:
    return [f"{ROW_BYTES}:{bytes([0x41 + i] * 2).hex()}:{bytes([0x61 + i]).hex()}" for i in range(n)]


@ketch.func(return_dtype=DataType.binary(), batch_size=3)
def row_blob(i: int) -> bytes:
    return _blob(i)


@needs_memory
def test_row_udf_over_2gib_in_one_call():
    df = ketch.from_pydict({"i": [0, 1, 2]}).with_column("blob", row_blob(col("i")))
    assert df.schema().field("blob").type == pa.large_binary()
    out = df.select(summary(col("blob")).alias("s")).to_pydict()
    assert out["s"] == _expected_rows(3)


@ketch.func.batch(return_dtype=DataType.binary())
def chunked_blobs(ids: Series) -> pa.ChunkedArray:
    # pyarrow answers more than 2 GiB of bytes with a ChunkedArray of binary chunks.
    result = pa.array([_blob(i) for i in ids.to_pylist()])
    assert isinstance(result, pa.ChunkedArray) and result.num_chunks > 1
    return result


@needs_memory
def test_batch_udf_returning_a_chunked_array_over_2gib():
    df = ketch.from_pydict({"i": [0, 1, 2]}).with_column("blob", chunked_blobs(col("i")))
    out = df.select(col("i"), summary(col("blob")).alias("s")).sort("i").to_pydict()
    assert out["i"] == [0, 1, 2]
    assert out["s"] == _expected_rows(3)


@ketch.func(return_dtype=bytes)
def frames(n: int) -> Iterator[bytes]:
    for k in range(n):
        yield bytes([k % 251]) * (FRAME_BYTES - 1) + bytes([k % 7])


@needs_memory
def test_generator_udf_yielding_over_2gib_from_one_row():
    df = ketch.from_pydict({"video": ["v0"], "n": [FRAMES]}).select(
        col("video"), frames(col("n")).alias("frame")
    )
    assert df.schema().field("frame").type == pa.large_binary()
    out = df.select(col("video"), summary(col("frame")).alias("s")).to_pydict()
    assert out["video"] == ["v0"] * FRAMES
    expected = [f"{FRAME_BYTES}:{bytes([k % 251] * 2).hex()}:{bytes([k % 7]).hex()}" for k in range(FRAMES)]
    assert out["s"] == expected


@ketch.cls(return_dtype=DataType.binary(), use_process=True, batch_size=3)
class BlobMaker:
    def __call__(self, ids: Series) -> Series:
        # A Series over a ChunkedArray of binary chunks, more than 2 GiB together.
        return Series(pa.chunked_array([pa.array([_blob(i)], type=pa.binary()) for i in ids.to_pylist()]))


@needs_memory
def test_process_mode_udf_over_2gib_through_shared_memory():
    maker = BlobMaker()
    df = ketch.from_pydict({"i": [0, 1, 2]}).with_column("blob", maker(col("i")))
    out = df.select(summary(col("blob")).alias("s")).to_pydict()
    assert out["s"] == _expected_rows(3)


@ketch.func(return_dtype=pa.binary(), batch_size=3)
def small_offsets_blob(i: int) -> bytes:
    return _blob(i)


@needs_memory
def test_32_bit_offset_return_dtype_too_small_names_the_udf():
    df = ketch.from_pydict({"i": [0, 1, 2]}).with_column("blob", small_offsets_blob(col("i")))
    with pytest.raises(Exception, match=r"small_offsets_blob.*2\.\d\d GiB.*large_binary") as info:
        df.select(summary(col("blob")).alias("s")).to_pydict()
    assert "32-bit offsets" in str(info.value)


@ketch.func(return_dtype=pa.binary(), batch_size=1)
def one_row_blob(i: int) -> bytes:
    return _blob(i)


@needs_memory
def test_32_bit_offset_return_dtype_works_when_each_call_fits():
    # 2.17 GiB over three calls of one row: each result fits binary, and so does each morsel.
    df = ketch.from_pydict({"i": [0, 1, 2]}).with_column("blob", one_row_blob(col("i")))
    assert df.schema().field("blob").type == pa.binary()
    assert df.select(summary(col("blob")).alias("s")).to_pydict()["s"] == _expected_rows(3)


@needs_memory
def test_cast_of_a_slice_of_a_2gib_array_to_32_bit_offsets():
    # One large_binary array of 2.17 GiB, cut into one-row morsels (zero-copy slices whose absolute
    # offsets pass 2**31): each row fits binary, and casts there; the whole array would not.
    table = pa.table({"blob": pa.array([_blob(i) for i in range(3)], type=pa.large_binary())})
    ketch.set_execution_config(morsel_size_rows=1)
    df = ketch.from_arrow(table).select(col("blob").cast(pa.binary()).alias("small"))
    assert df.schema().field("small").type == pa.binary()
    assert df.select(summary(col("small")).alias("s")).to_pydict()["s"] == _expected_rows(3)
    ketch.set_execution_config(morsel_size_rows=3)
    with pytest.raises(Exception, match=r"large_binary to binary.*too large"):
        ketch.from_arrow(table).select(col("blob").cast(pa.binary())).to_pydict()


def test_engine_takes_a_chunked_array_from_a_runner():
    # The boundary itself: a runner answering with a ChunkedArray (no __arrow_c_array__) is read
    # through __arrow_c_stream__ and combined, then cast to the declared type.
    from ketch import _core
    from ketch.expressions.expression import Expression, _expr

    def runner(
        args: list[pa.Array], num_rows: int, cancelled: object, max_items: int = -1
    ) -> pa.ChunkedArray:
        values = [str(v).encode() * 2 for v in args[0].to_pylist()]
        half = len(values) // 2
        return pa.chunked_array(
            [pa.array(values[:half], type=pa.binary()), pa.array(values[half:], type=pa.binary())]
        )

    native = _core.udf(
        "chunks", runner, [_expr(col("i"))._native], pa.large_binary(), 0, 0, 1, False, False, {}, 0
    )
    out = ketch.from_pydict({"i": [1, 22, 333]}).select(Expression(native).alias("c")).to_pydict()
    assert out["c"] == [b"11", b"2222", b"333333"]


def test_large_binary_built_from_bytes_equals_pyarrows():
    from ketch import large_arrays

    values = [b"ab", None, b"", b"xyz"]
    built = large_arrays.from_values(values, pa.large_binary())
    built.validate(full=True)
    assert built.equals(pa.array(values, type=pa.large_binary()))
    frames_type = pa.large_list(pa.large_binary())
    rows = [[b"a", b"bc"], None, [], [None, b"d"]]
    built = large_arrays.from_values(rows, frames_type)
    built.validate(full=True)
    assert built.equals(pa.array(rows, type=frames_type))
    # Other values keep pyarrow's inference and the safe cast: 1.7 is not silently an int.
    assert large_arrays.from_values([1.5, 2.0], pa.large_list(pa.int64())).type == pa.float64()


@ketch.func.batch(return_dtype=DataType.int64())
def wide_ints(ids: Series) -> pa.Array:
    return pa.array(range(len(ids) * 1_000_000), type=pa.int64()).slice(0, len(ids))


def test_a_udf_result_is_freed_after_the_query():
    # The call thread that ran the UDF parks until the next call: it must not keep the last
    # result (here a slice of 64 MB of Arrow memory; a 2 GiB blob column in the tests above).
    before = pa.total_allocated_bytes()
    out = ketch.from_pydict({"i": list(range(8))}).select(wide_ints(col("i")).alias("w")).to_pydict()
    assert out["w"] == list(range(8))
    del out
    assert pa.total_allocated_bytes() - before < 16 << 20
