"""UDF pipelines, Ketch vs Daft: overlap of chained UDFs, instance pools, async rows, memory budgets.

- q1: two chained class UDFs (one instance each), batch_size 10, 0.5 s sleep per call, 100 rows, in
  process mode (Ketch ``use_process=True``; Daft its default for ``@daft.cls``). Serial: 10 s;
  ``ideal_seconds``: 5.5 s (the second UDF works on batch k while the first works on batch k+1).
- q2: the same in thread mode (``use_process=False`` in both; Daft 0.7.26 ignores it when
  ``max_concurrency`` is given, so its q2 leaves that unset: one instance per UDF all the same).
- q3: fast (1 instance) -> slow (4 instances, 0.5 s per row, batch_size 1) -> fast (1 instance) over
  7 rows, default modes; ``instances``: distinct slow instances that served rows (each row carries
  its instance's (pid, id(self))); ideal 1.0 s (two rounds of the 4 instances).
- q4: two chained async row UDFs (``await asyncio.sleep(1)``) over 1,000 rows, default concurrency;
  ideal 2 s (every row awaiting at once in each UDF).
- q5: an identity batch UDF without batch_size over 40M int64 rows (``KETCH_BENCH_ROWS`` for fewer),
  then a sum; the rows are made in memory first, ``metric``: ns/row of the query alone.
- q6: decode and resize (224x224) 400 distinct 1024x1024 RGB PNGs from a Parquet of bytes, Ketch
  under a 64 MiB memory budget (Daft has no such knob: its defaults); compare ``+start MB``.
- q7: a row UDF returning 40 MB per row (50 rows: 2 GB in all) then a row UDF reducing each to a
  number, summed; Ketch under a 256 MiB memory budget (Daft: defaults); compare ``+start MB``.
"""

from __future__ import annotations

import os
import time
from typing import Any

N_IMAGES = 400
IMAGE_SIDE = 1024
RESIZE = 224
BIG_ROWS = 50
BIG_BYTES = 40 << 20
DATA_NAME = "udf_pipeline"

Q1_ROWS, Q1_BATCH, Q1_SLEEP = 100, 10, 0.5
Q3_ROWS, Q3_SLOW, Q3_SLEEP = 7, 4, 0.5
Q4_ROWS = 1000


def _q5_rows() -> int:
    return int(os.environ.get("KETCH_BENCH_ROWS", 40_000_000))


def prepare(data_dir: str) -> None:
    """400 distinct 1024x1024 RGB PNGs (random 32x32 colour blocks scaled up x32, so each compresses
    to tens of KB but decodes to 3 MiB) in ``images.parquet`` (columns id, bytes)."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    rng = np.random.default_rng(0)
    blobs = []
    for _ in range(N_IMAGES):
        blocks = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
        pixels = np.repeat(np.repeat(blocks, IMAGE_SIDE // 32, axis=0), IMAGE_SIDE // 32, axis=1)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
        blobs.append(buffer.getvalue())
    pq.write_table(
        pa.table({"id": list(range(N_IMAGES)), "bytes": pa.array(blobs, pa.large_binary())}),
        _images(data_dir),
    )


def _images(data_dir: str) -> str:
    return os.path.join(data_dir, "images.parquet")


def setup(engine: str) -> None:
    """Imports (untimed, part of the baseline memory)."""
    import numpy  # noqa: F401
    import pyarrow  # noqa: F401

    if engine.startswith("ketch"):
        import ketch  # noqa: F401
    else:
        import daft  # noqa: F401


def _tag(instance: object) -> int:
    """An int64 naming a UDF instance: its process and its address there."""
    return (os.getpid() << 40) ^ (id(instance) & ((1 << 40) - 1))


def _sum_check(total: int, expected: int) -> None:
    assert total == expected, (total, expected)


# ---------------------------------------------------------------- q1 / q2: chained class UDFs


def _q1_expected() -> int:
    return sum((i + 1) * 2 for i in range(Q1_ROWS))


def _q1_ideal() -> float:
    calls = Q1_ROWS // Q1_BATCH
    return (calls + 1) * Q1_SLEEP  # the 2nd UDF trails the 1st by one batch


def _ketch_chained(use_process: bool) -> dict:
    import pyarrow.compute as pc

    import ketch
    from ketch import col

    int64 = ketch.DataType.int64()

    @ketch.cls(return_dtype=int64, batch_size=Q1_BATCH, concurrency=1, use_process=use_process)
    class AddOne:
        def __call__(self, x: ketch.Series) -> Any:
            time.sleep(Q1_SLEEP)
            return pc.add(x.to_arrow(), 1)

    @ketch.cls(return_dtype=int64, batch_size=Q1_BATCH, concurrency=1, use_process=use_process)
    class Double:
        def __call__(self, x: ketch.Series) -> Any:
            time.sleep(Q1_SLEEP)
            return pc.multiply(x.to_arrow(), 2)

    df = ketch.from_pydict({"x": list(range(Q1_ROWS))})
    out = df.select(Double()(AddOne()(col("x"))).alias("y")).to_pydict()["y"]
    _sum_check(sum(out), _q1_expected())
    return {
        "rows": len(out),
        "check": float(sum(out)),
        "ideal_seconds": _q1_ideal(),
        "metric": _ideal(_q1_ideal()),
    }


def _daft_chained(use_process: bool | None) -> dict:
    import daft
    import pyarrow.compute as pc
    from daft import col

    int64 = daft.DataType.int64()
    # Daft 0.7.26 runs a @daft.cls with max_concurrency as a pool of processes whatever use_process
    # says: thread mode (q2) must leave it unset (then one instance, in the case process itself).
    options = {"use_process": use_process} if use_process is False else {"max_concurrency": 1}

    @daft.cls(**options)
    class AddOne:
        @daft.method.batch(return_dtype=int64, batch_size=Q1_BATCH)
        def __call__(self, x: daft.Series) -> Any:
            time.sleep(Q1_SLEEP)
            return pc.add(x.to_arrow(), 1)

    @daft.cls(**options)
    class Double:
        @daft.method.batch(return_dtype=int64, batch_size=Q1_BATCH)
        def __call__(self, x: daft.Series) -> Any:
            time.sleep(Q1_SLEEP)
            return pc.multiply(x.to_arrow(), 2)

    df = daft.from_pydict({"x": list(range(Q1_ROWS))})
    out = df.select(Double()(AddOne()(col("x"))).alias("y")).to_pydict()["y"]
    _sum_check(sum(out), _q1_expected())
    return {
        "rows": len(out),
        "check": float(sum(out)),
        "ideal_seconds": _q1_ideal(),
        "metric": _ideal(_q1_ideal()),
    }


def _ideal(seconds: float) -> str:
    return f"ideal {seconds:.1f} s"


def run_ketch_q1(data_dir: str) -> dict:
    return _ketch_chained(use_process=True)


def run_daft_q1(data_dir: str) -> dict:
    return _daft_chained(use_process=None)


def run_ketch_q2(data_dir: str) -> dict:
    return _ketch_chained(use_process=False)


def run_daft_q2(data_dir: str) -> dict:
    return _daft_chained(use_process=False)


# ---------------------------------------------------------------- q3: a pool of slow instances


def _q3_ideal() -> float:
    return -(-Q3_ROWS // Q3_SLOW) * Q3_SLEEP


def _q3_result(tags: list[int]) -> dict:
    assert len(tags) == Q3_ROWS, tags
    instances = len(set(tags))
    return {
        "rows": len(tags),
        "check": float(instances),
        "instances": instances,
        "ideal_seconds": _q3_ideal(),
        "metric": f"{instances} of {Q3_SLOW} slow instances used; {_ideal(_q3_ideal())}",
    }


def run_ketch_q3(data_dir: str) -> dict:
    import ketch
    from ketch import col

    int64 = ketch.DataType.int64()

    @ketch.cls(return_dtype=int64, concurrency=1)
    class Fast:
        def __call__(self, x: ketch.Series) -> Any:
            return x.to_arrow()

    @ketch.cls(return_dtype=int64, batch_size=1, concurrency=Q3_SLOW)
    class Slow:
        def __call__(self, x: ketch.Series) -> Any:
            time.sleep(Q3_SLEEP * len(x))
            return [_tag(self)] * len(x)

    df = ketch.from_pydict({"x": list(range(Q3_ROWS))})
    tags = df.select(Fast()(Slow()(Fast()(col("x")))).alias("tag")).to_pydict()["tag"]
    return _q3_result(tags)


def run_daft_q3(data_dir: str) -> dict:
    import daft
    from daft import col

    int64 = daft.DataType.int64()

    @daft.cls(max_concurrency=1)
    class Fast:
        @daft.method.batch(return_dtype=int64)
        def __call__(self, x: daft.Series) -> Any:
            return x.to_arrow()

    @daft.cls(max_concurrency=Q3_SLOW)
    class Slow:
        @daft.method.batch(return_dtype=int64, batch_size=1)
        def __call__(self, x: daft.Series) -> Any:
            time.sleep(Q3_SLEEP * len(x))
            return [_tag(self)] * len(x)

    df = daft.from_pydict({"x": list(range(Q3_ROWS))})
    tags = df.select(Fast()(Slow()(Fast()(col("x")))).alias("tag")).to_pydict()["tag"]
    return _q3_result(tags)


# ---------------------------------------------------------------- q4: chained async row UDFs


def _q4_result(out: list[int]) -> dict:
    _sum_check(sum(out), sum((i + 1) * 2 for i in range(Q4_ROWS)))
    return {"rows": len(out), "check": float(sum(out)), "ideal_seconds": 2.0, "metric": _ideal(2.0)}


def run_ketch_q4(data_dir: str) -> dict:
    import asyncio

    import ketch
    from ketch import col

    @ketch.func
    async def add_one(x: int) -> int:
        await asyncio.sleep(1)
        return x + 1

    @ketch.func
    async def double(x: int) -> int:
        await asyncio.sleep(1)
        return x * 2

    df = ketch.from_pydict({"x": list(range(Q4_ROWS))})
    return _q4_result(df.select(double(add_one(col("x"))).alias("y")).to_pydict()["y"])


def run_daft_q4(data_dir: str) -> dict:
    import asyncio

    import daft
    from daft import col

    @daft.func
    async def add_one(x: int) -> int:
        await asyncio.sleep(1)
        return x + 1

    @daft.func
    async def double(x: int) -> int:
        await asyncio.sleep(1)
        return x * 2

    df = daft.from_pydict({"x": list(range(Q4_ROWS))})
    return _q4_result(df.select(double(add_one(col("x"))).alias("y")).to_pydict()["y"])


# ---------------------------------------------------------------- q5: identity batch UDF, many rows


def _q5_result(total: int, rows: int, query_seconds: float) -> dict:
    _sum_check(total, rows * (rows - 1) // 2)
    return {
        "rows": rows,
        "check": float(total),
        "query_seconds": query_seconds,
        "metric": f"{query_seconds / rows * 1e9:.1f} ns/row (query alone)",
    }


def run_ketch_q5(data_dir: str) -> dict:
    import numpy as np

    import ketch
    from ketch import col

    @ketch.func.batch(return_dtype=ketch.DataType.int64())
    def identity(x: ketch.Series) -> Any:
        return x

    rows = _q5_rows()
    df = ketch.from_pydict({"x": np.arange(rows, dtype=np.int64)}).collect()
    start = time.perf_counter()
    total = df.select(identity(col("x")).alias("y")).agg(col("y").sum()).to_pydict()["y"][0]
    return _q5_result(total, rows, time.perf_counter() - start)


def run_daft_q5(data_dir: str) -> dict:
    import daft
    import numpy as np
    from daft import col

    @daft.func.batch(return_dtype=daft.DataType.int64())
    def identity(x: daft.Series) -> Any:
        return x

    rows = _q5_rows()
    df = daft.from_pydict({"x": np.arange(rows, dtype=np.int64)}).collect()
    start = time.perf_counter()
    total = df.select(identity(col("x")).alias("y")).sum("y").to_pydict()["y"][0]
    return _q5_result(total, rows, time.perf_counter() - start)


# ---------------------------------------------------------------- q6: images under a memory budget


def _q6_result(means: Any) -> dict:
    import numpy as np

    assert len(means) == N_IMAGES, len(means)
    return {"rows": len(means), "check": float(np.mean(means))}


def run_ketch_q6(data_dir: str) -> dict:
    import ketch
    from ketch import col

    ketch.set_execution_config(memory_budget_bytes=64 << 20)
    df = ketch.read_parquet(_images(data_dir))
    df = df.select(col("bytes").image.decode(mode="RGB").image.resize(RESIZE, RESIZE).alias("img"))
    pixels = ketch.Series(df.to_arrow().column("img")).to_numpy()
    return _q6_result(pixels.reshape(len(pixels), -1).mean(axis=1))


def run_daft_q6(data_dir: str) -> dict:
    import daft
    import numpy as np
    from daft import col

    df = daft.read_parquet(_images(data_dir))
    df = df.select(col("bytes").decode_image(mode="RGB").resize(RESIZE, RESIZE).alias("img"))
    return _q6_result([np.asarray(image).mean() for image in df.to_pydict()["img"]])


# ---------------------------------------------------------------- q7: 40 MB rows under a budget


def _big(i: int) -> bytes:
    import numpy as np

    return np.full(BIG_BYTES // 8, i, dtype=np.int64).tobytes()  # every page written


def _reduce(blob: bytes) -> int:
    return len(blob) + int.from_bytes(blob[-8:], "little")


def _q7_result(total: int) -> dict:
    _sum_check(total, BIG_ROWS * BIG_BYTES + sum(range(BIG_ROWS)))
    return {"rows": BIG_ROWS, "check": float(total)}


def run_ketch_q7(data_dir: str) -> dict:
    import ketch
    from ketch import col

    ketch.set_execution_config(memory_budget_bytes=256 << 20)
    big = ketch.func(_big, return_dtype=ketch.DataType.binary())
    reduce = ketch.func(_reduce, return_dtype=ketch.DataType.int64())
    df = ketch.from_pydict({"i": list(range(BIG_ROWS))})
    out = df.select(reduce(big(col("i"))).alias("n")).agg(col("n").sum()).to_pydict()["n"][0]
    return _q7_result(out)


def run_daft_q7(data_dir: str) -> dict:
    import daft
    from daft import col

    big = daft.func(_big, return_dtype=daft.DataType.binary())
    reduce = daft.func(_reduce, return_dtype=daft.DataType.int64())
    df = daft.from_pydict({"i": list(range(BIG_ROWS))})
    out = df.select(reduce(big(col("i"))).alias("n")).sum("n").to_pydict()["n"][0]
    return _q7_result(out)


def check_rtol(engine: str) -> float:
    """q6's check is the mean of each image's mean pixel. PNG decoding is lossless (the same pixels in
    both engines); the resize is not the same filter: Daft's (the Rust image crate's triangle
    filter) differs from Ketch's Pillow-exact bilinear by 0.13 levels per pixel on average, which
    moves the mean by about 1e-7 relative: Daft's q6 is compared within 1e-5. Everything else
    within 1e-9."""
    return 1e-5 if engine == "daft_q6" else 1e-9
